// Checks: a negative constant index into a buffer is out of bounds whatever its length (TSK3075); Dawn
// rejected the WGSL of `atomicLoad(flags, -1)` (robustness fuzzer, seed 20261203, input 1260).
import { atomicLoad, kernel, threadIdx } from "tskernel";

export const spin = kernel({ block: [64] }, (flags: Int32Array, out: Int32Array) => {
  const tid = threadIdx.x;
  while (atomicLoad(flags, -1) === 7) {
    out[tid] = 1;
  }
});
