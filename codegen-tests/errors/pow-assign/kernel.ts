// Checks: the compound assignment `x **= 2` as a statement (tskernel has `**` but not `**=`).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const squareAll = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  let x: f32 = input[i];
  x **= 2;
  out[i] = x;
});
