// Checks: a target name that is not one of the CLI's (here the backend's name, "webgpu", for the target "wgsl")
// is TSK1091, with a note naming the target that backend runs (also a TypeScript error).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy = kernel({ block: [256], targets: ["cuda", "webgpu"] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i];
});
