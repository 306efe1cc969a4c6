// Checks: load8 moves eight 16-bit elements; on an f32 buffer it is TSK2011 (f32 arrays take load4).
import { blockIdx, kernel, load8, threadIdx, type i32 } from "tskernel";

export const widen = kernel({ block: [64] }, (out: Float32Array, x: Float32Array, n: i32) => {
  const i = (blockIdx.x * 64 + threadIdx.x) * 8;
  if (i >= n) return;
  const [a, b, c, d, e, f, g, h] = load8(x, i);
  out[i] = a + b + c + d + e + f + g + h;
});
