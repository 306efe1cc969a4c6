/**
 * TF32 rounding on the host, one definition for the kernel language's `roundTf32` (what a kernel file's import
 * runs outside the compiler) and the compiler's emulation of the tensor cores (compiler/ir/matrix.ts re-exports
 * it for `tskernel/compiler`). Imports nothing, like the rest of the language's declarations.
 */

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/**
 * Rounds an f32 to TF32 (8 exponent bits, 10 mantissa bits) as `cvt.rna.tf32.f32` does: to nearest, ties
 * away from zero, in the f32 bit pattern with the low 13 bits cleared. Infinities and NaN pass unchanged; a
 * value that rounds past the largest TF32 becomes infinity.
 */
export function roundTf32(x: number): number {
  scratch[0] = x;
  const bits = scratchBits[0]!;
  if ((bits & 0x7f800000) === 0x7f800000) return scratch[0]!;
  // Adding half a unit of the 13 dropped bits to the magnitude, then clearing them, rounds ties away from 0.
  scratchBits[0] = (bits + 0x1000) & 0xffffe000;
  return scratch[0]!;
}
