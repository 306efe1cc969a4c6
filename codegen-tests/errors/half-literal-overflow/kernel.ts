// Checks: a literal that rounds past f16's largest value (65504) is not an f16 (TSK2004).
import { blockIdx, kernel, threadIdx, type f16, type i32, type Float16Array } from "tskernel";

export const clampHalf = kernel({ block: [64] }, (out: Float16Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  const limit: f16 = 70000;
  out[i] = Math.min(out[i], limit);
});
