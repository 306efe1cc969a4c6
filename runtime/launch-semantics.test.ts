/**
 * Asynchronous launches on the CPU and WebGPU (SwiftShader here): the shared checks of tests/launch-semantics.ts
 * (order, reads and writes after launches, frees while in use, replayed sequences, streams and events), then
 * what each backend adds: errors met while running come from the next synchronize or read, naming the kernel
 * and the launch, once; WebGPU records consecutive launches into one submission, also through the plugin's
 * launchers; the CPU keeps the order with workers; streams and events of another device are refused. CUDA
 * runs the shared checks on the GPU machine (bench/gpu-run.ts --only launch).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { deviceFor, testedBackends } from "../tests/backends.ts";
import { checkLaunchSemantics, type SemanticsKernels } from "../tests/launch-semantics.ts";
import { CpuDevice } from "./cpu/cpu-device.ts";
import { KernelFault } from "./cpu/checker.ts";
import type { Device } from "./device.ts";
import { compileKernelLibrary } from "./kernels.ts";
import { LaunchFailure, LaunchLedger } from "./launch-ledger.ts";
import { compiledKernel, launcher } from "./webgpu/kernel-module.ts";
import type { WebGpuDevice } from "./webgpu/webgpu-device.ts";

const elementwise = compileKernelLibrary(["examples/elementwise.ts"], ["js", "wgsl"]);
const kernels: SemanticsKernels = { saxpy: elementwise.get("saxpy"), gelu: elementwise.get("gelu") };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-async-"));
fs.writeFileSync(
  path.join(dir, "kernels.ts"),
  `import { kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";
export const shiftRead = kernel({ block: [16] }, (out: Float32Array, x: ReadonlyFloat32Array, shift: i32) => {
  out[threadIdx.x] = x[threadIdx.x + shift];
});
`,
);
const faulty = compileKernelLibrary([path.join(dir, "kernels.ts")], ["js", "wgsl"], { baseDir: dir });

describe.each(testedBackends)("asynchronous launches on %s", (backend) => {
  const get = async (): Promise<Device | undefined> => {
    const device = await deviceFor(backend);
    return typeof device === "string" ? undefined : device;
  };

  it("run in order, are waited for by read, written after, kept alive when freed, replayed, and ordered across streams", async () => {
    const device = await get();
    if (!device) return;
    const results = await checkLaunchSemantics(device, kernels);
    expect(results.map((r) => r.check)).toHaveLength(5);
    for (const result of results) expect(result.maxError, result.check).toBeLessThanOrEqual(1e-4);
  });

  it("refuse a sequence replay once one of its buffers was freed, and a stream of another device", async () => {
    const device = await get();
    if (!device) return;
    const n = 512;
    const x = device.createBuffer(Float32Array.from({ length: n }, Math.random));
    const y = device.createBuffer(new Float32Array(n).fill(1));
    const sequence = await device.record([{ kernel: kernels.saxpy, options: { grid: [2], args: [n, 2, x, y] } }]);
    device.free(x);
    await expect(sequence.replay()).rejects.toThrow("cannot launch 'saxpy': parameter 'x': the buffer was freed (device.free)");
    const other = new CpuDevice();
    const foreign = other.createStream();
    const z = device.createBuffer(new Float32Array(n));
    await expect(device.launch(kernels.saxpy, { grid: [2], args: [n, 2, z, y], stream: foreign })).rejects.toThrow(`cannot launch 'saxpy': the stream belongs to another device (a cpu stream)`);
    expect(() => device.createStream().waitEvent(foreign.recordEvent())).toThrow("waitEvent expects an event recorded on a stream of the same device");
    // Nothing of the refused launches ran.
    expect([...((await device.read(y)) as Float32Array)].every((v) => v === 1)).toBe(true);
  });
});

describe("errors met while running, on the CPU (checked mode)", () => {
  it("come from the next synchronize or read, naming the kernel and the launch, once", async () => {
    const device = new CpuDevice({ checked: true });
    const x = Float32Array.from({ length: 16 }, () => Math.random() * 2 - 1);
    const X = device.createBuffer(x);
    const out = device.createBuffer(new Float32Array(16).fill(Number.NaN));
    const kernel = faulty.get("shiftRead");
    await device.launch(kernel, { grid: [1], args: [out, X, 0] });
    // Launch #2 reads x[16], past its end: the launch itself resolves (it was enqueued), the read raises.
    await device.launch(kernel, { grid: [1], args: [out, X, 1] });
    const error = await device.read(out).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchFailure);
    const failure = error as LaunchFailure;
    expect(failure.launch).toBe(2);
    expect(failure.kernel).toBe("shiftRead");
    expect(failure.cause).toBeInstanceOf(KernelFault);
    expect(failure.message).toMatch(/^tskernel: launch #2 of 'shiftRead' failed: out-of-bounds in 'shiftRead' at .*kernels\.ts:3:22, block \(0, 0, 0\), thread \(15, 0, 0\): read of 'x'\[16\], but it has 16 elements$/);
    // Raised once: the device goes on, and the next launch's result is right.
    await device.launch(kernel, { grid: [1], args: [out, X, 0] });
    expect([...((await device.read(out)) as Float32Array)]).toEqual([...x]);
  });

  it("keep the order of launches not awaited on workers, and raise nothing when none failed", async () => {
    const device = new CpuDevice({ workers: 2 });
    try {
      const n = 100_000;
      const x = Float32Array.from({ length: n }, () => Math.random());
      const X = device.createBuffer(x);
      const Y = device.createBuffer(new Float32Array(n).fill(0));
      const G = device.createBuffer(new Float32Array(n).fill(Number.NaN));
      // y = x, then g = gelu(y), then y = 2·g + y: in any other order g or y would differ.
      void device.launch(kernels.saxpy, { grid: [Math.ceil(n / 256)], args: [n, 1, X, Y] });
      void device.launch(kernels.gelu, { grid: [Math.ceil(n / 256)], args: [G, Y, n] });
      void device.launch(kernels.saxpy, { grid: [Math.ceil(n / 256)], args: [n, 2, G, Y] });
      const got = (await device.read(Y)) as Float32Array;
      const gelu = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(got[i]! - (x[i]! + 2 * gelu(x[i]!))));
      expect(worst).toBeLessThan(1e-5);
      await device.synchronize();
    } finally {
      device.dispose();
    }
  });
});

describe("the launch ledger", () => {
  it("names a failure in one launch exactly, and several it cannot tell apart as a range, with the later count", () => {
    const ledger = new LaunchLedger();
    for (const kernel of ["a", "b", "b", "b", "c"]) ledger.next(kernel);
    ledger.failUnsettled(new Error("tskernel: cuCtxSynchronize failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)"), "CUDA does not say which");
    ledger.fail(6, "d", new Error("tskernel: later"));
    expect(() => ledger.raise()).toThrow("tskernel: one of launches #1–#5 ('a' #1, 'b' #2–#4, 'c' #5; CUDA does not say which) failed: cuCtxSynchronize failed with CUDA_ERROR_ILLEGAL_ADDRESS (700) (1 later failure not shown)");
    expect(() => ledger.raise()).not.toThrow();
    expect(ledger.unsettled).toBe(false);
    ledger.next("e");
    expect(ledger.unsettled).toBe(true);
    ledger.failUnsettled(new Error("tskernel: fault"), "unsure");
    expect(() => ledger.raise()).toThrow("tskernel: launch #6 of 'e' failed: fault");
  });
});

describe.skipIf(!testedBackends.includes("webgpu"))("WebGPU batching", () => {
  const get = async (): Promise<WebGpuDevice | undefined> => {
    const device = await deviceFor("webgpu");
    return typeof device === "string" ? undefined : (device as WebGpuDevice);
  };

  it("submits consecutive launches together, every batchSize launches and at a read", async () => {
    const device = await get();
    if (!device) return;
    const n = 1024;
    const x = Float32Array.from({ length: n }, () => Math.random());
    const X = device.createBuffer(x);
    const Y = device.createBuffer(new Float32Array(n).fill(0));
    await device.launch(kernels.saxpy, { grid: [4], args: [n, 0, X, Y] }); // makes the pipeline
    await device.synchronize();
    const before = device.batcher.submissions;
    const count = 3 * device.batcher.batchSize + 5;
    for (let i = 1; i <= count; i++) void device.launch(kernels.saxpy, { grid: [4], args: [n, i, X, Y] });
    const got = (await device.read(Y)) as Float32Array;
    // Three full batches, then the last five with the read's copy.
    expect(device.batcher.submissions - before).toBe(4);
    const sum = (count * (count + 1)) / 2;
    for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - sum * x[i]!) / (sum * x[i]!)).toBeLessThan(1e-5);
  });

  it("batches the launches of the bundler plugin's launchers too", async () => {
    const device = await get();
    if (!device) return;
    const handle = kernels.saxpy;
    const saxpy = compiledKernel([{ description: handle.description, entryPoint: handle.wgsl!.entryPoint }], handle.wgsl!.source, []);
    const launch = launcher(device, saxpy);
    const n = 256;
    const x = Float32Array.from({ length: n }, () => Math.random());
    const X = device.createBuffer(x);
    const Y = device.createBuffer(new Float32Array(n).fill(0));
    await launch({ grid: [1], args: [n, 0, X, Y] });
    await device.synchronize();
    const before = device.batcher.submissions;
    for (let i = 0; i < 10; i++) void launch({ grid: [1], args: [n, 0.5, X, Y] });
    const got = (await device.read(Y)) as Float32Array;
    expect(device.batcher.submissions - before).toBe(1);
    for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - 5 * x[i]!) / (5 * x[i]!)).toBeLessThan(1e-5);
  });

  it("raises a validation error of one launch in a batch at the next read, naming that launch, and runs the batches after it", async () => {
    const device = await get();
    if (!device) return;
    const n = 256;
    const x = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
    const X = device.createBuffer(x);
    const Y = device.createBuffer(new Float32Array(n).fill(Number.NaN));
    await device.launch(kernels.gelu, { grid: [1], args: [Y, X, n] });
    await device.synchronize();
    const first = await device.read(Y);
    void device.launch(kernels.saxpy, { grid: [1], args: [n, 1, X, Y] });
    // The same buffer as gelu's output and input: WebGPU refuses a writable binding aliased in one dispatch.
    void device.launch(kernels.gelu, { grid: [1], args: [Y, Y, n] });
    void device.launch(kernels.saxpy, { grid: [1], args: [n, 1, X, Y] });
    const error = await device.read(Y).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LaunchFailure);
    const failure = error as LaunchFailure;
    expect(failure.kernel).toBe("gelu");
    expect(failure.message).toMatch(new RegExp(`^tskernel: launch #${failure.launch} of 'gelu' failed: WebGPU reported: .*writable.*nothing of the 3 launches submitted with it \\(#${failure.launch - 1}–#${failure.launch + 1}\\) ran`, "s"));
    // The batch did not run: Y is what the first read saw. Later batches run.
    expect([...((await device.read(Y)) as Float32Array)]).toEqual([...first]);
    await device.launch(kernels.saxpy, { grid: [1], args: [n, 1, X, Y] });
    const after = (await device.read(Y)) as Float32Array;
    for (let i = 0; i < n; i++) expect(after[i]).toBe(Math.fround(first[i]! + x[i]!));
  });
});
