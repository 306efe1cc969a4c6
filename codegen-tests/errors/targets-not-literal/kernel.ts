// Checks: targets read from a variable, which the compiler does not evaluate, is TSK1090: the option is
// written in place, as the others are.
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

const gpuTargets = ["cuda", "js"] as const;

export const copy = kernel({ block: [256], targets: gpuTargets }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
