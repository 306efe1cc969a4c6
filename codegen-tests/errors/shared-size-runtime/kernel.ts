// Checks: a shared array sized by the run-time parameter `n` is not a compile-time constant (TSK3003).
import { kernel, shared, syncThreads, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const stage = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const buf = shared.f32(n);
  const tid = threadIdx.x;
  buf[tid] = input[tid];
  syncThreads();
  out[tid] = buf[255 - tid];
});
