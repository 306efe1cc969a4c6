// Checks: the f32 literal 1e39 is beyond the f32 range and is reported (TSK2004), not printed as Infinity.
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const clampHuge = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const limit: f32 = 1e39;
  out[i] = Math.min(input[i], limit);
});
