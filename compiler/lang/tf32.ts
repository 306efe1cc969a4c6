/**
 * TF32 rounding on the host, one definition for the kernel language's `roundTf32` (what a kernel file's import
 * runs outside the compiler) and the compiler's emulation of the tensor cores (compiler/ir/matrix.ts re-exports
 * it for `tskernel/compiler`), and the rounding of a tensor map's copy (`roundTf32Even`, the reference the tests
 * hold the CPU's copyTile to). Imports nothing, like the rest of the language's declarations.
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

/**
 * Rounds an f32 to TF32 as the tensor memory accelerator does when it copies through a map of the driver's TFLOAT32
 * type (createTensorMap's `roundToTf32`): to nearest, ties to even, the low 13 bits cleared; past the largest TF32,
 * infinity; infinities and NaN unchanged (the H100 writes every NaN as 0x7fffe000, a NaN too; bench/README.md, "TF32
 * rounded by the copy", has the measured patterns, subnormals included, which round like any other value).
 */
export function roundTf32Even(x: number): number {
  scratch[0] = x;
  const bits = scratchBits[0]!;
  if ((bits & 0x7f800000) === 0x7f800000) return scratch[0]!;
  // Half a unit less one, plus the kept part's lowest bit: a tie rounds up only onto an even kept part.
  scratchBits[0] = (bits + 0xfff + ((bits >>> 13) & 1)) & 0xffffe000;
  return scratch[0]!;
}
