/**
 * The CPU backend: runs the JS backend's output on the calling thread, one block after another (each block
 * function runs its threads region by region, so barriers hold). Buffers are typed arrays owned by the
 * device; reads return copies, so a caller can never alias device memory by accident.
 */

import os from "node:os";
import { performance } from "node:perf_hooks";
import type { KernelHandle } from "../kernels.ts";
import { checkWrite, elementTypeOf, median, typedArrayConstructors, type Device, type DeviceBuffer, type ElementType, type LaunchOptions, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { checkLaunch, defaultLimits, LaunchError } from "../launch-check.ts";
import { Checker } from "./checker.ts";

interface CpuBuffer extends DeviceBuffer {
  readonly data: TypedArray;
}



export class CpuDevice implements Device {
  readonly backend = "cpu" as const;
  readonly name: string;
  readonly limits = defaultLimits;
  /** Checked mode: every access and barrier is checked (see checker.ts); several times slower. */
  readonly checked: boolean;

  constructor(options: { checked?: boolean } = {}) {
    this.checked = options.checked ?? false;
    this.name = `CPU (${os.cpus()[0]?.model?.trim() ?? "unknown"}, JavaScript, one thread${this.checked ? ", checked" : ""})`;
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, length: number): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType, length?: number): DeviceBuffer {
    if (typeof dataOrType === "string") {
      const ctor = typedArrayConstructors[dataOrType];
      if (!ctor) throw new TypeError(`tskernel: unknown element type '${dataOrType}' (f32, i32 or u32)`);
      if (!Number.isInteger(length) || length! < 0) throw new RangeError(`tskernel: buffer length must be a non-negative integer, got ${length}`);
      return this.wrap(new ctor(length!));
    }
    const elementType = elementTypeOf(dataOrType);
    return this.wrap(new typedArrayConstructors[elementType](dataOrType as never));
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
    this.run(kernel, options);
  }

  /** Runs a launch synchronously (the CPU has nothing to wait for). */
  run(kernel: KernelHandle, options: LaunchOptions): void {
    const checked = checkLaunch(kernel.description, options, "cpu");
    const fn = this.checked ? kernel.jsChecked : kernel.js;
    if (!fn) throw new LaunchError(kernel.description.entryName, "it was not compiled for the js target");
    const checker = this.checked ? new Checker(kernel.description.entryName) : undefined;
    const args = checked.args.map((arg) => (typeof arg === "object" ? this.own(arg).data : arg));
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
    for (let i = 0; i < warmup; i++) this.run(kernel, options);
    const runsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      this.run(kernel, options);
      runsMs.push(performance.now() - start);
    }
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: "performance.now() around each synchronous launch" };
  }

  dispose(): void {}
}
