// Checks: a class declaration inside a kernel body is not supported (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const withClass = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  class Pair {
    a = 0;
    b = 0;
  }
  out[i] = input[i];
});
