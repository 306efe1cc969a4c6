/**
 * The kernel language's types as data. Every question a pass or a backend asks of a type is answered by a
 * row of the tables here, not by a case in its own switch: a scalar's class, width and range, how TypeScript
 * spells it (annotation, conversion function, buffer arrays, shared and private allocators), what each
 * target does with it (computes it natively, emulates it, or refuses it, with the spelling it prints), and
 * how it lies in memory. Adding a type is adding a row; docs/architecture.md ("Types") explains the design
 * and docs/language.md the rules users see.
 *
 * Three kinds of type:
 * - **Scalars**, spelled as strings. The value types `bool`, `i32`, `u32`, `f32`, `f16`, `bf16`, `f64`,
 *   which locals, parameters and expressions have; the *narrow integers* `i8`, `u8`, `i16`, `u16`, which
 *   only array elements have: a load widens one to i32 or u32 and a store truncates, as a typed array does;
 *   and the *8-bit floats* `e4m3`, `e5m2` (OCP FP8), also storage only: a load gives the f32 of the value, a
 *   store rounds an f32 to nearest even and saturates to the largest finite value.
 * - **Vectors** of 2 to 4 components of one scalar (`vec3f`, `vec4h`, `vec2b`…): interned, one object per
 *   type, so that types compare with `===`.
 * - **Structs**: named records of scalar, vector and struct fields, one object per declaration.
 *
 * Memory follows WGSL's storage-buffer layout on every target, so that a buffer written by one backend reads
 * the same on another and a PyTorch tensor's bytes are a buffer: scalars are aligned to their size; a vector
 * of 2 or 4 to its size, one of 3 like one of 4 (but 3 components long); a struct to its most aligned field,
 * each field at the next multiple of its alignment, the size rounded up to the struct's alignment; an array
 * element to its size rounded up to its alignment (the stride).
 */

import type { Span } from "../diagnostics/span.ts";

// ---------------------------------------------------------------------------------------------------------
// Targets

/** The targets, as `tskernel build --target` and the `targets` kernel option name them. */
export type TargetName = "cuda" | "wgsl" | "js";

export const targetNames: readonly TargetName[] = ["cuda", "wgsl", "js"];

// ---------------------------------------------------------------------------------------------------------
// Scalars

/** The scalar value types: what locals, parameters, helper returns and expressions hold. */
export type ScalarType = "bool" | "i32" | "u32" | "f32" | "f16" | "bf16" | "f64";

/** The narrow integers: element types of arrays only (loads give i32/u32, stores truncate). */
export type NarrowIntType = "i8" | "u8" | "i16" | "u16";

/** The 8-bit floats (OCP FP8): element types of arrays only (loads give f32, stores round and saturate). */
export type Float8Type = "e4m3" | "e5m2";

/** Every scalar an array element may be: the value scalars but bool, the narrow integers and the 8-bit floats. */
export type ElementScalar = Exclude<ScalarType, "bool"> | NarrowIntType | Float8Type;

/** Any scalar name the tables know. */
export type AnyScalar = ScalarType | NarrowIntType | Float8Type;

/** The floating-point value types. */
export type FloatType = "f32" | "f16" | "bf16" | "f64";

/** The integer value types (narrow integers compute as these). */
export type IntType = "i32" | "u32";

export interface FloatFormat {
  /** Bits of the exponent and of the stored significand (without the implicit leading 1). */
  readonly exponentBits: number;
  readonly mantissaBits: number;
  /** The largest finite value. */
  readonly maxFinite: number;
  /**
   * A store saturates to `maxFinite` instead of overflowing to infinity (the 8-bit floats, as CUDA's `satfinite`
   * conversions; e4m3 has no infinities at all). compiler/lang/float8.ts holds the rest of their formats.
   */
  readonly saturates?: true;
}

