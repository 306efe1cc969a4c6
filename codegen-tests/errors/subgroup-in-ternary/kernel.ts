// Checks: a subgroup operation in a branch of '?:' is reported (TSK1032): it cannot run only for some lanes.
import { kernel, subgroupMax, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const maybeMax = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, mode: i32) => {
  const v = input[threadIdx.x];
  out[threadIdx.x] = mode > 0 ? subgroupMax(v) : v;
});
