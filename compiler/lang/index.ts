/**
 * The kernel language as TypeScript sees it: the names a kernel file imports from "tskernel" so that it
 * type-checks under plain `tsc` and in the user's editor. The compiler never runs this code; it recognizes
 * these declarations by name and origin (see originOf in compiler/frontend/program.ts). The runtime values below exist
 * only so that importing a kernel file outside the compiler does not crash; calling a builtin outside a
 * kernel throws a clear error.
 *
 * The full language is described in docs/language.md.
 */

import { roundToBf16, roundToF16 } from "./float16.ts";
import { roundTf32 as roundTf32Host } from "./tf32.ts";
import { vectorAllocatorNames, type LocalVectorAllocators, type SharedVectorAllocators } from "./vectors.ts";

export * from "./vectors.ts";

/** 32-bit IEEE float. TypeScript sees a `number`; tskernel types it as f32. */
export type f32 = number;
/** 32-bit two's-complement signed integer. */
export type i32 = number;
/** 32-bit unsigned integer. */
export type u32 = number;
/** Boolean. */
export type bool = boolean;
/**
 * IEEE binary16 ("half"): 11 significant bits, up to 65504. Computed as the exact result rounded to f16
 * after every operation (docs/language.md, "Half precision"); native on CUDA and on WebGPU adapters with
 * `shader-f16`, emulated exactly on the CPU.
 */
export type f16 = number;
/** bfloat16: the upper half of an f32 (8 significant bits, the f32's range), rounded after every operation. */
export type bf16 = number;
/** IEEE binary64: what JavaScript numbers are. CUDA and the CPU; WebGPU has none. */
export type f64 = number;

/**
 * A compile-time constant parameter (like CUDA's `template<int BLOCK_SIZE>` or Triton's `constexpr`).
 * Each distinct set of values is one specialization of the kernel. The parameter's default value is the
 * default specialization: `BLOCK_SIZE: Const<i32> = 16`.
 */
export type Const<T extends number | boolean> = T;

/**
 * A buffer of binary16 elements (2 bytes each, little-endian: the bytes of a PyTorch float16 tensor). Declared
 * here because TypeScript's ES2022 library has no Float16Array; a kernel reads and writes its elements as
 * f16 numbers.
 */
export interface Float16Array {
  [index: number]: number;
  readonly length: number;
  readonly [Symbol.toStringTag]: "Float16Array";
}
/** A buffer of bfloat16 elements (2 bytes each, the upper half of an f32: the bytes of a PyTorch bfloat16 tensor). */
export interface BFloat16Array {
  [index: number]: number;
  readonly length: number;
  readonly [Symbol.toStringTag]: "BFloat16Array";
}

/**
 * Buffers of 8-bit floats (OCP FP8, 1 byte each: the bytes of a PyTorch float8_e4m3fn or float8_e5m2 tensor).
 * e4m3: 4 exponent bits, 3 mantissa bits, finite up to 448, no infinities; e5m2: 5 and 2, finite up to 57344,
 * with infinities. An element loads as the f32 it stands for; a store rounds an f32 to nearest even and
 * saturates to the largest finite value (NaN stays NaN). There are no e4m3 or e5m2 values, only elements.
 */
export interface Float8E4M3Array {
  [index: number]: number;
  readonly length: number;
  readonly [Symbol.toStringTag]: "Float8E4M3Array";
}
export interface Float8E5M2Array {
  [index: number]: number;
  readonly length: number;
  readonly [Symbol.toStringTag]: "Float8E5M2Array";
}

/** Read-only global buffers: writes through them are TypeScript errors, and CUDA gets `const __restrict__`. */
export type ReadonlyFloat32Array = Readonly<Float32Array>;
export type ReadonlyInt32Array = Readonly<Int32Array>;
export type ReadonlyUint32Array = Readonly<Uint32Array>;
export type ReadonlyFloat16Array = Readonly<Float16Array>;
export type ReadonlyBFloat16Array = Readonly<BFloat16Array>;
export type ReadonlyFloat64Array = Readonly<Float64Array>;
/** 8- and 16-bit integer buffers: an element loads as an i32 (signed) or u32, and a store keeps its low bits. */
export type ReadonlyInt8Array = Readonly<Int8Array>;
export type ReadonlyUint8Array = Readonly<Uint8Array>;
export type ReadonlyInt16Array = Readonly<Int16Array>;
export type ReadonlyUint16Array = Readonly<Uint16Array>;
export type ReadonlyFloat8E4M3Array = Readonly<Float8E4M3Array>;
export type ReadonlyFloat8E5M2Array = Readonly<Float8E5M2Array>;

/**
 * The element types a kernel can be written once for: a kernel function with a type parameter `<T extends
 * DType>` is built once per element type its `specializations` name (`specializations: [{ T: "f32" }, { T:
 * "bf16" }]`), each with its own entry name (`scale_T_bf16`). Inside, `BufferOf<T>` and `ReadonlyBufferOf<T>`
 * are buffer parameters of T, `Elem<T>` the value type of an element of T (i32/u32 for the 8- and 16-bit
 * integers, f32 for the 8-bit floats), `cast<T>(x)` the conversion to it.
 */
export type DType = "f32" | "i32" | "u32" | "f16" | "bf16" | "f64" | "i8" | "u8" | "i16" | "u16" | "e4m3" | "e5m2";
interface BuffersOf {
  f32: Float32Array;
  i32: Int32Array;
  u32: Uint32Array;
  f16: Float16Array;
  bf16: BFloat16Array;
  f64: Float64Array;
  i8: Int8Array;
  u8: Uint8Array;
  i16: Int16Array;
  u16: Uint16Array;
  e4m3: Float8E4M3Array;
  e5m2: Float8E5M2Array;
}
/** A writable buffer of the element type T (a kernel's type parameter, or a name: `BufferOf<"bf16">`). */
export type BufferOf<T extends DType> = BuffersOf[T];
/** A read-only buffer of the element type T. */
export type ReadonlyBufferOf<T extends DType> = Readonly<BuffersOf[T]>;
/** The value of an element of T: T itself, i32/u32 for the 8- and 16-bit integers, f32 for the 8-bit floats. */
export type Elem<T extends DType> = number;

/** The x, y and z components of a thread or block coordinate; each is an i32 inside a kernel. */
export interface Dim3 {
  readonly x: i32;
  readonly y: i32;
  readonly z: i32;
}

