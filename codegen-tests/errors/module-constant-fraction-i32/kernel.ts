// Checks: a non-integer module-level constant beside an i32 operand takes the i32 type, as the literal it
// stands for would, and does not fit it (TSK2004, as for `k < 0.5`).
import { kernel, threadIdx, type i32 } from "tskernel";

const HALF = 0.5;

export const compareHalf = kernel({ block: [64] }, (out: Int32Array, k: i32) => {
  const t = threadIdx.x;
  if (k < HALF) out[t] = k;
});
