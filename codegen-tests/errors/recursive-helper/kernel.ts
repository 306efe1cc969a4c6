// Checks: a helper that calls itself is reported as recursion (TSK1007).
import { blockDim, blockIdx, kernel, threadIdx, type i32 } from "tskernel";

function factorial(k: i32): i32 {
  if (k <= 1) return 1;
  return k * factorial(k - 1);
}

export const factorials = kernel({ block: [256] }, (out: Int32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = factorial(i % 12);
});
