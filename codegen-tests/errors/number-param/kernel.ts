// Checks: a parameter typed `number` is ambiguous and is reported (TSK1008).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const scale = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32, factor: number) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i] * factor;
});
