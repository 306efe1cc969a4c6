// A one-pass sum of any length: each thread adds its share of the input (a grid-stride loop), each subgroup
// adds its threads' sums with subgroupAdd, the block adds its subgroups' sums through shared memory, and one
// thread per block adds the block's sum to the total with atomicAdd. One launch, no second pass over partial
// sums. (The total's rounding depends on the order in which the blocks' atomics land, as with any parallel
// sum of floats.)
// Written for any subgroup size from 4 to 128 (docs/language.md §24): one shared slot per subgroup of the
// smallest size, and the subgroups' sums read in a loop over subgroupSize.
// Launch: block BLOCK (a multiple of 128), any grid; `total` has one element and is added to, so zero it first.
import {
  atomicAdd,
  blockIdx,
  gridDim,
  kernel,
  shared,
  subgroupAdd,
  subgroupInvocationId,
  subgroupSize,
  syncThreads,
  threadIdx,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const sumOnePass = kernel(
  { block: ["BLOCK"] },
  (total: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256) => {
    const sums = shared.f32(BLOCK / 4);
    let s: f32 = 0;
    for (let i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += BLOCK * gridDim.x) {
      s += input[i];
    }
    s = subgroupAdd(s);
    if (subgroupInvocationId === 0) {
      sums[threadIdx.x / subgroupSize] = s;
    }
    syncThreads();
    // Every subgroup adds up the block's BLOCK / subgroupSize subgroup sums, so no thread waits for another.
    let blockSum: f32 = 0;
    for (let w = subgroupInvocationId; w < BLOCK / subgroupSize; w += subgroupSize) {
      blockSum += sums[w];
    }
    blockSum = subgroupAdd(blockSum);
    if (threadIdx.x === 0) {
      atomicAdd(total, 0, blockSum);
    }
  },
);