/** The target-independent facts of one scalar. */
export interface ScalarInfo {
  readonly name: AnyScalar;
  readonly class: "bool" | "int" | "float";
  /** Bits of the value; for bool, of its storage in uniform structs (a u32). */
  readonly bits: 8 | 16 | 32 | 64;
  /** Bytes of one element in an array (and its alignment there). */
  readonly bytes: 1 | 2 | 4 | 8;
  readonly signed: boolean;
  /** The value type an array element of this type loads as: itself, i32/u32 for the narrow integers, f32 for the 8-bit floats. */
  readonly valueType: ScalarType;
  /** Integers: the range of values. */
  readonly range?: { readonly min: number; readonly max: number };
  readonly float?: FloatFormat;
  /** How kernels spell it in TypeScript; absent names do not exist for this type. */
  readonly typescript: {
    /** The annotation (`const x: f16 = …`) and `Const<…>` argument; narrow integers have none (no such values). */
    readonly annotation?: string;
    /** The conversion function kernels call (`f16(x)`). */
    readonly conversion?: string;
    /** The global buffer parameter types: writable and read-only. */
    readonly buffer?: string;
    readonly readonlyBuffer?: string;
    /** The method of `shared.` and `local.` that allocates arrays of it (`shared.f16(…)`). */
    readonly allocator?: string;
  };
}

const i32Range = { min: -2147483648, max: 2147483647 };
const u32Range = { min: 0, max: 4294967295 };

export const scalars: Readonly<Record<AnyScalar, ScalarInfo>> = {
  bool: { name: "bool", class: "bool", bits: 32, bytes: 4, signed: false, valueType: "bool", typescript: { annotation: "bool" } },
  i32: {
    name: "i32", class: "int", bits: 32, bytes: 4, signed: true, valueType: "i32", range: i32Range,
    typescript: { annotation: "i32", conversion: "i32", buffer: "Int32Array", readonlyBuffer: "ReadonlyInt32Array", allocator: "i32" },
  },
  u32: {
    name: "u32", class: "int", bits: 32, bytes: 4, signed: false, valueType: "u32", range: u32Range,
    typescript: { annotation: "u32", conversion: "u32", buffer: "Uint32Array", readonlyBuffer: "ReadonlyUint32Array", allocator: "u32" },
  },
  f32: {
    name: "f32", class: "float", bits: 32, bytes: 4, signed: true, valueType: "f32",
    float: { exponentBits: 8, mantissaBits: 23, maxFinite: 3.4028234663852886e38 },
    typescript: { annotation: "f32", conversion: "f32", buffer: "Float32Array", readonlyBuffer: "ReadonlyFloat32Array", allocator: "f32" },
  },
  f16: {
    name: "f16", class: "float", bits: 16, bytes: 2, signed: true, valueType: "f16",
    float: { exponentBits: 5, mantissaBits: 10, maxFinite: 65504 },
    typescript: { annotation: "f16", conversion: "f16", buffer: "Float16Array", readonlyBuffer: "ReadonlyFloat16Array", allocator: "f16" },
  },
  bf16: {
    name: "bf16", class: "float", bits: 16, bytes: 2, signed: true, valueType: "bf16",
    float: { exponentBits: 8, mantissaBits: 7, maxFinite: 3.3895313892515355e38 },
    typescript: { annotation: "bf16", conversion: "bf16", buffer: "BFloat16Array", readonlyBuffer: "ReadonlyBFloat16Array", allocator: "bf16" },
  },
  f64: {
    name: "f64", class: "float", bits: 64, bytes: 8, signed: true, valueType: "f64",
    float: { exponentBits: 11, mantissaBits: 52, maxFinite: Number.MAX_VALUE },
    typescript: { annotation: "f64", conversion: "f64", buffer: "Float64Array", readonlyBuffer: "ReadonlyFloat64Array", allocator: "f64" },
  },
  i8: {
    name: "i8", class: "int", bits: 8, bytes: 1, signed: true, valueType: "i32", range: { min: -128, max: 127 },
    typescript: { buffer: "Int8Array", readonlyBuffer: "ReadonlyInt8Array", allocator: "i8" },
  },
  u8: {
    name: "u8", class: "int", bits: 8, bytes: 1, signed: false, valueType: "u32", range: { min: 0, max: 255 },
    typescript: { buffer: "Uint8Array", readonlyBuffer: "ReadonlyUint8Array", allocator: "u8" },
  },
  i16: {
    name: "i16", class: "int", bits: 16, bytes: 2, signed: true, valueType: "i32", range: { min: -32768, max: 32767 },
    typescript: { buffer: "Int16Array", readonlyBuffer: "ReadonlyInt16Array", allocator: "i16" },
  },
  u16: {
    name: "u16", class: "int", bits: 16, bytes: 2, signed: false, valueType: "u32", range: { min: 0, max: 65535 },
    typescript: { buffer: "Uint16Array", readonlyBuffer: "ReadonlyUint16Array", allocator: "u16" },
  },
  // The 8-bit floats: no values of their own (an element loads as the f32 it stands for), so no annotation or
  // conversion; the formats' facts are compiler/lang/float8.ts's, which encodes and decodes them.
  e4m3: {
    name: "e4m3", class: "float", bits: 8, bytes: 1, signed: true, valueType: "f32",
    float: { exponentBits: 4, mantissaBits: 3, maxFinite: 448, saturates: true },
    typescript: { buffer: "Float8E4M3Array", readonlyBuffer: "ReadonlyFloat8E4M3Array", allocator: "e4m3" },
  },
  e5m2: {
    name: "e5m2", class: "float", bits: 8, bytes: 1, signed: true, valueType: "f32",
    float: { exponentBits: 5, mantissaBits: 2, maxFinite: 57344, saturates: true },
    typescript: { buffer: "Float8E5M2Array", readonlyBuffer: "ReadonlyFloat8E5M2Array", allocator: "e5m2" },
  },
};

