// Row softmax, one block per row: out[r][c] = exp(x[r][c] − m) / Σ exp(x[r][c'] − m) with m the row's
// maximum, which keeps exp from overflowing. The row's maximum and sum are block reductions made of subgroup
// reductions (subgroupMax, subgroupAdd) and one shared slot per subgroup.
// Written for any subgroup size from 4 to 128 (docs/language.md §24).
// Launch: block BLOCK (a multiple of 128), grid [rows]; any number of columns.
import {
  blockIdx,
  kernel,
  shared,
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

export const softmaxRows = kernel(
  { block: ["BLOCK"] },
  (out: Float32Array, input: ReadonlyFloat32Array, cols: i32, BLOCK: Const<i32> = 256) => {
    const partial = shared.f32(BLOCK / 4);
    const row = blockIdx.x * cols;
    const lane = subgroupInvocationId;
    const subgroup = threadIdx.x / subgroupSize;
    const subgroups = BLOCK / subgroupSize;

    let m: f32 = -3.4028235e38;
    for (let c = threadIdx.x; c < cols; c += BLOCK) {
      m = Math.max(m, input[row + c]);
    }
    m = subgroupMax(m);
    if (lane === 0) {
      partial[subgroup] = m;
    }
    syncThreads();
    let rowMax: f32 = -3.4028235e38;
    for (let w = lane; w < subgroups; w += subgroupSize) {
      rowMax = Math.max(rowMax, partial[w]);
    }
    rowMax = subgroupMax(rowMax);
    // Every thread has read the maxima before the slots take the sums.
    syncThreads();

    let s: f32 = 0;
    for (let c = threadIdx.x; c < cols; c += BLOCK) {
      s += Math.exp(input[row + c] - rowMax);
    }
    s = subgroupAdd(s);
    if (lane === 0) {
      partial[subgroup] = s;
    }
    syncThreads();
    let rowSum: f32 = 0;
    for (let w = lane; w < subgroups; w += subgroupSize) {
      rowSum += partial[w];
    }
    rowSum = subgroupAdd(rowSum);
    const scale = 1 / rowSum;
    for (let c = threadIdx.x; c < cols; c += BLOCK) {
      out[row + c] = Math.exp(input[row + c] - rowMax) * scale;
    }
  },
);
