// Checks: the literal 1.5 where an i32 is declared (`let step: i32 = 1.5`) is reported (TSK2004).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const strided = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  let step: i32 = 1.5;
  if (i * step >= n) return;
  out[i] = input[i * step];
});
