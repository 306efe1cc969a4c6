/**
 * How each element type of a buffer lives in memory, the same on every device and on the host: the bytes
 * of an element (little-endian), the typed array that holds those bytes (`storage`: a Uint16Array of the
 * encodings for f16 and bf16, a Uint8Array of the codes for e4m3 and e5m2, the matching typed array otherwise),
 * and the conversions between what a caller gives and reads (numbers) and that storage. So the bytes of a
 * PyTorch bf16 (float8_e4m3fn) tensor are a bf16 (e4m3) buffer, and a Float32Array written to an f16 or bf16
 * buffer is rounded as the kernels round (to nearest, ties to even; compiler/lang/float16.ts), a NaN becoming
 * the canonical 0x7fff; written to an e4m3 or e5m2 buffer, rounded and saturated as a kernel's store does
 * (compiler/lang/float8.ts), a NaN becoming 0x7f.
 */

import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";
import { float8Decode, float8Encode, float8Formats } from "../compiler/lang/float8.ts";
import type { BufferValues, ElementType, TypedArray } from "./device.ts";

type StorageConstructor =
  | Float32ArrayConstructor | Int32ArrayConstructor | Uint32ArrayConstructor | Float64ArrayConstructor
  | Int8ArrayConstructor | Uint8ArrayConstructor | Int16ArrayConstructor | Uint16ArrayConstructor;

/** The typed array that holds each element type's bytes. */
export const storageConstructors: Readonly<Record<ElementType, StorageConstructor>> = {
  f32: Float32Array, i32: Int32Array, u32: Uint32Array, f64: Float64Array,
  f16: Uint16Array, bf16: Uint16Array,
  i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array,
  e4m3: Uint8Array, e5m2: Uint8Array,
};

/** Bytes of one element. */
export function elementBytes(type: ElementType): number {
  return storageConstructors[type].BYTES_PER_ELEMENT;
}

export const elementTypes: readonly ElementType[] = ["f32", "i32", "u32", "f16", "bf16", "f64", "i8", "u8", "i16", "u16", "e4m3", "e5m2"];

export function isElementType(value: unknown): value is ElementType {
  return typeof value === "string" && (elementTypes as readonly string[]).includes(value);
}

/** The 16- and 8-bit float types, whose storage holds encodings rather than numbers. */
function isHalf(type: ElementType): type is "f16" | "bf16" | "e4m3" | "e5m2" {
  return type === "f16" || type === "bf16" || type === "e4m3" || type === "e5m2";
}

const { e4m3, e5m2 } = float8Formats;
const encoders = {
  f16: f16Bits,
  bf16: bf16Bits,
  e4m3: (value: number) => float8Encode(value, e4m3.exponentBits, e4m3.mantissaBits, e4m3.infinities),
  e5m2: (value: number) => float8Encode(value, e5m2.exponentBits, e5m2.mantissaBits, e5m2.infinities),
} as const;
const decoders = {
  f16: f16FromBits,
  bf16: bf16FromBits,
  e4m3: (code: number) => float8Decode(code, e4m3.exponentBits, e4m3.mantissaBits, e4m3.infinities),
  e5m2: (code: number) => float8Decode(code, e5m2.exponentBits, e5m2.mantissaBits, e5m2.infinities),
} as const;

/** The element type a typed array stands for when a buffer is made from it alone (a Uint16Array: u16). */
export function elementTypeOf(data: TypedArray): ElementType {
  if (data instanceof Float32Array) return "f32";
  if (data instanceof Int32Array) return "i32";
  if (data instanceof Uint32Array) return "u32";
  if (data instanceof Float64Array) return "f64";
  if (data instanceof Int8Array) return "i8";
  if (data instanceof Uint8Array) return "u8";
  if (data instanceof Int16Array) return "i16";
  if (data instanceof Uint16Array) return "u16";
  throw new TypeError("tskernel: buffers are made from Float32Array, Int32Array, Uint32Array, Float64Array, Int8Array, Uint8Array, Int16Array or Uint16Array (or from a type name and values)");
}

/**
 * `values` in the storage of `type`. For f16 and bf16: a Uint16Array is taken as the encodings themselves
 * (the raw bits, e.g. a PyTorch tensor's), anything else as numbers, each rounded to the type; so for e4m3 and
 * e5m2 with a Uint8Array of codes. For the other
 * types: the numbers as the type's typed array converts them (an f64 array keeps them, an Int8Array keeps
 * the low 8 bits of an integer), or the typed array itself when it already is one.
 */
