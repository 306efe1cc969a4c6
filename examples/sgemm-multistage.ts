// Multistage SGEMM: the double-buffered warp-tiled kernel of sgemm-warptiling.ts with B streamed by
// asynchronous copies through STAGES shared-memory stages (cp.async on CUDA), so that its latency hides
// behind STAGES − 1 steps of multiply-adds, and the block tiles visited in groups of SWIZZLE block rows, so
// that the tiles that run at the same time share their panels of A and B in L2 (at 8192³ the panels of B
// alone are 256 MB). A goes through registers one step ahead and is stored transposed (AsT[k][m]), as in the
// double-buffered kernel: a warp's reads of A are then 16 bytes of consecutive rows.
// Sliced k (KSPLIT > 1): KSPLIT groups of warps share one tile of C, each multiplying its own BK-wide slice
// of every step's KSPLIT·BK columns of A; at the end the groups add their partial results through shared
// memory. It gives a small product (1000³ makes only 128 tiles of 64×128 for 132 multiprocessors) more warps
// per tile without smaller register tiles.
// GUARD = 1 takes any M, and N and K multiples of 4 (16-byte rows): loads outside A or B give zeros, stores
// outside C are skipped. sgemmRegisterStaged below takes any shape at all.
// Requirements, for the tuner as much as for callers: THREADS = 32·KSPLIT·(BM/WM)·(BN/WN); WM·WN divisible by
// 32·TM·TN·WNITER; TM, TN and BK multiples of 4; the THREADS threads cover each tile in whole 16-byte rows;
// 2 ≤ STAGES ≤ 5; STAGES·BK·KSPLIT ≥ (KSPLIT − 1)·BM (the B stages hold the partial results). With GUARD = 0:
// M, N multiples of BM, BN and K of BK·KSPLIT.
// Launch: grid (ceil(N / BN), ceil(M / BM)), block THREADS.
import {
  blockIdx,
  commitAsync,
  copyAsync4,
  gridDim,
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

export const sgemmMultistage = kernel(
  {
    block: ["THREADS"],
    specializations: [
      // 128×128 tiles, 4 stages of B: large aligned products.
      {},
      // 64×128 tiles with two k-groups of four warps: mid-sized products (1024³ gets 128 blocks), aligned or
      // any M (N, K multiples of 4). Two stages keep it within WGSL's 64 KiB of workgroup memory.
      { BM: 64, BN: 128, BK: 16, KSPLIT: 2, STAGES: 2, WM: 32, WN: 64, WNITER: 2, TM: 8, TN: 4, THREADS: 256, SWIZZLE: 0, AVEC: 1, GUARD: 0 },
      { BM: 64, BN: 128, BK: 16, KSPLIT: 2, STAGES: 2, WM: 32, WN: 64, WNITER: 2, TM: 8, TN: 4, THREADS: 256, SWIZZLE: 0, AVEC: 1, GUARD: 1 },
      // Within WebGPU's portable 16 KB of workgroup memory and 256 invocations: one k-group, and two.
      { BM: 64, BN: 64, BK: 8, KSPLIT: 1, STAGES: 3, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128, SWIZZLE: 2, AVEC: 0, GUARD: 1 },
      { BM: 32, BN: 32, BK: 8, KSPLIT: 2, STAGES: 2, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 64, SWIZZLE: 0, AVEC: 1, GUARD: 1 },
    ],
    // The launch, for the PyTorch operator and the .cuh grid functions (docs/torch.md): C is updated in place
    // (C = alpha·A·B + beta·C), and the first specialization whose requirements hold runs.
    tensors: { A: "[M, K]", B: "[K, N]", C: "[M, N]" },
    grid: ["cdiv(N, BN)", "cdiv(M, BM)"],
    requires: ["GUARD == 1 || M % BM == 0 && N % BN == 0 && K % (BK * KSPLIT) == 0", "N % 4 == 0 && K % 4 == 0"],
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
    KSPLIT: Const<i32> = 1,
    STAGES: Const<i32> = 4,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    WNITER: Const<i32> = 4,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 128,
    SWIZZLE: Const<i32> = 8,
    AVEC: Const<i32> = 1,
    GUARD: Const<i32> = 0,
  ) => {
    // KS rows of AsT (columns of A) and of Bs per step, for the whole block; AsT's rows padded by 4 floats.
    const AsT = shared.f32(2, BK * KSPLIT * (BM + 4));
    const Bs = shared.f32(STAGES, BK * KSPLIT * BN);
    const acc = local.f32((WM * WN) / 32);
    const regM = local.f32((WM * WN) / (32 * TN * WNITER));
    const regN = local.f32(WNITER * TN);
    // The next step's A tile on its way from global memory to AsT: four values per pass of the threads.
    const nextA = local.f32((BM * BK * KSPLIT) / THREADS);
    const KS = BK * KSPLIT;
    const ldAsT = BM + 4;
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const GROUP = THREADS / KSPLIT;
    // Blocks in launch order walk SWIZZLE block rows column by column (a partial group at the bottom).
    const pid = blockIdx.y * gridDim.x + blockIdx.x;
    const groupBlocks = Math.max(SWIZZLE, 1) * gridDim.x;
    const firstRow = (pid / groupBlocks) * Math.max(SWIZZLE, 1);
    const groupRows = Math.min(gridDim.y - firstRow, Math.max(SWIZZLE, 1));
    const cRow = SWIZZLE > 0 ? firstRow + (pid % groupBlocks) % groupRows : blockIdx.y;
    const cCol = SWIZZLE > 0 ? (pid % groupBlocks) / groupRows : blockIdx.x;
    const group = threadIdx.x / GROUP;
    const inGroup = threadIdx.x % GROUP;
    const warp = inGroup / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = inGroup % 32;
    const threadColInWarp = lane % (WSUBN / TN);
    const threadRowInWarp = lane / (WSUBN / TN);
    // AVEC = 1: a thread loads four consecutive k of a row (16 bytes) and stores them down a column of AsT;
    // AVEC = 0: it loads one k of four consecutive rows (element by element) and stores them as 16 bytes.
    const innerRowA = AVEC === 1 ? threadIdx.x / (KS / 4) : (threadIdx.x / KS) * 4;
    const innerColA = AVEC === 1 ? threadIdx.x % (KS / 4) : threadIdx.x % KS;
    const rowStrideA = (THREADS * 4) / KS;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = threadIdx.x % (BN / 4);
    const rowStrideB = (THREADS * 4) / BN;
    unrollInit: for (let i = 0; i < (WM * WN) / 32; i++) {
      acc[i] = 0;
    }
    // The first STAGES − 1 steps' B tiles, one group of copies each (empty past the end of K).
    for (let s = 0; s < STAGES - 1; s++) {
      const k0 = s * KS;
      if (k0 < K) {
        unrollFirstB: for (let offset = 0; offset < KS; offset += rowStrideB) {
          const row = k0 + innerRowB + offset;
          const col = cCol * BN + innerColB * 4;
          if (GUARD === 0 || (row < K && col < N)) {
            copyAsync4(Bs[s], (innerRowB + offset) * BN + innerColB * 4, B, row * N + col);
          } else {
            store4(Bs[s], (innerRowB + offset) * BN + innerColB * 4, 0, 0, 0, 0);
          }
        }
      }
      commitAsync();
    }
    // The first A tile, through the registers that carry every later one, into stage 0 of AsT.
    unrollFirstA: for (let offset = 0; offset < BM; offset += rowStrideA) {
      const row = cRow * BM + innerRowA + offset;
      if (AVEC === 1) {
        const col = innerColA * 4;
        if (GUARD === 0 || (row < M && col < K)) {
          const [a0, a1, a2, a3] = load4(A, row * K + col);
          store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
        } else {
          store4(nextA, (offset / rowStrideA) * 4, 0, 0, 0, 0);
        }
      } else {
        unrollFirstRowsA: for (let j = 0; j < 4; j++) {
          nextA[(offset / rowStrideA) * 4 + j] = GUARD === 0 || (row + j < M && innerColA < K) ? A[(row + j) * K + innerColA] : 0;
        }
      }
    }
    unrollFirstStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
      const base = (offset / rowStrideA) * 4;
      if (AVEC === 1) {
        AsT[0][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
        AsT[0][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
        AsT[0][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
        AsT[0][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
      } else {
        store4(AsT[0], innerColA * ldAsT + innerRowA + offset, nextA[base], nextA[base + 1], nextA[base + 2], nextA[base + 3]);
      }
    }
    let stageA = 0;
    let readB = 0;
    let writeB = STAGES - 1;
    for (let k0 = 0; k0 < K; k0 += KS) {
      // This step's B tile has landed once at most STAGES − 2 groups are still in flight; the barrier makes
      // every thread's copies and A stores visible, and says that every thread is done with the stages of the
      // previous step, which are refilled below.
      waitAsync(STAGES - 2);
      syncThreads();
      const nextB = k0 + (STAGES - 1) * KS;
      if (nextB < K) {
        unrollNextB: for (let offset = 0; offset < KS; offset += rowStrideB) {
          const row = nextB + innerRowB + offset;
          const col = cCol * BN + innerColB * 4;
          if (GUARD === 0 || (row < K && col < N)) {
            copyAsync4(Bs[writeB], (innerRowB + offset) * BN + innerColB * 4, B, row * N + col);
          } else {
            store4(Bs[writeB], (innerRowB + offset) * BN + innerColB * 4, 0, 0, 0, 0);
          }
        }
      }
      commitAsync();
      const nextA0 = k0 + KS;
      if (nextA0 < K) {
        unrollNextA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const row = cRow * BM + innerRowA + offset;
          if (AVEC === 1) {
            const col = nextA0 + innerColA * 4;
            if (GUARD === 0 || (row < M && col < K)) {
              const [a0, a1, a2, a3] = load4(A, row * K + col);
              store4(nextA, (offset / rowStrideA) * 4, a0, a1, a2, a3);
            } else {
              store4(nextA, (offset / rowStrideA) * 4, 0, 0, 0, 0);
            }
          } else {
            unrollNextRowsA: for (let j = 0; j < 4; j++) {
              const col = nextA0 + innerColA;
              nextA[(offset / rowStrideA) * 4 + j] = GUARD === 0 || (row + j < M && col < K) ? A[(row + j) * K + col] : 0;
            }
          }
        }
      }
      // This group's BK-wide slice of the step.
      unrollDot: for (let dot = 0; dot < BK; dot++) {
        unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
          unrollM: for (let i = 0; i < TM; i += 4) {
            const [m0, m1, m2, m3] = load4(AsT[stageA], (group * BK + dot) * ldAsT + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + i);
            store4(regM, wSubRow * TM + i, m0, m1, m2, m3);
          }
        }
        unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
          unrollN: for (let i = 0; i < TN; i += 4) {
            const [n0, n1, n2, n3] = load4(Bs[readB], (group * BK + dot) * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + i);
            store4(regN, wSubCol * TN + i, n0, n1, n2, n3);
          }
        }
        unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
          unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
            acc[m * (WNITER * TN) + n] += regM[m] * regN[n];
          }
        }
      }
      // Every thread finished reading the other A stage before this step's barrier: fill it.
      if (nextA0 < K) {
        unrollStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const base = (offset / rowStrideA) * 4;
          if (AVEC === 1) {
            AsT[1 - stageA][(innerColA * 4 + 0) * ldAsT + innerRowA + offset] = nextA[base];
            AsT[1 - stageA][(innerColA * 4 + 1) * ldAsT + innerRowA + offset] = nextA[base + 1];
            AsT[1 - stageA][(innerColA * 4 + 2) * ldAsT + innerRowA + offset] = nextA[base + 2];
            AsT[1 - stageA][(innerColA * 4 + 3) * ldAsT + innerRowA + offset] = nextA[base + 3];
          } else {
            store4(AsT[1 - stageA], innerColA * ldAsT + innerRowA + offset, nextA[base], nextA[base + 1], nextA[base + 2], nextA[base + 3]);
          }
        }
      }
      stageA = 1 - stageA;
      readB = readB + 1 === STAGES ? 0 : readB + 1;
      writeB = writeB + 1 === STAGES ? 0 : writeB + 1;
    }
    waitAsync(0);
    if (KSPLIT > 1) {
      // Each later group leaves its results in the B stages (STAGES·KS·BN ≥ (KSPLIT − 1)·BM·BN floats), laid
      // out by thread so that a warp's stores and loads are consecutive; the first group adds them up. The
      // first barrier says that every group is done reading the stages.
      syncThreads();
      if (group > 0) {
        unrollPartialOut: for (let r = 0; r < (WM * WN) / 32; r++) {
          const slot = ((group - 1) * ((WM * WN) / 32) + r) * GROUP + inGroup;
          Bs[slot / (KS * BN)][slot % (KS * BN)] = acc[r];
        }
      }
      syncThreads();
      if (group === 0) {
        for (let g = 1; g < KSPLIT; g++) {
          unrollPartialIn: for (let r = 0; r < (WM * WN) / 32; r++) {
            const slot = ((g - 1) * ((WM * WN) / 32) + r) * GROUP + inGroup;
            acc[r] += Bs[slot / (KS * BN)][slot % (KS * BN)];
          }
        }
      }
    }
    if (group === 0) {
      unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
        unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
          unrollStoreM: for (let m = 0; m < TM; m++) {
            unrollStoreN: for (let n = 0; n < TN; n += 4) {
              const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRowInWarp * TM + m;
              const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadColInWarp * TN + n;
              const r = (wSubRow * TM + m) * (WNITER * TN) + wSubCol * TN + n;
              if (GUARD === 0 || (row < M && col < N)) {
                // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
                if (beta === 0) {
                  store4(C, row * N + col, alpha * acc[r], alpha * acc[r + 1], alpha * acc[r + 2], alpha * acc[r + 3]);
                } else {
                  const [c0, c1, c2, c3] = load4(C, row * N + col);
                  store4(C, row * N + col, alpha * acc[r] + beta * c0, alpha * acc[r + 1] + beta * c1, alpha * acc[r + 2] + beta * c2, alpha * acc[r + 3] + beta * c3);
                }
              }
            }
          }
        }
      }
    }
  },
);

