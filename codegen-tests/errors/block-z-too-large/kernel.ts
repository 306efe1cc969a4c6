// A block whose z dimension exceeds the 64 that CUDA and WebGPU allow, though its thread count is fine.
import { kernel, threadIdx, type i32 } from "tskernel";

export const deep = kernel({ block: [1, 1, 128] }, (out: Float32Array, n: i32) => {
  if (threadIdx.z < n) {
    out[threadIdx.z] = 1;
  }
});