/** Options of a kernel: its fixed block shape and the specializations `tskernel build` emits. */
export interface KernelOptions {
  /**
   * The block (workgroup) shape, when the kernel fixes it. Each entry is a number or the name of a
   * compile-time constant parameter: `block: ["TILE", "TILE"]`. Missing entries are 1.
   */
  block?: readonly (number | string)[];
  /**
   * Thread block clusters (sm_90): blocks [x, y, z] (missing entries 1, at most 8 in all) started together on
   * one GPU processing cluster, which reach each other's shared memory through `copyTile(…, { multicast })`,
   * `arriveBarrier(…, { block })` and `syncCluster()`; `clusterRank` tells them apart. The grid must be a multiple
   * of it. CUDA and the CPU (which runs a cluster's blocks together); WebGPU has no clusters.
   */
  cluster?: readonly number[];
  /**
   * The specializations to build by default; each maps constant parameter names to values, and the kernel's
   * type parameters (`<T extends DType>`) to element types (`{ T: "bf16" }`).
   */
  specializations?: readonly Readonly<Record<string, number | boolean | DType>>[];
  /**
   * The targets the kernel is built for, as `tskernel build --target` names them: `targets: ["cuda", "js"]`
   * for a kernel that uses what WebGPU lacks (matrix operations, `threadFence()`). A build for another target
   * skips the kernel, and launching it on that target's backend is an error naming these. Default: every target.
   */
  targets?: readonly ("cuda" | "wgsl" | "js")[];
  /**
   * Each buffer parameter's shape in named sizes, "output" first for those an operator allocates and
   * returns: `tensors: { out: "output [...rows, cols]", input: "[...rows, cols]", gamma: "[cols]" }`. A scalar
   * parameter named like a size receives it. With `grid`, this declares the launch that the PyTorch module,
   * the `.cuh` grid functions and the runtime all use (docs/torch.md).
   */
  tensors?: Readonly<Record<string, string>>;
  /** The grid as formulas of the sizes and constants: `grid: ["cdiv(rows, ROWS)"]`. */
  grid?: readonly (number | string)[];
  /** Conditions on the sizes that a specialization needs; the first specialization that meets them runs. */
  requires?: readonly string[];
  /** The kernel of this file that computes the gradients, paired by parameter names (`gradOut`, `gradInput`). */
  backward?: string;
}

/** The handle that `kernel` returns: it names the kernel for the runtime. */
export interface Kernel<F extends (...args: never[]) => void> {
  readonly kind: "tskernel.kernel";
  readonly name: string;
  readonly fn: F;
  readonly options: KernelOptions;
}

function outsideKernel(what: string): never {
  throw new Error(`tskernel: ${what} may only be used inside a kernel compiled by tskernel`);
}

/**
 * Declares a kernel. The compiler finds every `export const NAME = kernel(...)` in a file; NAME is the
 * kernel's name. The body is a function expression or arrow function whose parameters are global buffers
 * (typed arrays), scalars (f32, i32, u32, bool) and compile-time constants (Const<…>).
 */
export function kernel<F extends (...args: never[]) => void>(fn: F): Kernel<F>;
export function kernel<F extends (...args: never[]) => void>(options: KernelOptions, fn: F): Kernel<F>;
export function kernel<F extends (...args: never[]) => void>(a: KernelOptions | F, b?: F): Kernel<F> {
  const fn = (typeof a === "function" ? a : b) as F;
  const options = typeof a === "function" ? {} : a;
  return { kind: "tskernel.kernel", name: fn.name, fn, options };
}

const builtinDim: Dim3 = {
  get x(): never { return outsideKernel("threadIdx/blockIdx/blockDim/gridDim"); },
  get y(): never { return outsideKernel("threadIdx/blockIdx/blockDim/gridDim"); },
  get z(): never { return outsideKernel("threadIdx/blockIdx/blockDim/gridDim"); },
};
/** The thread's index within its block (CUDA `threadIdx`, WGSL `local_invocation_id`). */
export const threadIdx: Dim3 = builtinDim;
/** The block's index within the grid (CUDA `blockIdx`, WGSL `workgroup_id`). */
export const blockIdx: Dim3 = builtinDim;
/** The block shape (CUDA `blockDim`, WGSL `@workgroup_size`). */
export const blockDim: Dim3 = builtinDim;
/** The grid shape in blocks (CUDA `gridDim`, WGSL `num_workgroups`). */
export const gridDim: Dim3 = builtinDim;

/** A barrier for all threads of the block; allowed only in uniform control flow. */
export function syncThreads(): void {
  outsideKernel("syncThreads()");
}

/**
 * A barrier for the 128 threads of this thread's warpgroup (four warps), which must all reach it and nothing
 * else: the warpgroups of a block with roles (`warpgroupIdx`) synchronize their own threads without the others.
 * Allowed only in control flow that is the same across the warpgroup. CUDA (a named barrier) and the CPU backend.
 */
export function syncWarpgroup(): void {
  outsideKernel("syncWarpgroup()");
}

/**
 * A device-scope memory fence (CUDA `__threadfence()`): every thread of the grid that observes, through an
 * atomic, an access this thread made after the fence also sees the accesses it made before it. Waits for no
 * other thread, so any control flow may reach it. CUDA and the CPU backend; WebGPU has no such fence.
 */
export function threadFence(): void {
  outsideKernel("threadFence()");
}

/**
 * Shared (workgroup) memory, declared at the top level of a kernel body with compile-time constant sizes:
 * `const tile = shared.f32(TILE, TILE)` is a 2-D array indexed `tile[row][col]`.
 */
export const shared = {
  f32: sharedArray,
  i32: sharedArray,
  u32: sharedArray,
  f16: sharedArray,
  bf16: sharedArray,
  f64: sharedArray,
  i8: sharedArray,
  u8: sharedArray,
  i16: sharedArray,
  u16: sharedArray,
  e4m3: sharedArray,
  e5m2: sharedArray,
  barriers: sharedArray,
  of: sharedArray,
  ...vectorAllocators(),
} as unknown as SharedVectorAllocators & {
  /** An array of the element type T (a kernel's type parameter, or a name: `shared.of<"bf16">(n)`), typed as T's buffer. */
  of<T extends DType>(length: number): BufferOf<T>;
  of<T extends DType>(rows: number, cols: number): BufferOf<T>[];
  f32(length: number): Float32Array;
  f32(rows: number, cols: number): Float32Array[];
  i32(length: number): Int32Array;
  i32(rows: number, cols: number): Int32Array[];
  u32(length: number): Uint32Array;
  u32(rows: number, cols: number): Uint32Array[];
  f16(length: number): Float16Array;
  f16(rows: number, cols: number): Float16Array[];
  bf16(length: number): BFloat16Array;
  bf16(rows: number, cols: number): BFloat16Array[];
  f64(length: number): Float64Array;
  f64(rows: number, cols: number): Float64Array[];
  i8(length: number): Int8Array;
  i8(rows: number, cols: number): Int8Array[];
  u8(length: number): Uint8Array;
  u8(rows: number, cols: number): Uint8Array[];
  i16(length: number): Int16Array;
  i16(rows: number, cols: number): Int16Array[];
  u16(length: number): Uint16Array;
  u16(rows: number, cols: number): Uint16Array[];
  e4m3(length: number): Float8E4M3Array;
  e4m3(rows: number, cols: number): Float8E4M3Array[];
  e5m2(length: number): Float8E5M2Array;
  e5m2(rows: number, cols: number): Float8E5M2Array[];
  /**
   * `count` mbarriers in shared memory (CUDA sm_90 and the CPU): barriers that some threads arrive at and
   * others wait on, phase after phase, without stopping the block. Reached only through `initBarrier`,
   * `arriveBarrier`, `arriveAfterCopies` and `waitBarrier` (docs/language.md, "Barriers in shared memory and roles").
   */
  barriers(count: number): Barriers;
};

