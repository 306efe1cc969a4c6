// Kernels 4 and 5 of Simon Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance":
// each thread computes several results of C = alpha·A·B + beta·C in registers, so every value loaded from
// shared memory is used TM (1-D) or TM + TN (2-D) times instead of once. Demonstrates private (register)
// arrays (`local.f32`), compile-time tile sizes and unrolled constant loops, whose indices into the private
// arrays become constants so the arrays stay in registers.
// Sizes must be multiples of the block tile (BM, BN) and of BK: callers pad, as the article does.
// Launch: grid (N / BN, M / BM); blockIdx.x picks the block column, blockIdx.y the block row.
import { blockIdx, kernel, local, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

/**
 * One element of C = alpha·A·B + beta·C. With beta = 0 the old C is not used at all, as in BLAS: C may hold
 * anything (NaN included) before a product that overwrites it.
 */
function gemmOutput(alpha: f32, product: f32, beta: f32, old: f32): f32 {
  return beta === 0 ? alpha * product : alpha * product + beta * old;
}


// 1-D blocktiling: a BM×BN tile of C per block, TM results (a column strip) per thread: BM·BN/TM threads.
export const sgemm1DBlocktiling = kernel(
  { block: ["BM * BN / TM"] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BM: Const<i32> = 64,
    BN: Const<i32> = 64,
    BK: Const<i32> = 8,
    TM: Const<i32> = 8,
  ) => {
    const As = shared.f32(BM * BK);
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32(TM);
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const threadCol = threadIdx.x % BN;
    const threadRow = threadIdx.x / BN;
    // With BM·BK = BK·BN = the thread count, each thread loads one element of each tile.
    const innerColA = threadIdx.x % BK;
    const innerRowA = threadIdx.x / BK;
    const innerColB = threadIdx.x % BN;
    const innerRowB = threadIdx.x / BN;
    unrollInit: for (let i = 0; i < TM; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      As[innerRowA * BK + innerColA] = A[(cRow * BM + innerRowA) * K + bk + innerColA];
      Bs[innerRowB * BN + innerColB] = B[(bk + innerRowB) * N + cCol * BN + innerColB];
      syncThreads();
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        // One value of B serves TM results.
        const b = Bs[dot * BN + threadCol];
        unrollRes: for (let r = 0; r < TM; r++) {
          threadResults[r] += As[(threadRow * TM + r) * BK + dot] * b;
        }
      }
      syncThreads();
    }
    unrollStore: for (let r = 0; r < TM; r++) {
      const index = (cRow * BM + threadRow * TM + r) * N + cCol * BN + threadCol;
      C[index] = gemmOutput(alpha, threadResults[r], beta, C[index]);
    }
  },
);

// 2-D blocktiling: a TM×TN tile of results per thread, fed from TM + TN values held in registers per step.
// BM = BN = 128, BK = 8, TM = TN = 8: (128·128)/(8·8) = 256 threads.
export const sgemm2DBlocktiling = kernel(
  { block: ["BM * BN / (TM * TN)"] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BM: Const<i32> = 128,
    BN: Const<i32> = 128,
    BK: Const<i32> = 8,
    TM: Const<i32> = 8,
    TN: Const<i32> = 8,
  ) => {
    const As = shared.f32(BM * BK);
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32(TM * TN);
    const regM = local.f32(TM);
    const regN = local.f32(TN);
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const threads = (BM * BN) / (TM * TN);
    const threadCol = threadIdx.x % (BN / TN);
    const threadRow = threadIdx.x / (BN / TN);
    // The tiles hold more elements than there are threads: each thread loads a strided column of them.
    const innerRowA = threadIdx.x / BK;
    const innerColA = threadIdx.x % BK;
    const strideA = threads / BK;
    const innerRowB = threadIdx.x / BN;
    const innerColB = threadIdx.x % BN;
    const strideB = threads / BN;
    unrollInit: for (let i = 0; i < TM * TN; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      unrollLoadA: for (let offset = 0; offset < BM; offset += strideA) {
        As[(innerRowA + offset) * BK + innerColA] = A[(cRow * BM + innerRowA + offset) * K + bk + innerColA];
      }
      unrollLoadB: for (let offset = 0; offset < BK; offset += strideB) {
        Bs[(innerRowB + offset) * BN + innerColB] = B[(bk + innerRowB + offset) * N + cCol * BN + innerColB];
      }
      syncThreads();
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollM: for (let i = 0; i < TM; i++) {
          regM[i] = As[(threadRow * TM + i) * BK + dot];
        }
        unrollN: for (let i = 0; i < TN; i++) {
          regN[i] = Bs[dot * BN + threadCol * TN + i];
        }
        unrollOuterM: for (let m = 0; m < TM; m++) {
          unrollOuterN: for (let n = 0; n < TN; n++) {
            threadResults[m * TN + n] += regM[m] * regN[n];
          }
        }
      }
      syncThreads();
    }
    unrollStoreM: for (let m = 0; m < TM; m++) {
      unrollStoreN: for (let n = 0; n < TN; n++) {
        const index = (cRow * BM + threadRow * TM + m) * N + cCol * BN + threadCol * TN + n;
        C[index] = gemmOutput(alpha, threadResults[m * TN + n], beta, C[index]);
      }
    }
  },
);

