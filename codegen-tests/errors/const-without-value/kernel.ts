// Checks: a Const<i32> parameter with no default and no specialization has no value (TSK1016).
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const reverseBlock = kernel({ block: ["BLOCK"] }, (out: Float32Array, input: ReadonlyFloat32Array, BLOCK: Const<i32>) => {
  const buf = shared.f32(BLOCK);
  const tid = threadIdx.x;
  buf[tid] = input[blockIdx.x * BLOCK + tid];
  syncThreads();
  out[blockIdx.x * BLOCK + tid] = buf[BLOCK - 1 - tid];
});
