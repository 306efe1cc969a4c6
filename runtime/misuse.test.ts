/**
 * The runtime under bad input and runaway kernels, on the CPU and on WebGPU: every misuse of a launch is a
 * LaunchError naming the kernel and what was wrong, and leaves the device working; buffers that cannot be
 * made are refused with a tskernel error; buffers of another device (of the same backend or another), freed
 * buffers and any use of a disposed device are refused; NaN and infinite f32
 * scalars arrive as themselves; grids beyond the limits are refused; and on the CPU a kernel that never ends
 * is stopped by the time limit, naming the kernel (in checked mode, the loop).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CpuDevice } from "./cpu/cpu-device.ts";
import { KernelFault } from "./cpu/checker.ts";
import { createDevice, LaunchError, LaunchFailure, type Device } from "./index.ts";
import { compileKernelLibrary } from "./kernels.ts";
import { deviceFor, testedBackends } from "../tests/backends.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-misuse-"));
const file = path.join(dir, "kernels.ts");
fs.writeFileSync(
  file,
  `import { blockDim, blockIdx, kernel, syncThreads, threadIdx, type bool, type f32, type i32, type u32, type ReadonlyFloat32Array } from "tskernel";

export const scale = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array, a: f32, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * a;
});

export const copyScalars = kernel({ block: [1] }, (out: Float32Array, flags: Int32Array, a: f32, b: bool, k: i32, u: u32) => {
  out[0] = a;
  flags[0] = b ? k : 0;
  flags[1] = u === 0 ? 0 : 1;
});

export const spin = kernel({ block: [4] }, (out: Int32Array, n: i32) => {
  let k = 0;
  while (n >= 0) {
    k = k + 1;
  }
  out[threadIdx.x] = k;
});

export const spinBarrier = kernel({ block: [4] }, (out: Int32Array, n: i32) => {
  while (n >= 0) {
    syncThreads();
  }
  out[threadIdx.x] = n;
});
`,
);
const library = compileKernelLibrary([file], ["js", "wgsl"]);
const scale = library.get("scale");

/** A correct launch of `scale`, checked against its float64 result: the device still works. */
async function stillWorks(device: Device): Promise<void> {
  const x = Float32Array.from({ length: 100 }, () => Math.random() * 2 - 1);
  const out = device.createBuffer(new Float32Array(100).fill(Number.NaN));
  await device.launch(scale, { grid: [2], args: [out, device.createBuffer(x), 0.5, 100] });
  expect([...((await device.read(out)) as Float32Array)]).toEqual([...x].map((v) => Math.fround(v * 0.5)));
}

async function launchError(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(LaunchError);
    return (error as Error).message;
  }
  throw new Error("the launch was not refused");
}

/**
 * The error a launch meets while it runs (a time limit, a fault): launch() resolves once the launch is
 * enqueued, and the device's next synchronize() raises it as a LaunchFailure naming the launch.
 */
async function runError(device: Device, run: () => Promise<unknown>): Promise<LaunchFailure> {
  await run();
  const error = await device.synchronize().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LaunchFailure);
  return error as LaunchFailure;
}

