// Checks: subgroupShuffleXor's mask must be the same in every thread (TSK3017), as WGSL requires.
import { kernel, subgroupShuffleXor, threadIdx, type ReadonlyInt32Array } from "tskernel";

export const swap = kernel({ block: [32] }, (out: Int32Array, input: ReadonlyInt32Array) => {
  const t = threadIdx.x;
  out[t] = subgroupShuffleXor(input[t], t & 3);
});
