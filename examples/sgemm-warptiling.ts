// Warp tiling, after kernel 10 of Simon Boehm's "How to Optimize a CUDA Matmul Kernel for cuBLAS-like
// Performance", and the same kernel double-buffered. A block's BM×BN tile of C is split among its warps
// (WM×WN each), and a warp's tile into WMITER×WNITER sub-tiles that its 32 threads sweep together, TM×TN
// results per thread per sub-tile. Threads of a warp then read neighbouring shared-memory addresses (few bank
// conflicts, many broadcasts), and each thread keeps WMITER·TM + WNITER·TN operands in registers for
// WMITER·WNITER·TM·TN multiply-adds per step. All global and shared accesses are 16 bytes wide (load4/store4).
// Requirements, for the tuner as much as for callers: THREADS = 32·(BM/WM)·(BN/WN); WM·WN divisible by
// 32·TM·TN·WNITER; TM and TN multiples of 4; BK a multiple of 4; M, N multiples of BM, BN; K of BK.
// Launch: grid (N / BN, M / BM), block THREADS.
import {
  blockIdx,
  commitAsync,
  copyAsync4,
  kernel,
  load4,
  local,
  shared,
  store4,
  syncThreads,
  threadIdx,
  waitAsync,
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


export const sgemmWarptiling = kernel(
  // The defaults, and smaller tiles for devices with 16 KB of workgroup memory (WebGPU's portable limit).
  { block: ["THREADS"], specializations: [{}, { BM: 64, BN: 64, BK: 8, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 }] },
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
    BK: Const<i32> = 16,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    WNITER: Const<i32> = 4,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 128,
  ) => {
    // AsT holds the A tile transposed (AsT[k][m]); its rows are padded to stagger the transposing stores.
    const AsT = shared.f32(BK * (BM + 4));
    const Bs = shared.f32(BK * BN);
    const threadResults = local.f32((WM * WN) / 32);
    const regM = local.f32((WM * WN) / (32 * TN * WNITER));
    const regN = local.f32(WNITER * TN);
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const ldAsT = BM + 4;
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const warp = threadIdx.x / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = threadIdx.x % 32;
    const threadColInWarp = lane % (WSUBN / TN);
    const threadRowInWarp = lane / (WSUBN / TN);
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = threadIdx.x % (BK / 4);
    const rowStrideA = (THREADS * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (THREADS * 4) / BN;
    unrollInit: for (let i = 0; i < (WM * WN) / 32; i++) {
      threadResults[i] = 0;
    }
    for (let bk = 0; bk < K; bk += BK) {
      unrollLoadA: for (let offset = 0; offset < BM; offset += rowStrideA) {
        const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + bk + innerColA * 4);
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
        unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
          unrollM: for (let i = 0; i < TM; i += 4) {
            const [m0, m1, m2, m3] = load4(AsT, dot * ldAsT + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + i);
            store4(regM, wSubRow * TM + i, m0, m1, m2, m3);
          }
        }
        unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
          unrollN: for (let i = 0; i < TN; i += 4) {
            const [n0, n1, n2, n3] = load4(Bs, dot * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + i);
            store4(regN, wSubCol * TN + i, n0, n1, n2, n3);
          }
        }
        unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
          unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
            threadResults[m * (WNITER * TN) + n] += regM[m] * regN[n];
          }
        }
      }
      syncThreads();
    }
    unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
      unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
        unrollStoreM: for (let m = 0; m < TM; m++) {
          unrollStoreN: for (let n = 0; n < TN; n += 4) {
            const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + m;
            const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + n;
            const [c0, c1, c2, c3] = load4(C, row * N + col);
            const r = (wSubRow * TM + m) * (WNITER * TN) + wSubCol * TN + n;
            store4(
              C,
              row * N + col,
              gemmOutput(alpha, threadResults[r], beta, c0),
              gemmOutput(alpha, threadResults[r + 1], beta, c1),
              gemmOutput(alpha, threadResults[r + 2], beta, c2),
              gemmOutput(alpha, threadResults[r + 3], beta, c3),
            );
          }
        }
      }
    }
  },
);