describe.each(testedBackends)("the runtime under misuse on %s", (backend) => {
  const get = async () => {
    const device = await deviceFor(backend);
    return typeof device === "string" ? undefined : device;
  };

  it("refuses every misuse of a launch with a LaunchError naming the kernel, and keeps working", async () => {
    const device = await get();
    if (!device) return;
    const out = device.createBuffer("f32", 100);
    const x = device.createBuffer("f32", 100);
    const ints = device.createBuffer("i32", 100);
    const cases: [string, unknown, RegExp][] = [
      ["no options", undefined, /expects launch options \{ grid, block\?, args \}, got undefined/],
      ["no args", { grid: [1] }, /args must be an array of arguments or an object of them by parameter name, got undefined/],
      ["no grid", { args: [out, x, 1, 100] }, /the launch needs a grid/],
      ["a string grid", { grid: "4", args: [out, x, 1, 100] }, /grid must be a number or \[x, y\?, z\?\], got string 4/],
      ["too few arguments", { grid: [1], args: [out, x, 1] }, /expects 4 argument\(s\) \(out, x, a, n\), got 3/],
      ["a buffer of the wrong element type", { grid: [1], args: [out, ints, 1, 100] }, /parameter 'x' expects a f32 buffer \(read-only\), got a i32 buffer/],
      ["a typed array", { grid: [1], args: [out, new Float32Array(100), 1, 100] }, /got a typed array/],
      ["NaN for an i32", { grid: [1], args: [out, x, 1, Number.NaN] }, /parameter 'n' expects an i32/],
      ["Infinity for an i32", { grid: [1], args: [out, x, 1, Infinity] }, /parameter 'n' expects an i32/],
      ["1.5 for an i32", { grid: [1], args: [out, x, 1, 1.5] }, /parameter 'n' expects an i32/],
      ["a string for an f32", { grid: [1], args: [out, x, "1", 100] }, /parameter 'a' expects an f32 number, got string 1/],
      ["an unknown named argument", { grid: [1], args: { out, x, a: 1, n: 100, m: 3 } }, /unknown argument\(s\) 'm'/],
      ["a missing named argument", { grid: [1], args: { out, x, a: 1 } }, /missing argument for parameter 'n'/],
      ["a block other than the kernel's", { grid: [1], block: [32], args: [out, x, 1, 100] }, /fixes its block to \[64, 1, 1\]/],
      ["a grid of 0", { grid: [0], args: [out, x, 1, 100] }, /grid must be positive integers/],
      ["a negative grid", { grid: [-2], args: [out, x, 1, 100] }, /grid must be positive integers/],
      ["a fractional grid", { grid: [1.5], args: [out, x, 1, 100] }, /grid must be positive integers/],
      ["a NaN grid", { grid: [Number.NaN], args: [out, x, 1, 100] }, /grid must be positive integers/],
      ["a grid of four dimensions", { grid: [1, 1, 1, 1], args: [out, x, 1, 100] }, /grid must have 1 to 3 dimensions/],
      ["a grid past the limit", { grid: [1, 70000], args: [out, x, 1, 100] }, /grid y = 70000 exceeds the limit 65535/],
      ["a grid past 2^31 - 1", { grid: [2 ** 31], args: [out, x, 1, 100] }, /grid x = 2147483648 exceeds the limit/],
    ];
    for (const [what, options, message] of cases) {
      expect(await launchError(() => device.launch(scale, options as never)), what).toMatch(new RegExp(`cannot launch 'scale': .*${message.source}`));
    }
    for (const [notAKernel, shown] of [[undefined, "undefined"], ["scale", "string scale"], [{}, "an object"]] as const) {
      await expect(device.launch(notAKernel as never, { grid: [1], args: [out, x, 1, 100] })).rejects.toThrow(`tskernel: launch expects a kernel from library.get(name), got ${shown}`);
    }
    // WebGPU: a refused launch leaves no error scope behind on the device (one would swallow later errors).
    if ("gpu" in device) await expect((device.gpu as GPUDevice).popErrorScope()).rejects.toThrow();
    await stillWorks(device);
  });

  it("refuses buffers of another device, of this backend or another, naming the parameter", async () => {
    const device = await get();
    if (!device) return;
    const other = backend === "cpu" ? new CpuDevice() : await createDevice({ backend: "webgpu" });
    const foreign = new CpuDevice();
    try {
      const out = device.createBuffer("f32", 100);
      const theirs = other.createBuffer("f32", 100);
      expect(await launchError(() => device.launch(scale, { grid: [1], args: [out, theirs, 1, 100] }))).toMatch(`parameter 'x': the buffer belongs to another ${backend === "cpu" ? "CPU" : "WebGPU"} device`);
      if (backend !== "cpu") {
        expect(await launchError(() => device.launch(scale, { grid: [1], args: [out, foreign.createBuffer("f32", 100), 1, 100] }))).toMatch("parameter 'x': the buffer belongs to the cpu backend, not webgpu");
      }
      await expect(device.read(theirs)).rejects.toThrow(/belongs to another/);
      await expect(device.write(theirs, new Float32Array(100))).rejects.toThrow(/belongs to another/);
      await stillWorks(device);
    } finally {
      other.dispose();
      foreign.dispose();
    }
  });

  it("refuses buffers it cannot make with a tskernel error, and keeps working", async () => {
    const device = await get();
    if (!device) return;
    const bad: [string, () => unknown, RegExp][] = [
      ["an unknown element type", () => device.createBuffer("f128" as never, 4), /^tskernel: unknown element type 'f128'/],
      ["a negative length", () => device.createBuffer("f32", -1), /^tskernel: buffer length must be a non-negative integer, got -1/],
      ["a fractional length", () => device.createBuffer("i32", 2.5), /^tskernel: buffer length must be a non-negative integer, got 2.5/],
      ["a NaN length", () => device.createBuffer("u32", Number.NaN), /^tskernel: buffer length must be a non-negative integer, got NaN/],
      ["a BigInt64Array", () => device.createBuffer(new BigInt64Array(4) as never), /^tskernel: buffers are made from Float32Array, Int32Array, Uint32Array, Float64Array/],
      ["a bf16 buffer from strings", () => device.createBuffer("bf16", ["1", "2"] as never), /^tskernel: /],
      ["2^40 elements", () => device.createBuffer("f32", 2 ** 40), /^tskernel: (cannot allocate a buffer of 1099511627776 elements|a buffer of 4398046511104 bytes exceeds)/],
    ];
    for (const [what, make, message] of bad) expect(make, what).toThrow(message);
    await stillWorks(device);
  });

  it("refuses a freed buffer (a second free included), naming the parameter", async () => {
    const device = await get();
    if (!device) return;
    const out = device.createBuffer(new Float32Array(100).fill(Number.NaN));
    const x = device.createBuffer(Float32Array.from({ length: 100 }, () => Math.random()));
    device.free(x);
    expect(await launchError(() => device.launch(scale, { grid: [2], args: [out, x, 1, 100] }))).toMatch("cannot launch 'scale': parameter 'x': the buffer was freed (device.free)");
    await expect(device.read(x)).rejects.toThrow("the buffer was freed");
    await expect(device.write(x, new Float32Array(100))).rejects.toThrow("the buffer was freed");
    expect(() => device.free(x)).toThrow("the buffer was freed");
    // Nothing ran: the output still holds its poison.
    expect(((await device.read(out)) as Float32Array).every(Number.isNaN)).toBe(true);
    await stillWorks(device);
  });

  it("refuses any use of a disposed device instead of crashing or waiting", async () => {
    if (!(await get())) return;
    const device = backend === "cpu" ? new CpuDevice() : await createDevice({ backend: "webgpu" });
    const buffer = device.createBuffer(new Float32Array(100).fill(1));
    device.dispose();
    expect(() => device.createBuffer("f32", 4)).toThrow("was disposed");
    await expect(device.read(buffer)).rejects.toThrow("was disposed");
    await expect(device.write(buffer, new Float32Array(100))).rejects.toThrow("was disposed");
    expect(() => device.free(buffer)).toThrow("was disposed");
    device.dispose(); // a second dispose does nothing
    expect(await launchError(() => device.launch(scale, { grid: [1], args: [buffer, buffer, 1, 100] }))).toMatch(/cannot launch 'scale': the (CPU|WebGPU) device was disposed/);
  });

  it("passes NaN and infinite f32 scalars as themselves (a value beyond f32 becomes infinite)", async () => {
    const device = await get();
    if (!device) return;
    const kernel = library.get("copyScalars");
    for (const [a, expected] of [[Number.NaN, Number.NaN], [Infinity, Infinity], [-Infinity, -Infinity], [1e39, Infinity], [-0, -0], [1e-46, 0]] as const) {
      const out = device.createBuffer(new Float32Array(1).fill(7));
      const flags = device.createBuffer(new Int32Array(2).fill(7));
      await device.launch(kernel, { grid: [1], args: [out, flags, a, true, -5, 4294967295] });
      expect((await device.read(out))[0], `a = ${a}`).toBe(expected);
      expect([...((await device.read(flags)) as Int32Array)]).toEqual([-5, 1]);
    }
  });
});

