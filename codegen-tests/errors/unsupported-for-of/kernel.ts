// Checks: a `for … of` loop over a buffer is not supported in kernels (TSK1001).
import { kernel, threadIdx, type f32, type ReadonlyFloat32Array } from "tskernel";

export const total = kernel({ block: [1] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  let sum: f32 = 0;
  for (const v of input) {
    sum += v;
  }
  out[threadIdx.x] = sum;
});
