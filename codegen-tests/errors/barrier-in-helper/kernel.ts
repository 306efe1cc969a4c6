// Checks: syncThreads() inside a helper function is reported (TSK1018).
import { kernel, shared, threadIdx, syncThreads, type f32, type ReadonlyFloat32Array } from "tskernel";

function settle(x: f32): f32 {
  syncThreads();
  return x;
}

export const staged = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const buf = shared.f32(64);
  const tid = threadIdx.x;
  buf[tid] = input[tid];
  out[tid] = settle(buf[63 - tid]);
});
