// Checks: an object literal in a kernel is not supported (TSK1001).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const scaleShift = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const params = { scale: 2, shift: 1 };
  out[i] = input[i] * params.scale + params.shift;
});
