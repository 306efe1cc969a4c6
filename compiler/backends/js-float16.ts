/**
 * The CPU backend's 16-bit floats: the JavaScript its modules carry when a kernel uses f16 or bf16, and the
 * spellings that call it. A value of either type is a JavaScript number that is exactly an f16 (bf16) value;
 * arrays hold the 16-bit encodings in a Uint16Array (so a buffer's bytes are a PyTorch tensor's), which a load
 * decodes and a store encodes (NaN as the canonical 0x7fff, as CUDA's conversions give).
 *
 * Every operation rounds its result to the type (ir/types.ts, "Every operation rounds to its type"). The
 * double that `a + b` (− × ÷, sqrt) gives for f16 or bf16 operands, rounded to f32 and then to the type, is
 * the correctly rounded result: a double carries more than 2·24 + 2 bits and an f32 more than 2·11 + 2, so
 * neither intermediate rounding can move it (double rounding is innocuous at these widths). `f16Round` and
 * `bf16Round` therefore take any number through the f32 it rounds to: one typed-array write and a few
 * integer operations. A conversion from an f64, i32 or u32 is not the result of such an operation and must be
 * rounded once from the exact number: `roundBinary` does that (slower, and rarer).
 */

import type { ScalarType } from "../ir/ir.ts";

/** The module text, printed once when a kernel of the module uses f16 or bf16. */
export const halfRuntime: readonly string[] = [
  "// f16 and bf16 (js-float16.ts): numbers rounded to the type after every operation; arrays of the encodings.",
  "const halfSlot = new Float32Array(1);",
  "const halfSlotBits = new Uint32Array(halfSlot.buffer);",
  "const f16Scales = new Float64Array(32);",
  "for (let e = 0; e < 32; e++) f16Scales[e] = 2 ** (e - 25);",
  "// The binary16 encoding of the f32 nearest x (ties to even), NaN as 0x7fff.",
  "function f16Encode(x) {",
  "  halfSlot[0] = x;",
  "  const b = halfSlotBits[0];",
  "  const sign = (b >>> 16) & 0x8000;",
  "  const a = b & 0x7fffffff;",
  "  if (a > 0x7f800000) return 0x7fff;",
  "  if (a >= 0x477ff000) return sign | 0x7c00;",
  "  if (a >= 0x38800000) { const m = a - 0x38000000; return sign | ((m + 0xfff + ((m >>> 13) & 1)) >>> 13); }",
  "  halfSlotBits[0] = a;",
  "  const units = halfSlot[0] * 16777216;",
  "  let r = Math.round(units);",
  "  if (r - units === 0.5 && (r & 1) === 1) r--;",
  "  return sign | r;",
  "}",
  "function f16Decode(h) {",
  "  const e = (h >>> 10) & 31, f = h & 1023;",
  "  const v = e === 0 ? f * 5.960464477539063e-8 : e === 31 ? (f === 0 ? Infinity : NaN) : (1024 + f) * f16Scales[e];",
  "  return (h & 0x8000) !== 0 ? -v : v;",
  "}",
  "function f16Round(x) { return f16Decode(f16Encode(x)); }",
  "function bf16Round(x) {",
  "  halfSlot[0] = x;",
  "  const b = halfSlotBits[0];",
  "  if ((b & 0x7fffffff) > 0x7f800000) return NaN;",
  "  halfSlotBits[0] = (b + 0x7fff + ((b >>> 16) & 1)) & 0xffff0000;",
  "  return halfSlot[0];",
  "}",
  "// The encoding of a bf16 value (an f32 whose low 16 bits are zero), NaN as 0x7fff.",
  "function bf16Encode(x) { if (x !== x) return 0x7fff; halfSlot[0] = x; return halfSlotBits[0] >>> 16; }",
  "function bf16Decode(h) { halfSlotBits[0] = h << 16; return halfSlot[0]; }",
  "// x rounded once to `mantissa` significand bits and the exponent range from minExponent (ties to even).",
  "function roundBinary(x, mantissa, minExponent, max) {",
  "  if (x !== x || x === 0 || x === Infinity || x === -Infinity) return x;",
  "  const m = Math.abs(x);",
  "  let e = Math.floor(Math.log2(m));",
  "  if (2 ** e > m) e--; else if (2 ** (e + 1) <= m) e++;",
  "  const spacing = 2 ** (Math.max(e, minExponent) - mantissa);",
  "  const scaled = m / spacing;",
  "  let units = Math.round(scaled);",
  "  if (units - scaled === 0.5 && units % 2 === 1) units--;",
  "  const r = units * spacing > max ? Infinity : units * spacing;",
  "  return x < 0 ? -r : r;",
  "}",
];

/** The names the half runtime defines, which the namer must not give to anything else. */
export const halfRuntimeNames: readonly string[] = [
  "halfSlot", "halfSlotBits", "f16Scales", "f16Encode", "f16Decode", "f16Round", "bf16Round", "bf16Encode", "bf16Decode", "roundBinary",
];

/** The function that rounds a number to each half type after an operation. */
export const halfRound: Readonly<Record<"f16" | "bf16", string>> = { f16: "f16Round", bf16: "bf16Round" };

/** Decoding a stored element and encoding a value to store, for the types whose arrays hold encodings. */
export const halfCodec: Readonly<Record<"f16" | "bf16", { readonly decode: string; readonly encode: string }>> = {
  f16: { decode: "f16Decode", encode: "f16Encode" },
  bf16: { decode: "bf16Decode", encode: "bf16Encode" },
};

/**
 * A conversion to f16 or bf16 from a value of type `from`: through the f32 rounding where that is exact
 * (from f32, from the other half type, from i32 and u32 to f16, whose magnitudes below 2^24 are exact in an f32
 * and whose larger ones overflow f16 either way), else rounded once from the exact number.
 */
export function toHalf(to: "f16" | "bf16", from: ScalarType, value: string): string {
  if (from === "bool") return `(${value} ? 1 : 0)`;
  const throughF32 = from === "f32" || from === "f16" || from === "bf16" || (to === "f16" && (from === "i32" || from === "u32"));
  if (throughF32) return `${halfRound[to]}(${value})`;
  return to === "f16" ? `roundBinary(${value}, 10, -14, 65504)` : `roundBinary(${value}, 7, -126, 3.3895313892515355e38)`;
}
