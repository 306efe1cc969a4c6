// Naive matrix multiply, one thread per element of C, as in the classic CUDA introduction article
// ("C[row*ldc+col] = sum_k A[row*lda+k] * B[k*ldb+col]"). Demonstrates 2-D thread indexing, pitched
// (leading-dimension) addressing and a bounds check so that any n works with a rounded-up grid.
// Launch: block 16×16, grid (ceil(n/16), ceil(n/16)).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulNaive = kernel(
  { block: [16, 16] },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, n: i32, lda: i32, ldb: i32, ldc: i32) => {
    // x runs along a row so that neighbouring threads read neighbouring elements of B and write of C.
    const row = blockIdx.y * blockDim.y + threadIdx.y;
    const col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    let sum: f32 = 0;
    for (let k = 0; k < n; k++) {
      sum += A[row * lda + k] * B[k * ldb + col];
    }
    C[row * ldc + col] = sum;
  },
);
