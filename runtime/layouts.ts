/**
 * Buffers of vectors and structs on the host: the bytes of a `Particle[]` or `vec3f[]` buffer as every
 * target lays them out (WGSL's storage layout, which the manifest describes: `ManifestLayout`), packed from
 * JavaScript values or typed columns and unpacked back. A vector is an array of its lanes (`[x, y, z]`; an
 * object `{ x, y, z }` is taken too), a struct an object of its fields. Bytes are little-endian, as on every
 * GPU and host tskernel runs on. Also the flattening of a vector or struct argument into its scalars in
 * memory order (what the CPU backend's kernels take) and the packing of one into a parameter's bytes (a
 * WebGPU uniform, a CUDA kernel parameter). No Node imports: the browser runtime uses this file too.
 */

import type { ManifestLayout, ManifestScalarType } from "../compiler/lang/manifest.ts";
import type { BufferValues, DeviceBuffer, ElementType, LayoutValue } from "./device.ts";
import { f16Bits, f16FromBits, roundToF16 } from "../compiler/lang/float16.ts";
import { elementBytes } from "./element-types.ts";

export type { LayoutValue };

/** One scalar of a layout: its byte offset, its type, and how to find it in a value. */
interface Leaf {
  readonly offset: number;
  readonly type: ManifestScalarType;
  /** Field names and lane indices from the whole value to the scalar. */
  readonly path: readonly (string | number)[];
}

const leafCache = new WeakMap<ManifestLayout, readonly Leaf[]>();

/** The scalars of a layout in memory order (the order the compiler's scalarization uses). */
function leavesOf(layout: ManifestLayout): readonly Leaf[] {
  let leaves = leafCache.get(layout);
  if (leaves) return leaves;
  if (layout.kind === "vector") {
    const bytes = layout.size / layout.lanes;
    leaves = Array.from({ length: layout.lanes }, (_, lane) => ({ offset: lane * bytes, type: layout.element, path: [lane] }));
  } else {
    leaves = layout.fields.flatMap((field) =>
      typeof field.type === "string"
        ? [{ offset: field.offset, type: field.type, path: [field.name] }]
        : leavesOf(field.type).map((leaf) => ({ offset: field.offset + leaf.offset, type: leaf.type, path: [field.name, ...leaf.path] })),
    );
  }
  leafCache.set(layout, leaves);
  return leaves;
}

const laneNames = ["x", "y", "z", "w"];

/** The scalar at `path` in a value; an error naming the path where the value lacks it. */
function valueAt(value: unknown, path: readonly (string | number)[], what: string): number | boolean {
  let current = value;
  for (const step of path) {
    if (typeof step === "number") {
      const lanes = current as Record<string | number, unknown> | undefined;
      current = Array.isArray(lanes) || ArrayBuffer.isView(lanes) ? (lanes as unknown as number[])[step] : lanes?.[laneNames[step]!];
    } else {
      current = (current as Record<string, unknown> | undefined)?.[step];
    }
    if (current === undefined || current === null) throw new TypeError(`tskernel: ${what} has no ${path.slice(0, path.indexOf(step) + 1).join(".")}`);
  }
  if (typeof current !== "number" && typeof current !== "boolean") throw new TypeError(`tskernel: ${what}.${path.join(".")} is ${typeof current}, not a number`);
  return current;
}

function write(view: DataView, offset: number, type: ManifestScalarType, value: number | boolean): void {
  const number = Number(value);
  switch (type) {
    case "f32":
      view.setFloat32(offset, number, true);
      return;
    case "i32":
      view.setInt32(offset, number, true);
      return;
    case "u32":
    case "bool":
      view.setUint32(offset, number, true);
      return;
    case "f64":
      view.setFloat64(offset, number, true);
      return;
    case "f16":
      view.setUint16(offset, f16Bits(number), true);
      return;
    default:
      throw new TypeError(`tskernel: ${type} fields are not supported by this runtime yet`);
  }
}

function read(view: DataView, offset: number, type: ManifestScalarType): number {
  switch (type) {
    case "f32":
      return view.getFloat32(offset, true);
    case "i32":
      return view.getInt32(offset, true);
    case "u32":
    case "bool":
      return view.getUint32(offset, true);
    case "f64":
      return view.getFloat64(offset, true);
    case "f16":
      return f16FromBits(view.getUint16(offset, true));
    default:
      throw new TypeError(`tskernel: ${type} fields are not supported by this runtime yet`);
  }
}