/** The value scalars, in the order messages list them. */
export const scalarTypes: readonly ScalarType[] = ["f32", "i32", "u32", "bool", "f16", "bf16", "f64"];
/** Every element scalar, in the order messages list them. */
export const elementScalars: readonly ElementScalar[] = ["f32", "i32", "u32", "f16", "bf16", "f64", "i8", "u8", "i16", "u16", "e4m3", "e5m2"];

export function isScalar(type: Type): type is ScalarType {
  return typeof type === "string";
}

export function isInteger(type: Type): type is IntType {
  return type === "i32" || type === "u32";
}

export function isFloat(type: Type): type is FloatType {
  return typeof type === "string" && scalars[type].class === "float";
}

/** A number: not bool, not a vector or struct. */
export function isNumeric(type: Type): type is Exclude<ScalarType, "bool"> {
  return typeof type === "string" && type !== "bool";
}

/** The type of the value an array element of `element` loads as and a store to it takes: narrow integers widen. */
export function valueTypeOf(element: ElementScalar): ScalarType {
  return scalars[element].valueType;
}

export function isNarrowInt(type: ElementType): type is NarrowIntType {
  return type === "i8" || type === "u8" || type === "i16" || type === "u16";
}

export function isFloat8(type: Type | ElementType): type is Float8Type {
  return type === "e4m3" || type === "e5m2";
}

/** An element type with no values of its own (narrow integers, 8-bit floats): a load converts, a store converts back. */
export function isStorageOnly(type: ElementType): type is NarrowIntType | Float8Type {
  return isNarrowInt(type) || isFloat8(type);
}

/** A float narrower than f32 (f16, bf16): computed as if in f32 and rounded after every operation. */
export function isHalfFloat(type: Type | ElementType): type is "f16" | "bf16" {
  return type === "f16" || type === "bf16";
}

// The TypeScript spellings, by name: what the frontend looks an annotation, a call or a buffer type up in.
const anyScalars = Object.values(scalars);

/** Annotation → value type (`f16` → "f16"), for locals, parameters, helper returns and `Const<…>`. */
export const annotationTypes: ReadonlyMap<string, ScalarType> = new Map(
  anyScalars.flatMap((info) => (info.typescript.annotation ? [[info.typescript.annotation, info.name as ScalarType]] : [])),
);

/** Conversion function → the type it converts to (`bf16(x)` → "bf16"). */
export const conversionTypes: ReadonlyMap<string, ScalarType> = new Map(
  anyScalars.flatMap((info) => (info.typescript.conversion ? [[info.typescript.conversion, info.name as ScalarType]] : [])),
);

/** Buffer parameter type → its element type and access (`ReadonlyUint8Array` → u8, read). */
export const bufferTypeNames: ReadonlyMap<string, BufferTypeName> = new Map(
  anyScalars.flatMap((info): [string, BufferTypeName][] => [
    ...(info.typescript.buffer ? [[info.typescript.buffer, { elementType: info.name as ElementScalar, access: "read_write" }] as [string, BufferTypeName]] : []),
    ...(info.typescript.readonlyBuffer ? [[info.typescript.readonlyBuffer, { elementType: info.name as ElementScalar, access: "read" }] as [string, BufferTypeName]] : []),
  ]),
);

