// Checks: a subgroup operation after a return that only some threads take is reported (TSK3015).
import { blockIdx, kernel, subgroupMax, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const rowMax = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 32 + threadIdx.x;
  if (i >= n) return;
  out[i] = subgroupMax(input[i]);
});
