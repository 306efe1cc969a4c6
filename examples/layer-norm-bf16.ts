// Layer normalization of bf16 rows, as torch.nn.functional.layer_norm(x, [cols], gamma, beta, eps) on bf16
// tensors: out[r][c] = (x[r][c] − mean_r) / sqrt(var_r + eps) · gamma[c] + beta[c], with the biased variance,
// computed in f32 and rounded once to the element type on the store. Written once for the 16-bit float types
// (T: bf16 here; the same source builds for f16, from a file of its own on WebGPU, where f16 needs shader-f16
// for a whole module: docs/language.md §26). Each row is read once, 16 bytes (eight elements) at a time with
// load8, widened to f32 in registers (ITEMS vectors of 8 per thread), its mean and then the mean of squared
// deviations from it are found with subgroup sums and one shared slot per subgroup (as layer-norm-subgroups.ts),
// and the row is written once with store8. A block holds ROWS rows (threadIdx.y picks the row).
// cols must be a multiple of 8 and at most 8·THREADS·ITEMS; a row's THREADS threads must be whole subgroups.
// Launch: block THREADS×ROWS; ceil(rows / ROWS) blocks as a grid (gx, gy) with gx·gy ≥ that.
import {
  blockIdx,
  cast,
  f32,
  gridDim,
  kernel,
  load8,
  local,
  shared,
  store4,
  store8,
  subgroupAdd,
  subgroupInvocationId,
  subgroupSize,
  syncThreads,
  threadIdx,
  type BufferOf,
  type Const,
  type i32,
  type ReadonlyBufferOf,
} from "tskernel";

export const layerNormHalf = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 8192 (256 threads of 4 vectors), 4096 (128 of 4), 1024 (four rows of 32 threads of 4
    // vectors) and 256 (four rows of 32 of 1).
    specializations: [
      { T: "bf16" },
      { T: "bf16", THREADS: 128 },
      { T: "bf16", THREADS: 32, ROWS: 4 },
      { T: "bf16", THREADS: 32, ROWS: 4, ITEMS: 1 },
    ],
  },
  <T extends "bf16" | "f16">(
    out: BufferOf<T>,
    input: ReadonlyBufferOf<T>,
    gamma: ReadonlyBufferOf<T>,
    beta: ReadonlyBufferOf<T>,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 256,
    ROWS: Const<i32> = 1,
    ITEMS: Const<i32> = 4,
  ) => {
    const sums = shared.f32(ROWS, THREADS / 4);
    const squares = shared.f32(ROWS, THREADS / 4);
    const v = local.f32(8 * ITEMS);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const lane = subgroupInvocationId;
    const subgroups = THREADS / subgroupSize;
    const row = (blockIdx.y * gridDim.x + blockIdx.x) * ROWS + ty;
    const live = row < rows;
    const base = row * cols;
    // Divided once here, before the row is in registers (layer-norm.ts says why).
    const inverseCols = 1 / f32(cols);

    // Lanes past the end of the row hold 0, and count in neither sum.
    let localSum: f32 = 0;
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, base + c);
        store4(v, 8 * k, f32(x0), f32(x1), f32(x2), f32(x3));
        store4(v, 8 * k + 4, f32(x4), f32(x5), f32(x6), f32(x7));
      } else {
        store4(v, 8 * k, 0, 0, 0, 0);
        store4(v, 8 * k + 4, 0, 0, 0, 0);
      }
      const i = 8 * k;
      localSum += v[i] + v[i + 1] + (v[i + 2] + v[i + 3]) + (v[i + 4] + v[i + 5] + (v[i + 6] + v[i + 7]));
    }
    localSum = subgroupAdd(localSum);
    if (lane === 0) {
      sums[ty][tx / subgroupSize] = localSum;
    }
    syncThreads();
    let rowSum: f32 = 0;
    for (let w = lane; w < subgroups; w += subgroupSize) {
      rowSum += sums[ty][w];
    }
    const mean = subgroupAdd(rowSum) * inverseCols;

    let localSquares: f32 = 0;
    unrollSquares: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 8;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 8; i++) {
          const d = v[8 * k + i] - mean;
          localSquares += d * d;
        }
      }
    }
    localSquares = subgroupAdd(localSquares);
    if (lane === 0) {
      squares[ty][tx / subgroupSize] = localSquares;
    }
    syncThreads();
    let rowSquares: f32 = 0;
    for (let w = lane; w < subgroups; w += subgroupSize) {
      rowSquares += squares[ty][w];
    }
    const rstd = 1 / Math.sqrt(subgroupAdd(rowSquares) * inverseCols + eps);

    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const [g0, g1, g2, g3, g4, g5, g6, g7] = load8(gamma, c);
        const [b0, b1, b2, b3, b4, b5, b6, b7] = load8(beta, c);
        const i = 8 * k;
        store8(
          out,
          base + c,
          cast<T>((v[i] - mean) * rstd * f32(g0) + f32(b0)),
          cast<T>((v[i + 1] - mean) * rstd * f32(g1) + f32(b1)),
          cast<T>((v[i + 2] - mean) * rstd * f32(g2) + f32(b2)),
          cast<T>((v[i + 3] - mean) * rstd * f32(g3) + f32(b3)),
          cast<T>((v[i + 4] - mean) * rstd * f32(g4) + f32(b4)),
          cast<T>((v[i + 5] - mean) * rstd * f32(g5) + f32(b5)),
          cast<T>((v[i + 6] - mean) * rstd * f32(g6) + f32(b6)),
          cast<T>((v[i + 7] - mean) * rstd * f32(g7) + f32(b7)),
        );
      }
    }
  },
);

