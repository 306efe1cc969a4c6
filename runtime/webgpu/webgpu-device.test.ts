/**
 * The WebGPU backend's own behaviour (the examples run on it in tests/examples-run.test.ts): a shader error
 * is reported at the TypeScript line its WGSL came from, a launch over the adapter's limits is refused
 * with the numbers, and kernels with subgroup operations get the `subgroups` feature (and are refused on a
 * device without it, or with blocks that are not whole subgroups). Runs on SwiftShader where no GPU is
 * present; skipped without any adapter.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary } from "../kernels.ts";
import { LaunchError } from "../launch-check.ts";
import { deviceFor } from "../../tests/backends.ts";
import type { Device, KernelHandle } from "../device.ts";
import { WebGpuDevice } from "./webgpu-device.ts";

const device = await deviceFor("webgpu");
const source = `import { kernel, shared, syncThreads, threadIdx } from "tskernel";
export const rotate = kernel({ block: [64] }, (out: Float32Array, x: Float32Array) => {
  const tile = shared.f32(64);
  tile[threadIdx.x] = x[threadIdx.x];
  syncThreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 64];
});
`;

const subgroupSource = `import { kernel, subgroupAdd, threadIdx } from "tskernel";
export const sums = kernel((out: Float32Array, x: Float32Array) => {
  out[threadIdx.x] = subgroupAdd(x[threadIdx.x]);
});
`;

function compile(text = source, name = "rotate"): KernelHandle {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-webgpu-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, text);
  return compileKernelLibrary([file], ["wgsl"], { baseDir: dir }).get(name);
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

  it("has the subgroups feature where the adapter offers it, and runs a kernel with subgroup operations", async () => {
    const webgpu = gpu as WebGpuDevice;
    expect(webgpu.hasSubgroups).toBe(true);
    const lanes = gpu.limits.subgroupSize!;
    const x = Float32Array.from({ length: 4 * lanes }, () => Math.random());
    const out = gpu.createBuffer(new Float32Array(x.length).fill(Number.NaN));
    await gpu.launch(compile(subgroupSource, "sums"), { grid: [1], block: [x.length], args: [out, gpu.createBuffer(x)] });
    const got = (await gpu.read(out)) as Float32Array;
    for (let t = 0; t < x.length; t++) {
      const base = t - (t % lanes);
      expect(Math.abs(got[t]! - x.slice(base, base + lanes).reduce((a, b) => a + b, 0))).toBeLessThan(1e-5);
    }
  });

  it("refuses blocks that are not whole subgroups", async () => {
    const lanes = gpu.limits.subgroupSize!;
    const x = gpu.createBuffer(new Float32Array(4 * lanes));
    await expect(gpu.launch(compile(subgroupSource, "sums"), { grid: [1], block: [lanes + 1], args: [x, x] })).rejects.toThrow(
      `it uses subgroup operations, so its block must be a whole number of subgroups (${lanes} threads on this device); [${lanes + 1}, 1, 1] is ${lanes + 1} threads`,
    );
  });

  it("refuses a kernel with subgroup operations on a device without the subgroups feature, naming the feature", async () => {
    const webgpu = gpu as WebGpuDevice;
    const adapter = await (webgpu as unknown as { instance: GPU }).instance.requestAdapter();
    const bare = new WebGpuDevice(await adapter!.requestDevice(), "no subgroups", (webgpu as unknown as { instance: GPU }).instance);
    try {
      expect(bare.hasSubgroups).toBe(false);
      const x = bare.createBuffer(new Float32Array(32));
      await expect(bare.launch(compile(subgroupSource, "sums"), { grid: [1], block: [32], args: [x, x] })).rejects.toThrow(
        "cannot launch 'sums': it uses subgroup operations, which need the WebGPU feature 'subgroups'",
      );
      // Kernels without subgroup operations still run there.
      const y = bare.createBuffer(Float32Array.from({ length: 64 }, (_, i) => i));
      const out = bare.createBuffer(new Float32Array(64).fill(Number.NaN));
      await bare.launch(compile(), { grid: [1], args: [out, y] });
      expect([...((await bare.read(out)) as Float32Array)]).toEqual(Array.from({ length: 64 }, (_, i) => (i + 1) % 64));
    } finally {
      bare.dispose();
    }
  });
});
