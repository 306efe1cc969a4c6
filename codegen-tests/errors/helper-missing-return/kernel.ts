// Checks: a helper that does not return on every path is reported (TSK1019; also a TypeScript error).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

function clamp01(x: f32): f32 {
  if (x < 0) {
    return 0;
  } else if (x > 1) {
    return 1;
  }
}

export const saturate = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = clamp01(input[i]);
});
