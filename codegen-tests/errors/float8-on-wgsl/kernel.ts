// Checks: an e4m3 buffer on WebGPU, which has no 8-bit floats (tskernel does not emulate them there yet), is
// TSK3120 at the parameter, with the note on the `targets` option.
import { blockIdx, kernel, threadIdx, type Float8E4M3Array, type i32 } from "tskernel";

export const quantize = kernel({ block: [64] }, (out: Float8E4M3Array, x: Float32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  out[i] = x[i] * 0.5;
});
