// Checks: a negative module-level constant beside a u32 operand takes the u32 type, as the literal it stands
// for would, and does not fit it (TSK2004, as for `m + -5`).
import { kernel, threadIdx, type u32 } from "tskernel";

const NEG = -5;

export const shiftDown = kernel({ block: [64] }, (out: Uint32Array, m: u32) => {
  out[threadIdx.x] = m + NEG;
});
