/**
 * Warp-level matrix fragments as data: for each shape and role, the matrix a fragment holds and which lane
 * holds which of its elements. Every user of the layout reads it here: legalize (which writes a fragment load
 * or store as per-lane element accesses), the CPU backend's `mma` emulation, the tests and docs/language.md.
 * The layouts are PTX's for `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, so the CUDA backend passes
 * a lane's elements to the instruction in order. Also here: TF32 rounding as `cvt.rna.tf32.f32` does it.
 */

import type { Expr, FragmentRole, MatrixShape, Span } from "./ir.ts";

/**
 * Where element `e` of a lane's fragment sits in the fragment's matrix. With g = lane >> 2 (the lane's
 * group of four) and q = lane & 3 (its place in the group), the row is `g·rowG + q·rowQ + rowE[e]` and the
 * column `g·colG + q·colQ + colE[e]`.
 */
export interface FragmentLayout {
  /** The matrix the fragment holds: A is m×k, B is k×n, the accumulator m×n. */
  readonly rows: number;
  readonly cols: number;
  /** Elements each lane holds (rows·cols / 32). */
  readonly perLane: number;
  readonly rowG: number;
  readonly rowQ: number;
  readonly colG: number;
  readonly colQ: number;
  readonly rowE: readonly number[];
  readonly colE: readonly number[];
}

/** The lanes of a warp: matrix operations always run on warps of 32 threads (by linear thread index). */
export const warpLanes = 32;

export const fragmentLayouts: Readonly<Record<MatrixShape, Readonly<Record<FragmentRole, FragmentLayout>>>> = {
  m16n8k8: {
    // a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4)
    a: { rows: 16, cols: 8, perLane: 4, rowG: 1, rowQ: 0, colG: 0, colQ: 1, rowE: [0, 8, 0, 8], colE: [0, 0, 4, 4] },
    // b0 (k = q, n = g), b1 (k = q+4, n = g)
    b: { rows: 8, cols: 8, perLane: 2, rowG: 0, rowQ: 1, colG: 1, colQ: 0, rowE: [0, 4], colE: [0, 0] },
    // c0 (g, 2q), c1 (g, 2q+1), c2 (g+8, 2q), c3 (g+8, 2q+1)
    accumulator: { rows: 16, cols: 8, perLane: 4, rowG: 1, rowQ: 0, colG: 0, colQ: 2, rowE: [0, 0, 8, 8], colE: [0, 1, 0, 1] },
  },
};

/** The [row, column] of element `e` of lane `lane`'s fragment. */
export function fragmentElementPosition(layout: FragmentLayout, lane: number, e: number): [number, number] {
  const g = lane >> 2;
  const q = lane & 3;
  return [g * layout.rowG + q * layout.rowQ + layout.rowE[e]!, g * layout.colG + q * layout.colQ + layout.colE[e]!];
}

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

/** The flat index of element `e` of fragment `index` in its array: index · perLane + e. */
export function fragmentSlot(index: Expr, perLane: number, e: number, span: Span): Expr {
  const type = index.type;
  const scaled: Expr = { kind: "binary", op: "mul", type, left: index, right: { kind: "literal", type, value: perLane, span }, span };
  return e === 0 ? scaled : { kind: "binary", op: "add", type, left: scaled, right: { kind: "literal", type, value: e, span }, span };
}
