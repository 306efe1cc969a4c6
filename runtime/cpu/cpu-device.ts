/**
 * The CPU backend: runs the JS backend's output on the calling thread, one block after another (each block
 * function runs its threads region by region, so barriers hold), or with `workers: N` on N threads that share
 * the launch's blocks: the calling thread and N − 1 worker threads (worker-pool.ts; buffers then live in
 * shared memory), each claiming chunks of blocks from a shared queue until none is left. The calling thread
 * takes chunks itself because it would otherwise only wait, and because waking a sleeping worker costs tens of
 * microseconds on a virtual machine; the queue (rather than fixed shares) lets a launch finish at about the
 * speed of one thread when another process holds the other cores, instead of waiting for a worker's share. Buffers are typed
 * arrays owned by the device; reads return copies, so a caller can never alias device memory by accident.
 * Checked mode always runs on the calling thread: its checker follows one block at a time. A launch of one
 * block runs on the calling thread too, where no time limit asks for a worker: it has nothing to share out. Subgroups have
 * `subgroupSize` lanes (default 32, as CUDA's warps; WebGPU adapters have 4 to 128), so kernels can be tested
 * for the sizes they will meet.
 *
 * A time limit (`timeLimitMs`) stops a launch that runs too long: unchecked launches then run on worker
 * threads only (one at least; N with `workers: N`), whose termination is the only way to stop a loop that never ends, at no cost per
 * iteration; checked launches tick at every loop iteration and stop in the loop. A device refuses buffers of
 * other devices and freed buffers, and everything once disposed (buffer-registry.ts).
 */

