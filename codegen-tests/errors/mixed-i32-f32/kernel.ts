// Checks: adding an i32 variable and an f32 variable is a type mismatch (TSK2001), no implicit conversion.
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const addIndex = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, offset: f32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const shifted = i + offset;
  out[i] = input[i] * shifted;
});
