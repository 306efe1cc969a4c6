// Checks: an atomic on a read-only buffer is reported at its argument (TSK1030).
import { atomicAdd, blockIdx, kernel, threadIdx, type i32, type ReadonlyInt32Array } from "tskernel";

export const countInPlace = kernel({ block: [64] }, (hist: ReadonlyInt32Array, keys: ReadonlyInt32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) {
    atomicAdd(hist, keys[i] & 255, 1);
  }
});
