// Layer normalization over the rows of a matrix (as layer-norm.ts: torch.nn.functional.layer_norm with γ, β
// and the biased variance, each row read once into registers and written once), with the two row reductions
// made of subgroup sums instead of shared-memory trees: each subgroup adds its lanes' values with
// subgroupAdd, lane 0 puts the subgroup's sum in a shared slot, and after one barrier every subgroup adds up
// its row's slots. Two barriers per row in all, against 2·(1 + log2 THREADS) for the trees.
// A row's THREADS threads must be whole subgroups: THREADS a multiple of the subgroup size (32 on CUDA and
// NVIDIA GPUs through Dawn, 4 on SwiftShader); the slots are sized for the smallest size, 4.
// cols must be a multiple of 4 and at most 4·THREADS·ITEMS. Launch: block THREADS×ROWS; ceil(rows / ROWS)
// blocks as a grid (gx, gy) with gx·gy ≥ that.
import {
  blockIdx,
  f32,
  gridDim,
  kernel,
  load4,
  local,
  shared,
  store4,
  subgroupAdd,
  subgroupInvocationId,
  subgroupSize,
  syncThreads,
  threadIdx,
  type Const,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const layerNormSubgroups = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 4096 and 8192 (one row per block), 1024 (four rows of 64 threads), 256 (eight rows of 32).
    specializations: [{}, { THREADS: 256 }, { THREADS: 64, ROWS: 4, ITEMS: 4 }, { THREADS: 32, ROWS: 8, ITEMS: 2 }],
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
    const sums = shared.f32(ROWS, THREADS / 4);
    const squares = shared.f32(ROWS, THREADS / 4);
    const v = local.f32(4 * ITEMS);
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
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        const [a, b, d, e] = load4(input, base + c);
        store4(v, 4 * k, a, b, d, e);
      } else {
        store4(v, 4 * k, 0, 0, 0, 0);
      }
      localSum += v[4 * k] + v[4 * k + 1] + (v[4 * k + 2] + v[4 * k + 3]);
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
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          const d = v[4 * k + i] - mean;
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