/** A shared array of mbarriers (`shared.barriers(n)`); not indexable. */
export interface Barriers {
  readonly __barriers: true;
}
function sharedArray(): never {
  return outsideKernel("shared arrays");
}
/** The allocators of arrays of vectors and of `array<T>`, for the objects `shared` and `local`. */
function vectorAllocators(): Record<string, () => never> {
  return Object.fromEntries([...vectorAllocatorNames, "array"].map((name) => [name, sharedArray]));
}

/**
 * Private arrays: one per thread, for register tiles (`const acc = local.f32(TM * TN)`). Declared with `const`
 * at the top level of a kernel body with a compile-time constant size; the contents start undefined.
 */
export const local = {
  f32: sharedArray,
  i32: sharedArray,
  u32: sharedArray,
  f16: sharedArray,
  bf16: sharedArray,
  f64: sharedArray,
  i8: sharedArray,
  u8: sharedArray,
  i16: sharedArray,
  u16: sharedArray,
  e4m3: sharedArray,
  e5m2: sharedArray,
  of: sharedArray,
  ...vectorAllocators(),
} as unknown as LocalVectorAllocators & {
  /** An array of the element type T (a kernel's type parameter, or a name), typed as T's buffer. */
  of<T extends DType>(length: number): BufferOf<T>;
  f32(length: number): Float32Array;
  i32(length: number): Int32Array;
  u32(length: number): Uint32Array;
  f16(length: number): Float16Array;
  bf16(length: number): BFloat16Array;
  f64(length: number): Float64Array;
  i8(length: number): Int8Array;
  u8(length: number): Uint8Array;
  i16(length: number): Int16Array;
  u16(length: number): Uint16Array;
  e4m3(length: number): Float8E4M3Array;
  e5m2(length: number): Float8E5M2Array;
};

/** Explicit conversions. Float to integer truncates toward zero and saturates; NaN becomes 0. */
export function f32(x: number | boolean): f32 {
  return Math.fround(Number(x));
}
export function i32(x: number | boolean): i32 {
  const v = Number(x);
  if (Number.isNaN(v)) return 0;
  return Math.trunc(Math.min(Math.max(v, -2147483648), 2147483647));
}
export function u32(x: number | boolean): u32 {
  const v = Number(x);
  if (Number.isNaN(v)) return 0;
  return Math.trunc(Math.min(Math.max(v, 0), 4294967295));
}

/** The nearest f16 (ties to even; past 65504, ±infinity). From an int or an f64, rounded once. */
export function f16(x: number | boolean): f16 {
  return roundToF16(Number(x));
}
/** The nearest bf16 (ties to even). From an int or an f64, rounded once. */
export function bf16(x: number | boolean): bf16 {
  return roundToBf16(Number(x));
}
/** The f64 of a value: exact from every other type. */
export function f64(x: number | boolean): f64 {
  return Number(x);
}

/**
 * The name of the element type T, where a fragment declaration takes one: `fragment.a("m16n8k16", dtype<T>(), n)`
 * in a kernel over `<T extends "bf16" | "f16">` declares A fragments of the type each instance binds T to.
 */
export function dtype<T extends DType>(): T {
  return outsideKernel("dtype<T>()");
}

/** The conversion to `Elem<T>`: `cast<T>(x)` is `bf16(x)` where T is bf16, `i32(x)` where it is i8. */
export function cast<T extends DType>(x: number | boolean): Elem<T> {
  void x;
  return outsideKernel("cast<T>()");
}

/** Fused multiply-add a*b + c, rounded once. */
export function fma(a: f32, b: f32, c: f32): f32 {
  return Math.fround(a * b + c);
}

const bitcastSlot = new Float32Array(1);
const bitcastSlotBits = new Uint32Array(bitcastSlot.buffer);

/** The 32 bits of an f32, as a u32 (CUDA `__float_as_uint`, WGSL `bitcast<u32>`). */
export function bitcastU32(x: f32): u32 {
  bitcastSlot[0] = x;
  return bitcastSlotBits[0]!;
}

/**
 * `x` rounded to TF32 (10 mantissa bits) as `cvt.rna.tf32.f32` does: to nearest, ties away from zero, the
 * low 13 bits of the f32 cleared; infinities and NaN unchanged. A warpgroup `wgmma` reads its shared f32
 * operand truncated to TF32: storing `roundTf32(x)` there makes it round instead.
 */
export function roundTf32(x: f32): f32 {
  return roundTf32Host(x);
}

/** The f32 whose bits are the u32 `x` (CUDA `__uint_as_float`, WGSL `bitcast<f32>`). NaN payloads are not kept everywhere. */
export function bitcastF32(x: u32): f32 {
  bitcastSlotBits[0] = x;
  return bitcastSlot[0]!;
}

/** The element arrays a vector access takes: global buffers, shared arrays (a row of a 2-D one), private arrays. */
type ElementArray = Readonly<Float32Array> | Readonly<Int32Array> | Readonly<Uint32Array>;
/** Arrays of 16-bit elements (`load8`, `store8`: 16 bytes; `load4`/`store4`: 8 bytes). */
type Array16 = Float16Array | BFloat16Array | Int16Array | Uint16Array;
/** Arrays of 8-bit elements (`load16`, `store16`: 16 bytes; `load8`/`store8`: 8; `load4`/`store4`: 4); 8-bit floats load as f32. */
type Array8 = Int8Array | Uint8Array | Float8E4M3Array | Float8E5M2Array;
/** What `load4` reads: arrays of 32-, 16- and 8-bit elements. */
type Load4Array = ElementArray | Readonly<Array16> | Readonly<Array8>;

/**
 * Reads four consecutive elements from `index` on, which must be a multiple of 4: one 16-byte load on CUDA
 * (`float4`) for 32-bit elements (8 bytes for 16-bit ones, 4 for 8-bit ones). Only as a declaration:
 * `const [x, y, z, w] = load4(A, i)`; for a 2-D shared array pass a row: `load4(tile[r], c)`.
 */
