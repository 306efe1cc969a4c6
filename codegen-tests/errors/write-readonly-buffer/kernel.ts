// Checks: writing to a ReadonlyFloat32Array parameter is reported (TSK1014; also a TypeScript error).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const clampInPlace = kernel({ block: [256] }, (data: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  data[i] = Math.min(data[i], 1);
});
