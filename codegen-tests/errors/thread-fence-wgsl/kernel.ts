// threadFence() has no WGSL equivalent: building for WebGPU (as every error case is built) is TSK3050.
import { atomicStore, kernel, threadFence, threadIdx, type f32 } from "tskernel";

export const publish = kernel({ block: [64] }, (values: Float32Array, flags: Int32Array, v: f32) => {
  if (threadIdx.x === 0) {
    values[0] = v;
    threadFence();
    atomicStore(flags, 0, 1);
  }
});
