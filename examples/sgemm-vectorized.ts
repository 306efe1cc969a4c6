// Kernel 6 of Simon Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance": the 2-D
// blocktiling kernel with every global and shared access 16 bytes wide. A is read four elements of a row
// at a time and stored transposed into shared memory, so that a thread's TM values of A for one step are
// consecutive, like its TN values of B; both then come out of shared memory with load4 (LDS.128 on CUDA),
// and C is read and written with load4/store4. Demonstrates load4/store4 on global, shared and private data.
// PAD = 4 is the ladder's bank-conflict-free rung: the transposing stores into AsT hit 32 different banks
// per warp instead of two threads per bank, and rows stay 16-byte aligned for the wide loads.
// Sizes must be multiples of the block tile (BM, BN) and of BK; rows of A, B and C must start 16-byte
// aligned, which holds when K and N are multiples of 4.
// Launch: grid (N / BN, M / BM); blockIdx.x picks the block column, blockIdx.y the block row.
import { blockIdx, kernel, load4, local, shared, store4, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

/**
 * One element of C = alpha·A·B + beta·C. With beta = 0 the old C is not used at all, as in BLAS: C may hold
 * anything (NaN included) before a product that overwrites it.
 */
function gemmOutput(alpha: f32, product: f32, beta: f32, old: f32): f32 {
  return beta === 0 ? alpha * product : alpha * product + beta * old;
}


export const sgemmVectorized = kernel(
  // The defaults, and smaller tiles for devices with 16 KB of workgroup memory or fewer threads per block.
  {
    block: ["BM * BN / (TM * TN)"],
    specializations: [{}, { PAD: 4 }, { BM: 64, BN: 64, BK: 8, TM: 8, TN: 4 }, { BM: 64, BN: 64, BK: 8, TM: 8, TN: 4, PAD: 4 }],
  },
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
    PAD: Const<i32> = 0,
  ) => {
    // AsT[k][m]: the A tile transposed, each row PAD floats longer than the tile.
    const ldAsT = BM + PAD;
    const AsT = shared.f32(BK * (BM + PAD));
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32(TM * TN);
    const regM = local.f32(TM);
    const regN = local.f32(TN);
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const threads = (BM * BN) / (TM * TN);
    const threadCol = threadIdx.x % (BN / TN);
    const threadRow = threadIdx.x / (BN / TN);
    // Each thread loads four consecutive elements of a tile row; a pass of all threads covers rowStride rows.
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = threadIdx.x % (BK / 4);
    const rowStrideA = (threads * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (threads * 4) / BN;
    unrollInit: for (let i = 0; i < TM * TN; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      unrollLoadA: for (let offset = 0; offset < BM; offset += rowStrideA) {
        const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + bk + innerColA * 4);
        // Column c of the A tile becomes row c of AsT.
        AsT[(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = a0;
        AsT[(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = a1;
        AsT[(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = a2;
        AsT[(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = a3;
      }
      unrollLoadB: for (let offset = 0; offset < BK; offset += rowStrideB) {
        const [b0, b1, b2, b3] = load4(B, (bk + innerRowB + offset) * N + cCol * BN + innerColB * 4);
        store4(Bs, (innerRowB + offset) * BN + innerColB * 4, b0, b1, b2, b3);
      }
      syncThreads();
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollM: for (let i = 0; i < TM; i += 4) {
          const [m0, m1, m2, m3] = load4(AsT, dot * ldAsT + threadRow * TM + i);
          store4(regM, i, m0, m1, m2, m3);
        }
        unrollN: for (let i = 0; i < TN; i += 4) {
          const [n0, n1, n2, n3] = load4(Bs, dot * BN + threadCol * TN + i);
          store4(regN, i, n0, n1, n2, n3);
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
      unrollStoreN: for (let n = 0; n < TN; n += 4) {
        const index = (cRow * BM + threadRow * TM + m) * N + cCol * BN + threadCol * TN + n;
        const [c0, c1, c2, c3] = load4(C, index);
        const r = m * TN + n;
        store4(
          C,
          index,
          gemmOutput(alpha, threadResults[r], beta, c0),
          gemmOutput(alpha, threadResults[r + 1], beta, c1),
          gemmOutput(alpha, threadResults[r + 2], beta, c2),
          gemmOutput(alpha, threadResults[r + 3], beta, c3),
        );
      }
    }
  },
);
