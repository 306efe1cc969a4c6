// Layer normalization over the rows of a matrix, as torch.nn.functional.layer_norm(x, [cols], gamma, beta, eps):
// out[r][c] = (x[r][c] − mean_r) / sqrt(var_r + eps) · gamma[c] + beta[c], with the biased variance. One pass
// over memory: each row is read once into registers (ITEMS vectors of 4 per thread), its mean and then the
// mean of squared deviations from it (two reductions over values already in registers, which is more
// accurate than summing x and x² at once) are found with shared-memory trees among the THREADS threads that
// share the row, and the row is written once. A block holds ROWS rows (threadIdx.y picks the row).
// cols must be a multiple of 4 and at most 4·THREADS·ITEMS; pick the smallest specialization that holds a
// row. Launch: block THREADS×ROWS; ceil(rows / ROWS) blocks as a grid (gx, gy) with gx·gy ≥ that.
import { blockIdx, f32, gridDim, kernel, load4, local, shared, store4, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const layerNormRows = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 4096 and 8192 (one row per block), 1024 (four rows of 64 threads), 256 (eight rows of 32).
    // 128 threads of 8 vectors each for rows of 4096: the tuner's fastest in H100 run 1, when 256 threads of 4
    // spilled around the division; since the division moved (below), the two are within 2 % (run 2).
    // 8 rows of 32 threads of 8 vectors: the CPU backend's choice for rows of up to 1024 (its tuner's fastest).
    specializations: [{}, { THREADS: 256 }, { THREADS: 64, ROWS: 4, ITEMS: 4 }, { THREADS: 32, ROWS: 8, ITEMS: 2 }, { THREADS: 32, ROWS: 8, ITEMS: 8 }],
  },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    gamma: ReadonlyFloat32Array,
    beta: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 128,
    ROWS: Const<i32> = 1,
    ITEMS: Const<i32> = 8,
  ) => {
    const red = shared.f32(ROWS, THREADS);
    const v = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row = (blockIdx.y * gridDim.x + blockIdx.x) * ROWS + ty;
    const live = row < rows;
    const base = row * cols;
    // Divided once here, before the row is in registers: an IEEE division has a slow path whose call would
    // otherwise make the compiler save registers around it.
    const inverseCols = 1 / f32(cols);

    // Lanes past the end of the row hold 0, and count in neither sum.
    let localSum: f32 = 0;
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        const [a, b, d, e] = load4(input, base + c);
        store4(v, 4 * k, a, b, d, e);
      } else {
        store4(v, 4 * k, 0, 0, 0, 0);
      }
      localSum += v[4 * k] + v[4 * k + 1] + (v[4 * k + 2] + v[4 * k + 3]);
    }
    red[ty][tx] = localSum;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) {
        red[ty][tx] += red[ty][tx + s];
      }
      syncThreads();
    }
    const mean = red[ty][0] * inverseCols;
    syncThreads();

    let localSquares: f32 = 0;
    unrollSquares: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          const d = v[4 * k + i] - mean;
          localSquares += d * d;
        }
      }
    }
    red[ty][tx] = localSquares;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) {
        red[ty][tx] += red[ty][tx + s];
      }
      syncThreads();
    }
    const rstd = 1 / Math.sqrt(red[ty][0] * inverseCols + eps);

    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        const [g0, g1, g2, g3] = load4(gamma, c);
        const [b0, b1, b2, b3] = load4(beta, c);
        const i = 4 * k;
        store4(
          out,
          base + c,
          (v[i] - mean) * rstd * g0 + b0,
          (v[i + 1] - mean) * rstd * g1 + b1,
          (v[i + 2] - mean) * rstd * g2 + b2,
          (v[i + 3] - mean) * rstd * g3 + b3,
        );
      }
    }
  },
);
