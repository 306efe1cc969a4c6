// Checks: a bit cast takes exactly one type, f32 for bitcastU32 and u32 for bitcastF32; an i32 is reported
// (TSK2008) rather than silently converted, since which bits were meant is the user's to say (u32(i)).
import { bitcastF32, blockIdx, kernel, threadIdx, type i32 } from "tskernel";

export const fromBits = kernel({ block: [64] }, (out: Float32Array, bits: Int32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) {
    out[i] = bitcastF32(bits[i]);
  }
});
