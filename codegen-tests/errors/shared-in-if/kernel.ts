// Checks: a shared array declared inside an `if` (not at the top level of the kernel body) is reported (TSK1010).
import { kernel, shared, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const scratch = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array, useScratch: i32) => {
  const tid = threadIdx.x;
  if (useScratch !== 0) {
    const tmp = shared.f32(64);
    tmp[tid] = input[tid];
    out[tid] = tmp[tid];
  }
});