export function load4(array: Load4Array, index: i32): [number, number, number, number] {
  void array;
  void index;
  return outsideKernel("load4()");
}

/** Writes four consecutive elements from `index` on (a multiple of 4): one 16-byte store on CUDA. */
export function store4(array: Float32Array | Int32Array | Uint32Array | Array16 | Array8, index: i32, x: number, y: number, z: number, w: number): void {
  void [array, index, x, y, z, w];
  outsideKernel("store4()");
}

type Eight = [number, number, number, number, number, number, number, number];

/**
 * Reads eight consecutive 16-bit elements (f16, bf16, i16, u16) from `index` on, a multiple of 8: 16 bytes in one
 * access (8 bytes for 8-bit elements, i8 and u8). `const [a, b, c, d, e, f, g, h] = load8(x, i)`.
 */
export function load8(array: Readonly<Array16 | Array8>, index: i32): Eight {
  void [array, index];
  return outsideKernel("load8()");
}

/** Writes eight consecutive 16-bit elements from `index` on (a multiple of 8): 16 bytes in one access (8 for 8-bit ones). */
export function store8(array: Array16 | Array8, index: i32, ...values: Eight): void {
  void [array, index, values];
  outsideKernel("store8()");
}

/** Reads sixteen consecutive 8-bit elements (i8, u8, e4m3, e5m2) from `index` on, a multiple of 16: 16 bytes in one access. */
export function load16(array: Readonly<Array8>, index: i32): [...Eight, ...Eight] {
  void [array, index];
  return outsideKernel("load16()");
}

/** Writes sixteen consecutive 8-bit elements from `index` on (a multiple of 16): 16 bytes in one access. */
export function store16(array: Array8, index: i32, ...values: [...Eight, ...Eight]): void {
  void [array, index, values];
  outsideKernel("store16()");
}

/**
 * Starts copying four elements of a global buffer (from `sourceIndex`, a multiple of 4) into a shared array
 * (from `index`, a multiple of 4) without waiting: CUDA's `cp.async` on sm_80 and later. The data may be
 * read once `waitAsync` has waited for the copy's group and a `syncThreads()` has made every thread's
 * copies visible. Targets without asynchronous copies copy at once.
 */
export function copyAsync4(shared: Float32Array | Int32Array | Uint32Array, index: i32, source: ElementArray, sourceIndex: i32): void {
  void [shared, index, source, sourceIndex];
  outsideKernel("copyAsync4()");
}

/** `copyAsync4` for 16-bit elements: eight of them (16 bytes) from multiples of 8. */
export function copyAsync8(shared: Array16, index: i32, source: Readonly<Array16>, sourceIndex: i32): void {
  void [shared, index, source, sourceIndex];
  outsideKernel("copyAsync8()");
}

/** `copyAsync4` for 8-bit elements: sixteen of them (16 bytes) from multiples of 16. */
export function copyAsync16(shared: Array8, index: i32, source: Readonly<Array8>, sourceIndex: i32): void {
  void [shared, index, source, sourceIndex];
  outsideKernel("copyAsync16()");
}

/** Closes the group of `copyAsync4` (`copyAsync8`, `copyAsync16`) calls this thread started since the last commit. */
export function commitAsync(): void {
  outsideKernel("commitAsync()");
}

/** Waits until at most `pending` (a literal from 0 to 7) of this thread's committed groups are unfinished. */
export function waitAsync(pending: number): void {
  void pending;
  outsideKernel("waitAsync()");
}

// ---------------------------------------------------------------------------------------------------------
// Atomics

/**
 * The arrays atomics take: writable global buffers and shared arrays (a row of a 2-D shared array:
 * `atomicAdd(tile[r], c, 1)`). The compiler rejects read-only buffers and private arrays.
 */
type AtomicArray = Int32Array | Uint32Array;

/**
 * How an atomic orders this thread's other memory accesses, at the scope of the whole GPU (C++'s memory orders,
 * docs/language.md "Atomics"): "relaxed" (the default) not at all; "acquire" (loads and read-modify-writes):
 * accesses after it happen after it; "release" (stores and read-modify-writes): accesses before it happen
 * before it; "acqRel": both. A thread that acquires the value another released sees everything the other wrote
 * before the release. CUDA and the CPU backend; WebGPU's atomics are relaxed only.
 */
export type MemoryOrder = "relaxed" | "acquire" | "release" | "acqRel";

/**
 * Adds `value` to `array[index]` as one indivisible step and returns the old value: threads may update one
 * element at once. i32, u32 and f32 elements (f32 is a compare-exchange loop on WebGPU).
 */
export function atomicAdd(array: AtomicArray | Float32Array, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicAdd()");
}
/** Subtracts `value` from `array[index]` atomically; returns the old value. i32 and u32 elements. */
export function atomicSub(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicSub()");
}
/** Stores the smaller of `array[index]` and `value` atomically; returns the old value. i32 and u32 elements. */
export function atomicMin(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicMin()");
}
/** Stores the larger of `array[index]` and `value` atomically; returns the old value. i32 and u32 elements. */
export function atomicMax(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicMax()");
}
/** `array[index] &= value` atomically; returns the old value. i32 and u32 elements. */
export function atomicAnd(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicAnd()");
}
/** `array[index] |= value` atomically; returns the old value. i32 and u32 elements. */
export function atomicOr(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicOr()");
}
/** `array[index] ^= value` atomically; returns the old value. i32 and u32 elements. */
export function atomicXor(array: AtomicArray, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicXor()");
}
/** Stores `value` in `array[index]` atomically; returns the old value. i32, u32 and f32 elements. */
export function atomicExchange(array: AtomicArray | Float32Array, index: i32, value: number, order?: MemoryOrder): number {
  void [array, index, value, order];
  return outsideKernel("atomicExchange()");
}
/**
 * Stores `value` in `array[index]` if it holds `expected`, atomically; returns the old value (so the store
 * happened when the result equals `expected`). i32 and u32 elements.
 */
export function atomicCompareExchange(array: AtomicArray, index: i32, expected: number, value: number, order?: MemoryOrder): number {
  void [array, index, expected, value, order];
  return outsideKernel("atomicCompareExchange()");
}

/**
 * Reads `array[index]` atomically: never half written, never cached or moved out of a loop, so a loop can
 * wait on a flag that another block sets. i32, u32 and f32 elements. With "acquire", what the thread that
 * stored the value read here wrote before its "release" is visible after this load.
 */
