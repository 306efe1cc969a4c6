/**
 * An independent reference for the 16-bit float formats, for the tests: decoding by building the f32's bits
 * (not by arithmetic, as compiler/lang/float16.ts does for f16), and rounding by searching the sorted list of
 * every finite value of the format for the nearest (ties to the even encoding; at or past the largest finite
 * value plus half a step, infinity), not by scaling. So the implementations are checked against a method
 * that shares nothing with them but IEEE 754's definition.
 */

const slot = new Float32Array(1);
const slotBits = new Uint32Array(slot.buffer);

function fromF32Bits(bits: number): number {
  slotBits[0] = bits >>> 0;
  return slot[0]!;
}

/** The value of a binary16 encoding, through the f32 with the same value (exponent rebiased, subnormals normalized). */
export function referenceF16(bits: number): number {
  const sign = (bits & 0x8000) << 16;
  const exponent = (bits >> 10) & 0x1f;
  let fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fromF32Bits(sign | 0x7f800000 | (fraction << 13));
  if (exponent === 0) {
    if (fraction === 0) return fromF32Bits(sign);
    // Subnormal: shift the fraction up until its leading one is the implicit bit.
    let e = -14;
    while ((fraction & 0x400) === 0) {
      fraction <<= 1;
      e--;
    }
    return fromF32Bits(sign | ((e + 127) << 23) | ((fraction & 0x3ff) << 13));
  }
  return fromF32Bits(sign | ((exponent - 15 + 127) << 23) | (fraction << 13));
}

/** The value of a bfloat16 encoding, by its definition: (−1)^s · 2^(e − 127) · (1 + m/128), subnormals 2^−126 · m/128. */
export function referenceBf16(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 7) & 0xff;
  const fraction = bits & 0x7f;
  if (exponent === 0xff) return fraction === 0 ? sign * Infinity : Number.NaN;
  if (exponent === 0) return sign * 2 ** -126 * (fraction / 128);
  return sign * 2 ** (exponent - 127) * (1 + fraction / 128);
}

interface Format {
  /** The non-negative finite encodings, ascending, with their values. */
  readonly values: Float64Array;
  readonly encodings: Uint16Array;
  /** Where rounding overflows: the largest finite value plus half its step. */
  readonly overflow: number;
}

function format(decode: (bits: number) => number, infinity: number): Format {
  const encodings: number[] = [];
  for (let bits = 0; bits < infinity; bits++) encodings.push(bits);
  const values = Float64Array.from(encodings, decode);
  const last = values[values.length - 1]!;
  return { values, encodings: Uint16Array.from(encodings), overflow: last + (last - values[values.length - 2]!) / 2 };
}

let f16Format: Format | undefined;
let bf16Format: Format | undefined;

/** The encoding of the value of `format` nearest `x` (ties to the even encoding); NaN gives undefined. */
function nearest(fmt: Format, x: number, infinity: number): number | undefined {
  if (Number.isNaN(x)) return undefined;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const m = Math.abs(x);
  if (m >= fmt.overflow) return sign | infinity;
  // The first value ≥ m.
  let lo = 0;
  let hi = fmt.values.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (fmt.values[mid]! < m) lo = mid + 1;
    else hi = mid;
  }
  if (fmt.values[lo] === m || lo === 0) return sign | fmt.encodings[lo]!;
  const below = fmt.values[lo - 1]!;
  const above = fmt.values[lo]!;
  if (m - below < above - m) return sign | fmt.encodings[lo - 1]!;
  if (above - m < m - below) return sign | fmt.encodings[lo]!;
  return sign | (fmt.encodings[lo]! % 2 === 0 ? fmt.encodings[lo]! : fmt.encodings[lo - 1]!);
}

/** The binary16 encoding nearest x (undefined for NaN). */
export function referenceF16Bits(x: number): number | undefined {
  f16Format ??= format(referenceF16, 0x7c00);
  return nearest(f16Format, x, 0x7c00);
}

/** The bfloat16 encoding nearest x (undefined for NaN). */
export function referenceBf16Bits(x: number): number | undefined {
  bf16Format ??= format(referenceBf16, 0x7f80);
  return nearest(bf16Format, x, 0x7f80);
}

/**
 * The inputs where rounding is decided: for every pair of adjacent non-negative values of the format (and
 * from the largest finite one to the overflow point), their midpoint, the f32s on either side of it, and the
 * values themselves, each with both signs; the ones that are not f32s (beyond f32's precision) are kept too,
 * for callers that round doubles.
 */
export function roundingInputs(kind: "f16" | "bf16"): number[] {
  const fmt = kind === "f16" ? (f16Format ??= format(referenceF16, 0x7c00)) : (bf16Format ??= format(referenceBf16, 0x7f80));
  const out: number[] = [];
  const push = (v: number) => out.push(v, -v);
  const nextF32 = (v: number, up: boolean) => {
    slot[0] = v;
    const bits = slotBits[0]!;
    return fromF32Bits(v === 0 ? (up ? 1 : 0x80000001) : up ? bits + 1 : bits - 1);
  };
  for (let i = 0; i < fmt.values.length; i++) {
    const v = fmt.values[i]!;
    const next = i + 1 < fmt.values.length ? fmt.values[i + 1]! : fmt.overflow * 2 - v;
    const mid = (v + next) / 2;
    push(v);
    push(mid);
    if (Math.fround(mid) === mid) {
      push(nextF32(mid, true));
      push(nextF32(mid, false));
    }
  }
  return out;
}
