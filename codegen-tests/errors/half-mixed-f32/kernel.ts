// Checks: a bf16 beside an f32 is a type mismatch (TSK2001) whose note names both conversions.
import { blockIdx, kernel, threadIdx, type i32, type BFloat16Array, type ReadonlyFloat32Array } from "tskernel";

export const scaleRows = kernel({ block: [64] }, (out: BFloat16Array, scales: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  out[i] = out[i] * scales[i];
});
