// Checks: waitAsync takes an expression of Const parameters, folded in each specialization; one that comes out
// past 7 there is TSK2008 at the expression.
import { commitAsync, copyAsync4, kernel, shared, syncThreads, threadIdx, waitAsync, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [32], specializations: [{ DEPTH: 9 }] }, (out: Float32Array, input: ReadonlyFloat32Array, DEPTH: Const<i32> = 2) => {
  const tile = shared.f32(128);
  copyAsync4(tile, threadIdx.x * 4, input, threadIdx.x * 4);
  commitAsync();
  waitAsync(DEPTH - 1);
  syncThreads();
  out[threadIdx.x] = tile[threadIdx.x];
});