// The same warp tiles and sliced k for any M, N and K, with no alignment at all (1023×1021×1019): rows of A
// and B that start at any element cannot be copied 16 bytes at a time, so each thread loads its share of the
// next step's tiles element by element into registers (zeros outside A and B) while the warps compute, and
// stores it into the other of two shared stages afterwards, as the double-buffered warp-tiled kernel does
// with A. Stores outside C are skipped, element by element.
// Requirements: those of sgemmMultistage without GUARD and STAGES, with THREADS a multiple of BK·KSPLIT and
// of BN, BM a multiple of THREADS/(BK·KSPLIT), BK·KSPLIT of THREADS/BN, and 2·BK·KSPLIT ≥ (KSPLIT − 1)·BM.
// Launch: grid (ceil(N / BN), ceil(M / BM)), block THREADS.
export const sgemmRegisterStaged = kernel(
  {
    block: ["THREADS"],
    specializations: [
      {},
      // Within WebGPU's portable limits: one k-group, and two.
      { BM: 64, BN: 64, BK: 8, KSPLIT: 1, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 },
      { BM: 32, BN: 32, BK: 8, KSPLIT: 2, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 64 },
    ],
    tensors: { A: "[M, K]", B: "[K, N]", C: "[M, N]" },
    grid: ["cdiv(N, BN)", "cdiv(M, BM)"],
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
    BM: Const<i32> = 64,
    BN: Const<i32> = 64,
    BK: Const<i32> = 16,
    KSPLIT: Const<i32> = 2,
    WM: Const<i32> = 32,
    WN: Const<i32> = 32,
    WNITER: Const<i32> = 1,
    TM: Const<i32> = 8,
    TN: Const<i32> = 4,
    THREADS: Const<i32> = 256,
  ) => {
    const As = shared.f32(2, BM * (BK * KSPLIT + 4));
    const Bs = shared.f32(2, BK * KSPLIT * BN);
    const acc = local.f32((WM * WN) / 32);
    const regA = local.f32((WM * WN * 4) / (32 * TN * WNITER));
    const regB = local.f32(WNITER * TN);
    const nextA = local.f32((BM * BK * KSPLIT) / THREADS);
    const nextB = local.f32((BK * KSPLIT * BN) / THREADS);
    const KS = BK * KSPLIT;
    const ldA = BK * KSPLIT + 4;
    const WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    const WSUBM = WM / WMITER;
    const WSUBN = WN / WNITER;
    const GROUP = THREADS / KSPLIT;
    const cRow = blockIdx.y;
    const cCol = blockIdx.x;
    const group = threadIdx.x / GROUP;
    const inGroup = threadIdx.x % GROUP;
    const warp = inGroup / 32;
    const warpCol = warp % (BN / WN);
    const warpRow = warp / (BN / WN);
    const lane = inGroup % 32;
    const threadCol = lane % (WSUBN / TN);
    const threadRow = lane / (WSUBN / TN);
    const rowStep = WSUBM / TM;
    // Consecutive threads load consecutive elements of a row: KS per row of A's tile, BN per row of B's.
    const innerRowA = threadIdx.x / KS;
    const innerColA = threadIdx.x % KS;
    const rowStrideA = THREADS / KS;
    const innerRowB = threadIdx.x / BN;
    const innerColB = threadIdx.x % BN;
    const rowStrideB = THREADS / BN;
    unrollInit: for (let i = 0; i < (WM * WN) / 32; i++) {
      acc[i] = 0;
    }
    let stage = 0;
    // Step −1 only fetches: the first tiles go through the same registers as every later step.
    for (let k0 = -KS; k0 < K; k0 += KS) {
      const next = k0 + KS;
      if (next < K) {
        unrollNextA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          const row = cRow * BM + innerRowA + offset;
          const col = next + innerColA;
          nextA[offset / rowStrideA] = row < M && col < K ? A[row * K + col] : 0;
        }
        unrollNextB: for (let offset = 0; offset < KS; offset += rowStrideB) {
          const row = next + innerRowB + offset;
          const col = cCol * BN + innerColB;
          nextB[offset / rowStrideB] = row < K && col < N ? B[row * N + col] : 0;
        }
      }
      if (k0 >= 0) {
        unrollDot4: for (let d = 0; d < BK; d += 4) {
          unrollSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
            unrollM: for (let i = 0; i < TM; i++) {
              const row = warpRow * WM + wSubRow * WSUBM + threadRow + i * rowStep;
              const [a0, a1, a2, a3] = load4(As[stage], row * ldA + group * BK + d);
              store4(regA, (wSubRow * TM + i) * 4, a0, a1, a2, a3);
            }
          }
          unrollDot: for (let dd = 0; dd < 4; dd++) {
            unrollSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
              unrollN: for (let j = 0; j < TN; j += 4) {
                const [b0, b1, b2, b3] = load4(Bs[stage], (group * BK + d + dd) * BN + warpCol * WN + wSubCol * WSUBN + threadCol * TN + j);
                store4(regB, wSubCol * TN + j, b0, b1, b2, b3);
              }
            }
            unrollOuterM: for (let m = 0; m < WMITER * TM; m++) {
              unrollOuterN: for (let n = 0; n < WNITER * TN; n++) {
                acc[m * (WNITER * TN) + n] += regA[m * 4 + dd] * regB[n];
              }
            }
          }
        }
      }
      // Every thread has finished with the other stage since the last barrier: fill it and switch.
      if (next < K) {
        unrollStoreA: for (let offset = 0; offset < BM; offset += rowStrideA) {
          As[1 - stage][(innerRowA + offset) * ldA + innerColA] = nextA[offset / rowStrideA];
        }
        unrollStoreB: for (let offset = 0; offset < KS; offset += rowStrideB) {
          Bs[1 - stage][(innerRowB + offset) * BN + innerColB] = nextB[offset / rowStrideB];
        }
      }
      syncThreads();
      stage = 1 - stage;
    }
    if (KSPLIT > 1) {
      // As in sgemmMultistage, through the two B stages (2·KS·BN ≥ (KSPLIT − 1)·BM·BN floats); the loop's
      // last barrier says that every group is done reading them.
      if (group > 0) {
        unrollPartialOut: for (let r = 0; r < (WM * WN) / 32; r++) {
          const slot = ((group - 1) * ((WM * WN) / 32) + r) * GROUP + inGroup;
          Bs[slot / (KS * BN)][slot % (KS * BN)] = acc[r];
        }
      }
      syncThreads();
      if (group === 0) {
        for (let g = 1; g < KSPLIT; g++) {
          unrollPartialIn: for (let r = 0; r < (WM * WN) / 32; r++) {
            const slot = ((g - 1) * ((WM * WN) / 32) + r) * GROUP + inGroup;
            acc[r] += Bs[slot / (KS * BN)][slot % (KS * BN)];
          }
        }
      }
    }
    if (group === 0) {
      unrollStoreSubM: for (let wSubRow = 0; wSubRow < WMITER; wSubRow++) {
        unrollStoreM: for (let i = 0; i < TM; i++) {
          unrollStoreSubN: for (let wSubCol = 0; wSubCol < WNITER; wSubCol++) {
            unrollStoreN: for (let j = 0; j < TN; j++) {
              const row = cRow * BM + warpRow * WM + wSubRow * WSUBM + threadRow + i * rowStep;
              const col = cCol * BN + warpCol * WN + wSubCol * WSUBN + threadCol * TN + j;
              const r = (wSubRow * TM + i) * (WNITER * TN) + wSubCol * TN + j;
              if (row < M && col < N) {
                C[row * N + col] = beta === 0 ? alpha * acc[r] : alpha * acc[r] + beta * C[row * N + col];
              }
            }
          }
        }
      }
    }
  },
);
