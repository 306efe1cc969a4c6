// The first three SGEMM kernels of Simon Boehm's article "How to Optimize a CUDA Matmul Kernel for
// cuBLAS-like Performance": C = alpha·A·B + beta·C with A M×K, B K×N and C M×N, all row-major.
// Demonstrates how the mapping of threads to elements decides memory coalescing (naive vs. coalesced)
// and shared-memory cache blocking with bounds guards for sizes that are not multiples of the tile.
// Grid for all three: (ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE)); blockIdx.x picks the block row, blockIdx.y the
// block column.
// BLOCKSIZE is 32 (1024-thread blocks) as in the article, and also built as 16 (256 threads), which is
// all WebGPU guarantees: adapters that allow fewer than 1024 invocations per workgroup run the 16 build.
import {
  blockDim,
  blockIdx,
  kernel,
  shared,
  syncThreads,
  threadIdx,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

/**
 * One element of C = alpha·A·B + beta·C. With beta = 0 the old C is not used at all, as in BLAS: C may hold
 * anything (NaN included) before a product that overwrites it.
 */
function gemmOutput(alpha: f32, product: f32, beta: f32, old: f32): f32 {
  return beta === 0 ? alpha * product : alpha * product + beta * old;
}


// Kernel 1. threadIdx.x moves along a column of C, so the threads of a warp read different rows of A and
// write different rows of C: uncoalesced, which is the point of the comparison.
export const sgemmNaive = kernel(
  { block: ["BLOCKSIZE", "BLOCKSIZE"], specializations: [{ BLOCKSIZE: 32 }, { BLOCKSIZE: 16 }] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BLOCKSIZE: Const<i32> = 32,
  ) => {
    const x = blockIdx.x * blockDim.x + threadIdx.x;
    const y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
      let tmp: f32 = 0;
      for (let i = 0; i < K; i++) {
        tmp += A[x * K + i] * B[i * N + y];
      }
      C[x * N + y] = gemmOutput(alpha, tmp, beta, C[x * N + y]);
    }
  },
);

// Kernel 2. Same work, but consecutive threadIdx.x now walk along a row of C: a warp reads one element of
// A (a broadcast) and 32 consecutive elements of B, and writes 32 consecutive elements of C.
export const sgemmCoalesce = kernel(
  { block: ["BLOCKSIZE * BLOCKSIZE"], specializations: [{ BLOCKSIZE: 32 }, { BLOCKSIZE: 16 }] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BLOCKSIZE: Const<i32> = 32,
  ) => {
    const cRow = blockIdx.x * BLOCKSIZE + threadIdx.x / BLOCKSIZE;
    const cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
    if (cRow < M && cCol < N) {
      let tmp: f32 = 0;
      for (let i = 0; i < K; i++) {
        tmp += A[cRow * K + i] * B[i * N + cCol];
      }
      C[cRow * N + cCol] = gemmOutput(alpha, tmp, beta, C[cRow * N + cCol]);
    }
  },
);

// Kernel 3. Each block stages a BLOCKSIZE×BLOCKSIZE chunk of A and of B in shared memory (2 × 4 KB), so
// every global element is read once per block instead of once per thread. The article advances the A, B
// and C pointers; without pointer arithmetic the same offsets go into the indices.
export const sgemmSharedMemory = kernel(
  { block: ["BLOCKSIZE * BLOCKSIZE"], specializations: [{ BLOCKSIZE: 32 }, { BLOCKSIZE: 16 }] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BLOCKSIZE: Const<i32> = 32,
  ) => {
    const As = shared.f32(BLOCKSIZE * BLOCKSIZE);
    const Bs = shared.f32(BLOCKSIZE * BLOCKSIZE);
    const threadRow = threadIdx.x / BLOCKSIZE;
    const threadCol = threadIdx.x % BLOCKSIZE;
    const row = blockIdx.x * BLOCKSIZE + threadRow;
    const col = blockIdx.y * BLOCKSIZE + threadCol;
    let tmp: f32 = 0;
    for (let bk = 0; bk < K; bk += BLOCKSIZE) {
      // Out-of-range elements load as zero so the dot product below needs no checks; every thread loads,
      // even one outside C, because its neighbours need what it loads.
      const aCol = bk + threadCol;
      const bRow = bk + threadRow;
      if (row < M && aCol < K) {
        As[threadRow * BLOCKSIZE + threadCol] = A[row * K + aCol];
      } else {
        As[threadRow * BLOCKSIZE + threadCol] = 0;
      }
      if (bRow < K && col < N) {
        Bs[threadRow * BLOCKSIZE + threadCol] = B[bRow * N + col];
      } else {
        Bs[threadRow * BLOCKSIZE + threadCol] = 0;
      }
      syncThreads();
      for (let dot = 0; dot < BLOCKSIZE; dot++) {
        tmp += As[threadRow * BLOCKSIZE + dot] * Bs[dot * BLOCKSIZE + threadCol];
      }
      // The next chunk must not overwrite As/Bs while slower threads still read them.
      syncThreads();
    }
    if (row < M && col < N) {
      C[row * N + col] = gemmOutput(alpha, tmp, beta, C[row * N + col]);
    }
  },
);
