// Checks: a `switch` statement is not supported in kernels (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const activation = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, mode: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const x = input[i];
  switch (mode) {
    case 0:
      out[i] = x;
      break;
    default:
      out[i] = Math.max(x, 0);
  }
});