export function atomicLoad(array: AtomicArray | Float32Array, index: i32, order?: "relaxed" | "acquire"): number {
  void [array, index, order];
  return outsideKernel("atomicLoad()");
}
/**
 * Writes `value` to `array[index]` atomically (the counterpart of atomicLoad). i32, u32 and f32 elements. With
 * "release", a thread that reads the value with "acquire" also sees what this thread wrote before.
 */
export function atomicStore(array: AtomicArray | Float32Array, index: i32, value: number, order?: "relaxed" | "release"): void {
  void [array, index, value, order];
  outsideKernel("atomicStore()");
}

/**
 * Waits until `array[index]` holds `value`, reading it as `atomicLoad(array, index, "acquire")` does: what the
 * thread that stored the value (with "release") wrote before is visible after the wait. Every thread of a
 * warpgroup waits together (like waitBarrier); a block's warpgroups may wait for each other's flags and for
 * other blocks' (which must be running: a grid no larger than the GPU runs at once, or earlier blocks only).
 * A kernel that writes a buffer through ordinary stores and copies tiles from it (copyTile) also gets the
 * fences that make those stores visible to the tensor memory accelerator: after each wait and acquire,
 * before each release and barrier. CUDA (sm_90) and the CPU backend.
 */
export function waitFlag(array: AtomicArray, index: i32, value: number): void {
  void [array, index, value];
  outsideKernel("waitFlag()");
}

// ---------------------------------------------------------------------------------------------------------
// Subgroups

/**
 * The lanes of a subgroup: 32 on CUDA (a warp), the adapter's on WebGPU (4 to 128; 4 on SwiftShader), the
 * device's setting on the CPU (default 32). Write kernels for any power of two from 4 to 128.
 */
export const subgroupSize: i32 = 0 as i32;
/** The thread's lane in its subgroup: its linear index in the block modulo subgroupSize. */
export const subgroupInvocationId: i32 = 0 as i32;

function subgroupOnly(what: string): never {
  return outsideKernel(`${what} (a subgroup operation)`);
}

/** The sum of `x` over the lanes of the subgroup, in every lane. */
export function subgroupAdd<T extends number>(x: T): T {
  void x;
  return subgroupOnly("subgroupAdd()");
}
/** The least `x` of the subgroup's lanes, in every lane. */
export function subgroupMin<T extends number>(x: T): T {
  void x;
  return subgroupOnly("subgroupMin()");
}
/** The greatest `x` of the subgroup's lanes, in every lane. */
export function subgroupMax<T extends number>(x: T): T {
  void x;
  return subgroupOnly("subgroupMax()");
}
/** The sum of `x` over lanes 0 … this lane. */
export function subgroupInclusiveAdd<T extends number>(x: T): T {
  void x;
  return subgroupOnly("subgroupInclusiveAdd()");
}
/** The sum of `x` over lanes 0 … this lane − 1 (0 in lane 0). */
export function subgroupExclusiveAdd<T extends number>(x: T): T {
  void x;
  return subgroupOnly("subgroupExclusiveAdd()");
}
/** `x` of lane `lane`, a compile-time constant from 0 to 127, in every lane. */
export function subgroupBroadcast<T extends number>(x: T, lane: number): T {
  void [x, lane];
  return subgroupOnly("subgroupBroadcast()");
}
/** `x` of lane `lane` (any value; a lane outside the subgroup gives an unspecified value). */
export function subgroupShuffle<T extends number>(x: T, lane: number): T {
  void [x, lane];
  return subgroupOnly("subgroupShuffle()");
}
/** `x` of lane `subgroupInvocationId ^ mask`; `mask` must be the same in every thread. */
export function subgroupShuffleXor<T extends number>(x: T, mask: number): T {
  void [x, mask];
  return subgroupOnly("subgroupShuffleXor()");
}
/** `x` of lane `subgroupInvocationId − distance`; `distance` must be the same in every thread. */
export function subgroupShuffleUp<T extends number>(x: T, distance: number): T {
  void [x, distance];
  return subgroupOnly("subgroupShuffleUp()");
}
/** `x` of lane `subgroupInvocationId + distance`; `distance` must be the same in every thread. */
export function subgroupShuffleDown<T extends number>(x: T, distance: number): T {
  void [x, distance];
  return subgroupOnly("subgroupShuffleDown()");
}
/**
 * A u32 whose bit i is set when lane i's `predicate` is true, for lanes 0 to 31: in a subgroup of more than
 * 32 lanes, the lanes from 32 on are not represented (the same on every target).
 */
export function subgroupBallot(predicate: boolean): u32 {
  void predicate;
  return subgroupOnly("subgroupBallot()");
}
/** True when `predicate` is true in every lane of the subgroup. */
export function subgroupAll(predicate: boolean): boolean {
  void predicate;
  return subgroupOnly("subgroupAll()");
}
/** True when `predicate` is true in some lane of the subgroup. */
export function subgroupAny(predicate: boolean): boolean {
  void predicate;
  return subgroupOnly("subgroupAny()");
}

/**
 * `x` of the first thread of this thread's warpgroup (128 threads), in every thread of the warpgroup: a value
 * the compiler knows to be the same across the warpgroup, so that control flow around waits, syncWarpgroup()
 * and matrix operations may depend on it (a flag read with atomicLoad is not, until broadcast). Every thread of
 * the warpgroup must reach it. CUDA (a shared word and the warpgroup's named barrier) and the CPU backend.
 */
export function warpgroupBroadcast<T extends number>(x: T): T {
  void x;
  return outsideKernel("warpgroupBroadcast()");
}

// ---------------------------------------------------------------------------------------------------------
// Warp-level matrix operations (tensor cores)

/**
 * The m×n×k shapes: m16n8k8 (TF32 inputs) and m16n8k16 (bf16 or f16 inputs) for `mma` (a warp's fragments:
 * A 16×8 or 16×16, B 8×8 or 16×8, accumulator 16×8), and for `wgmma`
 * (a warpgroup's: A 64×8, accumulator 64×n, B 8×n read from shared memory) m64n64k8, m64n128k8, m64n256k8
 * with TF32 inputs, m64n64k16, m64n128k16, m64n256k16 with bf16 or f16 inputs (B read from shared memory,
 * A from shared memory or from an A fragment of 64×16 bf16 or f16 elements), and m64n64k32, m64n128k32,
 * m64n256k32 with 8-bit float inputs (e4m3 or e5m2; A and B both read K-major from shared memory).
 */
