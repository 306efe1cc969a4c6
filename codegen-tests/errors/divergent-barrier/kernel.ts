// Checks: syncThreads() under `if (threadIdx.x < 16)` is a barrier in non-uniform control flow (TSK3001).
import { blockIdx, kernel, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const halfBlockSum = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const buf = shared.f32(32);
  const tid = threadIdx.x;
  buf[tid] = input[blockIdx.x * 32 + tid];
  if (threadIdx.x < 16) {
    buf[tid] += buf[tid + 16];
    syncThreads();
  }
  if (tid === 0) {
    out[blockIdx.x] = buf[0];
  }
});
