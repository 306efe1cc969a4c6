// Checks: a module-level constant above 2147483647 beside an i32 operand takes the i32 type, as the literal
// it stands for would, and does not fit it (TSK2004, as for `Math.min(k, 3000000000)`).
import { kernel, threadIdx, type i32 } from "tskernel";

const BIG = 3000000000;

export const clampBig = kernel({ block: [64] }, (out: Int32Array, k: i32) => {
  const t = threadIdx.x;
  out[t] = Math.min(k, BIG);
});
