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
 *
 * Launches, reads and writes go through one queue, in call order, as on a GPU: a launch runs at once when
 * nothing is queued, else after the launch before it (still on workers). What a launch meets while running
 * (a KernelFault, a time limit) goes to the ledger, for the next synchronize() or read() to raise, as the GPU
 * backends do (docs/runtime.md, "Launches are asynchronous").
 */

import os from "node:os";
import { performance } from "node:perf_hooks";
import { bufferShape, fromStorage, storageConstructors, writeStorage } from "../element-types.ts";
import { checkCopy, median, type BufferValues, type Device, type DeviceBuffer, type JsBlockFunction, type KernelHandle, type ElementType, type ReadOptions, type LaunchLimits, type LaunchOptions, type LaunchSequence, type CopyTimingOptions, type LaunchStep, type Stream, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { BufferRegistry } from "../buffer-registry.ts";
import { checkLaunch, defaultLimits, kernelName, notBuiltFor, type CheckedLaunch } from "../launch-check.ts";
import { LaunchLedger } from "../launch-ledger.ts";
import { checkStream, SingleQueueStream, type SingleQueue } from "../streams.ts";
import { Checker } from "./checker.ts";
import type { ManifestLayout } from "../../compiler/lang/manifest.ts";
import { flattenValue, layoutWriteBytes, structuredBytes, type LayoutValue } from "../layouts.ts";
import { blockQueue, drainQueue, TimeLimitExceeded, WorkerPool } from "./worker-pool.ts";

interface CpuBuffer extends DeviceBuffer {
  /** The elements; for a buffer of vectors or structs, its bytes. */
  readonly data: TypedArray | Uint8Array;
  /**
   * A buffer of vectors or structs: typed views of its bytes, which kernels take in place of the buffer
   * (scalarize-vectors.ts reads each field through the view of its type).
   */
  readonly views?: { readonly f32: Float32Array; readonly i32: Int32Array; readonly u32: Uint32Array; readonly f64?: Float64Array; readonly f16: Uint16Array };
}

/** A checked launch, ready to run: `run` runs it (on the workers: a promise). */
interface PreparedLaunch {
  readonly name: string;
  readonly kernel: KernelHandle;
  readonly checked: CheckedLaunch;
  run(): Promise<void> | void;
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
  createBuffer(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType | ManifestLayout, lengthOrValues?: number | BufferValues | readonly LayoutValue[]): DeviceBuffer {
    this.buffers.assertOpen();
    if (typeof dataOrType === "object" && !ArrayBuffer.isView(dataOrType)) return this.structuredBuffer(dataOrType, lengthOrValues as number | Uint8Array | readonly LayoutValue[]);
    const { elementType, length, storage } = bufferShape(dataOrType, lengthOrValues as number | BufferValues | undefined);
    const data = this.allocate(elementType, length);
    if (storage) data.set(storage as never);
    return this.buffers.add({ kind: "tskernel.buffer", backend: "cpu", elementType, length, data });
  }

  /** A buffer of vectors or structs: its bytes, and a view of each 4-byte scalar type over them (padded to whole words). */
  private structuredBuffer(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): DeviceBuffer {
    const { bytes, length } = structuredBytes(layout, data);
    const size = Math.ceil(bytes.byteLength / 8) * 8;
    let memory: ArrayBuffer;
    try {
      memory = this.pool ? (new SharedArrayBuffer(size) as unknown as ArrayBuffer) : new ArrayBuffer(size);
    } catch (error) {
      throw new RangeError(`tskernel: cannot allocate a buffer of ${length} ${layout.name} (${size} bytes) on the CPU: ${(error as Error).message}`);
    }
    const own = new Uint8Array(memory, 0, bytes.byteLength);
    own.set(bytes);
    // f16 fields and lanes are read as their encodings, which the kernel decodes (js-float16.ts).
    const views = { f32: new Float32Array(memory), i32: new Int32Array(memory), u32: new Uint32Array(memory), f64: new Float64Array(memory), f16: new Uint16Array(memory) };
    return this.buffers.add<CpuBuffer>({ kind: "tskernel.buffer", backend: "cpu", elementType: layout.name, length, layout, data: own, views });
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

  /**
   * Writes once the launches enqueued before it have run (the data is copied now if it must wait). Here and
   * in read, the queue is entered before the function's first await, so the call's place in it is its own.
   */
  async write(buffer: DeviceBuffer, data: BufferValues): Promise<void> {
    const own = this.own(buffer);
    const storage = own.layout ? layoutWriteBytes(own, own.layout, data) : writeStorage(own as { elementType: ElementType; length: number }, data);
    const source = this.tail && storage === data ? storage.slice() : storage;
    return this.inOrder(() => own.data.set(source as never));
  }

  /** A copy of the buffer once the launches enqueued before it have run; raises the first error they met. */
  async read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray> {
    const own = this.own(buffer);
    return this.inOrder(() => {
      this.ledger.raise();
      return own.layout ? own.data.slice() : fromStorage(own.elementType as ElementType, own.data.slice(), options);
    });
  }

  synchronize(): Promise<void> {
    return this.inOrder(() => this.ledger.raise());
  }

  /**
   * Checks the launch now and runs it in order: at once on the calling thread when nothing is queued before it
   * (the CPU's queue is the calling thread, so the returned promise is already resolved), or after the launch
   * before it, whose workers are still running. Errors of the run (a KernelFault in checked mode, a time limit)
   * go to the ledger, for the next synchronize() or read().
   */
  launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    let prepared: PreparedLaunch;
    try {
      prepared = this.prepareLaunch(kernel, options);
      checkStream(options.stream, this, prepared.name, (stream) => (stream as SingleQueueStream).disposed);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.enqueueLaunch(prepared);
  }

  /** Numbers a checked launch and runs it in order; its errors are recorded for synchronize() and read(). */
  private enqueueLaunch(prepared: PreparedLaunch): Promise<void> {
    const launch = this.ledger.next(prepared.name);
    return this.inOrder(() => {
      let result: Promise<void> | void;
      try {
        result = prepared.run();
      } catch (error) {
        this.ledger.fail(launch, prepared.name, error);
        return;
      }
      if (result) return result.catch((error: unknown) => this.ledger.fail(launch, prepared.name, error));
    });
  }

  /**
   * The device's queue: runs `job` now when nothing is queued (a synchronous job then completes before this
   * returns, as a launch on the calling thread does), else after the jobs queued before it. Jobs run one at a
   * time, in the order they were given.
   */
  private inOrder<T>(job: () => T | Promise<T>): Promise<T> {
    if (!this.tail) {
      let result: T | Promise<T>;
      try {
        result = job();
      } catch (error) {
        return Promise.reject(error);
      }
      return result instanceof Promise ? this.follow(result) : Promise.resolve(result);
    }
    return this.follow(this.tail.then(job));
  }

  /** Makes `running` the queue's last job until it settles. */
  private follow<T>(running: Promise<T>): Promise<T> {
    const settled: Promise<void> = running.then(
      () => undefined,
      () => undefined,
    );
    this.tail = settled;
    void settled.then(() => {
      if (this.tail === settled) this.tail = undefined;
    });
    return running;
  }

  /** The last job of the queue while one is running on workers (undefined: the queue is empty). */
  private tail?: Promise<void>;
  private readonly ledger = new LaunchLedger();

  /** Everything a launch needs to run, checked: its arguments resolved to the typed arrays they name. */
  private prepareLaunch(kernel: KernelHandle, options: LaunchOptions): PreparedLaunch {
    const fn = this.functionOf(kernel);
    const { checked, args } = this.prepare(kernel, options);
    const name = kernel.description.entryName;
    // Buffers freed after this point stay alive in `args` until the launch has run.
    const run = () => this.runChecked(kernel, checked, args, fn);
    return { name, kernel, checked, run };
  }

  /** Runs a checked launch: on the calling thread, or on the workers (a promise then). */
  private runChecked(kernel: KernelHandle, checked: CheckedLaunch, args: readonly unknown[], fn: JsBlockFunction): Promise<void> | void {
    const name = kernel.description.entryName;
    if (!this.pool || !kernel.jsSource) {
      const checker = this.checked ? new Checker(name, this.timeLimitMs) : undefined;
      this.runBlocks(kernel, checked, args, fn, checker);
      return;
    }
    // A pool stopped by an earlier time limit is replaced; the buffers live in shared memory and stay.
    if (this.pool.stopped) this.pool = new WorkerPool(this.pool.size);
    if (this.timeLimitMs === undefined && kernel.js) {
      const total = checked.grid[0] * checked.grid[1] * checked.grid[2];
      // Nothing to share out: the messages would cost more than the block.
      if (total === 1) return this.runBlocks(kernel, checked, args, kernel.js, undefined);
      return this.runShared(kernel, checked, args, total);
    }
    return this.runOnWorkers(kernel, checked, args);
  }

  /**
   * The workers and the calling thread claim chunks of blocks from one queue, all at once (its buffers are the
   * same shared memory): a thread that the OS does not run for a while (another process holds its core) takes
   * fewer chunks instead of holding up the launch with a fixed share.
   */
  private async runShared(kernel: KernelHandle, checked: CheckedLaunch, args: readonly unknown[], total: number): Promise<void> {
    const queue = blockQueue(total, this.workers);
    const others = this.pool!.run(kernel.jsSource!, args, checked.grid, checked.block, this.subgroupSize, undefined, undefined, queue);
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
  }

  /** With a time limit every block runs on a worker, which can be stopped. */
  private async runOnWorkers(kernel: KernelHandle, checked: CheckedLaunch, args: readonly unknown[]): Promise<void> {
    try {
      await this.pool!.run(kernel.jsSource!, args, checked.grid, checked.block, this.subgroupSize, this.timeLimitMs);
    } catch (error) {
      if (!(error instanceof TimeLimitExceeded)) throw error;
      throw new Error(`tskernel: the launch ran past the time limit of ${error.limitMs} ms and was stopped (a loop that never ends? checked mode names the loop); buffers it wrote may hold partial results`);
    }
  }

  createStream(): Stream {
    this.buffers.assertOpen();
    return new SingleQueueStream(this.queueForStreams, this);
  }

  /** What the streams see of the device: one queue. */
  private readonly queueForStreams: SingleQueue = {
    backend: "cpu",
    eventNow: () => {
      let reached = !this.tail;
      void this.tail?.then(() => (reached = true));
      const point = this.tail ?? Promise.resolve();
      return {
        kind: "tskernel.event",
        done: () => reached,
        synchronize: async () => {
          await point;
          this.ledger.raise();
        },
      };
    },
    synchronize: () => this.synchronize(),
  };

  /** Checks every step now; a replay runs them in order with no checks but that their buffers are still live. */
  async record(steps: readonly LaunchStep[]): Promise<LaunchSequence> {
    this.buffers.assertOpen();
    return new CpuSequence(this, steps.map((step) => this.prepareLaunch(step.kernel, step.options)));
  }

  /** For CpuSequence: the launches of a replay, their buffers checked again first (one freed since is refused). */
  replayLaunches(steps: readonly PreparedLaunch[]): Promise<void> {
    for (const step of steps) this.buffers.checkLaunch(step.name, step.checked);
    let last: Promise<void> = Promise.resolve();
    for (const step of steps) last = this.enqueueLaunch(step);
    return last;
  }

  /** For CpuSequence: a step's new options, checked. */
  prepareStep(kernel: KernelHandle, options: LaunchOptions): PreparedLaunch {
    return this.prepareLaunch(kernel, options);
  }

  /** The checked launch, with buffers replaced by their typed arrays, as the block functions take them. */
  private prepare(kernel: KernelHandle, options: LaunchOptions) {
    const name = kernelName(kernel);
    this.buffers.assertOpen(name);
    const checked = checkLaunch(kernel.description, options, "cpu", this.limits);
    this.buffers.checkLaunch(name, checked);
    // Buffers become their typed arrays (or views); a vector or struct argument its scalars, in memory order.
    const args = checked.args.flatMap((arg, index): unknown[] => {
      const param = checked.params[index]!;
      if (param.kind === "buffer") return [(arg as CpuBuffer).views ?? (arg as CpuBuffer).data];
      return param.kind === "scalar" && param.layout ? flattenValue(param.layout, arg as LayoutValue) : [arg];
    });
    return { checked, args };
  }

  /**
   * Runs a launch synchronously on the calling thread, now, and throws its errors (a KernelFault, a time
   * limit) instead of recording them: for benchmarks of the block functions themselves. With a time limit,
   * the clock is read after each block (a grid too large to finish stops there) and, in checked mode, at each
   * loop iteration; a loop that never ends in an unchecked kernel can only be stopped by `launch`, which runs
   * it on workers. Refused while launches are queued, which it would overtake.
   */
  run(kernel: KernelHandle, options: LaunchOptions): void {
    const fn = this.functionOf(kernel);
    const { checked, args } = this.prepare(kernel, options);
    if (this.tail) throw new Error("tskernel: CpuDevice.run() with launches still queued would overtake them: await device.synchronize() first");
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
    checked: CheckedLaunch,
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
        throw new Error(`tskernel: the launch ran past the time limit of ${limit} ms and was stopped after ${i + 1} of ${gx * gy * gz} blocks; buffers it wrote hold partial results`);
      }
    }
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    return this.timeSequence([{ kernel, options }], timing);
  }

  /** Each run: the steps launched and run to the end (synchronize), after the work queued before has run. */
  async timeSequence(steps: readonly LaunchStep[], timing: TimingOptions = {}): Promise<Timing> {
    await this.synchronize();
    const run = async () => {
      for (const step of steps) await this.launch(step.kernel, step.options);
      await this.synchronize();
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
    await this.synchronize();
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

/** A recorded sequence on the CPU: its launches checked once, replayed in order. */
class CpuSequence implements LaunchSequence {
  private disposed = false;

  constructor(
    private readonly device: CpuDevice,
    private readonly steps: PreparedLaunch[],
  ) {}

  get length(): number {
    return this.steps.length;
  }

  replay(options: { readonly stream?: Stream } = {}): Promise<void> {
    try {
      if (this.disposed) throw new Error("tskernel: the sequence was disposed");
      checkStream(options.stream, this.device, "(sequence)", (stream) => (stream as SingleQueueStream).disposed);
      return this.device.replayLaunches(this.steps);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  update(index: number, options: LaunchOptions): void {
    const step = this.steps[index];
    if (!step || this.disposed) throw new RangeError(`tskernel: the sequence has no launch ${index}${this.disposed ? " (it was disposed)" : ""}`);
    this.steps[index] = this.device.prepareStep(step.kernel, options);
  }

  dispose(): void {
    this.disposed = true;
  }
}