/**
 * layerNormHalf with one reduction instead of two: the sums of d = x − K and of d², where K is the row's first
 * element (read by every thread of the row: one address), give mean = K + Σd / n and the variance
 * Σd² / n − (Σd / n)² (clamped at 0), so the row takes one subgroup sum of two values, one shared exchange and
 * one barrier. Numerically: the subtraction cancels as (mean − K)² grows against the variance, so the variance's
 * relative error is about the sums' (a tree of depth ≤ 40: ≈ 40·2⁻²⁴) times 1 + (mean − K)² / variance, against
 * layerNormHalf's two passes, whose error does not grow with it: with K an element of the row, the ratio is at
 * most (largest deviation)² / variance. Same arguments, launch and specializations as layerNormHalf.
 */
export const layerNormHalfShifted = kernel(
  {
    block: ["THREADS", "ROWS"],
    specializations: [
      { T: "bf16" },
      { T: "bf16", THREADS: 512, ITEMS: 2 },
      { T: "bf16", THREADS: 128 },
      { T: "bf16", THREADS: 32, ROWS: 4 },
      { T: "bf16", THREADS: 32, ROWS: 4, ITEMS: 1 },
    ],
  },
  <T extends "bf16" | "f16">(
    out: BufferOf<T>,
    input: ReadonlyBufferOf<T>,
    gamma: ReadonlyBufferOf<T>,
    beta: ReadonlyBufferOf<T>,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 256,
    ROWS: Const<i32> = 1,
    ITEMS: Const<i32> = 4,
  ) => {
    const sums = shared.f32(ROWS, THREADS / 4);
    const squares = shared.f32(ROWS, THREADS / 4);
    const v = local.f32(8 * ITEMS);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const lane = subgroupInvocationId;
    const subgroups = THREADS / subgroupSize;
    const row = (blockIdx.y * gridDim.x + blockIdx.x) * ROWS + ty;
    const live = row < rows;
    const base = row * cols;
    const inverseCols = 1 / f32(cols);
    let shift: f32 = 0;
    if (live) {
      shift = f32(input[base]);
    }

    // Lanes past the end of the row count in neither sum.
    let localSum: f32 = 0;
    let localSquares: f32 = 0;
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, base + c);
        store4(v, 8 * k, f32(x0), f32(x1), f32(x2), f32(x3));
        store4(v, 8 * k + 4, f32(x4), f32(x5), f32(x6), f32(x7));
        unrollLane: for (let i = 0; i < 8; i++) {
          const d = v[8 * k + i] - shift;
          localSum += d;
          localSquares += d * d;
        }
      }
    }
    localSum = subgroupAdd(localSum);
    localSquares = subgroupAdd(localSquares);
    if (lane === 0) {
      sums[ty][tx / subgroupSize] = localSum;
      squares[ty][tx / subgroupSize] = localSquares;
    }
    syncThreads();
    // The loop counts from 0 rather than from the lane, so that on CUDA (subgroupSize 32) its trip count is a
    // constant, ceil(subgroups / 32): one pass of one shared read per sum. Counted from the lane (an asm
    // register nvcc knows no bound of), the same loop was unrolled 16 times with a remainder, 20 more registers.
    let rowSum: f32 = 0;
    let rowSquares: f32 = 0;
    for (let w0 = 0; w0 < subgroups; w0 += subgroupSize) {
      const w = w0 + lane;
      if (w < subgroups) {
        rowSum += sums[ty][w];
        rowSquares += squares[ty][w];
      }
    }
    const meanShifted = subgroupAdd(rowSum) * inverseCols;
    const variance = Math.max(subgroupAdd(rowSquares) * inverseCols - meanShifted * meanShifted, 0);
    const mean = shift + meanShifted;
    const rstd = 1 / Math.sqrt(variance + eps);

    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const [g0, g1, g2, g3, g4, g5, g6, g7] = load8(gamma, c);
        const [b0, b1, b2, b3, b4, b5, b6, b7] = load8(beta, c);
        const i = 8 * k;
        store8(
          out,
          base + c,
          cast<T>((v[i] - mean) * rstd * f32(g0) + f32(b0)),
          cast<T>((v[i + 1] - mean) * rstd * f32(g1) + f32(b1)),
          cast<T>((v[i + 2] - mean) * rstd * f32(g2) + f32(b2)),
          cast<T>((v[i + 3] - mean) * rstd * f32(g3) + f32(b3)),
          cast<T>((v[i + 4] - mean) * rstd * f32(g4) + f32(b4)),
          cast<T>((v[i + 5] - mean) * rstd * f32(g5) + f32(b5)),
          cast<T>((v[i + 6] - mean) * rstd * f32(g6) + f32(b6)),
          cast<T>((v[i + 7] - mean) * rstd * f32(g7) + f32(b7)),
        );
      }
    }
  },
);
