// Checks: an atomic in the right operand of '&&' is reported (TSK1032): it would run before the left one.
import { atomicAdd, blockIdx, kernel, threadIdx, type i32 } from "tskernel";

export const claim = kernel({ block: [64] }, (slots: Int32Array, out: Int32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n && atomicAdd(slots, 0, 1) < 10) {
    out[i] = 1;
  }
});