export type MatrixShape = "m16n8k8" | "m16n8k16" | WarpgroupShape;
/** The shapes of `wgmma` (sm_90a tensor cores; CUDA only, and the CPU's emulation). */
export type WarpgroupShape = Tf32WarpgroupShape | Half16WarpgroupShape | Float8WarpgroupShape;
/** The 8-bit float shapes of `wgmma` (A and B in shared arrays of e4m3 or e5m2, each of either, K-major). */
export type Float8WarpgroupShape = "m64n64k32" | "m64n128k32" | "m64n256k32";
/** A shared array that the 8-bit `wgmma` reads. */
type Float8Array = Float8E4M3Array | Float8E5M2Array;
/** The TF32 shapes of `wgmma` (A a register fragment). */
export type Tf32WarpgroupShape = "m64n64k8" | "m64n128k8" | "m64n256k8";
/** The 16-bit shapes of `wgmma` (B in a shared array of bf16 or f16; A too, or in a bf16 or f16 A fragment). */
export type Half16WarpgroupShape = "m64n64k16" | "m64n128k16" | "m64n256k16";
/** A shared array that the 16-bit `wgmma` reads, `copyTile` fills or `storeTile` reads. */
type Half16Array = BFloat16Array | Float16Array;

/**
 * One matrix fragment, spread over the 32 lanes of a warp: each lane holds a few elements (docs/language.md,
 * section 25, says which). `Role` is the operand it can be ("a", "b" or "accumulator"), `Element` its element
 * type ("tf32" inputs, "f32" accumulators, "bf16" or "f16" A fragments of the k16 shapes and B fragments of m16n8k16). Opaque: only the
 * matrix functions below use fragments.
 */
export interface Fragment<Role extends "a" | "b" | "accumulator", Shape extends MatrixShape, Element extends FragmentElementType> {
  readonly __fragment: { readonly role: Role; readonly shape: Shape; readonly element: Element };
}

/**
 * Declares an array of `count` matrix fragments, like `local` arrays: with `const` at the top level of a
 * kernel body, `count` a compile-time constant. `fragment.a("m16n8k8", "tf32", 4)` holds four 16×8 A
 * operands, `fragment.b("m16n8k8", "tf32", n)` 8×8 B operands, `fragment.accumulator("m16n8k8", "f32", n)`
 * 16×8 f32 accumulators; `fragment.a("m16n8k16", "bf16", n)` 16×16 and `fragment.b("m16n8k16", "bf16", n)`
 * 16×8 bf16 operands of the 16-bit `mma` (or "f16"); `fragment.a("m64n64k16", "bf16", n)` 64×16 bf16 A operands
 * of the k16 `wgmma` with accumulators of that shape. Index it (`acc[i]`) only to pass a fragment to the functions below.
 */
export const fragment = {
  a: sharedArray,
  b: sharedArray,
  accumulator: sharedArray,
} as {
  a<S extends "m16n8k8" | Tf32WarpgroupShape>(shape: S, element: "tf32", count: number): Fragment<"a", S, "tf32">[];
  a<S extends Half16WarpgroupShape | "m16n8k16", E extends "bf16" | "f16">(shape: S, element: E, count: number): Fragment<"a", S, E>[];
  b(shape: "m16n8k8", element: "tf32", count: number): Fragment<"b", "m16n8k8", "tf32">[];
  b<E extends "bf16" | "f16">(shape: "m16n8k16", element: E, count: number): Fragment<"b", "m16n8k16", E>[];
  accumulator<S extends MatrixShape>(shape: S, element: "f32", count: number): Fragment<"accumulator", S, "f32">[];
};

/** The element types of fragments: tf32 and 16-bit inputs, f32 accumulators. */
type FragmentElementType = "tf32" | "f32" | "bf16" | "f16";

/** Any fragment. */
type AnyFragment = Fragment<"a" | "b" | "accumulator", MatrixShape, FragmentElementType>;

/**
 * Loads a fragment's matrix (rows × cols of its role) from a row-major matrix in a global buffer or a 1-D
 * shared array: element (row, col) is `array[offset + row * stride + col]`. Every lane of the warp must call
 * it together (uniform control flow); tf32 fragments round each element to tf32 (`cvt.rna.tf32.f32`), bf16
 * and f16 fragments to their type (to nearest even).
 */
export function loadFragment(frag: AnyFragment, array: Readonly<Float32Array> | Readonly<Half16Array>, offset: i32, stride: i32, colStride?: i32): void {
  void [frag, array, offset, stride, colStride];
  outsideKernel("loadFragment()");
}

/**
 * Loads an m16n8k16 A or B fragment from a shared array of its element type, as `loadFragment` does (element
 * (row, col) is `array[offset + row * stride + col * colStride]`), with `ldmatrix` on CUDA: rows of 8 elements
 * (16 bytes) must be contiguous, so `colStride` is left out (or 1), or `stride` is 1 and `colStride` steps the
 * columns (the tile stored transposed, which ldmatrix's `.trans` reads). Each row of 8 must start 16 bytes
 * aligned: `offset` and the other stride multiples of 8. Every lane of the warp calls it together.
 */
export function loadMatrix(frag: Fragment<"a" | "b", "m16n8k16", "bf16" | "f16">, array: Half16Array, offset: i32, stride: i32, colStride?: i32): void {
  void [frag, array, offset, stride, colStride];
  outsideKernel("loadMatrix()");
}

/**
 * Stores an accumulator's matrix to `array[offset + row * stride + col * colStride]` (colStride 1 when left
 * out, as for loads; into a bf16 or f16 array each element rounded to nearest even); every thread of the warp (warpgroup, for the wgmma shapes) together. With the options
 * `{ swizzle: 128, boxRows }` instead of the stride, into a shared array of f32, bf16 or f16 in the swizzled box
 * layout that `copyTile` writes and `storeTile` reads (docs/language.md §25), each element rounded to the
 * array's type.
 */
export function storeFragment(frag: Fragment<"accumulator", MatrixShape, "f32">, array: Float32Array | Half16Array, offset: i32, stride: i32, colStride?: i32): void;
export function storeFragment(frag: Fragment<"accumulator", MatrixShape, "f32">, array: Float32Array | Half16Array, offset: i32, layout: BoxStore): void;
export function storeFragment(frag: Fragment<"accumulator", MatrixShape, "f32">, array: Float32Array | Half16Array, offset: i32, stride: i32 | BoxStore, colStride?: i32): void {
  void [frag, array, offset, stride, colStride];
  outsideKernel("storeFragment()");
}

/**
 * The swizzled box layout of `storeFragment` (boxes of `boxRows` rows of 128 bytes), and optionally a GEMM
 * epilogue: each element stored is `alpha · acc + beta · (the element the array held)`, rounded once.
 */
export interface BoxStore {
  readonly swizzle: 128;
  readonly boxRows: i32;
  readonly alpha?: f32;
  readonly beta?: f32;
}