import os from "node:os";
import { performance } from "node:perf_hooks";
import { bufferShape, fromStorage, storageConstructors, writeStorage } from "../element-types.ts";
import { checkCopy, median, type BufferValues, type Device, type DeviceBuffer, type KernelHandle, type ElementType, type ReadOptions, type LaunchLimits, type LaunchOptions, type CopyTimingOptions, type LaunchStep, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { BufferRegistry } from "../buffer-registry.ts";
import { checkLaunch, defaultLimits, kernelName, LaunchError, notBuiltFor } from "../launch-check.ts";
import { Checker } from "./checker.ts";
import { blockQueue, drainQueue, TimeLimitExceeded, WorkerPool } from "./worker-pool.ts";

interface CpuBuffer extends DeviceBuffer {
  readonly data: TypedArray;
}



export class CpuDevice implements Device {
  readonly backend = "cpu" as const;
  readonly name: string;
  readonly limits: LaunchLimits;
  /** Checked mode: every access and barrier is checked (see checker.ts); several times slower. */
  readonly checked: boolean;
  /** Threads that run a launch's blocks (1: the calling thread only; N: the calling thread and N − 1 workers). */
  readonly workers: number;
  /** A launch running longer than this is stopped (see the file's comment). */
  readonly timeLimitMs?: number;
  private pool?: WorkerPool;
  /** The threads that run blocks, in words (for the name and the timing method). */
  private readonly threads: string;
  private readonly buffers = new BufferRegistry("CPU", "cpu");

  /** Lanes per subgroup. */
  readonly subgroupSize: number;

  constructor(options: { checked?: boolean; workers?: number; subgroupSize?: number; timeLimitMs?: number } = {}) {
    this.checked = options.checked ?? false;
    const subgroupSize = options.subgroupSize ?? 32;
    if (!Number.isInteger(subgroupSize) || subgroupSize < 1 || subgroupSize > 128 || (subgroupSize & (subgroupSize - 1)) !== 0) {
      throw new RangeError(`tskernel: subgroupSize must be a power of two from 1 to 128, got ${subgroupSize}`);
    }
    this.subgroupSize = subgroupSize;
    this.limits = { ...defaultLimits, subgroupSize };
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`tskernel: workers must be a positive integer, got ${workers}`);
    const limit = options.timeLimitMs;
    // setTimeout takes at most 2^31 - 1 ms (about 24.8 days); beyond, Node would fire it after 1 ms.
    if (limit !== undefined && !(limit > 0 && limit <= 2147483647)) throw new RangeError(`tskernel: timeLimitMs must be a positive number of milliseconds up to 2147483647, got ${limit}`);
    this.timeLimitMs = limit;
    this.workers = this.checked ? 1 : workers;
    // With a time limit every share runs on a worker, which can be stopped; otherwise the calling thread takes one.
    if (this.workers > 1 || (limit !== undefined && !this.checked)) this.pool = new WorkerPool(limit === undefined ? this.workers - 1 : this.workers);
    this.threads = this.pool ? (limit === undefined ? `${this.workers} threads, ${this.workers - 1} of them workers` : this.workers > 1 ? `${this.workers} worker threads` : "one worker thread") : "one thread";
    const lanes = subgroupSize === 32 ? "" : `, subgroups of ${subgroupSize}`;
    this.name = `CPU (${os.cpus()[0]?.model?.trim() ?? "unknown"}, JavaScript, ${this.threads}${lanes}${this.checked ? ", checked" : ""})`;
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, lengthOrValues: number | BufferValues): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType, lengthOrValues?: number | BufferValues): DeviceBuffer {
    this.buffers.assertOpen();
    const { elementType, length, storage } = bufferShape(dataOrType, lengthOrValues);
    const data = this.allocate(elementType, length);
    if (storage) data.set(storage as never);
    return this.buffers.add({ kind: "tskernel.buffer", backend: "cpu", elementType, length, data });
  }

  /** Worker threads see a buffer only when it lives in shared memory. */
  private allocate(elementType: ElementType, length: number): TypedArray {
    const ctor = storageConstructors[elementType];
    const bytes = length * ctor.BYTES_PER_ELEMENT;
    try {
      return this.pool ? new ctor(new SharedArrayBuffer(bytes) as unknown as ArrayBuffer) : new ctor(length);
    } catch (error) {
      // V8's own words ("Invalid typed array length", "Array buffer allocation failed"), said as ours.
      throw new RangeError(`tskernel: cannot allocate a buffer of ${length} elements (${bytes} bytes) on the CPU: ${(error as Error).message}`);
    }
  }

  private own(buffer: DeviceBuffer): CpuBuffer {
    this.buffers.own(buffer);
    return buffer as CpuBuffer;
  }

  /** Drops the device's hold on a buffer's memory; any later use of the buffer is refused. */
  free(buffer: DeviceBuffer): void {
    this.buffers.free(buffer);
  }

  async write(buffer: DeviceBuffer, data: BufferValues): Promise<void> {
    const own = this.own(buffer);
    own.data.set(writeStorage(own, data) as never);
  }

  async read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray> {
    const own = this.own(buffer);
    return fromStorage(own.elementType, own.data.slice(), options);
  }

  async launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    this.functionOf(kernel);
    if (!this.pool || !kernel.jsSource) {
      this.run(kernel, options);
      return;
    }
    const { checked, args } = this.prepare(kernel, options);
    // A pool stopped by an earlier time limit is replaced; the buffers live in shared memory and stay.
    if (this.pool.stopped) this.pool = new WorkerPool(this.pool.size);
    if (this.timeLimitMs === undefined && kernel.js) {
      const total = checked.grid[0] * checked.grid[1] * checked.grid[2];
      if (total === 1) {
        // Nothing to share out: the messages would cost more than the block.
        this.runBlocks(kernel, checked, args, kernel.js, undefined);
        return;
      }
      // The workers and the calling thread claim chunks of blocks from one queue, all at once (its buffers are
      // the same shared memory): a thread that the OS does not run for a while (another process holds its
      // core) takes fewer chunks instead of holding up the launch with a fixed share.
      const queue = blockQueue(total, this.workers);
      const others = this.pool.run(kernel.jsSource, args, checked.grid, checked.block, this.subgroupSize, undefined, undefined, queue);
      try {
        drainQueue(queue, (start, end) => this.runBlocks(kernel, checked, args, kernel.js!, undefined, { start, end }));
      } catch (error) {
        await others.catch(() => {});
        throw error;
      }
      // Every block finished (the count is raised after each chunk's writes): the workers' replies only say
      // that they found the queue empty, and a worker still waiting for its turn on a busy core would make the
      // launch wait for nothing. Their replies settle later; a failure can no longer happen, as no block is left.
      if (Atomics.load(queue.counter, 1) === total) {
        others.catch(() => {});
        return;
      }
      await others;
      return;
    }
    try {
      await this.pool.run(kernel.jsSource, args, checked.grid, checked.block, this.subgroupSize, this.timeLimitMs);
    } catch (error) {
      if (!(error instanceof TimeLimitExceeded)) throw error;
      throw new LaunchError(
        kernel.description.entryName,
        `it ran past the time limit of ${error.limitMs} ms and was stopped (a loop that never ends? checked mode names the loop); buffers it wrote may hold partial results`,
      );
    }
  }

  /** The checked launch, with buffers replaced by their typed arrays, as the block functions take them. */
  private prepare(kernel: KernelHandle, options: LaunchOptions) {
    const name = kernelName(kernel);
    this.buffers.assertOpen(name);
    const checked = checkLaunch(kernel.description, options, "cpu", this.limits);
    this.buffers.checkLaunch(name, checked);
    return { checked, args: checked.args.map((arg) => (typeof arg === "object" ? (arg as CpuBuffer).data : arg)) };
  }

  /**
   * Runs a launch synchronously on the calling thread (the CPU has nothing to wait for). With a time limit,
   * the clock is read after each block (a grid too large to finish stops there) and, in checked mode, at
   * each loop iteration; a loop that never ends in an unchecked kernel can only be stopped by `launch`,
   * which runs it on workers.
   */
  run(kernel: KernelHandle, options: LaunchOptions): void {
    const fn = this.functionOf(kernel);
    const { checked, args } = this.prepare(kernel, options);
    const name = kernel.description.entryName;
    const checker = this.checked ? new Checker(name, this.timeLimitMs) : undefined;
    this.runBlocks(kernel, checked, args, fn, checker);
  }

  /** The kernel's JS function for this device's mode, or the error that says why it has none. */
  private functionOf(kernel: KernelHandle): NonNullable<KernelHandle["js"]> {
    kernelName(kernel);
    const fn = this.checked ? kernel.jsChecked : kernel.js;
    if (!fn) throw notBuiltFor(kernel.description, "cpu");
    return fn;
  }

  /**
   * The blocks of a launch whose arguments were checked (all, or `range.start` to `range.end` − 1 in
   * x-fastest order), one after another on the calling thread.
   */
  private runBlocks(
    kernel: KernelHandle,
    checked: ReturnType<CpuDevice["prepare"]>["checked"],
    args: readonly unknown[],
    fn: NonNullable<KernelHandle["js"]>,
    checker: Checker | undefined,
    range?: { readonly start: number; readonly end: number },
  ): void {
    const name = kernel.description.entryName;
    const limit = this.timeLimitMs;
    const deadline = limit === undefined ? Infinity : performance.now() + limit;
    const [gx, gy, gz] = checked.grid;
    const blockIdx = [0, 0, 0];
    const end = range?.end ?? gx * gy * gz;
    for (let i = range?.start ?? 0; i < end; i++) {
      blockIdx[0] = i % gx;
      blockIdx[1] = Math.floor(i / gx) % gy;
      blockIdx[2] = Math.floor(i / (gx * gy));
      fn(args, blockIdx, checked.block, checked.grid, checker, this.subgroupSize);
      if (deadline !== Infinity && performance.now() > deadline) {
        throw new LaunchError(name, `it ran past the time limit of ${limit} ms and was stopped after ${i + 1} of ${gx * gy * gz} blocks; buffers it wrote hold partial results`);
      }
    }
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    return this.timeSequence([{ kernel, options }], timing);
  }

  async timeSequence(steps: readonly LaunchStep[], timing: TimingOptions = {}): Promise<Timing> {
    const run = async () => {
      for (const step of steps) await this.launch(step.kernel, step.options);
    };
    const { runsMs, minMs, medianMs } = await timeRuns(run, timing);
    const method = this.pool ? `performance.now() around each launch on ${this.threads}` : "performance.now() around each synchronous launch";
    return { medianMs, minMs, runsMs, method };
  }

  /** The CPU's copy: TypedArray.prototype.set (a memcpy) on the calling thread. */
  async timeCopy(destination: DeviceBuffer, source: DeviceBuffer, timing: CopyTimingOptions = {}): Promise<Timing> {
    checkCopy(destination, source);
    const to = this.own(destination).data;
    const from = this.own(source).data;
    const repeat = timing.repeat ?? 1;
    const { runsMs, minMs, medianMs } = await timeRuns(async () => {
      for (let i = 0; i < repeat; i++) to.set(from as never);
    }, timing);
    return { medianMs: medianMs / repeat, minMs: minMs / repeat, runsMs: runsMs.map((ms) => ms / repeat), method: "performance.now() around TypedArray.prototype.set on the calling thread" };
  }

  dispose(): void {
    this.buffers.dispose();
    void this.pool?.terminate();
  }
}

/** Warm-up runs (default 1), then `runs` (default 3) runs, each timed with performance.now(). */
async function timeRuns(run: () => Promise<unknown>, timing: TimingOptions): Promise<{ runsMs: number[]; minMs: number; medianMs: number }> {
  const warmup = timing.warmup ?? 1;
  const runs = timing.runs ?? 3;
  for (let i = 0; i < warmup; i++) await run();
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await run();
    runsMs.push(performance.now() - start);
  }
  return { runsMs, minMs: Math.min(...runsMs), medianMs: median(runsMs) };
}