export interface BufferTypeName {
  readonly elementType: ElementScalar;
  readonly access: "read" | "read_write";
}

/** The element types of `copyAsync4` (and of `load4`/`store4` as 16-byte accesses): four 32-bit elements. */
export const vectorElementTypes: ReadonlySet<ElementScalar> = new Set(["f32", "i32", "u32"]);

/**
 * The vector accesses, by how many elements they move, and the element sizes each takes: `load4`/`store4`
 * four elements of 4 bytes (16 bytes), 2 (8) or 1 (4); `load8`/`store8` eight of 2 bytes (16) or 1 (8);
 * `load16`/`store16` sixteen of 1 byte. So a kernel can move 16 bytes per access whatever its element type; f64
 * has none. The 8-byte accesses of 8-bit elements are for kernels that widen them: int8 in, bf16 out, each warp's
 * load and store covering whole 32-byte sectors (bench/dequant-probe.cu: 97 % of copy against 73 % for a 16-byte
 * load whose 32 output bytes go out as two 16-byte stores, each covering half of every sector it touches).
 */
export const vectorAccessBytes: Readonly<Record<4 | 8 | 16, readonly number[]>> = { 4: [4, 2, 1], 8: [2, 1], 16: [1] };

/** Whether `load${lanes}` and `store${lanes}` take arrays of `element`. */
export function takesVectorAccess(lanes: 4 | 8 | 16, element: ElementScalar): boolean {
  return element !== "f64" && vectorAccessBytes[lanes].includes(scalars[element].bytes);
}

/** `shared.` / `local.` method → the element type of the arrays it allocates (`shared.u8(…)` → "u8"). */
export const allocatorTypes: ReadonlyMap<string, ElementScalar> = new Map(
  anyScalars.flatMap((info) => (info.typescript.allocator ? [[info.typescript.allocator, info.name as ElementScalar]] : [])),
);

// ---------------------------------------------------------------------------------------------------------
// Per-target support

/**
 * What a target does with a type. `native`: the target has the type and computes with it. `emulated`: the
 * generated code represents it otherwise (`how`: in words, for docs and notes) with the same results.
 * `refused`: kernels that use it fail to build for the target with a coded error whose note says `why` and
 * suggests the kernel's `targets` option.
 */
export type Support =
  | { readonly level: "native"; readonly requires?: string }
  | { readonly level: "emulated"; readonly how: string }
  | { readonly level: "refused"; readonly why: string };

export interface TargetScalar {
  readonly support: Support;
  /** The target's name of a value of this type (for narrow integers: of their value type). */
  readonly value: string;
  /** The target's name of an array element of this type where it differs from `value` (emulated storage). */
  readonly storage?: string;
  /** Elements of this type in one storage element (WGSL: two bf16 in a u32 word); absent: 1. */
  readonly perStorageElement?: number;
  /**
   * The storage holds the bits of the value's encoding rather than the value (the CPU's f16 and bf16 in a
   * Uint16Array, WGSL's bf16 and narrow integers in the bits of a u32 word): loads decode, stores encode.
   */
  readonly storesBits?: true;
}

const native: Support = { level: "native" };

/**
 * Per target, per scalar: support and spelling. The C-like printers read their type names here
 * (backends/targets.ts), the validator the support, docs/language.md's table states the same.
 */
