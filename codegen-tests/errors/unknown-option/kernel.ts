// Checks: an unknown key in kernel options (`blockSize` instead of `block`) is reported (TSK1004; also a TypeScript error).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ blockSize: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
