// Checks: waitAsync takes a count of groups that may stay in flight known at compile time (TSK2008), not a run-time value.
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array, pending: i32) => {
  const tile = shared.f32(128);
  copyAsync4(tile, threadIdx.x * 4, input, threadIdx.x * 4);
  commitAsync();
  waitAsync(pending);
  syncThreads();
  out[threadIdx.x] = tile[threadIdx.x];
});
