// Matrix multiply with one block per row of C, from the classic CUDA introduction article: the row of A
// is read by every thread of the block, so the block first copies it into shared memory once, then each
// thread computes a strided set of columns. Demonstrates 1-D shared memory sized by a compile-time
// constant, cooperative stride loops and a barrier that all threads reach.
// Launch: block 256, grid n (one block per row); requires n <= MAX_N (2048 floats = 8 KB of shared memory).
import { blockDim, blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulRowShared = kernel(
  { block: [256] },
  (
    C: Float32Array,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    n: i32,
    lda: i32,
    ldb: i32,
    ldc: i32,
    MAX_N: Const<i32> = 2048,
  ) => {
    const aRow = shared.f32(MAX_N);
    const row = blockIdx.x;
    // A row longer than the shared buffer would overflow it; such a launch computes nothing rather than
    // corrupt memory. The check is uniform across the block, but the barrier stays outside it anyway.
    const active = row < n && n <= MAX_N;
    if (active) {
      for (let k = threadIdx.x; k < n; k += blockDim.x) {
        aRow[k] = A[row * lda + k];
      }
    }
    syncThreads();
    if (active) {
      for (let j = threadIdx.x; j < n; j += blockDim.x) {
        let sum: f32 = 0;
        for (let k = 0; k < n; k++) {
          sum += aRow[k] * B[k * ldb + j];
        }
        C[row * ldc + j] = sum;
      }
    }
  },
);
