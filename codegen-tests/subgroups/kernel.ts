// Construct: every subgroup operation and builtin over f32, i32 and u32 (bool for the predicates), results
// used as values and in later conditions, a shuffle loop over subgroupSize, and a collective nested in
// uniform control flow. tests/subgroups.test.ts runs it on every backend and subgroup size.
import {
  blockDim,
  blockIdx,
  kernel,
  subgroupAdd,
  subgroupAll,
  subgroupAny,
  subgroupBallot,
  subgroupBroadcast,
  subgroupExclusiveAdd,
  subgroupInclusiveAdd,
  subgroupInvocationId,
  subgroupMax,
  subgroupMin,
  subgroupShuffle,
  subgroupShuffleDown,
  subgroupShuffleUp,
  subgroupShuffleXor,
  subgroupSize,
  threadIdx,
  u32,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
  type ReadonlyInt32Array,
} from "tskernel";

export const subgroupOps = kernel(
  { block: [64] },
  (floats: Float32Array, ints: Int32Array, uints: Uint32Array, x: ReadonlyFloat32Array, k: ReadonlyInt32Array, rounds: i32) => {
    const i = blockIdx.x * 64 + threadIdx.x;
    const v = x[i];
    const n = k[i];
    const lane = subgroupInvocationId;
    floats[i * 8] = subgroupAdd(v);
    floats[i * 8 + 1] = subgroupMin(v);
    floats[i * 8 + 2] = subgroupMax(v);
    floats[i * 8 + 3] = subgroupInclusiveAdd(v);
    floats[i * 8 + 4] = subgroupExclusiveAdd(v);
    floats[i * 8 + 5] = subgroupBroadcast(v, 1);
    floats[i * 8 + 6] = subgroupShuffle(v, (lane + 1) % subgroupSize);
    // A butterfly over subgroupSize: the distance is uniform, as the shuffle needs.
    let total: f32 = v;
    for (let d = subgroupSize / 2; d > 0; d /= 2) {
      total += subgroupShuffleXor(total, d);
    }
    floats[i * 8 + 7] = total;

    ints[i * 10] = subgroupAdd(n);
    ints[i * 10 + 1] = subgroupMin(n);
    ints[i * 10 + 2] = subgroupMax(n) - subgroupMin(n * 2);
    ints[i * 10 + 3] = subgroupInclusiveAdd(n);
    ints[i * 10 + 4] = subgroupExclusiveAdd(n);
    const up = subgroupShuffleUp(n, 1);
    const down = subgroupShuffleDown(n, 2);
    ints[i * 10 + 5] = lane >= 1 ? up : -1;
    ints[i * 10 + 6] = lane + 2 < subgroupSize ? down : -1;
    ints[i * 10 + 7] = subgroupShuffleXor(n, 1);
    ints[i * 10 + 8] = lane;
    ints[i * 10 + 9] = subgroupSize;

    const positive = n > 0;
    uints[i * 6] = subgroupBallot(positive);
    uints[i * 6 + 1] = subgroupAll(n > -100) ? 1 : 0;
    uints[i * 6 + 2] = subgroupAny(n > 90) ? 1 : 0;
    uints[i * 6 + 3] = subgroupAdd(u32(n & 255));
    uints[i * 6 + 4] = subgroupMax(u32(n + 100)) + subgroupBroadcast(u32(lane), 0);
    // A collective in a loop with uniform bounds, its result carried across iterations.
    let acc: i32 = 0;
    for (let r = 0; r < rounds; r++) {
      acc += subgroupExclusiveAdd(r + lane);
    }
    uints[i * 6 + 5] = u32(acc);
  },
);

// A block chosen at launch: the .cuh launcher refuses blocks that are not whole warps.
export const neighbourSum = kernel((out: Float32Array, x: ReadonlyFloat32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  const next = subgroupShuffleDown(x[i], 1);
  out[i] = subgroupInvocationId + 1 < subgroupSize ? x[i] + next : x[i];
});