/**
 * The value of element `e` of this thread's part of a fragment (0 ≤ e < the elements a thread holds: 4 for
 * m16n8k8 A and accumulators, n/2 for a warpgroup accumulator of n columns, 8 for a k16 A); `fragmentRow` and `fragmentColumn`
 * say where that element lies in the fragment's matrix (docs/language.md §25 gives the layouts). With `e`
 * constant (an `unroll:` loop) the fragment stays in registers. For a `wgmma` accumulator, only after the
 * `wgmmaWait` that covers its groups.
 */
export function fragmentElement(frag: AnyFragment, e: i32): f32 {
  void [frag, e];
  return outsideKernel("fragmentElement()");
}

/** The row of element `e` of this thread's part of a fragment in the fragment's matrix. */
export function fragmentRow(frag: AnyFragment, e: i32): i32 {
  void [frag, e];
  return outsideKernel("fragmentRow()");
}

/** The column of element `e` of this thread's part of a fragment in the fragment's matrix. */
export function fragmentColumn(frag: AnyFragment, e: i32): i32 {
  void [frag, e];
  return outsideKernel("fragmentColumn()");
}

/** Sets element `e` of this thread's part of a fragment to `value` (rounded to tf32, bf16 or f16 in such a fragment: to nearest even for the 16-bit types). */
export function setFragmentElement(frag: AnyFragment, e: i32, value: f32): void {
  void [frag, e, value];
  outsideKernel("setFragmentElement()");
}

/** Sets every element of a fragment to `value` (rounded to the fragment's element type, as setFragmentElement). */
export function fillFragment(frag: AnyFragment, value: f32): void {
  void [frag, value];
  outsideKernel("fillFragment()");
}

/**
 * `acc = a · b + acc` for the warp's fragments of one shape (`mma.sync` on CUDA tensor cores): m16n8k8 with
 * tf32 inputs, or m16n8k16 with bf16 or f16 inputs (A and B of the same type). Every lane of the warp must call
 * it together (uniform control flow), with the same fragment indices.
 */
export function mma(acc: Fragment<"accumulator", "m16n8k8", "f32">, a: Fragment<"a", "m16n8k8", "tf32">, b: Fragment<"b", "m16n8k8", "tf32">): void;
export function mma<E extends "bf16" | "f16">(acc: Fragment<"accumulator", "m16n8k16", "f32">, a: Fragment<"a", "m16n8k16", E>, b: Fragment<"b", "m16n8k16", NoInfer<E>>): void;
export function mma(acc: AnyFragment, a: AnyFragment, b: AnyFragment): void {
  void [acc, a, b];
  outsideKernel("mma()");
}

/**
 * `acc = a · B + acc` for a warpgroup's fragments of a wgmma shape (`wgmma.mma_async` on sm_90a), with B (8×n)
 * read from the shared array `b` in the 128-byte-swizzled, K-major layout: B[k][col] is
 * `b[swizzle(offset + 32 * col + k)]` with swizzle(i) = i ^ (((i >> 5) & 7) << 2), each element used as TF32 by
 * dropping its low 13 bits. Asynchronous: read `acc`, or change `a` or B, only after `wgmmaWait` has covered
 * the group (`wgmmaCommit`) that holds this call. The 128 threads of the warpgroup call it together.
 */
export function wgmma<S extends Tf32WarpgroupShape>(acc: Fragment<"accumulator", S, "f32">, a: Fragment<"a", S, "tf32">, b: Float32Array, offset: i32): void;
/**
 * `acc = A · B + acc` with 16-bit inputs (a k16 shape): A (64×16) read from the shared bf16 or f16 array `a` in
 * the K-major, 128-byte-swizzled layout (A[row][k] at `a[swizzle(aOffset + 64·row + k)]`, swizzle(i) =
 * i ^ (((i >> 6) & 7) << 3)), and B (16×n) from `b` (the same type) K-major (B[k][col] at
 * `b[swizzle(bOffset + 64·col + k)]`) or, with `{ bMajor: "n", bBoxRows: R }`, N-major in the boxes of R rows
 * of 64 columns that `copyTile` writes (B[k][col] at `b[bOffset + (col >> 6)·64·R + swizzle(64·k + (col & 63))]`).
 * f32 accumulation. Asynchronous, as the TF32 form.
 */
export function wgmma<S extends Half16WarpgroupShape>(acc: Fragment<"accumulator", S, "f32">, a: Half16Array, aOffset: i32, b: Half16Array, bOffset: i32, layout?: { bMajor: "k" } | { bMajor: "n"; bBoxRows: i32 }): void;
/**
 * `acc = a · B + acc` with 16-bit inputs and A from registers: `a` an A fragment (`fragment.a(shape, "bf16" |
 * "f16", count)`, 64×16, the layout of docs/language.md §25: the accumulator's layout of 16 columns), B (16×n)
 * from the shared array `b` of the fragment's type, K-major or N-major as the shared-A form reads it.
 * Asynchronous: change `a` only after the `wgmmaWait` that covers the call's group.
 */
export function wgmma<S extends Half16WarpgroupShape>(acc: Fragment<"accumulator", S, "f32">, a: Fragment<"a", S, "bf16" | "f16">, b: Half16Array, bOffset: i32, layout?: { bMajor: "k" } | { bMajor: "n"; bBoxRows: i32 }): void;
/**
 * `acc = A · B + acc` with 8-bit float inputs (a k32 shape, `wgmma.mma_async …m64nNk32.f32.e4m3.e5m2` and the
 * like): A (64×32) read from the shared e4m3 or e5m2 array `a` K-major in the 128-byte swizzle (A[row][k] at
 * `a[swizzle(aOffset + 128·row + k)]`, swizzle(i) = i ^ (((i >> 7) & 7) << 4)), B (32×n) from `b` (e4m3 or e5m2,
 * not necessarily A's type) K-major too (B[k][col] at `b[swizzle(bOffset + 128·col + k)]`): the tensor cores
 * transpose no 8-bit operand, so B is stored as Bᵀ, n rows of k. The offsets are multiples of 32 in the first
 * 128-byte row of a group of 8 rows (offset % 1024 < 128). f32 accumulation; asynchronous, as the other forms.
 */
export function wgmma<S extends Float8WarpgroupShape>(acc: Fragment<"accumulator", S, "f32">, a: Float8Array, aOffset: i32, b: Float8Array, bOffset: i32, layout?: { bMajor: "k" }): void;
export function wgmma(...args: unknown[]): void {
  void args;
  outsideKernel("wgmma()");
}

// ---------------------------------------------------------------------------------------------------------
// Barriers in shared memory and warpgroup roles

/**
 * The thread's warpgroup: its linear index in the block divided by 128 (CUDA and the CPU). The same for all
 * 128 threads of a warpgroup, so `if (warpgroupIdx === 0) { … } else { … }` splits the block into roles:
 * `syncThreads()` may not stand in such a branch, but `waitBarrier` and the warpgroup operations may.
 */
