// Row softmax, out[r][c] = exp(x[r][c] − max_r) / Σ_c exp(x[r][c] − max_r), in one pass over memory: each
// row is read once into registers (ITEMS vectors of 4 per thread, 16-byte loads), its maximum and then its sum
// of exponentials are found with shared-memory tree reductions among the THREADS threads that share the
// row, and the row is written once. A block holds ROWS rows side by side (threadIdx.y picks the row), so that
// short rows still give blocks of a useful size. Subtracting the maximum keeps exp from overflowing.
// cols must be a multiple of 4 and at most 4·THREADS·ITEMS (the row must fit in the threads' registers);
// pick the specialization whose capacity is the smallest that holds a row.
// Launch: block THREADS×ROWS; ceil(rows / ROWS) blocks as a grid of (gx, gy) with gx·gy ≥ that (a 2-D grid
// when there are more blocks than one dimension allows).
import { blockIdx, gridDim, kernel, load4, local, shared, store4, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

/**
 * The value of the lanes past the end of a row, which exp turns into 0: the lowest f32 but one (WGSL compilers
 * reject the lowest, −3.4028235e38, as written by the WGSL backend).
 */
const LOWEST = -3.4028232635611926e38;

export const softmaxRows = kernel(
  {
    block: ["THREADS", "ROWS"],
    // Capacities 4096 and 8192 (one row per block), 1024 (four rows of 64 threads), 256 (eight rows of 32).
    specializations: [{}, { ITEMS: 8 }, { THREADS: 64, ROWS: 4 }, { THREADS: 32, ROWS: 8, ITEMS: 2 }],
  },
  (out: Float32Array, input: ReadonlyFloat32Array, rows: i32, cols: i32, THREADS: Const<i32> = 256, ROWS: Const<i32> = 1, ITEMS: Const<i32> = 4) => {
    const red = shared.f32(ROWS, THREADS);
    const v = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row = (blockIdx.y * gridDim.x + blockIdx.x) * ROWS + ty;
    // Threads of rows past the end still take part in every barrier; they only skip memory.
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
    red[ty][tx] = localMax;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) {
        red[ty][tx] = Math.max(red[ty][tx], red[ty][tx + s]);
      }
      syncThreads();
    }
    const rowMax = red[ty][0];
    // Every thread has read the maximum before the same array collects the sums.
    syncThreads();

    let localSum: f32 = 0;
    unrollExp: for (let i = 0; i < 4 * ITEMS; i++) {
      const e = Math.exp(v[i] - rowMax);
      v[i] = e;
      localSum += e;
    }
    red[ty][tx] = localSum;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) {
        red[ty][tx] += red[ty][tx + s];
      }
      syncThreads();
    }
    const scale = 1 / red[ty][0];

    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (live && c < cols) {
        store4(out, base + c, v[4 * k] * scale, v[4 * k + 1] * scale, v[4 * k + 2] * scale, v[4 * k + 3] * scale);
      }
    }
  },
);
