// Row softmax of bf16 rows, as torch.softmax(x, dim=1) on a bf16 tensor: out[r][c] = exp(x[r][c] − max_r) /
// Σ_c exp(x[r][c] − max_r), computed in f32 and rounded once to the element type on the store. Written once
// for the 16-bit float types (T: bf16 here; layer-norm-bf16.ts says how f16 builds). As
// softmax-vec4-subgroups.ts, with eight elements (16 bytes) per access: each row is read once into registers
// (ITEMS vectors of 8 per thread, widened to f32), its maximum and sum of exponentials are subgroup reductions
// with one shared slot per subgroup, and the row is written once. A block holds ROWS rows.
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
  subgroupMax,
  subgroupSize,
  syncThreads,
  threadIdx,
  type BufferOf,
  type Const,
  type i32,
  type ReadonlyBufferOf,
} from "tskernel";

/** The value of the lanes past the end of a row, which exp turns into 0 (softmax.ts says why not the lowest). */
const LOWEST = -3.4028232635611926e38;

export const softmaxHalf = kernel(
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
  <T extends "bf16" | "f16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, rows: i32, cols: i32, THREADS: Const<i32> = 256, ROWS: Const<i32> = 1, ITEMS: Const<i32> = 4) => {
    const maxima = shared.f32(ROWS, THREADS / 4);
    const sums = shared.f32(ROWS, THREADS / 4);
    const v = local.f32(8 * ITEMS);
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
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, base + c);
        store4(v, 8 * k, f32(x0), f32(x1), f32(x2), f32(x3));
        store4(v, 8 * k + 4, f32(x4), f32(x5), f32(x6), f32(x7));
      } else {
        store4(v, 8 * k, LOWEST, LOWEST, LOWEST, LOWEST);
        store4(v, 8 * k + 4, LOWEST, LOWEST, LOWEST, LOWEST);
      }
      const i = 8 * k;
      localMax = Math.max(localMax, Math.max(v[i], v[i + 1], v[i + 2], v[i + 3]), Math.max(v[i + 4], v[i + 5], v[i + 6], v[i + 7]));
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
    unrollExp: for (let i = 0; i < 8 * ITEMS; i++) {
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
      const c = (k * THREADS + tx) * 8;
      if (live && c < cols) {
        const i = 8 * k;
        store8(
          out,
          base + c,
          cast<T>(v[i] * scale),
          cast<T>(v[i + 1] * scale),
          cast<T>(v[i + 2] * scale),
          cast<T>(v[i + 3] * scale),
          cast<T>(v[i + 4] * scale),
          cast<T>(v[i + 5] * scale),
          cast<T>(v[i + 6] * scale),
          cast<T>(v[i + 7] * scale),
        );
      }
    }
  },
);
