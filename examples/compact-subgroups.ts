// Stream compaction: copies the positive elements of the input to the output, in input order within each
// block. A subgroup scan of 0/1 flags (subgroupExclusiveAdd) gives each kept element its place among its
// subgroup's, the counts of the subgroups before it (through shared memory) its place in the block's run, and
// one atomicAdd per block on the output's length reserves the run: runs of different blocks follow each other
// in the order the blocks got there, so the output holds every kept element once, each block's in order.
// Written for any subgroup size from 4 to 128 (docs/language.md §24).
// Launch: block BLOCK (a multiple of 128), grid ceil(n / BLOCK); `count` has one element, zeroed first, and
// ends as the number of kept elements.
import {
  atomicAdd,
  blockIdx,
  kernel,
  shared,
  subgroupExclusiveAdd,
  subgroupInvocationId,
  subgroupSize,
  syncThreads,
  threadIdx,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const compactPositive = kernel(
  { block: ["BLOCK"] },
  (out: Float32Array, count: Int32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256) => {
    const counts = shared.i32(BLOCK / 4);
    const start = shared.i32(1);
    const i = blockIdx.x * BLOCK + threadIdx.x;
    let v: f32 = 0;
    if (i < n) {
      v = input[i];
    }
    const keep = v > 0;
    const flag = keep ? 1 : 0;
    // Kept elements of lower lanes of this subgroup: this element's place among the subgroup's.
    const rank = subgroupExclusiveAdd(flag);
    const subgroup = threadIdx.x / subgroupSize;
    if (subgroupInvocationId === subgroupSize - 1) {
      counts[subgroup] = rank + flag;
    }
    syncThreads();
    let before = 0;
    for (let w = 0; w < subgroup; w++) {
      before += counts[w];
    }
    if (threadIdx.x === 0) {
      let kept = 0;
      for (let w = 0; w < BLOCK / subgroupSize; w++) {
        kept += counts[w];
      }
      start[0] = atomicAdd(count, 0, kept);
    }
    syncThreads();
    if (keep) {
      out[start[0] + before + rank] = v;
    }
  },
);
