// Checks: block [64, 64] is 4096 threads, more than the 1024 every target allows (TSK3004).
import { blockDim, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copy2d = kernel({ block: [64, 64] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const col = blockIdx.x * blockDim.x + threadIdx.x;
  const row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= n || col >= n) return;
  out[row * n + col] = input[row * n + col];
});
