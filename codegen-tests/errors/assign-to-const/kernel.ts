// Checks: assigning to a `const` local is reported (TSK1014; also a TypeScript error).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const square = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const x = input[i];
  x = x * x;
  out[i] = x;
});
