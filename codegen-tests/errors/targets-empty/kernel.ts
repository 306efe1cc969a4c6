// Checks: an empty targets list, which would build the kernel for nothing, is TSK1093.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [256], targets: [] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
