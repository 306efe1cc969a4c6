/**
 * The WebGPU backend's own behaviour (the examples run on it in tests/examples-run.test.ts): a shader error
 * is reported at the TypeScript line its WGSL came from, and a launch over the adapter's limits is refused
 * with the numbers. Runs on SwiftShader where no GPU is present; skipped without any adapter.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary } from "../kernels.ts";
import { LaunchError } from "../launch-check.ts";
import { deviceFor } from "../../tests/backends.ts";
import type { KernelHandle } from "../library.ts";
import type { Device } from "../device.ts";

const device = await deviceFor("webgpu");
const source = `import { kernel, shared, syncThreads, threadIdx } from "tskernel";
export const rotate = kernel({ block: [64] }, (out: Float32Array, x: Float32Array) => {
  const tile = shared.f32(64);
  tile[threadIdx.x] = x[threadIdx.x];
  syncThreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];
});
`;

function compile(): KernelHandle {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-webgpu-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, source);
  return compileKernelLibrary([file], ["wgsl"], { baseDir: dir }).get("rotate");
}

describe.skipIf(typeof device === "string")(`WebGPU device${typeof device === "string" ? ` (skipped: ${device})` : ""}`, () => {
  const gpu = device as Device;

  it("runs the kernel", async () => {
    const kernel = compile();
    const x = Float32Array.from({ length: 64 }, (_, i) => i);
    const out = gpu.createBuffer(new Float32Array(64).fill(Number.NaN));
    await gpu.launch(kernel, { grid: [1], args: [out, gpu.createBuffer(x)] });
    expect([...((await gpu.read(out)) as Float32Array)]).toEqual([...x].map((_, i) => (i + 1) % 64));
  });

  it("reports a shader error at the TypeScript line it came from", async () => {
    const kernel = compile();
    // Break the barrier's WGSL line (as a driver or a newer WGSL might reject a construct we emit).
    const broken: KernelHandle = { ...kernel, wgsl: { ...kernel.wgsl!, source: kernel.wgsl!.source.replace("workgroupBarrier();", "workgroupBarrier(1);") } };
    const x = gpu.createBuffer(new Float32Array(64));
    const out = gpu.createBuffer(new Float32Array(64));
    const error = await gpu.launch(broken, { grid: [1], args: [out, x] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchError);
    const wgslLine = broken.wgsl!.source.split("\n").findIndex((line) => line.includes("workgroupBarrier(1)")) + 1;
    expect((error as Error).message).toContain(`error at kernel.ts:5:3 (WGSL line ${wgslLine})`);
  });

  it("refuses a grid larger than the adapter allows, with the numbers", async () => {
    const kernel = compile();
    const x = gpu.createBuffer(new Float32Array(64));
    const limit = gpu.limits.maxGridDims[0];
    await expect(gpu.launch(kernel, { grid: [limit + 1], args: [x, x] })).rejects.toThrow(`grid x = ${limit + 1} exceeds the limit ${limit}`);
  });
});
