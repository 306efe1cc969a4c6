// Checks: a barrier after `if (row >= n) return;` with row depending on threadIdx is reported (TSK3001).
import { blockDim, blockIdx, kernel, shared, syncThreads, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const rowCopy = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const tile = shared.f32(64);
  const row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n) return;
  tile[threadIdx.x] = input[row];
  syncThreads();
  out[row] = tile[63 - threadIdx.x];
});
