// Checks: a target listed twice in a kernel's targets is TSK1092, pointing at both.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [256], targets: ["cuda", "js", "cuda"] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
