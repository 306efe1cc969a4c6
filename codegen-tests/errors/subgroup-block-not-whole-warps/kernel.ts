// Checks: a fixed block with subgroup operations must be whole warps on CUDA (TSK3018).
import { kernel, subgroupAdd, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const sum48 = kernel({ block: [48] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[threadIdx.x] = subgroupAdd(input[threadIdx.x]);
});
