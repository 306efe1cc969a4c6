// Checks: `try`/`catch` is not supported in kernels (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const safeSqrt = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  try {
    out[i] = Math.sqrt(input[i]);
  } catch {
    out[i] = 0;
  }
});
