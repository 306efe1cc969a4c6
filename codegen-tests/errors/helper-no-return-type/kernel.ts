// Checks: a helper function without a return type annotation is reported (TSK1017).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

function relu(x: f32) {
  return Math.max(x, 0);
}

export const applyRelu = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = relu(input[i]);
});
