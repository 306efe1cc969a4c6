/**
 * What the memory-bound suite's cases are made of (cases.ts and cases-bf16.ts hold the cases): shapes,
 * buffers and their element types, launches, the instance a case builds for one shape and device, its tuning
 * space, and the helpers the cases share to pick a specialization and size a grid.
 */

import type { BackendName } from "../../runtime/device.ts";
import type { KernelHandle } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { LaunchLimits } from "../../runtime/launch-check.ts";
import type { CheckSpec, ChunkedReference } from "./checks.ts";

/** [n] for the 1-D cases, [rows, cols] for the 2-D ones. */
export type Shape = readonly number[];

/** Values of compile-time constants: numbers, booleans for `Const<bool>` (the scan's COALESCE), element types for a kernel's type parameter (T: "bf16"). */
export type Constants = Readonly<Record<string, number | boolean | string>>;

/**
 * How a buffer starts: uniform random in [low, high) (inputs; whole numbers for the integer types, and for bf16
 * the random f32 rounded to bf16 or f16), or poisoned (outputs, scratch: NaN for the float types, 0xdeadbeef for u32,
 * 0xa5 in every byte of a u8 output).
 */
export interface BufferSpec {
  readonly name: string;
  readonly length: number;
  /** input: read only; inout: random, then overwritten (SAXPY's y); output, scratch: poisoned. */
  readonly role: "input" | "inout" | "output" | "scratch";
  /** The element type; default f32. */
  readonly type?: BufferType;
  readonly low?: number;
  readonly high?: number;
}

/** The element types of the suite's buffers. */
export type BufferType = "f32" | "u32" | "bf16" | "f16" | "i8" | "u8";

/**
 * A case's input data on the host, as the reference reads it: Float32Array (for bf16 the values, exactly),
 * Uint32Array for u32, Int8Array and Uint8Array for the 8-bit integers.
 */
export type InputArray = Float32Array | Uint32Array | Int8Array | Uint8Array;

export type ArgSpec = { readonly buffer: string } | { readonly i32: number } | { readonly f32: number };

export interface StepSpec {
  readonly kernel: KernelHandle;
  readonly grid: readonly [number, number, number];
  readonly args: readonly ArgSpec[];
}

export interface CaseInstance {
  readonly buffers: readonly BufferSpec[];
  readonly steps: readonly StepSpec[];
  /** The fewest bytes the operation must read and write. */
  readonly bytes: number;
  /** The buffer the check reads. */
  readonly output: string;
  readonly check: CheckSpec;
  /** Scalars of the operation (SAXPY's a, layer norm's eps), for the PyTorch counterpart. */
  readonly parameters: Readonly<Record<string, number>>;
  reference(inputs: ReadonlyMap<string, InputArray>): ChunkedReference;
}

export interface CaseContext {
  readonly library: KernelLibrary;
  readonly limits: LaunchLimits;
  readonly backend: BackendName;
  /** Per kernel name, the specialization to use instead of the case's own choice (the tuner's candidates). */
  readonly prefer?: Readonly<Record<string, Constants>>;
}

export interface TuningSpace {
  readonly kernels: readonly string[];
  readonly constants: Readonly<Record<string, readonly (number | boolean)[]>>;
  /** Why a setting is left out (undefined: it is searched). */
  readonly valid?: (constants: Constants) => string | undefined;
}

export interface KernelCase {
  readonly id: string;
  /** The operation, where several cases compute it (sum-onepass: sum): what torch-reference.py computes. */
  readonly family?: string;
  readonly title: string;
  /** Each kernel the case may launch, with the example file that declares it. */
  readonly kernels: Readonly<Record<string, string>>;
  /** What the PyTorch script times against it (bench/torch-reference.py). */
  readonly torch: string;
  readonly dims: 1 | 2;
  readonly gpuShapes: readonly Shape[];
  readonly cpuShapes: readonly Shape[];
  /**
   * What the tuner searches at a shape: values of compile-time constants, given to every kernel named (the
   * scan's first and last launches must cut the input into the same tiles). `limits`: the device's, where
   * the space depends on it (the subgroup kernels' rows must be whole subgroups).
   */
  space(shape: Shape, limits?: LaunchLimits, backend?: BackendName): TuningSpace;
  /** Throws UnsupportedShape where `unsupported` gives a reason. */
  build(shape: Shape, context: CaseContext): CaseInstance;
  unsupported(shape: Shape): string | undefined;
}

export class UnsupportedShape extends Error {}

export function shapeLabel(shape: Shape): string {
  const power = (n: number) => (n >= 1024 && Number.isInteger(Math.log2(n)) ? `2^${Math.log2(n)}` : String(n));
  return shape.length === 1 ? `n=${power(shape[0]!)}` : `${shape[0]}×${shape[1]}`;
}

/** A grid of at least `blocks` blocks within the device's limits: 1-D where it fits, else 2-D. */
export function grid2d(blocks: number, limits: LaunchLimits): [number, number, number] {
  const gx = Math.max(1, Math.min(blocks, limits.maxGridDims[0]));
  const gy = Math.ceil(blocks / gx);
  if (gy > limits.maxGridDims[1]) throw new UnsupportedShape(`${blocks} blocks exceed the device's grid`);
  return [gx, gy, 1];
}

/** The kernel to run: the preferred specialization if one is given, else the first of `choices` the device can run. */
export function pick(context: CaseContext, name: string, choices: readonly Constants[]): KernelHandle {
  const preferred = context.prefer?.[name];
  if (preferred) return context.library.get(name, preferred);
  const kernel = context.library.firstFitting(name, choices, context.limits);
  if (!kernel) throw new UnsupportedShape(`no specialization of ${name} fits this device`);
  return kernel;
}

export function constantsOf(kernel: KernelHandle): Record<string, number> {
  return kernel.description.specialization as Record<string, number>;
}

export const log2 = (n: number) => Math.ceil(Math.log2(Math.max(2, n)));

/** Lanes of the device's subgroups (32: CUDA's warp, where the device does not say). */
export const lanesOf = (limits: LaunchLimits) => limits.subgroupSize ?? 32;

/** The copy kernel written in the language, the copy baseline of `bench kernels` on WebGPU (bench.ts). */
export const copyKernelName = "copyVec4";
export const copyKernelFile = "examples/copy-vec4.ts";