export function toStorage(type: ElementType, values: BufferValues): TypedArray {
  const ctor = storageConstructors[type];
  if (!ArrayBuffer.isView(values)) {
    if (!Array.isArray(values)) throw new TypeError(`tskernel: buffer values must be a typed array or an array of numbers, got ${typeof values}`);
    const bad = values.findIndex((value) => typeof value !== "number");
    if (bad >= 0) throw new TypeError(`tskernel: buffer values must be numbers; element ${bad} is ${typeof values[bad]}`);
  } else if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    throw new TypeError("tskernel: buffer values must be numbers, not 64-bit integers");
  }
  if (isHalf(type)) {
    if (values instanceof ctor) return values;
    const out = new ctor(values.length);
    const encode = encoders[type];
    for (let i = 0; i < values.length; i++) out[i] = encode(values[i]!);
    return out;
  }
  if (values instanceof ctor) return values;
  return ctor.from(values as ArrayLike<number>);
}

/** What `read` gives from a buffer's storage: numbers (an f16, bf16, e4m3 or e5m2 buffer as a Float32Array, exactly), or with `bits` the encodings. */
export function fromStorage(type: ElementType, storage: TypedArray, options: ReadOptions = {}): TypedArray {
  if (!isHalf(type) || options.bits) return storage;
  if (type === "bf16") {
    // A bf16 is the upper half of the f32 of the same value: the words, shifted (bf16FromBits for every element
    // at once: 2^24 elements in 0.24 s rather than 0.65 s on the 2-core VM, where a read of the suite's 2^28 is slow).
    const words = new Uint32Array(storage.length);
    for (let i = 0; i < storage.length; i++) words[i] = (storage[i]! & 0xffff) << 16;
    return new Float32Array(words.buffer);
  }
  const out = new Float32Array(storage.length);
  const decode = decoders[type];
  for (let i = 0; i < storage.length; i++) out[i] = decode(storage[i]!);
  return out;
}

export interface ReadOptions {
  /** f16 and bf16 buffers: give the 16-bit encodings (a Uint16Array) instead of their values; e4m3 and e5m2 buffers the codes (a Uint8Array). */
  readonly bits?: boolean;
}

/** The element type, length and (when values are given) storage of a new buffer, checked. */
export function bufferShape(dataOrType: TypedArray | ElementType, lengthOrValues?: number | BufferValues): { elementType: ElementType; length: number; storage?: TypedArray } {
  if (typeof dataOrType !== "string") return { elementType: elementTypeOf(dataOrType), length: dataOrType.length, storage: dataOrType };
  if (!isElementType(dataOrType)) throw new TypeError(`tskernel: unknown element type '${dataOrType}' (${elementTypes.join(", ")})`);
  if (typeof lengthOrValues === "number" || lengthOrValues === undefined) {
    const count = lengthOrValues;
    if (count === undefined || !Number.isInteger(count) || count < 0) throw new RangeError(`tskernel: buffer length must be a non-negative integer, got ${count}`);
    return { elementType: dataOrType, length: count };
  }
  const storage = toStorage(dataOrType, lengthOrValues);
  return { elementType: dataOrType, length: storage.length, storage };
}

/**
 * The storage a write puts into a buffer: the same length, and values of its type (a typed array of that
 * type or numbers; for f16 and bf16 also a Uint16Array of encodings, for e4m3 and e5m2 a Uint8Array of codes).
 */
export function writeStorage(buffer: { readonly elementType: ElementType; readonly length: number }, data: BufferValues): TypedArray {
  const typedOther = ArrayBuffer.isView(data) && !isHalf(buffer.elementType) && !(data instanceof storageConstructors[buffer.elementType]);
  if (data.length !== buffer.length || typedOther) {
    const what = ArrayBuffer.isView(data) ? `${data.length} ${elementTypeOf(data as TypedArray)}` : `${data.length}`;
    throw new RangeError(`tskernel: write of ${what} elements into a buffer of ${buffer.length} ${buffer.elementType}`);
  }
  return toStorage(buffer.elementType, data);
}
