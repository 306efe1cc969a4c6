// Checks: subgroupBroadcast's lane must be a compile-time constant (TSK3016); subgroupShuffle takes any lane.
import { blockIdx, kernel, subgroupBroadcast, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const pick = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, lane: i32) => {
  const i = blockIdx.x * 32 + threadIdx.x;
  out[i] = subgroupBroadcast(input[i], lane);
});