// The warp-tiled kernel with two shared-memory stages: while the warps compute on one stage, the next tile
// of B streams into the other with asynchronous copies (cp.async on CUDA), and the next tile of A is loaded
// into registers, to be stored transposed once the computation is done. One barrier per step instead of two,
// and global-memory latency hidden behind the multiply-adds.
export const sgemmWarptilingDoubleBuffered = kernel(
  // The defaults; 64×128 tiles, which give mid-sized products (n ≈ 1024) enough blocks; and smaller tiles for
  // devices with 16 KB of workgroup memory (WebGPU's portable limit).
  {
    block: ["THREADS"],
    specializations: [
      {},
      { BM: 64, BN: 128, BK: 16, WM: 32, WN: 32, WNITER: 1, TM: 4, TN: 8, THREADS: 256 },
      { BM: 64, BN: 64, BK: 8, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 },
    ],
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
    BK: Const<i32> = 16,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    WNITER: Const<i32> = 4,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 128,
  ) => {
    const AsT = shared.f32(2, BK * (BM + 4));
    const Bs = shared.f32(2, BK * BN);
    const threadResults = local.f32((WM * WN) / 32);
    const regM = local.f32((WM * WN) / (32 * TN * WNITER));
    const regN = local.f32(WNITER * TN);
    // The next A tile on its way from global memory to AsT: four values per pass of the threads.
    const nextA = local.f32((BM * BK) / THREADS);
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const ldAsT = BM + 4;
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const warp = threadIdx.x / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = threadIdx.x % 32;
    const threadColInWarp = lane % (WSUBN / TN);
    const threadRowInWarp = lane / (WSUBN / TN);
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = threadIdx.x % (BK / 4);
    const rowStrideA = (THREADS * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (THREADS * 4) / BN;
    unrollInit: for (let i = 0; i < (WM * WN) / 32; i++) {
      threadResults[i] = 0;
    }
    // Stage 0 gets the first tiles directly.
    unrollFirstA: for (let offset = 0; offset < BM; offset += rowStrideA) {
      const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + innerColA * 4);
      AsT[0][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = a0;
      AsT[0][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = a1;
      AsT[0][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = a2;
      AsT[0][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = a3;
    }
    unrollFirstB: for (let offset = 0; offset < BK; offset += rowStrideB) {
      copyAsync4(Bs[0], (innerRowB + offset) * BN + innerColB * 4, B, (innerRowB + offset) * N + cCol * BN + innerColB * 4);
    }
    commitAsync();
    waitAsync(0);
    syncThreads();
    let stage = 0;
    for (let bk = 0; bk < K; bk += BK) {
      const next = bk + BK;
      // Start the next step's loads: B straight into the other stage, A into registers.
      if (next < K) {
        unrollNextB: for (let offset = 0; offset < BK; offset += rowStrideB) {
          copyAsync4(Bs[1 - stage], (innerRowB + offset) * BN + innerColB * 4, B, (next + innerRowB + offset) * N + cCol * BN + innerColB * 4);
        }
        commitAsync();
        unrollNextA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const [a0, a1, a2, a3] = load4(A, (cRow * BM + innerRowA + offset) * K + next + innerColA * 4);
          store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
        }
      }
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
          unrollM: for (let i = 0; i < TM; i += 4) {
            const [m0, m1, m2, m3] = load4(AsT[stage], dot * ldAsT + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + i);
            store4(regM, wSubRow * TM + i, m0, m1, m2, m3);
          }
        }
        unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
          unrollN: for (let i = 0; i < TN; i += 4) {
            const [n0, n1, n2, n3] = load4(Bs[stage], dot * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + i);
            store4(regN, wSubCol * TN + i, n0, n1, n2, n3);
          }
        }
        unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
          unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
            threadResults[m * (WNITER * TN) + n] += regM[m] * regN[n];
          }
        }
      }
      // Every thread has finished with the other stage since the last barrier: fill it and switch.
      if (next < K) {
        unrollStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const base = (offset / rowStrideA) * 4;
          AsT[1 - stage][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
          AsT[1 - stage][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
          AsT[1 - stage][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
          AsT[1 - stage][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
        }
      }
      waitAsync(0);
      syncThreads();
      stage = 1 - stage;
    }
    unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
      unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
        unrollStoreM: for (let m = 0; m < TM; m++) {
          unrollStoreN: for (let n = 0; n < TN; n += 4) {
            const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + m;
            const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + n;
            const [c0, c1, c2, c3] = load4(C, row * N + col);
            const r = (wSubRow * TM + m) * (WNITER * TN) + wSubCol * TN + n;
            store4(
              C,
              row * N + col,
              gemmOutput(alpha, threadResults[r], beta, c0),
              gemmOutput(alpha, threadResults[r + 1], beta, c1),
              gemmOutput(alpha, threadResults[r + 2], beta, c2),
              gemmOutput(alpha, threadResults[r + 3], beta, c3),
            );
          }
        }
      }
    }
  },
);

