/**
 * The 16-bit float formats on the host: rounding a JavaScript number to binary16 (`f16`) or bfloat16
 * (`bf16`), and the 16-bit encodings in and out. One implementation for everything that runs outside a
 * kernel: the `f16(x)`/`bf16(x)` functions of "tskernel", the constant folder (ir/semantics.ts delegates
 * its rounding here), and the runtime's buffers (a Float32Array written to a bf16 buffer is rounded as the
 * kernels round). It sits in `lang` because it imports nothing, so the browser entry may use it too.
 *
 * Rounding is to nearest, ties to even, from the exact value of the number (one rounding, whatever its
 * magnitude), with the format's subnormals, and to ±infinity past the largest finite value; NaN stays NaN
 * and its encoding is the canonical 0x7fff, which CUDA's `cvt.rn.f16.f32` and `cvt.rn.bf16.f32` give.
 */

/**
 * `value` rounded to the nearest number with `mantissaBits` stored significand bits and an exponent of
 * `exponentBits` bits (ties to even), its subnormals included, overflowing to ±infinity past `maxFinite`.
 */
export function roundToBinary(value: number, exponentBits: number, mantissaBits: number, maxFinite: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const magnitude = Math.abs(value);
  const minExponent = 2 - 2 ** (exponentBits - 1);
  let exponent = Math.floor(Math.log2(magnitude));
  // Math.log2 may be off by one next to a power of two.
  if (2 ** exponent > magnitude) exponent--;
  else if (2 ** (exponent + 1) <= magnitude) exponent++;
  // Below the smallest normal the spacing stays that of the subnormals. Scaling by it is exact.
  const spacing = 2 ** (Math.max(exponent, minExponent) - mantissaBits);
  const scaled = magnitude / spacing;
  let units = Math.round(scaled);
  if (units - scaled === 0.5 && units % 2 === 1) units--;
  const rounded = units * spacing;
  const result = rounded > maxFinite ? Infinity : rounded;
  return value < 0 ? -result : result;
}

/** The nearest binary16 value (ties to even). */
export function roundToF16(value: number): number {
  return roundToBinary(value, 5, 10, 65504);
}

/** The nearest bfloat16 value (ties to even). */
export function roundToBf16(value: number): number {
  return roundToBinary(value, 8, 7, 3.3895313892515355e38);
}

const slot = new Float32Array(1);
const slotBits = new Uint32Array(slot.buffer);

/** The binary16 encoding of `value` rounded to f16; NaN is 0x7fff. */
export function f16Bits(value: number): number {
  if (Number.isNaN(value)) return 0x7fff;
  const rounded = roundToF16(value);
  const sign = rounded < 0 || Object.is(rounded, -0) ? 0x8000 : 0;
  const magnitude = Math.abs(rounded);
  if (magnitude === Infinity) return sign | 0x7c00;
  // Subnormals (and zero) are multiples of 2^-24; normals carry their exponent above.
  if (magnitude < 2 ** -14) return sign | (magnitude / 2 ** -24);
  let exponent = Math.floor(Math.log2(magnitude));
  if (2 ** exponent > magnitude) exponent--;
  else if (2 ** (exponent + 1) <= magnitude) exponent++;
  return sign | ((exponent + 15) << 10) | (magnitude / 2 ** (exponent - 10) - 1024);
}

/** The number a binary16 encoding stands for. */
export function f16FromBits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : Number.NaN;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

/** The bfloat16 encoding of `value` rounded to bf16 (the upper half of the f32's bits); NaN is 0x7fff. */
export function bf16Bits(value: number): number {
  if (Number.isNaN(value)) return 0x7fff;
  // The rounded value is an f32 whose low 16 bits are zero.
  slot[0] = roundToBf16(value);
  return slotBits[0]! >>> 16;
}

/** The number a bfloat16 encoding stands for. */
export function bf16FromBits(bits: number): number {
  slotBits[0] = (bits & 0xffff) << 16;
  return slot[0]!;
}
