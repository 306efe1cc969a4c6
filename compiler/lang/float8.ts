/**
 * The 8-bit float formats of OCP FP8 on the host and in the CPU backend: e4m3 ("e4m3fn": 4 exponent bits, bias
 * 7, 3 mantissa bits, no infinities, largest finite 448, NaN S.1111.111) and e5m2 (5 exponent bits, bias 15, 2
 * mantissa bits, IEEE-like with ±infinity, largest finite 57344). One encode/decode pair, parameterized by the
 * format, for everything that runs outside a kernel: the runtime's buffers and the tests' references. The
 * kernels' own conversions (backends/js-float8.ts for the CPU, backends/cuda-float8.ts for CUDA) work on the
 * f32's bits instead, and tests/float8.test.ts checks them against this pair on every code and every rounding
 * midpoint.
 *
 * Encoding is what a kernel's store does (CUDA's `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`): round to nearest, ties
 * to even, from the exact value, the format's subnormals included; a magnitude past the largest finite value,
 * infinity included, saturates to it (so e5m2's infinities are only read, never produced by a store); NaN
 * becomes the canonical 0x7f.
 */

/** The facts of one 8-bit format that the pair below takes as arguments. */
export interface Float8Format {
  readonly exponentBits: 4 | 5;
  readonly mantissaBits: 3 | 2;
  /** IEEE-like infinities (e5m2) or none, the top code of the magnitudes being NaN (e4m3fn). */
  readonly infinities: boolean;
  readonly maxFinite: number;
}

export const float8Formats: Readonly<Record<"e4m3" | "e5m2", Float8Format>> = {
  e4m3: { exponentBits: 4, mantissaBits: 3, infinities: false, maxFinite: 448 },
  e5m2: { exponentBits: 5, mantissaBits: 2, infinities: true, maxFinite: 57344 },
};

/** The number an 8-bit code (0 … 255) stands for in the format. */
export function float8Decode(code: number, exponentBits: number, mantissaBits: number, infinities: boolean): number {
  const magnitude = code & 0x7f;
  const exponent = magnitude >> mantissaBits;
  const fraction = magnitude & ((1 << mantissaBits) - 1);
  const bias = (1 << (exponentBits - 1)) - 1;
  let value;
  if (infinities && exponent === (1 << exponentBits) - 1) value = fraction === 0 ? Infinity : NaN;
  else if (!infinities && magnitude === 0x7f) value = NaN;
  else if (exponent === 0) value = fraction * 2 ** (1 - bias - mantissaBits);
  else value = ((1 << mantissaBits) + fraction) * 2 ** (exponent - bias - mantissaBits);
  return (code & 0x80) !== 0 ? -value : value;
}

/**
 * The code of `value` rounded to the format (nearest, ties to even, saturating to the largest finite value; NaN
 * 0x7f). With e the exponent of |value| held to the smallest normal one, |value|·2^(mantissaBits − e) is the
 * significand in units of the last place; rounded, it continues the code from the exponent's first code on, so
 * a carry into the next binade (or from the subnormals into the normals) needs no case of its own.
 */
export function float8Encode(value: number, exponentBits: number, mantissaBits: number, infinities: boolean): number {
  if (value !== value) return 0x7f;
  const sign = value < 0 || (value === 0 && 1 / value < 0) ? 0x80 : 0;
  const magnitude = Math.abs(value);
  if (magnitude === 0) return sign;
  const bias = (1 << (exponentBits - 1)) - 1;
  const minExponent = 1 - bias;
  // The largest finite code: below the infinities (e5m2), or below the NaN code 0x7f (e4m3fn).
  const maxCode = infinities ? (((1 << exponentBits) - 1) << mantissaBits) - 1 : 0x7e;
  if (magnitude === Infinity) return sign | maxCode;
  let exponent = Math.floor(Math.log2(magnitude));
  // Math.log2 may be off by one next to a power of two.
  if (2 ** exponent > magnitude) exponent--;
  else if (2 ** (exponent + 1) <= magnitude) exponent++;
  const step = Math.max(exponent, minExponent);
  if (step > bias + 1) return sign | maxCode;
  // Scaling by a power of two is exact, so the only rounding is this one.
  const scaled = magnitude * 2 ** (mantissaBits - step);
  let units = Math.round(scaled);
  if (units - scaled === 0.5 && units % 2 === 1) units--;
  const code = ((step - minExponent) << mantissaBits) + units;
  return sign | (code > maxCode ? maxCode : code);
}

/** The nearest value of the format (as `float8Encode` rounds), as a number. */
export function roundToFloat8(value: number, format: Float8Format): number {
  return float8Decode(float8Encode(value, format.exponentBits, format.mantissaBits, format.infinities), format.exponentBits, format.mantissaBits, format.infinities);
}
