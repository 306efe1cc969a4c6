// Construct: a kernel with no fixed block shape: blockDim comes from the launch (WGSL: override constants).
import { blockDim, blockIdx, gridDim, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const gridStrideScale = kernel((out: Float32Array, input: ReadonlyFloat32Array, n: i32, factor: f32) => {
  const stride = blockDim.x * gridDim.x;
  for (let i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = input[i] * factor + f32Of(blockDim.y * blockDim.z);
  }
});

function f32Of(v: i32): f32 {
  return v === 1 ? 0 : 1;
}
