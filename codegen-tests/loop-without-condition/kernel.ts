// Construct: `for` loops without a condition, left by `return` or by `break`. WGSL rejects such a loop
// that has no `break` ("for-loop does not exit") and warns about the code after one left only by
// `return` (found by the fuzzer), so the WGSL output spells the missing condition `true`.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const firstAbove = kernel({ block: [64] }, (out: Int32Array, data: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  let j = i;
  for (;;) {
    if (j >= n) {
      out[i] = -1;
      return;
    }
    if (data[j] > data[i]) break;
    j++;
  }
  for (let k = 0; ; k++) {
    if (k >= j - i) break;
    out[i] += 1;
  }
  out[i] = j;
});
