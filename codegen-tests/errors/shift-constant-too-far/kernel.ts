// Checks: a shift of a variable by the constant 32 (meant as "shift everything out") is outside 0..31 and is reported.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyUint32Array } from "tskernel";

export const highWord = kernel({ block: [256] }, (out: Uint32Array, input: ReadonlyUint32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const x = input[i];
  out[i] = x >> 32;
});
