// Row softmax (as softmax.ts: each row read once into registers, 16 bytes at a time, and written once), with
// the row's maximum and sum made of subgroup reductions instead of shared-memory trees: each subgroup
// reduces its lanes' values (subgroupMax, subgroupAdd), lane 0 puts the result in a shared slot, and after
// one barrier every subgroup reduces its row's slots. Two barriers per row, against 2·(1 + log2 THREADS).
// A row's THREADS threads must be whole subgroups: THREADS a multiple of the subgroup size (32 on CUDA, 4 on
// SwiftShader); the slots are sized for the smallest size, 4.
// cols must be a multiple of 4 and at most 4·THREADS·ITEMS. Launch: block THREADS×ROWS; ceil(rows / ROWS)
// blocks as a grid (gx, gy) with gx·gy ≥ that.
import {
  blockIdx,
  gridDim,
  kernel,
  load4,
  local,
  shared,
  store4,
  subgroupAdd,
  subgroupInvocationId,
  subgroupMax,
  subgroupSize,
  syncThreads,
  threadIdx,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

/** The value of the lanes past the end of a row, which exp turns into 0 (softmax.ts says why not the lowest). */
const LOWEST = -3.4028232635611926e38;

export const softmaxVec4Subgroups = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 4096 and 8192 (one row per block), 1024 (four rows of 64 threads), 256 (eight rows of 32).
    specializations: [{}, { ITEMS: 8 }, { THREADS: 64, ROWS: 4 }, { THREADS: 32, ROWS: 8, ITEMS: 2 }],
  },
  (out: Float32Array, input: ReadonlyFloat32Array, rows: i32, cols: i32, THREADS: Const<i32> = 256, ROWS: Const<i32> = 1, ITEMS: Const<i32> = 4) => {
    const maxima = shared.f32(ROWS, THREADS / 4);
    const sums = shared.f32(ROWS, THREADS / 4);
    const v = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const lane = subgroupInvocationId;
    const subgroups = THREADS / subgroupSize;
    const row = (blockIdx.y * gridDim.x + blockIdx.x) * ROWS + ty;
    // Threads of rows past the end still take part in every barrier and subgroup operation; they only skip memory.
    const live = row < rows;
    const base = row * cols;

    let localMax: f32 = LOWEST;
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        const [a, b, d, e] = load4(input, base + c);
        store4(v, 4 * k, a, b, d, e);
      } else {
        store4(v, 4 * k, LOWEST, LOWEST, LOWEST, LOWEST);
      }
      localMax = Math.max(localMax, v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
    }
    localMax = subgroupMax(localMax);
    if (lane === 0) {
      maxima[ty][tx / subgroupSize] = localMax;
    }
    syncThreads();
    let rowMax: f32 = LOWEST;
    for (let w = lane; w < subgroups; w += subgroupSize) {
      rowMax = Math.max(rowMax, maxima[ty][w]);
    }
    rowMax = subgroupMax(rowMax);

    let localSum: f32 = 0;
    unrollExp: for (let i = 0; i < 4 * ITEMS; i++) {
      const e = Math.exp(v[i] - rowMax);
      v[i] = e;
      localSum += e;
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
    const scale = 1 / subgroupAdd(rowSum);

    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        store4(out, base + c, v[4 * k] * scale, v[4 * k + 1] * scale, v[4 * k + 2] * scale, v[4 * k + 3] * scale);
      }
    }
  },
);
