// Checks: the constant index 64 into shared.f32(64) is out of bounds (TSK3008).
import { kernel, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const lastElement = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const buf = shared.f32(64);
  const tid = threadIdx.x;
  buf[tid] = input[tid];
  syncThreads();
  out[tid] = buf[64];
});
