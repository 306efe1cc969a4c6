// Checks: a barrier inside a loop that some threads leave through a threadIdx-dependent `break` (TSK3001).
import { kernel, shared, syncThreads, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const prefixUntil = kernel({ block: [128] }, (out: Float32Array, input: ReadonlyFloat32Array, steps: i32) => {
  const buf = shared.f32(128);
  const tid = threadIdx.x;
  let acc: f32 = 0;
  for (let s = 0; s < steps; s++) {
    buf[tid] = input[s * 128 + tid];
    syncThreads();
    acc += buf[127 - tid];
    if (tid > s) break;
    syncThreads();
  }
  out[tid] = acc;
});
