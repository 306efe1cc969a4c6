// Checks: assigning an f32 value to an i32 variable is reported (TSK2002).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const bucket = kernel({ block: [256] }, (out: Int32Array, input: ReadonlyFloat32Array, n: i32, scale: f32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  let b: i32 = 0;
  b = input[i] * scale;
  out[i] = b;
});
