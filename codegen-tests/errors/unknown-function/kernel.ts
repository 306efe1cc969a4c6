// Checks: calling a function kernels do not know (the global isNaN) is reported (TSK1005).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const clearNaN = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const x = input[i];
  out[i] = isNaN(x) ? 0 : x;
});
