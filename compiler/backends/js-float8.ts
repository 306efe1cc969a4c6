/**
 * The CPU backend's 8-bit floats (e4m3, e5m2): the JavaScript its modules carry when a kernel uses them, and the
 * spellings that call it. Arrays hold the codes in a Uint8Array (a buffer's bytes are a PyTorch float8 tensor's);
 * a load reads the number a code stands for from a table of the 256 values, and a store encodes the f32 being
 * stored (nearest, ties to even, saturating to the largest finite value; NaN as 0x7f) from the f32's bits, as
 * the CUDA helpers do (cuda-float8.ts). The text is fixed here, not printed from compiler/lang/float8.ts's
 * functions, so that the output does not depend on how those were transpiled; tests/float8.test.ts runs it
 * against them on every code, every rounding midpoint and its neighbours.
 */

import type { Float8Type } from "../ir/types.ts";

/** The module text, printed once when a kernel of the module uses e4m3 or e5m2. */
export const float8Runtime: readonly string[] = [
  "// e4m3 and e5m2 (js-float8.ts): arrays of the codes; loads read a table of the 256 values, stores round",
  "// to nearest even and saturate to the largest finite value (NaN 0x7f).",
  "function float8Values(mantissaBits, bias, infinities) {",
  "  const values = new Float32Array(256);",
  "  for (let c = 0; c < 128; c++) {",
  "    const e = c >> mantissaBits, f = c & ((1 << mantissaBits) - 1);",
  "    const v = infinities && e === 2 * bias + 1 ? (f === 0 ? Infinity : NaN) : !infinities && c === 127 ? NaN",
  "      : e === 0 ? f * 2 ** (1 - bias - mantissaBits) : ((1 << mantissaBits) + f) * 2 ** (e - bias - mantissaBits);",
  "    values[c] = v;",
  "    values[c + 128] = -v;",
  "  }",
  "  return values;",
  "}",
  "const e4m3Values = float8Values(3, 7, false);",
  "const e5m2Values = float8Values(2, 15, true);",
  "const float8Slot = new Float32Array(1);",
  "const float8SlotBits = new Uint32Array(float8Slot.buffer);",
  "// From maxBits (the largest finite value's f32 bits) on, maxCode; normals by the integer carry of the f32's",
  "// bits rebiased; below normalBits the multiple of the smallest subnormal, rounded to even.",
  "function float8Encode(x, mantissaBits, maxBits, normalBits, rebias, maxCode, subnormalScale) {",
  "  float8Slot[0] = x;",
  "  const u = float8SlotBits[0];",
  "  const sign = (u >>> 24) & 0x80;",
  "  const a = u & 0x7fffffff;",
  "  if (a > 0x7f800000) return 0x7f;",
  "  if (a >= maxBits) return sign | maxCode;",
  "  const shift = 23 - mantissaBits;",
  "  if (a >= normalBits) { const m = a - rebias; return sign | ((m + (1 << (shift - 1)) - 1 + ((m >>> shift) & 1)) >>> shift); }",
  "  float8SlotBits[0] = a;",
  "  const units = float8Slot[0] * subnormalScale;",
  "  let r = Math.round(units);",
  "  if (r - units === 0.5 && (r & 1) === 1) r--;",
  "  return sign | r;",
  "}",
  "function e4m3Encode(x) { return float8Encode(x, 3, 0x43e00000, 0x3c800000, 0x3c000000, 0x7e, 512); }",
  "function e5m2Encode(x) { return float8Encode(x, 2, 0x47600000, 0x38800000, 0x38000000, 0x7b, 65536); }",
];

/** The names the 8-bit float runtime defines, which the namer must not give to anything else. */
export const float8RuntimeNames: readonly string[] = ["float8Values", "e4m3Values", "e5m2Values", "float8Slot", "float8SlotBits", "float8Encode", "e4m3Encode", "e5m2Encode"];

/** Decoding a stored code and encoding a value to store; `table` is the 256 values (what wgmma's emulation reads). */
export const float8Codec: Readonly<Record<Float8Type, { readonly decode: (code: string) => string; readonly encode: string; readonly table: string }>> = {
  e4m3: { decode: (code) => `e4m3Values[${code}]`, encode: "e4m3Encode", table: "e4m3Values" },
  e5m2: { decode: (code) => `e5m2Values[${code}]`, encode: "e5m2Encode", table: "e5m2Values" },
};
