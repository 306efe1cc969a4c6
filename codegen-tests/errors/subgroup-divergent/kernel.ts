// Checks: a subgroup operation under a thread-dependent condition is reported (TSK3015), with the condition.
import { blockIdx, kernel, subgroupAdd, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const partialSums = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) {
    const total = subgroupAdd(input[i]);
    out[i] = total;
  }
});
