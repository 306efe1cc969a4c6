// Checks: a `do … while` loop is not supported in kernels (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const halve = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  let x: f32 = input[i];
  do {
    x = x * 0.5;
  } while (x > 1);
  out[i] = x;
});
