/**
 * Warp-level matrix fragments as data: for each shape and role, the matrix a fragment holds and which lane
 * holds which of its elements. Every user of the layout reads it here: legalize (which writes a fragment load
 * or store as per-lane element accesses), the CPU backend's `mma` emulation, the tests and docs/language.md.
 * The layouts are PTX's for `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, for
 * `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32` (and the `ldmatrix` that loads its A and B
 * fragments from shared memory), and, for the warpgroup
 * shapes, `wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32` (whose B operand is read from shared memory in
 * the 128-byte swizzle, also defined here), so the CUDA backend passes a thread's elements to the instruction
 * in order. Also here: TF32 rounding as `cvt.rna.tf32.f32` does it, and the truncation the tensor cores apply
 * to operands they read from shared memory; and the 128-byte-swizzled layouts of shared memory for any element
 * size (the box layout the tensor memory accelerator writes and reads, and how the 16-bit and 8-bit wgmma
 * shapes read their A and B operands from it).
 */

import type { ElementType, Expr, FragmentRole, FragmentType, MatrixShape, ScalarType, Span, WarpgroupShape } from "./ir.ts";

/**
 * Where element `e` of a thread's fragment sits in the fragment's matrix. With w = lane >> 5 (the warp within
 * a warpgroup, 0 for warp fragments), g = (lane & 31) >> 2 (the lane's group of four) and q = lane & 3 (its
 * place in the group), the row is `w·rowW + g·rowG + q·rowQ + rowE[e]` and the column `g·colG + q·colQ + colE[e]`.
 */