export const warpgroupIdx: i32 = 0 as i32;

/**
 * The block's rank in its cluster (the kernel's `cluster` option: blocks launched together that reach each
 * other's shared memory and barriers), x fastest: 0 … cluster size − 1, the same for all of the block's threads.
 */
export const clusterRank: i32 = 0 as i32;

/**
 * Every thread of every block of the cluster waits here; writes before it (shared memory of any block of the
 * cluster, barriers' initialization) are visible after it. Where `syncThreads()` may stand, and once after the
 * roles join before the kernel ends, so that no block exits while another still arrives on its barriers.
 */
export function syncCluster(): void {
  outsideKernel("syncCluster()");
}

/**
 * Sets barrier `index` of `barriers` to expect `count` arrivals a phase, and starts phase 0. One thread
 * initializes each barrier, before a `syncThreads()` that precedes every other use.
 */
export function initBarrier(barriers: Barriers, index: i32, count: i32): void {
  void [barriers, index, count];
  outsideKernel("initBarrier()");
}

/**
 * One arrival of this thread at barrier `index`: its writes so far are visible to the phase's waiters. In a
 * kernel with clusters, `{ block: r }` arrives at barrier `index` of the cluster's block of rank r instead (this
 * block's own when r is its `clusterRank`): how consumers hand a stage that another block multicasts into back.
 */
export function arriveBarrier(barriers: Barriers, index: i32, options?: { block: i32 }): void {
  void [barriers, index, options];
  outsideKernel("arriveBarrier()");
}

/**
 * One arrival at barrier `index` once every `copyAsync4` this thread started before the call is complete
 * (`cp.async.mbarrier.arrive.noinc`): the copied elements are visible to the phase's waiters, with no
 * `commitAsync`/`waitAsync`. The arrival counts against the phase's expected arrivals.
 */
export function arriveAfterCopies(barriers: Barriers, index: i32): void {
  void [barriers, index];
  outsideKernel("arriveAfterCopies()");
}

/**
 * One arrival of this thread at barrier `index` that also makes the phase wait for `bytes` more bytes of
 * `copyTile` copies (`mbarrier.arrive.expect_tx`): the phase completes once its arrivals and those bytes are in.
 */
export function arriveExpectBytes(barriers: Barriers, index: i32, bytes: i32): void {
  void [barriers, index, bytes];
  outsideKernel("arriveExpectBytes()");
}

/**
 * Starts copying a box of the 2-D f32 tensor `source` (row-major) into the shared array `target` from
 * element `offset` (a multiple of 256), in the 128-byte swizzle that `wgmma` reads: box element (r, c) lands at
 * `target[offset + swizzle128(32·r + c)]`. `map` is the tensor map the runtime's `createTensorMap(device,
 * source, …)` made (the tensor's rows and columns, a box of up to 256 rows of 32 columns); (x, y) is the
 * box's first column and row; elements outside the tensor are zero. The copy's bytes count against barrier
 * `index` (`arriveExpectBytes`), whose waiters then see them. One thread issues it (CUDA: the tensor memory
 * accelerator, `cp.async.bulk.tensor`, sm_90). In a kernel with clusters, `{ multicast: mask }` delivers the box
 * to every block of the cluster whose rank's bit is set in `mask`, at `offset` of its own `target`, its bytes
 * counted on its own barrier `index` (`.multicast::cluster`).
 */
export function copyTile(target: Half16Array, offset: i32, source: Readonly<Half16Array>, map: ReadonlyUint32Array, x: i32, y: i32, barriers: Barriers, index: i32, options?: { multicast: i32 }): void;
// (The 16-bit form alone first: a kernel over T passes `ReadonlyBufferOf<T>`, which TypeScript relates to one
// Readonly type but not to a union of several.)
export function copyTile(
  target: Float32Array | Half16Array | Float8Array,
  offset: i32,
  source: ElementArray | Readonly<Half16Array> | Readonly<Float8Array>,
  map: ReadonlyUint32Array,
  x: i32,
  y: i32,
  barriers: Barriers,
  index: i32,
  options?: { multicast: i32 },
): void;
export function copyTile(...args: readonly unknown[]): void {
  void args;
  outsideKernel("copyTile()");
}

/**
 * Starts storing a box of the shared array `source` (from element `offset`, in the layout `copyTile` writes:
 * 128-byte rows, swizzled) into the 2-D tensor `target` that `map` describes, at column x and row y; elements of
 * the box outside the tensor are not written. One thread issues it (CUDA: the tensor memory accelerator,
 * `cp.async.bulk.tensor`, sm_90), after a barrier that ordered the writes of `source` before it. The store reads
 * `source` asynchronously: write it again only after `waitTileStores`, and call `waitTileStores(0)` before the
 * thread ends.
 */
export function storeTile(target: Float32Array | Half16Array, map: ReadonlyUint32Array, x: i32, y: i32, source: Float32Array | Half16Array, offset: i32): void {
  void [target, map, x, y, source, offset];
  outsideKernel("storeTile()");
}

/** Waits until at most `pending` (a constant, 0 to 7) of this thread's `storeTile`s still read their shared source. */
export function waitTileStores(pending: number): void {
  void pending;
  outsideKernel("waitTileStores()");
}

/**
 * Waits until the phase of barrier `index` whose parity is `parity` (0 or 1: phases alternate, starting at
 * 0) has completed. Every thread of a warpgroup waits together (the same control flow across the warpgroup).
 */
export function waitBarrier(barriers: Barriers, index: i32, parity: i32): void {
  void [barriers, index, parity];
  outsideKernel("waitBarrier()");
}

/**
 * From here on the warpgroup's threads hold at most `count` registers each (a constant multiple of 8 from 24
 * to 256; `setmaxnreg` on sm_90a): fewer than the block's share (65536 / threads) gives registers back, more
 * takes them from those given back, and waits until there are enough (so the roles' counts must fit in 65536,
 * or the block hangs). All 128 threads of the warpgroup call it together. The kernel must fix its block. A
 * producer that only copies gives registers to consumers that hold large accumulators. No-op on the CPU.
 */
export function setMaxRegisters(count: number): void {
  void count;
  outsideKernel("setMaxRegisters()");
}

/** Closes the group of the warpgroup's `wgmma` calls since the last commit (`wgmma.commit_group`). */
export function wgmmaCommit(): void {
  outsideKernel("wgmmaCommit()");
}

/** Waits until at most `pending` (a constant, 0 to 7) committed `wgmma` groups of the warpgroup are unfinished. */
export function wgmmaWait(pending: number): void {
  void pending;
  outsideKernel("wgmmaWait()");
}