describe("the CPU backend's time limit", () => {
  const spin = library.get("spin");

  it("stops a kernel that never ends, raising a LaunchFailure naming it at the next synchronize, and the device runs the next launch", async () => {
    const device = new CpuDevice({ timeLimitMs: 300 });
    expect(device.name).toMatch(/one worker thread\)$/);
    try {
      const out = device.createBuffer("i32", 4);
      const started = performance.now();
      const { message } = await runError(device, () => device.launch(spin, { grid: [1], args: [out, 1] }));
      expect(message).toMatch(/^tskernel: launch #1 of 'spin' failed: the launch ran past the time limit of 300 ms and was stopped/);
      expect(performance.now() - started).toBeLessThan(5000);
      await stillWorks(device);
    } finally {
      device.dispose();
    }
  });

  it("stops a kernel that never ends on several workers, and the device runs the next launch", async () => {
    const device = new CpuDevice({ workers: 2, timeLimitMs: 300 });
    try {
      const out = device.createBuffer(new Int32Array(4).fill(-7));
      expect((await runError(device, () => device.launch(spin, { grid: [8], args: [out, 1] }))).message).toMatch(/^tskernel: launch #1 of 'spin' failed: the launch ran past the time limit of 300 ms and was stopped/);
      expect([...((await device.read(out)) as Int32Array)]).toEqual([-7, -7, -7, -7]);
      await stillWorks(device);
      await stillWorks(device);
    } finally {
      device.dispose();
    }
  });

  it("lets a kernel that ends run to completion under the limit", async () => {
    const device = new CpuDevice({ timeLimitMs: 10000 });
    try {
      const out = device.createBuffer(new Int32Array(4).fill(-7));
      // n < 0: the loop never runs, and every thread writes k = 0.
      await device.launch(spin, { grid: [1], args: [out, -1] });
      expect([...((await device.read(out)) as Int32Array)]).toEqual([0, 0, 0, 0]);
    } finally {
      device.dispose();
    }
  });

  it("stops a launch of 2^31 - 1 blocks the same way", async () => {
    const device = await createDevice({ backend: "cpu", timeLimitMs: 300 });
    try {
      const out = device.createBuffer("f32", 64);
      const x = device.createBuffer("f32", 64);
      expect((await runError(device, () => device.launch(scale, { grid: [2 ** 31 - 1], args: [out, x, 1, 64] }))).message).toMatch("launch #1 of 'scale' failed: the launch ran past the time limit of 300 ms");
      await stillWorks(device);
    } finally {
      device.dispose();
    }
  });

  it("in checked mode names the loop the kernel was in", async () => {
    const device = new CpuDevice({ checked: true, timeLimitMs: 200 });
    const error = (await runError(device, () => device.launch(spin, { grid: [1], args: [device.createBuffer("i32", 4), 1] }))).cause;
    expect(error).toBeInstanceOf(KernelFault);
    expect((error as KernelFault).kind).toBe("time-limit");
    expect((error as KernelFault).location).toMatch(/kernels\.ts:16:3$/);
    expect((error as KernelFault).message).toMatch(/time-limit in 'spin' at .*kernels\.ts:16:3, block \(0, 0, 0\), thread \(0, 0, 0\): the launch ran past its time limit of 200 ms in this loop/);
  });

  it("in checked mode names a loop of the whole block (one with a barrier), with no thread", async () => {
    const device = new CpuDevice({ checked: true, timeLimitMs: 200 });
    const error = (await runError(device, () => device.launch(library.get("spinBarrier"), { grid: [1], args: [device.createBuffer("i32", 4), 1] }))).cause;
    expect(error).toBeInstanceOf(KernelFault);
    expect((error as KernelFault).kind).toBe("time-limit");
    expect((error as KernelFault).threadIdx).toBeUndefined();
    expect((error as KernelFault).message).toMatch(/time-limit in 'spinBarrier' at .*kernels\.ts:23:3, block \(0, 0, 0\): the launch ran past its time limit of 200 ms in this loop/);
  });

  it("in checked mode stops a grid too large to finish after a block, saying how far it got", async () => {
    const device = new CpuDevice({ checked: true, timeLimitMs: 200 });
    const x = Float32Array.from({ length: 64 }, () => Math.random());
    const out = device.createBuffer(new Float32Array(64).fill(Number.NaN));
    const { message } = await runError(device, () => device.launch(scale, { grid: [2 ** 31 - 1], args: [out, device.createBuffer(x), 2, 64] }));
    const [, blocks] = /stopped after (\d+) of 2147483647 blocks/.exec(message) ?? [];
    expect(Number(blocks)).toBeGreaterThan(0);
    // Block 0 ran before the limit: its results are there.
    expect([...((await device.read(out)) as Float32Array)]).toEqual([...x].map((v) => Math.fround(v * 2)));
  });

  it("refuses a time limit that is not a positive number setTimeout can take", () => {
    for (const bad of [0, -1, Number.NaN, Infinity, 2 ** 31]) expect(() => new CpuDevice({ timeLimitMs: bad })).toThrow(/timeLimitMs must be a positive number of milliseconds up to 2147483647/);
  });
});
