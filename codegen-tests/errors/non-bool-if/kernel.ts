// Checks: an `if` whose condition is an i32 (JavaScript truthiness) is reported (TSK2003).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const maybeCopy = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, enabled: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (enabled) {
    out[i] = input[i];
  }
});
