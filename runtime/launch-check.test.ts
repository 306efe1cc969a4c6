/**
 * Every misuse of a launch is refused before anything runs, with an error that names the kernel, the
 * parameter or setting, and what was expected. Each test checks the output buffer is still poisoned.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CpuDevice } from "./cpu/cpu-device.ts";
import { compileKernelLibrary } from "./kernels.ts";
import { LaunchError } from "./launch-check.ts";
import type { DeviceBuffer, LaunchOptions } from "./device.ts";
import { packageRoot } from "../compiler/index.ts";

const library = compileKernelLibrary([path.join(packageRoot(), "examples", "matmul-tiled.ts"), path.join(packageRoot(), "examples", "sgemm.ts"), path.join(packageRoot(), "examples", "matmul-naive.ts")]);
const tiled = library.get("matmulTiled");
const sgemm = library.get("sgemmNaive");

function setup() {
  const device = new CpuDevice();
  const n = 20;
  const A = device.createBuffer(Float32Array.from({ length: n * n }, () => Math.random()));
  const B = device.createBuffer(Float32Array.from({ length: n * n }, () => Math.random()));
  const C = device.createBuffer(new Float32Array(n * n).fill(Number.NaN));
  return { device, n, A, B, C };
}

async function expectRefused(device: CpuDevice, C: DeviceBuffer, kernel: typeof tiled, options: LaunchOptions, message: string) {
  await expect(device.launch(kernel, options)).rejects.toThrow(LaunchError);
  await expect(device.launch(kernel, options)).rejects.toThrow(message);
  const after = (await device.read(C)) as Float32Array;
  expect(after.every(Number.isNaN), "nothing ran").toBe(true);
}

describe("launch checks", () => {
  it("a correct launch runs", async () => {
    const { device, n, A, B, C } = setup();
    await device.launch(tiled, { grid: [2, 2], args: [C, A, B, n, n, n] });
    expect(((await device.read(C)) as Float32Array).some(Number.isNaN)).toBe(false);
  });

  it("wrong argument count", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, tiled, { grid: [2, 2], args: [C, A, B, n, n] }, "cannot launch 'matmulTiled_TILE_16': expects 6 argument(s) (C, A, B, m, n, k), got 5");
  });

  it("a buffer of the wrong element type", async () => {
    const { device, n, B, C } = setup();
    const ints = device.createBuffer("i32", n * n);
    await expectRefused(device, C, tiled, { grid: [2, 2], args: [C, ints, B, n, n, n] }, "parameter 'A' expects a f32 buffer (read-only), got a i32 buffer of 400 elements");
  });

  it("a typed array instead of a buffer", async () => {
    const { device, n, A, C } = setup();
    await expectRefused(device, C, tiled, { grid: [2, 2], args: [C, A, new Float32Array(4) as never, n, n, n] }, "parameter 'B' expects a f32 buffer (read-only), got a typed array (allocate a buffer with device.createBuffer)");
  });

  it("a non-integer i32 and an out-of-range i32", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, tiled, { grid: [2, 2], args: [C, A, B, 1.5, n, n] }, "parameter 'm' expects an i32 (an integer from -2147483648 to 2147483647), got number 1.5");
    await expectRefused(device, C, tiled, { grid: [2, 2], args: [C, A, B, n, 2 ** 31, n] }, "parameter 'n' expects an i32");
  });

  it("a boolean where an f32 is expected", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, sgemm, { grid: [1, 1], args: [n, n, n, true, A, B, 0, C] }, "parameter 'alpha' expects an f32 number, got boolean true");
  });

  it("named arguments: a missing one, an unknown one, and a compile-time constant", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, tiled, { grid: [2, 2], args: { C, A, B, m: n, n } }, "missing argument for parameter 'k'");
    await expectRefused(device, C, tiled, { grid: [2, 2], args: { C, A, B, m: n, n, k: n, lda: n } }, "unknown argument(s) 'lda'");
    await expectRefused(device, C, tiled, { grid: [2, 2], args: { C, A, B, m: n, n, k: n, TILE: 32 } }, "'TILE' is a compile-time constant");
  });

  it("a block that contradicts the kernel's fixed block, and a missing block", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, tiled, { grid: [2, 2], block: [32, 32], args: [C, A, B, n, n, n] }, "the kernel fixes its block to [16, 16, 1], but the launch asks for [32, 32, 1]");
    const naive = library.get("matmulNaive");
    // matmulNaive fixes its block too; a kernel without one needs a block, which a custom library shows.
    expect(naive.description.block).toEqual([16, 16, 1]);
  });

  it("a kernel without a fixed block needs one, of at most 1024 threads", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-launch-"));
    const file = path.join(dir, "scale.ts");
    fs.writeFileSync(
      file,
      'import { kernel, blockIdx, blockDim, threadIdx, type f32, type i32 } from "tskernel";\n' +
        "export const scale = kernel((x: Float32Array, s: f32, n: i32) => {\n" +
        "  const i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
        "  if (i < n) {\n    x[i] = x[i] * s;\n  }\n});\n",
    );
    const scale = compileKernelLibrary([file]).get("scale");
    const device = new CpuDevice();
    const x = device.createBuffer(new Float32Array(100).fill(Number.NaN));
    await expectRefused(device, x, scale, { grid: [4], args: [x, 2, 100] }, "the kernel does not fix its block shape, so the launch must give one");
    await expectRefused(device, x, scale, { grid: [1], block: [64, 32], args: [x, 2, 100] }, "a block of 2048 threads exceeds the limit of 1024");
    const data = Float32Array.from({ length: 100 }, (_, i) => i);
    const y = device.createBuffer(data);
    await device.launch(scale, { grid: [2], block: [64], args: [y, 0.5, 100] });
    expect([...((await device.read(y)) as Float32Array)]).toEqual([...data].map((v) => v * 0.5));
  });

  it("grid sizes that are not positive integers or exceed the limits", async () => {
    const { device, n, A, B, C } = setup();
    await expectRefused(device, C, tiled, { grid: [0, 2], args: [C, A, B, n, n, n] }, "grid must be positive integers, got [0, 2]");
    await expectRefused(device, C, tiled, { grid: [1, 70000], args: [C, A, B, n, n, n] }, "grid y = 70000 exceeds the limit 65535");
  });
});
