/**
 * Kernels that declare their targets, at run time: a kernel runs on the backends its targets name, and a
 * launch on another is a LaunchError naming the kernel, the backend and the declared targets, before any
 * argument is looked at, whether the library was compiled in-process or loaded from a `tskernel build`
 * directory (on the CPU and on WebGPU). A target the build simply left out says so, with the flag to add.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/main.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileKernelLibrary, LaunchError, loadKernelLibrary, type Device, type KernelLibrary } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-targets-"));
const file = path.join(dir, "kernels.ts");
// The same body three times: for every target, for CUDA and the CPU only, for CUDA and WebGPU only.
const body = `{
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * a + 1;
}`;
const params = "(out: Float32Array, x: ReadonlyFloat32Array, a: f32, n: i32)";
fs.writeFileSync(
  file,
  `import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const everywhere = kernel({ block: [64] }, ${params} => ${body});
export const cudaAndCpu = kernel({ block: [64], targets: ["cuda", "js"] }, ${params} => ${body});
export const gpuOnly = kernel({ block: [64], targets: ["cuda", "wgsl"] }, ${params} => ${body});
`,
);

/** Runs a kernel on random input with a poisoned output, against the float64 result. */
async function expectRuns(device: Device, library: KernelLibrary, name: string): Promise<void> {
  const n = 200;
  const a = Math.fround(Math.random() * 4 - 2);
  const x = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
  const out = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  await device.launch(library.get(name), { grid: [Math.ceil(n / 64)], args: [out, device.createBuffer(x), a, n] });
  const got = (await device.read(out)) as Float32Array;
  for (let i = 0; i < n; i++) {
    const want = x[i]! * a + 1;
    expect(Math.abs(got[i]! - want), `${name}[${i}]`).toBeLessThanOrEqual(2 ** -22 * Math.max(1, Math.abs(want)));
  }
}

/** A launch that must be refused with exactly `message`, with arguments that are themselves wrong (so the target is checked first). */
async function expectRefused(device: Device, library: KernelLibrary, name: string, message: string): Promise<void> {
  const launch = device.launch(library.get(name), { grid: [1], args: [] });
  await expect(launch).rejects.toThrow(LaunchError);
  await expect(device.launch(library.get(name), { grid: [1], args: [] })).rejects.toThrow(message);
}

const cpuRefusal = "tskernel: cannot launch 'gpuOnly': kernel 'gpuOnly' declares targets: [\"cuda\", \"wgsl\"], so it was not built for js, which the cpu backend runs; launch it on a cuda or webgpu device";
const webgpuRefusal = "tskernel: cannot launch 'cudaAndCpu': kernel 'cudaAndCpu' declares targets: [\"cuda\", \"js\"], so it was not built for wgsl, which the webgpu backend runs; launch it on a cuda or cpu device";

const webgpu = await deviceFor("webgpu");

describe("a kernel's targets at run time", () => {
  const library = compileKernelLibrary([file], ["js", "wgsl"]);

  it("records the declared targets and the built ones in each description", () => {
    const described = library.kernels.map((k) => [k.description.name, k.description.declaredTargets, k.description.builtFor, Boolean(k.js), Boolean(k.wgsl)]);
    expect(described).toEqual([
      ["everywhere", undefined, ["wgsl", "js"], true, true],
      ["cudaAndCpu", ["cuda", "js"], ["js"], true, false],
      ["gpuOnly", ["cuda", "wgsl"], ["wgsl"], false, true],
    ]);
  });

  it("on the CPU: runs the kernels built for js, refuses the other naming its targets", async () => {
    for (const device of [new CpuDevice(), new CpuDevice({ checked: true }), new CpuDevice({ workers: 2 })]) {
      await expectRuns(device, library, "everywhere");
      await expectRuns(device, library, "cudaAndCpu");
      await expectRefused(device, library, "gpuOnly", cpuRefusal);
      expect(() => device.run(library.get("gpuOnly"), { grid: [1], args: [] })).toThrow(cpuRefusal);
      device.dispose();
    }
  });

  it.skipIf(typeof webgpu === "string")(`on WebGPU: runs the kernels built for wgsl, refuses the other naming its targets${typeof webgpu === "string" ? ` (skipped: ${webgpu})` : ""}`, async () => {
    const device = webgpu as Device;
    await expectRuns(device, library, "everywhere");
    await expectRuns(device, library, "gpuOnly");
    await expectRefused(device, library, "cudaAndCpu", webgpuRefusal);
    // The device still works after the refusals.
    await expectRuns(device, library, "everywhere");
  });

  it("says the same for a library loaded from a build directory, and names the flag where the build left a target out", async () => {
    const out = path.join(dir, "build");
    let stdout = "";
    const code = await runCli(["build", file, "--target", "wgsl", "--out", out], { stdout: (t) => (stdout += t), stderr: () => {} });
    expect(code).toBe(0);
    expect(stdout).toContain("skipped for wgsl (not in the kernels' targets): cudaAndCpu in ");
    const loaded = loadKernelLibrary(out);
    const device = new CpuDevice();
    await expectRefused(device, loaded, "gpuOnly", cpuRefusal);
    // `everywhere` could run on the CPU, but this build has no js.
    await expectRefused(device, loaded, "everywhere", "tskernel: cannot launch 'everywhere': it was not compiled for the js target, which the cpu backend runs (the build has wgsl for it): build with --target js");
    // `cudaAndCpu` was skipped by this build: none of its code is there, and its declared targets say why.
    await expectRefused(device, loaded, "cudaAndCpu", "tskernel: cannot launch 'cudaAndCpu': it was not compiled for the js target, which the cpu backend runs (the build has no target for it): build with --target js");
    expect(loaded.get("cudaAndCpu").description.builtFor).toEqual([]);
    device.dispose();
  });
});
