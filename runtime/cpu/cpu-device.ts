/**
 * The CPU backend: runs the JS backend's output on the calling thread, one block after another (each block
 * function runs its threads region by region, so barriers hold), or with `workers: N` on N worker threads
 * that share the launch's blocks (worker-pool.ts; buffers then live in shared memory). Buffers are typed
 * arrays owned by the device; reads return copies, so a caller can never alias device memory by accident.
 * Checked mode always runs on the calling thread: its checker follows one block at a time.
 */

import os from "node:os";
import { performance } from "node:perf_hooks";
import type { KernelHandle } from "../kernels.ts";
import { checkWrite, elementTypeOf, median, typedArrayConstructors, type Device, type DeviceBuffer, type ElementType, type LaunchOptions, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { checkLaunch, defaultLimits, LaunchError } from "../launch-check.ts";
import { Checker } from "./checker.ts";
import { WorkerPool } from "./worker-pool.ts";

interface CpuBuffer extends DeviceBuffer {
  readonly data: TypedArray;
}



export class CpuDevice implements Device {
  readonly backend = "cpu" as const;
  readonly name: string;
  readonly limits = defaultLimits;
  /** Checked mode: every access and barrier is checked (see checker.ts); several times slower. */
  readonly checked: boolean;
  /** Threads that run a launch's blocks (1: the calling thread only). */
  readonly workers: number;
  private readonly pool?: WorkerPool;

  constructor(options: { checked?: boolean; workers?: number } = {}) {
    this.checked = options.checked ?? false;
    const workers = options.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`tskernel: workers must be a positive integer, got ${workers}`);
    this.workers = this.checked ? 1 : workers;
    if (this.workers > 1) this.pool = new WorkerPool(this.workers);
    const threads = this.workers > 1 ? `${this.workers} worker threads` : "one thread";
    this.name = `CPU (${os.cpus()[0]?.model?.trim() ?? "unknown"}, JavaScript, ${threads}${this.checked ? ", checked" : ""})`;
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, length: number): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType, length?: number): DeviceBuffer {
    if (typeof dataOrType === "string") {
      const ctor = typedArrayConstructors[dataOrType];
      if (!ctor) throw new TypeError(`tskernel: unknown element type '${dataOrType}' (f32, i32 or u32)`);
      if (!Number.isInteger(length) || length! < 0) throw new RangeError(`tskernel: buffer length must be a non-negative integer, got ${length}`);
      return this.wrap(this.allocate(ctor, length!));
    }
    const elementType = elementTypeOf(dataOrType);
    const copy = this.allocate(typedArrayConstructors[elementType], dataOrType.length);
    copy.set(dataOrType as never);
    return this.wrap(copy);
  }

  /** Worker threads see a buffer only when it lives in shared memory. */
  private allocate(ctor: (typeof typedArrayConstructors)[ElementType], length: number): TypedArray {
    return this.pool ? new ctor(new SharedArrayBuffer(length * 4) as unknown as ArrayBuffer) : new ctor(length);
  }

  private wrap(data: TypedArray): CpuBuffer {
    return { kind: "tskernel.buffer", backend: "cpu", elementType: elementTypeOf(data), length: data.length, data };
  }

  private own(buffer: DeviceBuffer): CpuBuffer {
    if (buffer.backend !== "cpu" || !("data" in buffer)) throw new TypeError("tskernel: this buffer does not belong to the CPU device");
    return buffer as CpuBuffer;
  }

  async write(buffer: DeviceBuffer, data: TypedArray): Promise<void> {
    const own = this.own(buffer);
    checkWrite(own, data);
    own.data.set(data as never);
  }

  async read(buffer: DeviceBuffer): Promise<TypedArray> {
    const own = this.own(buffer);
    return own.data.slice();
  }

  async launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    if (!this.pool || !kernel.jsSource) {
      this.run(kernel, options);
      return;
    }
    const { checked, args } = this.prepare(kernel, options);
    await this.pool.run(kernel.jsSource, args, checked.grid, checked.block);
  }

  /** The checked launch, with buffers replaced by their typed arrays, as the block functions take them. */
  private prepare(kernel: KernelHandle, options: LaunchOptions) {
    const checked = checkLaunch(kernel.description, options, "cpu");
    return { checked, args: checked.args.map((arg) => (typeof arg === "object" ? this.own(arg).data : arg)) };
  }

  /** Runs a launch synchronously (the CPU has nothing to wait for). */
  run(kernel: KernelHandle, options: LaunchOptions): void {
    const { checked, args } = this.prepare(kernel, options);
    const fn = this.checked ? kernel.jsChecked : kernel.js;
    if (!fn) throw new LaunchError(kernel.description.entryName, "it was not compiled for the js target");
    const checker = this.checked ? new Checker(kernel.description.entryName) : undefined;
    const [gx, gy, gz] = checked.grid;
    const blockIdx = [0, 0, 0];
    for (let z = 0; z < gz; z++) {
      for (let y = 0; y < gy; y++) {
        for (let x = 0; x < gx; x++) {
          blockIdx[0] = x;
          blockIdx[1] = y;
          blockIdx[2] = z;
          fn(args, blockIdx, checked.block, checked.grid, checker);
        }
      }
    }
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    const warmup = timing.warmup ?? 1;
    const runs = timing.runs ?? 3;
    for (let i = 0; i < warmup; i++) await this.launch(kernel, options);
    const runsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await this.launch(kernel, options);
      runsMs.push(performance.now() - start);
    }
    const method = this.pool ? `performance.now() around each launch on ${this.workers} worker threads` : "performance.now() around each synchronous launch";
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method };
  }

  dispose(): void {
    void this.pool?.terminate();
  }
}
