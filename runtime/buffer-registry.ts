/**
 * The buffers a device made, shared by every backend: which are live, which were freed, and whether the
 * device itself was disposed. A buffer of another device (of this backend or another), a freed buffer, or
 * any use of a disposed device is refused here with a message that says which, before a backend hands a
 * stale pointer to the driver (CUDA), a destroyed buffer to Dawn (WebGPU) or a dropped array to a kernel.
 */

import type { BackendName, DeviceBuffer, KernelArg } from "./device.ts";
import { LaunchError, type CheckedLaunch } from "./launch-check.ts";

export class BufferRegistry {
  private readonly live = new WeakSet<object>();
  private readonly freed = new WeakSet<object>();
  private disposed = false;

  /** `device`: how messages name it ("CPU", "WebGPU", "CUDA"); `backend`: the buffers' `backend` field. */
  constructor(
    private readonly device: string,
    private readonly backend: BackendName,
  ) {}

  add<T extends DeviceBuffer>(buffer: T): T {
    this.live.add(buffer);
    return buffer;
  }

  /** Marks the device disposed: every later call refuses. Returns whether it already was. */
  dispose(): boolean {
    const was = this.disposed;
    this.disposed = true;
    return was;
  }

  /** Throws unless the device is still open (a LaunchError when `kernel` is given). */
  assertOpen(kernel?: string): void {
    if (!this.disposed) return;
    const message = `the ${this.device} device was disposed; create a new one`;
    throw kernel === undefined ? new Error(`tskernel: ${message}`) : new LaunchError(kernel, message);
  }

  /** Why `buffer` cannot be used on this device, or undefined when it can. */
  private problem(buffer: unknown): string | undefined {
    if (typeof buffer !== "object" || buffer === null || (buffer as { kind?: unknown }).kind !== "tskernel.buffer") {
      return `expected a buffer made by device.createBuffer, got ${buffer === null ? "null" : ArrayBuffer.isView(buffer) ? "a typed array" : typeof buffer}`;
    }
    const backend = (buffer as DeviceBuffer).backend;
    if (backend !== this.backend) return `the buffer belongs to the ${backend} backend, not to the ${this.device} device`;
    if (this.freed.has(buffer)) return "the buffer was freed (device.free); allocate a new one";
    if (!this.live.has(buffer)) return `the buffer belongs to another ${this.device} device`;
    return undefined;
  }

  /** Checks a buffer given to write, read or free (a TypeError naming the problem). */
  own(buffer: DeviceBuffer): void {
    this.assertOpen();
    const problem = this.problem(buffer);
    if (problem) throw new TypeError(`tskernel: ${problem}`);
  }

  /** Checks every buffer argument of a checked launch (a LaunchError naming the parameter). */
  checkLaunch(kernel: string, checked: CheckedLaunch): void {
    this.assertOpen(kernel);
    checked.args.forEach((arg: KernelArg, index) => {
      // Only buffer parameters take buffers (a vector or struct argument is a value).
      if (typeof arg !== "object" || checked.params[index]!.kind !== "buffer") return;
      const problem = this.problem(arg);
      if (problem) throw new LaunchError(kernel, `parameter '${checked.params[index]!.name}': ${problem}`);
    });
  }

  /** Checks `buffer` and records it as freed: later uses (and a second free) are refused. */
  free(buffer: DeviceBuffer): void {
    this.own(buffer);
    this.live.delete(buffer);
    this.freed.add(buffer);
  }
}
