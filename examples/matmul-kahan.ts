// The naive matrix multiply of matmul-naive.ts with Kahan-compensated summation, from the same classic
// CUDA introduction article: a running correction term recovers the low-order bits that a plain f32
// accumulator drops, so long dot products stay accurate. Demonstrates that float operations are kept in
// source order (the compensation would cancel to zero if a backend reassociated them).
// Launch: block 16×16, grid (ceil(n/16), ceil(n/16)).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulKahan = kernel(
  { block: [16, 16] },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, n: i32, lda: i32, ldb: i32, ldc: i32) => {
    const row = blockIdx.y * blockDim.y + threadIdx.y;
    const col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    let sum: f32 = 0;
    // The error of the previous addition, subtracted from the next term before it is added.
    let compensation: f32 = 0;
    for (let k = 0; k < n; k++) {
      const term = A[row * lda + k] * B[k * ldb + col] - compensation;
      const next = sum + term;
      // (next - sum) is what was actually added; minus term leaves the rounding error.
      compensation = next - sum - term;
      sum = next;
    }
    C[row * ldc + col] = sum;
  },
);
