// Checks: `.length` of a buffer parameter is not available in kernels (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const copyAll = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= input.length) return;
  out[i] = input[i];
});
