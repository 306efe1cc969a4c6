// Checks: indexing a buffer with an f32 value is reported (TSK2006).
import { blockDim, blockIdx, f32, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const gather = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, stride: f32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const j = f32(i) * stride;
  out[i] = input[j];
});