export const targetScalars: Readonly<Record<TargetName, Readonly<Record<AnyScalar, TargetScalar>>>> = {
  cuda: {
    bool: { support: native, value: "bool" },
    i32: { support: native, value: "int" },
    u32: { support: native, value: "unsigned int" },
    f32: { support: native, value: "float" },
    // The 16-bit encodings in structs with the layout of __half and __nv_bfloat16, computed in f32 and rounded
    // once by the hardware's conversions (backends/cuda-halves.ts: NVRTC has no cuda_fp16.h to include).
    f16: { support: native, value: "tsk_f16" },
    bf16: { support: native, value: "tsk_bf16" },
    f64: { support: native, value: "double" },
    i8: { support: native, value: "int", storage: "signed char" },
    u8: { support: native, value: "unsigned int", storage: "unsigned char" },
    i16: { support: native, value: "int", storage: "short" },
    u16: { support: native, value: "unsigned int", storage: "unsigned short" },
    // The codes as bytes; a load decodes to float, a store rounds (backends/cuda-halves.ts: tsk_e4m3_to_f32…).
    e4m3: { support: native, value: "float", storage: "unsigned char", storesBits: true },
    e5m2: { support: native, value: "float", storage: "unsigned char", storesBits: true },
  },
  wgsl: {
    bool: { support: native, value: "bool" },
    i32: { support: native, value: "i32" },
    u32: { support: native, value: "u32" },
    f32: { support: native, value: "f32" },
    // `enable f16;`, on adapters with the shader-f16 feature (the runtime asks for it and refuses the launch without it).
    f16: { support: { level: "native", requires: "shader-f16" }, value: "f16" },
    bf16: {
      support: { level: "emulated", how: "values are f32 rounded to bf16 after every operation; arrays hold two bf16 in each u32 word" },
      value: "f32",
      storage: "u32",
      perStorageElement: 2,
      storesBits: true,
    },
    f64: { support: { level: "refused", why: "WGSL has no 64-bit floating-point type" }, value: "f64" },
    i8: { support: { level: "emulated", how: "arrays hold four i8 in each u32 word; values are i32" }, value: "i32", storage: "u32", perStorageElement: 4, storesBits: true },
    u8: { support: { level: "emulated", how: "arrays hold four u8 in each u32 word; values are u32" }, value: "u32", storage: "u32", perStorageElement: 4, storesBits: true },
    i16: { support: { level: "emulated", how: "arrays hold two i16 in each u32 word; values are i32" }, value: "i32", storage: "u32", perStorageElement: 2, storesBits: true },
    u16: { support: { level: "emulated", how: "arrays hold two u16 in each u32 word; values are u32" }, value: "u32", storage: "u32", perStorageElement: 2, storesBits: true },
    e4m3: { support: { level: "refused", why: "WGSL has no 8-bit floats, and tskernel does not emulate them there yet" }, value: "f32" },
    e5m2: { support: { level: "refused", why: "WGSL has no 8-bit floats, and tskernel does not emulate them there yet" }, value: "f32" },
  },
  js: {
    bool: { support: native, value: "boolean" },
    i32: { support: native, value: "number", storage: "Int32Array" },
    u32: { support: native, value: "number", storage: "Uint32Array" },
    f32: { support: native, value: "number", storage: "Float32Array" },
    // JavaScript numbers rounded to the type after every operation; arrays of the bits (Node 20 has no Float16Array).
    f16: { support: { level: "emulated", how: "numbers rounded to binary16 after every operation; arrays are Uint16Array of the bits" }, value: "number", storage: "Uint16Array", storesBits: true },
    bf16: { support: { level: "emulated", how: "numbers rounded to bfloat16 after every operation; arrays are Uint16Array of the bits" }, value: "number", storage: "Uint16Array", storesBits: true },
    f64: { support: native, value: "number", storage: "Float64Array" },
    i8: { support: native, value: "number", storage: "Int8Array" },
    u8: { support: native, value: "number", storage: "Uint8Array" },
    i16: { support: native, value: "number", storage: "Int16Array" },
    u16: { support: native, value: "number", storage: "Uint16Array" },
    e4m3: { support: { level: "emulated", how: "arrays are Uint8Array of the codes; a load decodes, a store rounds to nearest even and saturates" }, value: "number", storage: "Uint8Array", storesBits: true },
    e5m2: { support: { level: "emulated", how: "arrays are Uint8Array of the codes; a load decodes, a store rounds to nearest even and saturates" }, value: "number", storage: "Uint8Array", storesBits: true },
  },
};

// ---------------------------------------------------------------------------------------------------------
// Vectors

export type VectorSize = 2 | 3 | 4;
/** The scalars a vector may hold. */
export type VectorElement = "f32" | "i32" | "u32" | "f16" | "bool";

export interface VectorType {
  readonly kind: "vector";
  /** `vec3f`, `vec4h`, `vec2b`: the name kernels write (WGSL's aliases; `b` for bool, as TypeGPU). */
  readonly name: string;
  readonly element: VectorElement;
  readonly size: VectorSize;
}

const vectorSuffix: Readonly<Record<VectorElement, string>> = { f32: "f", i32: "i", u32: "u", f16: "h", bool: "b" };