// The double-buffered warp-tiled kernel for any M, and N and K that are multiples of 4 (so that rows stay
// 16-byte aligned): tile loads outside A or B fill zeros, stores outside C are skipped. Its smaller default
// tile (64×128, 256 threads: the tuner's choice for 1000³ on the H100, bench/results run 8) gives odd,
// mid-sized products such as the CUDA introduction's 1000³ enough blocks to fill an H100's 132 SMs.
export const sgemmWarptilingGuarded = kernel(
  // The defaults, and smaller tiles for devices with 16 KB of workgroup memory.
  { block: ["THREADS"], specializations: [{}, { BM: 64, BN: 64, BK: 8, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 }] },
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
    BN: Const<i32> = 128,
    BK: Const<i32> = 16,
    WM: Const<i32> = 32,
    WN: Const<i32> = 32,
    WNITER: Const<i32> = 1,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 256,
  ) => {
    const AsT = shared.f32(2, BK * (BM + 4));
    const Bs = shared.f32(2, BK * BN);
    const threadResults = local.f32((WM * WN) / 32);
    const regM = local.f32((WM * WN) / (32 * TN * WNITER));
    const regN = local.f32(WNITER * TN);
    const nextA = local.f32((BM * BK) / THREADS);
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const ldAsT = BM + 4;
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const warp = threadIdx.x / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = threadIdx.x % 32;
    const threadColInWarp = lane % (WSUBN / TN);
    const threadRowInWarp = lane / (WSUBN / TN);
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = threadIdx.x % (BK / 4);
    const rowStrideA = (THREADS * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (THREADS * 4) / BN;
    unrollInit: for (let i = 0; i < (WM * WN) / 32; i++) {
      threadResults[i] = 0;
    }
    let stage = 0;
    // Step -1 only fetches: the first tiles go through the same registers and copies as every later step.
    for (let bk = -BK; bk < K; bk += BK) {
      const next = bk + BK;
      if (next < K) {
        unrollNextB: for (let offset = 0; offset < BK; offset += rowStrideB) {
          const row = next + innerRowB + offset;
          const col = cCol * BN + innerColB * 4;
          if (row < K && col < N) {
            copyAsync4(Bs[1 - stage], (innerRowB + offset) * BN + innerColB * 4, B, row * N + col);
          } else {
            store4(Bs[1 - stage], (innerRowB + offset) * BN + innerColB * 4, 0, 0, 0, 0);
          }
        }
        commitAsync();
        unrollNextA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const row = cRow * BM + innerRowA + offset;
          const col = next + innerColA * 4;
          if (row < M && col < K) {
            const [a0, a1, a2, a3] = load4(A, row * K + col);
            store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
          } else {
            store4(nextA, (offset / rowStrideA) * 4, 0, 0, 0, 0);
          }
        }
      }
      if (bk >= 0) {
        unrollDot: for (let dot = 0; dot < BK; dot++) {
          unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
            unrollM: for (let i = 0; i < TM; i += 4) {
              const [m0, m1, m2, m3] = load4(AsT[stage], dot * ldAsT + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + i);
              store4(regM, wSubRow * TM + i, m0, m1, m2, m3);
            }
          }
          unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
            unrollN: for (let i = 0; i < TN; i += 4) {
              const [n0, n1, n2, n3] = load4(Bs[stage], dot * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + i);
              store4(regN, wSubCol * TN + i, n0, n1, n2, n3);
            }
          }
          unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
            unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
              threadResults[m * (WNITER * TN) + n] += regM[m] * regN[n];
            }
          }
        }
      }
      if (next < K) {
        unrollStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const base = (offset / rowStrideA) * 4;
          AsT[1 - stage][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
          AsT[1 - stage][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
          AsT[1 - stage][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
          AsT[1 - stage][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
        }
      }
      waitAsync(0);
      syncThreads();
      stage = 1 - stage;
    }
    unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
      unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
        unrollStoreM: for (let m = 0; m < TM; m++) {
          unrollStoreN: for (let n = 0; n < TN; n += 4) {
            const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + m;
            const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + n;
            if (row < M && col < N) {
              const [c0, c1, c2, c3] = load4(C, row * N + col);
              const r = (wSubRow * TM + m) * (WNITER * TN) + wSubCol * TN + n;
              store4(
                C,
                row * N + col,
                gemmOutput(alpha, threadResults[r], beta, c0),
                gemmOutput(alpha, threadResults[r + 1], beta, c1),
                gemmOutput(alpha, threadResults[r + 2], beta, c2),
                gemmOutput(alpha, threadResults[r + 3], beta, c3),
              );
            }
          }
        }
      }
    }
  },
);
