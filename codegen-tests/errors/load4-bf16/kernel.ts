// Checks: load4 moves four 32-bit elements; on a bf16 buffer it is TSK2011.
import { blockIdx, kernel, load4, threadIdx, type i32, type ReadonlyBFloat16Array } from "tskernel";

export const widen = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyBFloat16Array, n: i32) => {
  const i = (blockIdx.x * 64 + threadIdx.x) * 4;
  if (i >= n) return;
  const [a, b, c, d] = load4(x, i);
  out[i] = a + b + c + d;
});