/** Writes one value of `layout` at byte `offset` of `view` (padding left as it was). */
export function packValue(layout: ManifestLayout, value: LayoutValue, view: DataView, offset = 0, what = `a ${layout.name}`): void {
  for (const leaf of leavesOf(layout)) write(view, offset + leaf.offset, leaf.type, valueAt(value, leaf.path, what));
}

/** The bytes of `values` as an array of `layout` (each element `layout.stride` bytes, padding zero). */
export function packStructs(layout: ManifestLayout, values: readonly LayoutValue[]): Uint8Array {
  const bytes = new Uint8Array(values.length * layout.stride);
  const view = new DataView(bytes.buffer);
  values.forEach((value, index) => packValue(layout, value, view, index * layout.stride, `element ${index} (a ${layout.name})`));
  return bytes;
}

/** The values of an array of `layout` in `bytes`: vectors as arrays of lanes, structs as objects of their fields. */
export function unpackStructs(layout: ManifestLayout, bytes: ArrayBufferView | ArrayBuffer): LayoutValue[] {
  const data = asBytes(bytes);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const count = Math.floor(data.byteLength / layout.stride);
  return Array.from({ length: count }, (_, index) => unpackValue(layout, view, index * layout.stride));
}

/** The bytes of a view (any typed array: `device.read` gives a Uint8Array for such buffers) or of a buffer. */
function asBytes(bytes: ArrayBufferView | ArrayBuffer): Uint8Array {
  return ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
}

function unpackValue(layout: ManifestLayout, view: DataView, offset: number): LayoutValue {
  if (layout.kind === "vector") return Array.from({ length: layout.lanes }, (_, lane) => read(view, offset + (lane * layout.size) / layout.lanes, layout.element));
  const value: Record<string, number | LayoutValue> = {};
  for (const field of layout.fields) value[field.name] = typeof field.type === "string" ? read(view, offset + field.offset, field.type) : unpackValue(field.type, view, offset + field.offset);
  return value;
}

/** A typed array of a scalar type, for columns. */
type Column = Float32Array | Int32Array | Uint32Array | Float64Array;

function columnOf(type: ManifestScalarType, length: number): Column {
  return type === "i32" ? new Int32Array(length) : type === "u32" || type === "bool" ? new Uint32Array(length) : type === "f64" ? new Float64Array(length) : new Float32Array(length);
}

/**
 * The columns of a layout: one per scalar field, keyed by its path (`mass`, `inner.a`), and one per vector
 * field (`pos`) holding its lanes one element after another (x0, y0, z0, x1, …). For an array of vectors,
 * one column keyed "".
 */
function columnsOf(layout: ManifestLayout): { key: string; leaves: Leaf[] }[] {
  const columns = new Map<string, Leaf[]>();
  for (const leaf of leavesOf(layout)) {
    const key = leaf.path.filter((step) => typeof step === "string").join(".");
    columns.set(key, [...(columns.get(key) ?? []), leaf]);
  }
  return [...columns].map(([key, leaves]) => ({ key, leaves }));
}

/** The bytes of `count` elements of `layout` from typed columns (see `unpackColumns` for their keys). */
export function packColumns(layout: ManifestLayout, columns: Readonly<Record<string, ArrayLike<number>>>, count: number): Uint8Array {
  const bytes = new Uint8Array(count * layout.stride);
  const view = new DataView(bytes.buffer);
  for (const { key, leaves } of columnsOf(layout)) {
    const column = columns[key];
    if (!column) throw new TypeError(`tskernel: no column '${key}' for ${layout.name} (the columns are ${columnsOf(layout).map((c) => `'${c.key}'`).join(", ")})`);
    if (column.length < count * leaves.length) throw new RangeError(`tskernel: column '${key}' has ${column.length} numbers; ${count} elements need ${count * leaves.length}`);
    for (let index = 0; index < count; index++) {
      leaves.forEach((leaf, lane) => write(view, index * layout.stride + leaf.offset, leaf.type, column[index * leaves.length + lane]!));
    }
  }
  return bytes;
}

