// Checks: a subgroup operation in a helper function is reported (TSK1031): helpers are called per thread.
import { kernel, subgroupAdd, threadIdx, type f32 } from "tskernel";

function total(x: f32): f32 {
  return subgroupAdd(x) * 2;
}

export const doubled = kernel({ block: [32] }, (out: Float32Array) => {
  out[threadIdx.x] = total(out[threadIdx.x]);
});
