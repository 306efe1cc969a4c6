// Construct: integer division and remainder on i32 (negative operands truncate toward zero) and u32.
import { kernel, threadIdx, u32, type i32, type u32 as U32 } from "tskernel";

export const divide = kernel({ block: [64] }, (outI: Int32Array, outU: Uint32Array, a: i32, b: i32, c: U32) => {
  const t = threadIdx.x;
  const q = a / b;
  const r = a % b;
  const negQ = (t - 100) / 7;
  const negR = (t - 100) % 7;
  const half = t / 2;
  outI[t] = q + r + negQ + negR + half;
  const ut = u32(t);
  outU[t] = (ut + c) / 3 + (ut + c) % 3 + c / ut;
});
