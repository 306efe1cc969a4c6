/**
 * The one runtime API over every backend: create a device, allocate typed buffers, launch a compiled kernel
 * with a grid, a block and arguments, read results back, time launches. Every launch is checked first
 * (launch-check.ts) and a bad argument is an error naming the kernel and the parameter; nothing runs.
 */

import type { KernelHandle } from "./kernels.ts";
import type { LaunchLimits } from "./launch-check.ts";

export type BackendName = "cpu" | "webgpu" | "cuda";
export type ElementType = "f32" | "i32" | "u32";
export type TypedArray = Float32Array | Int32Array | Uint32Array;

export interface DeviceBuffer {
  readonly kind: "tskernel.buffer";
  readonly backend: BackendName;
  readonly elementType: ElementType;
  readonly length: number;
}

/** `16`, `[16, 16]` or `[16, 16, 1]`; missing entries are 1. */
export type Dim3 = number | readonly [number, number?, number?];

export type KernelArg = DeviceBuffer | number | boolean;

export interface LaunchOptions {
  readonly grid: Dim3;
  /** Required unless the kernel fixes its block shape (then it may be omitted, or must match). */
  readonly block?: Dim3;
  /** Run-time arguments in parameter order, or by parameter name. Compile-time constants are not passed. */
  readonly args: readonly KernelArg[] | Readonly<Record<string, KernelArg>>;
}

export interface TimingOptions {
  readonly warmup?: number;
  readonly runs?: number;
}

export interface Timing {
  readonly medianMs: number;
  readonly minMs: number;
  readonly runsMs: readonly number[];
  /** How the time was taken, e.g. "performance.now around each launch". */
  readonly method: string;
}

export interface Device {
  readonly backend: BackendName;
  /** A human-readable description of the device, e.g. the adapter or GPU name. */
  readonly name: string;
  /** What a launch may ask for on this device. */
  readonly limits: LaunchLimits;
  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, length: number): DeviceBuffer;
  write(buffer: DeviceBuffer, data: TypedArray): Promise<void>;
  read(buffer: DeviceBuffer): Promise<TypedArray>;
  launch(kernel: KernelHandle, options: LaunchOptions): Promise<void>;
  time(kernel: KernelHandle, options: LaunchOptions, timing?: TimingOptions): Promise<Timing>;
  dispose(): void;
}

export class BackendUnavailable extends Error {
  constructor(
    readonly backend: BackendName,
    readonly reason: string,
  ) {
    super(`tskernel: the ${backend} backend is unavailable: ${reason}`);
  }
}

export interface DeviceOptions {
  readonly backend?: BackendName | "auto";
  /** CPU only: check every access and barrier and report misuse with the kernel's TS location. */
  readonly checked?: boolean;
  /** CPU only: worker threads that share each launch's blocks (default 1: the calling thread). */
  readonly workers?: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The typed array of each element type. */
export const typedArrayConstructors = { f32: Float32Array, i32: Int32Array, u32: Uint32Array } as const;

export function elementTypeOf(data: TypedArray): ElementType {
  if (data instanceof Float32Array) return "f32";
  if (data instanceof Int32Array) return "i32";
  if (data instanceof Uint32Array) return "u32";
  throw new TypeError("tskernel: buffers are made from Float32Array, Int32Array or Uint32Array");
}

/** The element type and length of a new buffer, from data or from (type, length), checked. */
export function bufferShape(dataOrType: TypedArray | ElementType, length?: number): { elementType: ElementType; length: number } {
  const elementType = typeof dataOrType === "string" ? dataOrType : elementTypeOf(dataOrType);
  if (!(elementType in typedArrayConstructors)) throw new TypeError(`tskernel: unknown element type '${elementType}' (f32, i32 or u32)`);
  const count = typeof dataOrType === "string" ? length! : dataOrType.length;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`tskernel: buffer length must be a non-negative integer, got ${count}`);
  return { elementType, length: count };
}

/** A write must match the buffer exactly: same element type, same length. */
export function checkWrite(buffer: DeviceBuffer, data: TypedArray): void {
  if (data.length !== buffer.length || elementTypeOf(data) !== buffer.elementType) {
    throw new RangeError(`tskernel: write of ${data.length} ${elementTypeOf(data)} elements into a buffer of ${buffer.length} ${buffer.elementType}`);
  }
}
