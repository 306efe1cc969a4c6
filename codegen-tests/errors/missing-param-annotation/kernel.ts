// Checks: a kernel parameter without a type annotation is reported (TSK1009; also TypeScript's implicit any).
import { blockDim, blockIdx, kernel, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
