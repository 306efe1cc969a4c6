// RMS normalization of bf16 rows, as torch.nn.functional.rms_norm(x, [cols], weight, eps) on bf16 tensors:
// out[r][c] = x[r][c] / sqrt(mean_c(x[r][c]²) + eps) · weight[c], computed in f32 and rounded once to the
// element type on the store. Written once for the 16-bit float types (T: bf16 here; layer-norm-bf16.ts says
// how f16 builds). Each row is read once, eight elements (16 bytes) at a time, widened to f32 in registers
// (ITEMS vectors of 8 per thread); its sum of squares is one subgroup sum per subgroup and one shared slot per
// subgroup; the row is written once. A block holds ROWS rows (threadIdx.y picks the row).
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

export const rmsNormHalf = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 8192, 4096, 1024 (four rows of 32 threads) and 256, as layer-norm-bf16.ts.
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
    weight: ReadonlyBufferOf<T>,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 256,
    ROWS: Const<i32> = 1,
    ITEMS: Const<i32> = 4,
  ) => {
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

    // Lanes past the end of the row hold 0, which adds nothing to the sum of squares.
    let localSquares: f32 = 0;
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
      unrollLane: for (let i = 0; i < 8; i++) {
        localSquares += v[8 * k + i] * v[8 * k + i];
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
        const [w0, w1, w2, w3, w4, w5, w6, w7] = load8(weight, c);
        const i = 8 * k;
        store8(
          out,
          base + c,
          cast<T>(v[i] * rstd * f32(w0)),
          cast<T>(v[i + 1] * rstd * f32(w1)),
          cast<T>(v[i + 2] * rstd * f32(w2)),
          cast<T>(v[i + 3] * rstd * f32(w3)),
          cast<T>(v[i + 4] * rstd * f32(w4)),
          cast<T>(v[i + 5] * rstd * f32(w5)),
          cast<T>(v[i + 6] * rstd * f32(w6)),
          cast<T>(v[i + 7] * rstd * f32(w7)),
        );
      }
    }
  },
);