/**
 * Typed columns of an array of `layout` in `bytes`: for `Particle { pos: vec3f; mass: f32 }`, `pos` (a
 * Float32Array of x0, y0, z0, x1, …) and `mass`; for an array of vectors, one column keyed "".
 */
export function unpackColumns(layout: ManifestLayout, bytes: ArrayBufferView | ArrayBuffer): Record<string, Column> {
  const data = asBytes(bytes);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const count = Math.floor(data.byteLength / layout.stride);
  const result: Record<string, Column> = {};
  for (const { key, leaves } of columnsOf(layout)) {
    const column = columnOf(leaves[0]!.type, count * leaves.length);
    for (let index = 0; index < count; index++) leaves.forEach((leaf, lane) => (column[index * leaves.length + lane] = read(view, index * layout.stride + leaf.offset, leaf.type)));
    result[key] = column;
  }
  return result;
}

/**
 * A vector or struct argument as its scalars in memory order: how the CPU backend's kernels take it. Floats are
 * rounded to their type, as the GPUs' bytes hold them (and as a scalar argument is: launch-check.ts).
 */
export function flattenValue(layout: ManifestLayout, value: LayoutValue, what = `a ${layout.name}`): (number | boolean)[] {
  return leavesOf(layout).map((leaf) => {
    const scalar = valueAt(value, leaf.path, what);
    if (typeof scalar !== "number") return scalar;
    return leaf.type === "f32" ? Math.fround(scalar) : leaf.type === "f16" ? roundToF16(scalar) : scalar;
  });
}

/** Why a value is not a `layout` (a vector's lanes, a struct's fields, each a number), or undefined when it is one. */
export function layoutValueProblem(layout: ManifestLayout, value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return `expects a ${layout.name} (${layout.kind === "vector" ? `an array of ${layout.lanes} numbers` : "an object of its fields"}), got ${value === null ? "null" : typeof value}`;
  try {
    flattenValue(layout, value as LayoutValue);
    return undefined;
  } catch (error) {
    return `expects a ${layout.name}: ${(error as Error).message.replace(/^tskernel: /, "")}`;
  }
}

/** Whether two layouts describe the same type (name, size, fields and offsets). */
export function sameLayout(a: ManifestLayout, b: ManifestLayout): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The bytes of a new buffer of vectors or structs: `length` zeroed elements, values packed, or bytes as they are (a whole number of elements). */
export function structuredBytes(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): { bytes: Uint8Array; length: number } {
  if (typeof layout !== "object" || layout === null || (layout.kind !== "vector" && layout.kind !== "struct")) throw new TypeError("tskernel: createBuffer(layout, …) takes a layout from the manifest (library.layout(name))");
  if (typeof data === "number") {
    if (!Number.isInteger(data) || data < 0) throw new RangeError(`tskernel: buffer length must be a non-negative integer, got ${data}`);
    return { bytes: new Uint8Array(data * layout.stride), length: data };
  }
  if (data instanceof Uint8Array) {
    if (data.byteLength % layout.stride !== 0) throw new RangeError(`tskernel: ${data.byteLength} bytes are not a whole number of ${layout.name} elements (${layout.stride} bytes each)`);
    return { bytes: data, length: data.byteLength / layout.stride };
  }
  return { bytes: packStructs(layout, data), length: data.length };
}

/** The bytes a buffer takes: its elements' (element-types.ts), or its layout's stride per vector or struct. */
export function bufferBytes(buffer: Pick<DeviceBuffer, "elementType" | "length" | "layout">): number {
  return buffer.length * (buffer.layout ? buffer.layout.stride : elementBytes(buffer.elementType as ElementType));
}

/** What a write to a buffer of vectors or structs takes: exactly its bytes, as a Uint8Array (packStructs makes them). */
export function layoutWriteBytes(buffer: DeviceBuffer, layout: ManifestLayout, data: BufferValues): Uint8Array {
  const bytes = buffer.length * layout.stride;
  if (!(data instanceof Uint8Array) || data.byteLength !== bytes) {
    const given = data instanceof Uint8Array ? `${data.byteLength} bytes` : ArrayBuffer.isView(data) ? "a typed array of numbers" : "an array of numbers";
    throw new RangeError(`tskernel: a buffer of ${buffer.length} ${buffer.elementType} takes ${bytes} bytes (a Uint8Array; packStructs makes them), got ${given}`);
  }
  return data;
}
