// The sum of n floats in one pass over the data: each thread adds its share 16 bytes at a time (load4, ITEMS
// vectors per step, four running sums as in sum-vec4.ts) in a grid-stride loop, each subgroup adds its
// threads' sums with subgroupAdd, the block adds its subgroups' sums through shared memory (one slot per
// subgroup: BLOCK / 4 slots, enough for the smallest subgroup size), and one thread per block adds the block's
// sum to the total with atomicAdd. Against sum-vec4.ts: no second launch over partial sums and one barrier
// instead of a shared-memory tree; the total's rounding depends on the order in which the blocks' atomics
// land, as with any parallel sum of floats.
// n must be a multiple of 4. Launch: clearTotal (grid 1), then sumVec4Subgroups (block BLOCK, a multiple of
// 128; any grid, about one wave of the GPU: 1024 blocks on an H100); `total` has one element.
import {
  atomicAdd,
  blockIdx,
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
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const clearTotal = kernel({ block: [1] }, (total: Float32Array) => {
  total[0] = 0;
});

export const sumVec4Subgroups = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (total: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const sums = shared.f32(BLOCK / 4);
    const xs = local.f32(4 * ITEMS);
    const tid = threadIdx.x;
    const quads = n / 4;
    let s0: f32 = 0;
    let s1: f32 = 0;
    let s2: f32 = 0;
    let s3: f32 = 0;
    for (let first = blockIdx.x * BLOCK * ITEMS + tid; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        // ITEMS independent loads in flight before the first addition.
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3] = load4(input, (first + k * BLOCK) * 4);
          store4(xs, 4 * k, x0, x1, x2, x3);
        }
        unrollAdd: for (let k = 0; k < ITEMS; k++) {
          s0 += xs[4 * k];
          s1 += xs[4 * k + 1];
          s2 += xs[4 * k + 2];
          s3 += xs[4 * k + 3];
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [x0, x1, x2, x3] = load4(input, q * 4);
            s0 += x0;
            s1 += x1;
            s2 += x2;
            s3 += x3;
          }
        }
      }
    }
    const s = subgroupAdd(s0 + s1 + (s2 + s3));
    if (subgroupInvocationId === 0) {
      sums[tid / subgroupSize] = s;
    }
    syncThreads();
    // Every subgroup adds up the block's BLOCK / subgroupSize subgroup sums (a subgroup operation must be
    // reached by the whole block: docs/language.md §24), and thread 0 adds the block's sum to the total.
    let blockSum: f32 = 0;
    for (let w = subgroupInvocationId; w < BLOCK / subgroupSize; w += subgroupSize) {
      blockSum += sums[w];
    }
    blockSum = subgroupAdd(blockSum);
    if (tid === 0) {
      atomicAdd(total, 0, blockSum);
    }
  },
);
