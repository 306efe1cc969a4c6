// Checks: copyAsync4 copies global→shared only; a global buffer as the destination is TSK1029.
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  copyAsync4(out, threadIdx.x * 4, input, threadIdx.x * 4);
  commitAsync();
  waitAsync(0);
});