// The 2-D kernel with A's tile stored transposed in shared memory (the first half of the article's kernel 6):
// a thread's TM values of A for one step are then consecutive, like its TN values of B, so the compiler can
// load each group with wide shared-memory loads instead of TM separate ones.
export const sgemm2DBlocktilingTransposedA = kernel(
  { block: ["BM * BN / (TM * TN)"] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BM: Const<i32> = 128,
    BN: Const<i32> = 128,
    BK: Const<i32> = 8,
    TM: Const<i32> = 8,
    TN: Const<i32> = 8,
  ) => {
    const AsT = shared.f32(BK * BM);
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32(TM * TN);
    const regM = local.f32(TM);
    const regN = local.f32(TN);
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const threads = (BM * BN) / (TM * TN);
    const threadCol = threadIdx.x % (BN / TN);
    const threadRow = threadIdx.x / (BN / TN);
    const innerRowA = threadIdx.x / BK;
    const innerColA = threadIdx.x % BK;
    const strideA = threads / BK;
    const innerRowB = threadIdx.x / BN;
    const innerColB = threadIdx.x % BN;
    const strideB = threads / BN;
    unrollInit: for (let i = 0; i < TM * TN; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      unrollLoadA: for (let offset = 0; offset < BM; offset += strideA) {
        // Row r, column c of the A tile goes to AsT[c][r].
        AsT[innerColA * BM + innerRowA + offset] = A[(cRow * BM + innerRowA + offset) * K + bk + innerColA];
      }
      unrollLoadB: for (let offset = 0; offset < BK; offset += strideB) {
        Bs[(innerRowB + offset) * BN + innerColB] = B[(bk + innerRowB + offset) * N + cCol * BN + innerColB];
      }
      syncThreads();
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollM: for (let i = 0; i < TM; i++) {
          regM[i] = AsT[dot * BM + threadRow * TM + i];
        }
        unrollN: for (let i = 0; i < TN; i++) {
          regN[i] = Bs[dot * BN + threadCol * TN + i];
        }
        unrollOuterM: for (let m = 0; m < TM; m++) {
          unrollOuterN: for (let n = 0; n < TN; n++) {
            threadResults[m * TN + n] += regM[m] * regN[n];
          }
        }
      }
      syncThreads();
    }
    unrollStoreM: for (let m = 0; m < TM; m++) {
      unrollStoreN: for (let n = 0; n < TN; n++) {
        const index = (cRow * BM + threadRow * TM + m) * N + cCol * BN + threadCol * TN + n;
        C[index] = gemmOutput(alpha, threadResults[m * TN + n], beta, C[index]);
      }
    }
  },
);

// The transposed-A 2-D kernel for any M, N and K: loads outside A or B fill the tiles with zeros and stores
// outside C are skipped, so sizes need not be multiples of the tiles (the CUDA introduction article's 1000³,
// say). The guards cost a little against the kernel above where sizes do divide.
export const sgemm2DBlocktilingGuarded = kernel(
  { block: ["BM * BN / (TM * TN)"] },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    beta: f32,
    C: Float32Array,
    BM: Const<i32> = 128,
    BN: Const<i32> = 128,
    BK: Const<i32> = 8,
    TM: Const<i32> = 8,
    TN: Const<i32> = 8,
  ) => {
    const AsT = shared.f32(BK * BM);
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32(TM * TN);
    const regM = local.f32(TM);
    const regN = local.f32(TN);
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const threads = (BM * BN) / (TM * TN);
    const threadCol = threadIdx.x % (BN / TN);
    const threadRow = threadIdx.x / (BN / TN);
    const innerRowA = threadIdx.x / BK;
    const innerColA = threadIdx.x % BK;
    const strideA = threads / BK;
    const innerRowB = threadIdx.x / BN;
    const innerColB = threadIdx.x % BN;
    const strideB = threads / BN;
    unrollInit: for (let i = 0; i < TM * TN; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      unrollLoadA: for (let offset = 0; offset < BM; offset += strideA) {
        const row = cRow * BM + innerRowA + offset;
        const col = bk + innerColA;
        if (row < M && col < K) {
          AsT[innerColA * BM + innerRowA + offset] = A[row * K + col];
        } else {
          AsT[innerColA * BM + innerRowA + offset] = 0;
        }
      }
      unrollLoadB: for (let offset = 0; offset < BK; offset += strideB) {
        const row = bk + innerRowB + offset;
        const col = cCol * BN + innerColB;
        if (row < K && col < N) {
          Bs[(innerRowB + offset) * BN + innerColB] = B[row * N + col];
        } else {
          Bs[(innerRowB + offset) * BN + innerColB] = 0;
        }
      }
      syncThreads();
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollM: for (let i = 0; i < TM; i++) {
          regM[i] = AsT[dot * BM + threadRow * TM + i];
        }
        unrollN: for (let i = 0; i < TN; i++) {
          regN[i] = Bs[dot * BN + threadCol * TN + i];
        }
        unrollOuterM: for (let m = 0; m < TM; m++) {
          unrollOuterN: for (let n = 0; n < TN; n++) {
            threadResults[m * TN + n] += regM[m] * regN[n];
          }
        }
      }
      syncThreads();
    }
    unrollStoreM: for (let m = 0; m < TM; m++) {
      unrollStoreN: for (let n = 0; n < TN; n++) {
        const row = cRow * BM + threadRow * TM + m;
        const col = cCol * BN + threadCol * TN + n;
        if (row < M && col < N) {
          C[row * N + col] = gemmOutput(alpha, threadResults[m * TN + n], beta, C[row * N + col]);
        }
      }
    }
  },
);
