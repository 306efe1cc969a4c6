// Checks: load4 used as a value instead of being destructured into four names (TSK1028).
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const sum4 = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const v = load4(input, threadIdx.x * 4);
  out[threadIdx.x] = 0;
});