export interface FragmentLayout {
  /** The threads that hold one fragment together: a warp (32) or a warpgroup (128). */
  readonly lanes: number;
  /** The rows each warp of a warpgroup adds (16: warp w holds rows 16w to 16w + 15); 0 for warp fragments. */
  readonly rowW: number;
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

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** The threads of a warpgroup, which hold the fragments of the wgmma shapes together (four consecutive warps). */
export const warpgroupLanes = 128;

/** A warpgroup accumulator of n columns: per 8-column block j, elements 4j…4j+3 at (g, 8j+2q), (g, 8j+2q+1), (g+8, 8j+2q), (g+8, 8j+2q+1). */
function warpgroupAccumulator(n: number): FragmentLayout {
  const e = Array.from({ length: n / 2 }, (_, i) => i);
  return {
    lanes: warpgroupLanes, rowW: 16, rows: 64, cols: n, perLane: n / 2, rowG: 1, rowQ: 0, colG: 0, colQ: 2,
    rowE: e.map((i) => ((i & 3) >> 1) * 8), colE: e.map((i) => (i >> 2) * 8 + (i & 1)),
  };
}

// A warpgroup's A (64×8): warp w holds rows 16w…16w+15 as an m16n8k8 A fragment, a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4).
const warpgroupA: FragmentLayout = { lanes: warpgroupLanes, rowW: 16, rows: 64, cols: 8, perLane: 4, rowG: 1, rowQ: 0, colG: 0, colQ: 1, rowE: [0, 8, 0, 8], colE: [0, 0, 4, 4] };

/**
 * A warpgroup's 16-bit A (64×16, the k16 shapes from registers): warp w holds rows 16w…16w+15, a0 (g, 2q),
 * a1 (g, 2q+1), a2 (g+8, 2q), a3 (g+8, 2q+1), a4…a7 the same 8 columns on (PTX ISA, "Matrix Fragments for
 * wgmma.mma_async.m64nNk16", figure "register fragment layout for matrix A"); the instruction takes them as four
 * .b32 registers, a(2i) in the low and a(2i+1) in the high half of register i. This is the f32 accumulator's
 * layout of a 16-column slice: accumulator elements 8c…8c+7 lie where elements 0…7 of this layout lie, 16c
 * columns on. So the accumulator of S = Q·Kᵀ (64×n) turns into the A fragments of P·V (n/16 of them) element
 * by element, in each thread's registers: A fragment c, element e = accumulator element 8c + e
 * (examples/flash-attention-regp.ts).
 */
const warpgroupA16: FragmentLayout = warpgroupAccumulator(16);

// c0 (g, 2q), c1 (g, 2q+1), c2 (g+8, 2q), c3 (g+8, 2q+1): the accumulator of both warp shapes.
const m16n8Accumulator: FragmentLayout = { lanes: warpLanes, rowW: 0, rows: 16, cols: 8, perLane: 4, rowG: 1, rowQ: 0, colG: 0, colQ: 2, rowE: [0, 0, 8, 8], colE: [0, 1, 0, 1] };

/**
 * The warp shape with 16-bit inputs, `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32` (sm_80+),
 * (issue 22 §1): `fragment.a/b/accumulator("m16n8k16", …)`, `mma` and `loadMatrix` (ldmatrix). The PTX ISA's "Matrix Fragments for
 * mma.m16n8k16 with floating point type": A (16×16) a0 (g, 2q), a1 (g, 2q+1), a2 (g+8, 2q), a3 (g+8, 2q+1),
 * a4…a7 the same 8 columns on, which is the warpgroup k16 A's layout for one warp (warpgroupA16 with rowW 0);
 * B (16×8) b0 (k = 2q, n = g), b1 (2q+1, g), b2 (2q+8, g), b3 (2q+9, g); the accumulator m16n8k8's. The
 * instruction takes A as four .b32 registers and B as two, element 2i in the low and 2i+1 in the high half of
 * register i (mmaHalfRegisters), the accumulator as four f32.
 */
export const mmaM16n8k16Layouts: Readonly<Record<FragmentRole, FragmentLayout>> = {
  a: { ...warpgroupA16, lanes: warpLanes, rowW: 0, rows: 16 },
  b: { lanes: warpLanes, rowW: 0, rows: 16, cols: 8, perLane: 4, rowG: 0, rowQ: 2, colG: 1, colQ: 0, rowE: [0, 1, 8, 9], colE: [0, 0, 0, 0] },
  accumulator: m16n8Accumulator,
};

/** The layouts by shape and role; the warpgroup shapes have no B fragment (B is read from shared memory). */
export const fragmentLayouts: Readonly<Record<MatrixShape, Readonly<Partial<Record<FragmentRole, FragmentLayout>>>>> = {
  m16n8k8: {
    // a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4)
    a: { lanes: warpLanes, rowW: 0, rows: 16, cols: 8, perLane: 4, rowG: 1, rowQ: 0, colG: 0, colQ: 1, rowE: [0, 8, 0, 8], colE: [0, 0, 4, 4] },
    // b0 (k = q, n = g), b1 (k = q+4, n = g)
    b: { lanes: warpLanes, rowW: 0, rows: 8, cols: 8, perLane: 2, rowG: 0, rowQ: 1, colG: 1, colQ: 0, rowE: [0, 4], colE: [0, 0] },
    accumulator: m16n8Accumulator,
  },
  m16n8k16: mmaM16n8k16Layouts,
  m64n64k8: { a: warpgroupA, accumulator: warpgroupAccumulator(64) },
  m64n128k8: { a: warpgroupA, accumulator: warpgroupAccumulator(128) },
  m64n256k8: { a: warpgroupA, accumulator: warpgroupAccumulator(256) },
  // 16-bit inputs: B is read from shared memory; A from shared memory or from an A fragment of bf16 or f16.
  m64n64k16: { a: warpgroupA16, accumulator: warpgroupAccumulator(64) },
  m64n128k16: { a: warpgroupA16, accumulator: warpgroupAccumulator(128) },
  m64n256k16: { a: warpgroupA16, accumulator: warpgroupAccumulator(256) },
  // 8-bit float inputs (e4m3, e5m2): A and B both read from shared memory (no A fragments in the language yet).
  m64n64k32: { accumulator: warpgroupAccumulator(64) },
  m64n128k32: { accumulator: warpgroupAccumulator(128) },
  m64n256k32: { accumulator: warpgroupAccumulator(256) },
};

/** The .b32 registers of a 16-bit fragment of `perLane` elements: register i packs elements 2i (low half) and 2i+1 (high half). */
export function mmaHalfRegisters(perLane: number): readonly (readonly [number, number])[] {
  return Array.from({ length: perLane / 2 }, (_, i) => [2 * i, 2 * i + 1] as const);
}

/**
 * One warp's m16n8k16 multiply-accumulate on the matrices (row-major A 16×16, B 16×8, C 16×8, values already
 * bf16 or f16): D[r][c] starts from C[r][c] and adds the products A[r][k]·B[k][c] for k = 0 … 15 in order,
 * rounding to f32 after each addition. The products of two bf16 or two f16 values are exact in f32 (8 or 11
 * significant bits each, at most 22 together; bf16 has f32's exponent range, so its products can still
 * underflow or overflow), so only the order of the additions is the emulation's choice. The hardware's order
 * is unspecified: the GPU may differ from this by the rounding of the additions, within 16 f32 ulps of the sum
 * of |C| and the |products|. The CPU backend's emulation is to add in this order.
 */
export function mmaM16n8k16Reference(a: ArrayLike<number>, b: ArrayLike<number>, c: ArrayLike<number>): Float32Array {
  const d = new Float32Array(16 * 8);
  for (let r = 0; r < 16; r++) {
    for (let col = 0; col < 8; col++) {
      let sum = Math.fround(c[r * 8 + col]!);
      for (let k = 0; k < 16; k++) sum = Math.fround(sum + Math.fround(a[r * 16 + k]! * b[k * 8 + col]!));
      d[r * 8 + col] = sum;
    }
  }
  return d;
}

/**
 * What `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` gives a lane, as data ahead of its builtin
 * (issue 22 §1): lanes 8j…8j+7 name the rows of 8×8 matrix j (16 bytes each, anywhere in shared memory), and
 * register j of lane l receives matrix j's elements at row l >> 2, columns 2(l & 3) and 2(l & 3) + 1 (low
 * then high half), or with .trans at rows 2(l & 3) and 2(l & 3) + 1, column l >> 2. `row(j, r)` is where row r
 * of matrix j starts (an element index); the result is lane l's elements in register order, 2·count of them.
 * So .x4 over a row-major 16×16 tile (matrix j: rows 8(j & 1), columns 8(j >> 1) on) gives an m16n8k16 A
 * fragment, and .x2.trans over a row-major 16×8 (k×n) tile (matrix j: rows 8j on) gives a B fragment.
 */
export function ldmatrixElements(count: 1 | 2 | 4, transpose: boolean, lane: number, row: (matrix: number, r: number) => number): number[] {
  const out: number[] = [];
  for (let j = 0; j < count; j++) {
    for (const h of [0, 1]) out.push(transpose ? row(j, 2 * (lane & 3) + h) + (lane >> 2) : row(j, lane >> 2) + 2 * (lane & 3) + h);
  }
  return out;
}

/**
 * What each shape is, as data: who holds its fragments together (a warp, for `mma`; a warpgroup, for `wgmma`),
 * the instruction's k, and the element types its A and B take (B: none for the warpgroup shapes, which read B
 * from shared memory). A new shape is a row here and in `fragmentLayouts`, not a new case in the passes.
 */
export interface ShapeInfo {
  readonly group: "warp" | "warpgroup";
  readonly k: 8 | 16 | 32;
  /** The element types of its A (and B) inputs: fragment elements, or for k32 the shared arrays' types. */
  readonly inputs: readonly ("tf32" | "bf16" | "f16" | "e4m3" | "e5m2")[];
}

export const matrixShapes: Readonly<Record<MatrixShape, ShapeInfo>> = {
  m16n8k8: { group: "warp", k: 8, inputs: ["tf32"] },
  m16n8k16: { group: "warp", k: 16, inputs: ["bf16", "f16"] },
  m64n64k8: { group: "warpgroup", k: 8, inputs: ["tf32"] },
  m64n128k8: { group: "warpgroup", k: 8, inputs: ["tf32"] },
  m64n256k8: { group: "warpgroup", k: 8, inputs: ["tf32"] },
  m64n64k16: { group: "warpgroup", k: 16, inputs: ["bf16", "f16"] },
  m64n128k16: { group: "warpgroup", k: 16, inputs: ["bf16", "f16"] },
  m64n256k16: { group: "warpgroup", k: 16, inputs: ["bf16", "f16"] },
  m64n64k32: { group: "warpgroup", k: 32, inputs: ["e4m3", "e5m2"] },
  m64n128k32: { group: "warpgroup", k: 32, inputs: ["e4m3", "e5m2"] },
  m64n256k32: { group: "warpgroup", k: 32, inputs: ["e4m3", "e5m2"] },
};

/**
 * How `ldmatrix` loads a 16-bit fragment (perLane/2 registers of two elements) from a tile whose element (r, c)
 * lies at offset + r·stride + c·colStride, with rows of 8 contiguous along `contiguous` (the fragment's columns
 * when colStride is 1, its rows when stride is 1). Register j holds elements 2j and 2j + 1, which lie in one
 * 8×8 block of the fragment's matrix (its origin: where lane 0's element 2j lies), next to each other along the
 * axis the lane's place q steps (columns for A, rows for B). ldmatrix gives lane l the pair at (l >> 2,
 * 2(l & 3) + h) of matrix j's rows, or with .trans at (2(l & 3) + h, l >> 2): so .trans is needed where the pair
 * runs across the contiguous rows, and matrix j's row r is the block's line r along the other axis (the one the
 * group g steps) without .trans, along the pair's axis with it. `rowStart(j, r)` is that line's first element
 * as [row, column] of the fragment's matrix; ldmatrixElements with it gives each lane its fragment's elements
 * (tests/mma16.test.ts checks this against the layouts for A and B, both ways).
 */
export interface LdmatrixPlan {
  readonly count: 1 | 2 | 4;
  readonly transpose: boolean;
  /** [row, column] of the block origin of matrix j: origin(0) plus, per set bit b of j, originSteps[b]. */
  readonly origin0: readonly [number, number];
  readonly originSteps: readonly (readonly [number, number])[];
  /** The [row, column] step from one of a matrix's rows to the next. */
  readonly rowStep: readonly [number, number];
}

export function ldmatrixPlan(layout: FragmentLayout, contiguous: "row" | "col"): LdmatrixPlan {
  const count = layout.perLane / 2;
  if (layout.lanes !== warpLanes || (count !== 1 && count !== 2 && count !== 4)) throw new Error(`internal: ldmatrix of a fragment of ${layout.perLane} elements a lane`);
  // The pair of a register runs along the axis q steps: A's columns (2q), B's rows (k = 2q).
  const pairAxis = layout.colQ !== 0 ? "col" : "row";
  // A pair along the contiguous axis lies within one 16-byte row (no .trans); across it, .trans gathers it.
  const pairIsRow = pairAxis === (contiguous === "col" ? "col" : "row");
  const transpose = !pairIsRow;
  const stepAxis = transpose ? pairAxis : pairAxis === "col" ? "row" : "col";
  const origin = (j: number): [number, number] => [layout.rowE[2 * j]!, layout.colE[2 * j]!];
  const origin0 = origin(0);
  const originSteps = Array.from({ length: Math.log2(count) }, (_, bit): [number, number] => [origin(1 << bit)[0] - origin0[0], origin(1 << bit)[1] - origin0[1]]);
  for (let j = 0; j < count; j++) {
    const sum = originSteps.reduce<[number, number]>((at, step, bit) => ((j >> bit) & 1 ? [at[0] + step[0], at[1] + step[1]] : at), [...origin0]);
    if (sum[0] !== origin(j)[0] || sum[1] !== origin(j)[1]) throw new Error("internal: ldmatrix block origins not linear in the matrix index's bits");
  }
  return { count: count as 1 | 2 | 4, transpose, origin0, originSteps, rowStep: stepAxis === "row" ? [1, 0] : [0, 1] };
}

/** Where row r of matrix j of an ldmatrix plan starts, as [row, column] of the fragment's matrix. */
export function ldmatrixRowStart(plan: LdmatrixPlan, j: number, r: number): [number, number] {
  const at = plan.originSteps.reduce<[number, number]>((sum, step, bit) => ((j >> bit) & 1 ? [sum[0] + step[0], sum[1] + step[1]] : sum), [...plan.origin0]);
  return [at[0] + r * plan.rowStep[0], at[1] + r * plan.rowStep[1]];
}

/** True for the shapes whose fragments a warpgroup holds (wgmma). */
export function isWarpgroupShape(shape: MatrixShape): shape is WarpgroupShape {
  return matrixShapes[shape].group === "warpgroup";
}

/** The n of a warpgroup shape: the columns of its B and accumulator. */
export function warpgroupColumns(shape: WarpgroupShape): number {
  return { m64n64k8: 64, m64n128k8: 128, m64n256k8: 256, m64n64k16: 64, m64n128k16: 128, m64n256k16: 256, m64n64k32: 64, m64n128k32: 128, m64n256k32: 256 }[shape];
}

/**
 * The k of a warpgroup shape: 8 for TF32 inputs (A a register fragment), 16 for 16-bit ones (A in shared memory
 * or registers), 32 for 8-bit floats (A and B in shared memory). Each is 32 bytes of a 128-byte row of k.
 */
export function warpgroupDepth(shape: WarpgroupShape): 8 | 16 | 32 {
  return matrixShapes[shape].k;
}

/** The 16-bit float types a k16 wgmma multiplies (its A and B arrays hold one of them; f32 accumulators). */
export const wgmma16Elements: ReadonlySet<ElementType> = new Set<ElementType>(["bf16", "f16"]);

/** The 8-bit float types a k32 wgmma multiplies (its A and B arrays each hold one of them; f32 accumulators). */
export const wgmma8Elements: ReadonlySet<ElementType> = new Set<ElementType>(["e4m3", "e5m2"]);

/**
 * The 128-byte swizzle of a shared array of `bytes`-byte elements (index in elements from the array's start,
 * which the targets align to 1024 bytes): a 128-byte row holds 128/bytes elements in eight 16-byte pieces, and
 * the piece of each row is XORed with the row's place in its group of 8 rows (the layout TMA writes with
 * CU_TENSOR_MAP_SWIZZLE_128B and wgmma reads with swizzle mode 1). For 4-byte elements this is swizzle128.
 */
export function swizzleIndex(index: number, bytes: number): number {
  const perRow = 128 / bytes;
  const perPiece = 16 / bytes;
  return index ^ ((Math.floor(index / perRow) & 7) * perPiece);
}

/**
 * Where element (r, c) of a tile in the swizzled box layout lies: the tile's columns are cut into boxes of one
 * 128-byte row (128/bytes columns), box j holds `boxRows` rows from offset + j·boxRows·(128/bytes), and row r of
 * a box starts (128/bytes)·r elements in, every index swizzled. copyTile writes one box so, storeTile reads
 * one, `storeFragment(…, { swizzle: 128, boxRows })` writes a fragment across boxes, and wgmma reads its
 * operands so (`wgmmaOperandIndex`).
 */
export function boxIndex(offset: number, r: number, c: number, boxRows: number, bytes: number): number {
  const perRow = 128 / bytes;
  return swizzleIndex(offset + Math.floor(c / perRow) * boxRows * perRow + perRow * r + (c % perRow), bytes);
}

/**
 * The shared-array index of a 16-bit or 8-bit wgmma operand's element, with `bytes` the element size (2: the
 * k16 shapes, 1: the k32 ones) and R = 128 / bytes elements in a 128-byte row: A[row][k] (64 × k, K-major) at
 * swizzle(aOffset + R·row + k); B[k][col] (k × n) K-major at swizzle(bOffset + R·col + k), or (16-bit only)
 * N-major at boxIndex(bOffset, k, col, bBoxRows), the layout a copyTile of B's (k × n) boxes writes. The offsets
 * are as the descriptors need them: K-major ones start within the first 128-byte row of an 8-row group, at a
 * multiple of 32 bytes (16 or 32 elements, one k step), and N-major ones on a group (multiple of 512).
 */
export function wgmmaOperandIndex(operand: "a" | "b", major: "k" | "n", offset: number, row: number, col: number, boxRows: number, bytes: 1 | 2 = 2): number {
  const perRow = 128 / bytes;
  if (operand === "a") return swizzleIndex(offset + perRow * row + col, bytes);
  return major === "k" ? swizzleIndex(offset + perRow * col + row, bytes) : boxIndex(offset, row, col, boxRows, bytes);
}

/**
 * One warpgroup's m64nNk32 multiply-accumulate with 8-bit float inputs, as the CPU emulates it: D[r][c] starts
 * from C[r][c] (row-major 64 × n) and adds A[r][k]·B[k][c] (A row-major 64 × 32, B row-major 32 × n, the f32 values
 * of e4m3 or e5m2 codes) for k = 0 … 31 in order, rounding to f32 after each addition. A product of two such
 * values is exact in f32 (4 significant bits each at most, and its magnitude between 2⁻³² and 57344²), so only
 * the order of the additions is the emulation's: the tensor cores add in an order of their own (and may keep
 * fewer bits in their internal sums), so the GPU may differ from this within the rounding of 32 additions.
 */
export function wgmmaM64k32Reference(n: number, a: ArrayLike<number>, b: ArrayLike<number>, c: ArrayLike<number>): Float32Array {
  const d = new Float32Array(64 * n);
  for (let r = 0; r < 64; r++) {
    for (let col = 0; col < n; col++) {
      let sum = Math.fround(c[r * n + col]!);
      for (let k = 0; k < 32; k++) sum = Math.fround(sum + Math.fround(a[r * 32 + k]! * b[k * n + col]!));
      d[r * n + col] = sum;
    }
  }
  return d;
}

/**
 * A value as a fragment of `element` holds it: rounded to TF32 (cvt.rna), to bf16 or f16 (to nearest even, as
 * the f32 → bf16/f16 conversions do), or unchanged in an f32 accumulator. setFragmentElement, fillFragment and
 * loadFragment store this; the CUDA backend packs a 16-bit A fragment's elements in pairs with the same rounding.
 */
export function roundFragmentValue(element: FragmentType["element"], value: Expr): Expr {
  if (element === "tf32") return { kind: "intrinsic", name: "roundTf32", type: "f32", args: [value], span: value.span };
  if (element === "bf16" || element === "f16") return { kind: "convert", type: "f32", value: { kind: "convert", type: element, value, span: value.span }, span: value.span };
  return value;
}

/** The layout of a declared fragment type (the frontend only declares the roles a shape has). */
export function fragmentLayout(type: Pick<FragmentType, "shape" | "role">): FragmentLayout {
  const layout = fragmentLayouts[type.shape][type.role];
  if (!layout) throw new Error(`internal: no ${type.role} fragment for shape ${type.shape}`);
  return layout;
}

/** The [row, column] of element `e` of thread `lane`'s fragment (lane: the thread's index in its warp or warpgroup). */
export function fragmentElementPosition(layout: FragmentLayout, lane: number, e: number): [number, number] {
  const w = lane >> 5;
  const g = (lane & 31) >> 2;
  const q = lane & 3;
  return [w * layout.rowW + g * layout.rowG + q * layout.rowQ + layout.rowE[e]!, g * layout.colG + q * layout.colQ + layout.colE[e]!];
}

/**
 * The 128-byte swizzle of a shared f32 array (index in elements from the array's start, which the targets
 * align to 1024 bytes): the 16-byte piece (4 elements) of each 128-byte row is XORed with the row's place in
 * its group of 8 rows. `wgmma` reads B[k][col] = array[swizzle128(offset + 32·col + k)]; write the operand there.
 */
export function swizzle128(index: number): number {
  return index ^ (((index >> 5) & 7) << 2);
}

/**
 * A shared-memory operand element as the tensor cores use it: f32 with the low 13 mantissa bits dropped (TF32
 * by truncation toward zero). NaN stays NaN here (the emulation's choice: a NaN whose payload lies only in the
 * dropped bits is not specified further); infinities are unchanged by the truncation.
 */
export function truncateTf32(x: number): number {
  if (x !== x) return x;
  scratch[0] = x;
  scratchBits[0] = scratchBits[0]! & 0xffffe000;
  return scratch[0]!;
}

// TF32 rounding (cvt.rna.tf32.f32) lives with the language, whose `roundTf32` runs the same function.
export { roundTf32, roundTf32Even } from "../lang/tf32.ts";

/**
 * The row or column of element `e` of the thread's part of a fragment, as an IR expression of the thread's
 * linear index and `e`: the thread's first element (w·rowW + g·rowG + q·rowQ, g·colG + q·colQ) plus the step
 * of each set bit of e. Every layout in the table is linear in the bits of e (bit 0 of a warpgroup
 * accumulator's e adds a column, bit 1 eight rows, bits 2 and up eight columns each…), which `bitSteps` checks,
 * so with e constant after unrolling the sum folds to a constant.
 */
export function fragmentPositionExpr(layout: FragmentLayout, linear: Expr, e: Expr, axis: "row" | "col", span: Span): Expr {
  const type = "i32" as const;
  const int = (value: number): Expr => ({ kind: "literal", type, value, span });
  const bin = (op: "add" | "mul" | "and" | "shr", left: Expr, right: Expr): Expr => ({ kind: "binary", op, type, left, right, span });
  const lane = bin("and", linear, int(layout.lanes - 1));
  const g = bin("and", bin("shr", lane, int(2)), int(7));
  const q = bin("and", lane, int(3));
  const [gStep, qStep] = axis === "row" ? [layout.rowG, layout.rowQ] : [layout.colG, layout.colQ];
  let sum: Expr = bin("add", bin("mul", g, int(gStep)), bin("mul", q, int(qStep)));
  if (axis === "row" && layout.rowW) sum = bin("add", sum, bin("mul", bin("shr", lane, int(5)), int(layout.rowW)));
  bitSteps(layout, axis).forEach((step, bit) => {
    if (step !== 0) sum = bin("add", sum, bin("mul", bin("and", bin("shr", e, int(bit)), int(1)), int(step)));
  });
  return sum;
}

/** The row (column) step of each bit of an element index in a layout; throws if the layout is not linear in them. */
export function bitSteps(layout: FragmentLayout, axis: "row" | "col"): number[] {
  const of = axis === "row" ? layout.rowE : layout.colE;
  const bits = Math.log2(layout.perLane);
  if (!Number.isInteger(bits)) throw new Error(`internal: a fragment layout of ${layout.perLane} elements a lane`);
  const steps = Array.from({ length: bits }, (_, bit) => of[1 << bit]! - of[0]!);
  of.forEach((value, e) => {
    const sum = steps.reduce((total, step, bit) => total + (((e >> bit) & 1) * step), of[0]!);
    if (sum !== value) throw new Error(`internal: fragment layout element ${e} is not linear in its index's bits`);
  });
  return steps;
}

/** The flat index of element `e` of fragment `index` in its array: index · perLane + e. */
/**
 * The thread's linear index in its block, threadIdx.x + blockDim.x·(threadIdx.y + blockDim.y·threadIdx.z): warps
 * are formed along it, as CUDA forms them, so fragments are held along it on every target.
 */
export function linearThreadIndex(span: Span): Expr {
  const builtin = (builtin: "threadIdx" | "blockDim", axis: "x" | "y" | "z"): Expr => ({ kind: "builtin", type: "i32", builtin, axis, span });
  const bin = (op: "add" | "mul", left: Expr, right: Expr): Expr => ({ kind: "binary", op, type: "i32", left, right, span });
  return bin("add", builtin("threadIdx", "x"), bin("mul", builtin("blockDim", "x"), bin("add", builtin("threadIdx", "y"), bin("mul", builtin("blockDim", "y"), builtin("threadIdx", "z")))));
}

export function fragmentSlot(index: Expr, perLane: number, e: number, span: Span): Expr {
  const type = index.type as ScalarType;
  const scaled: Expr = { kind: "binary", op: "mul", type, left: index, right: { kind: "literal", type, value: perLane, span }, span };
  return e === 0 ? scaled : { kind: "binary", op: "add", type, left: scaled, right: { kind: "literal", type, value: e, span }, span };
}
