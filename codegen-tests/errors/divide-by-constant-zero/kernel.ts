// Checks: integer division by the constant 0 is reported.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyInt32Array } from "tskernel";

export const ratio = kernel({ block: [256] }, (out: Int32Array, input: ReadonlyInt32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i] / 0;
});
