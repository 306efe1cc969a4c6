// Checks: an atomic on a private (per-thread) array is reported (TSK1030): no other thread sees it.
import { atomicAdd, kernel, local, threadIdx, type i32 } from "tskernel";

export const privateCount = kernel({ block: [32] }, (out: Int32Array, n: i32) => {
  const mine = local.i32(4);
  mine[0] = 0;
  for (let k = 0; k < n; k++) {
    atomicAdd(mine, 0, k);
  }
  out[threadIdx.x] = mine[0];
});