/** Every vector type, by name; `vectorType` gives the same objects. */
export const vectorTypes: ReadonlyMap<string, VectorType> = new Map(
  (Object.keys(vectorSuffix) as VectorElement[]).flatMap((element) =>
    ([2, 3, 4] as const).map((size): [string, VectorType] => {
      const name = `vec${size}${vectorSuffix[element]}`;
      return [name, { kind: "vector", name, element, size }];
    }),
  ),
);

/** The one object of the vector type of `size` components of `element`. */
export function vectorType(element: VectorElement, size: VectorSize): VectorType {
  return vectorTypes.get(`vec${size}${vectorSuffix[element]}`)!;
}

export function isVector(type: Type | ElementType): type is VectorType {
  return typeof type === "object" && type.kind === "vector";
}

// ---------------------------------------------------------------------------------------------------------
// Structs

/** The types a struct field may have. bool has no memory layout shared by the targets; see docs. */
export type FieldType = Exclude<ScalarType, "bool"> | NarrowIntType | Float8Type | VectorType | StructType;

export interface StructField {
  readonly name: string;
  readonly type: FieldType;
  readonly span: Span;
}

/** A struct type: one object per declaration (an interface or type alias in the kernel's file), compared by identity. */
export interface StructType {
  readonly kind: "struct";
  readonly name: string;
  readonly fields: readonly StructField[];
  readonly span: Span;
}

export function isStruct(type: Type | ElementType): type is StructType {
  return typeof type === "object" && type.kind === "struct";
}

// ---------------------------------------------------------------------------------------------------------
// All types

/** The type of a value: what expressions, locals, parameters and helper returns have. */
export type Type = ScalarType | VectorType | StructType;

/** The type of an array element (global buffers, shared and private arrays): never bool. */
export type ElementType = ElementScalar | VectorType | StructType;

/** The name of a type as kernels write it. */
export function typeName(type: Type | ElementType): string {
  return typeof type === "string" ? type : type.name;
}

// ---------------------------------------------------------------------------------------------------------
// Memory layout

export interface Layout {
  readonly size: number;
  readonly align: number;
}

export interface StructLayout extends Layout {
  /** Byte offset of each field, in declaration order. */
  readonly offsets: readonly number[];
}

/**
 * Which of WGSL's layout rules: `storage` for buffers, shared and private memory (the one layout every target
 * shares), `uniform` for a struct passed as a uniform parameter (WGSL's uniform address space also rounds
 * the alignment of struct members and array elements up to 16).
 */
export type LayoutRules = "storage" | "uniform";

function roundUp(alignment: number, value: number): number {
  return Math.ceil(value / alignment) * alignment;
}

/** The size and alignment of a type in memory. */
export function layoutOf(type: ElementType | "bool", rules: LayoutRules = "storage"): Layout {
  if (typeof type === "string") {
    const bytes = scalars[type].bytes;
    return { size: bytes, align: bytes };
  }
  if (type.kind === "vector") {
    const component = type.element === "bool" ? 4 : scalars[type.element].bytes;
    return { size: component * type.size, align: component * (type.size === 3 ? 4 : type.size) };
  }
  return structLayout(type, rules);
}

/** Field offsets, size and alignment of a struct under `rules`. */
export function structLayout(struct: StructType, rules: LayoutRules = "storage"): StructLayout {
  let offset = 0;
  let align = 1;
  const offsets: number[] = [];
  for (const field of struct.fields) {
    const inner = layoutOf(field.type, rules);
    // The uniform address space aligns a struct-typed member to a multiple of 16, and starts the member
    // after it at least roundUp(16, its size) bytes later (WGSL §13.4.4, address space layout constraints).
    const uniformStruct = rules === "uniform" && isStruct(field.type);
    const fieldAlign = uniformStruct ? roundUp(16, inner.align) : inner.align;
    offset = roundUp(fieldAlign, offset);
    offsets.push(offset);
    offset += uniformStruct ? roundUp(16, inner.size) : inner.size;
    align = Math.max(align, fieldAlign);
  }
  return { size: roundUp(align, offset), align, offsets };
}

/** Bytes from one array element to the next: the element's size rounded up to its alignment. */
export function arrayStride(type: ElementType): number {
  const { size, align } = layoutOf(type);
  return roundUp(align, size);
}
