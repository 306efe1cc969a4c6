// Warp-level tensor-core bf16 GEMM (mma.sync m16n8k16, f32 accumulation): C = A·B with A (M×K) and B (K×N)
// row-major bf16 and C (M×N) row-major f32. Each block computes a BM×BN tile of C with (BM/WM)·(BN/WN) warps;
// each warp a WM×WN tile as (WM/16)×(WN/8) m16n8k16 accumulator fragments. The tiles of A (BM×BK) and B (BK×N)
// go from global memory into two shared stages, 16 bytes a thread at a time (load8/store8): the next step's
// tiles are written into the stage the previous step read, then this step's stage is multiplied, then one
// barrier. Each warp loads its fragments from the shared tiles with loadMatrix (ldmatrix on CUDA: .x4 for an A
// fragment, .x2.trans for a B fragment of the row-major tile), whose rows of 16 bytes must start on 16 bytes:
// the rows are padded by 8 elements, which also puts the eight rows of each 8×8 matrix in different banks
// (A's rows are BK + 8 elements, B's BN + 8). The accumulators go straight to C (storeFragment). The CPU backend
// emulates mma.sync with the products in order (docs/language.md §25): the GPU's sum may differ from it within
// the bound stated there. The simple counterpart of hgemm-wgmma-ws.ts (which needs sm_90a); this one runs on
// sm_80 and later.
// Requirements: M, N, K multiples of BM, BN, BK; BK a multiple of 16; WM of 16, WN of 8; THREADS =
// 32·(BM/WM)·(BN/WN).
// Launch: grid (N / BN, M / BM), block THREADS.
import {
  blockIdx,
  fillFragment,
  fragment,
  kernel,
  load8,
  loadMatrix,
  mma,
  shared,
  store8,
  storeFragment,
  syncThreads,
  threadIdx,
  type Const,
  type i32,
  type ReadonlyBFloat16Array,
} from "tskernel";

export const hgemmMma = kernel(
  {
    block: ["THREADS"],
    targets: ["cuda", "js"],
    specializations: [
      // 128×128 tiles of eight 64×32 warps.
      {},
      // Small tiles, for small products and the CPU tests.
      { BM: 32, BN: 32, BK: 16, WM: 16, WN: 16, THREADS: 128 },
    ],
  },
  (
    M: i32,
    N: i32,
    K: i32,
    A: ReadonlyBFloat16Array,
    B: ReadonlyBFloat16Array,
    C: Float32Array,
    BM: Const<i32> = 128,
    BN: Const<i32> = 128,
    BK: Const<i32> = 32,
    WM: Const<i32> = 64,
    WN: Const<i32> = 32,
    THREADS: Const<i32> = 256,
  ) => {
    const ldA = BK + 8;
    const ldB = BN + 8;
    const As = shared.bf16(2 * BM * (BK + 8));
    const Bs = shared.bf16(2 * BK * (BN + 8));
    const MI = WM / 16;
    const NI = WN / 8;
    const acc = fragment.accumulator("m16n8k16", "f32", (WM / 16) * (WN / 8));
    const a = fragment.a("m16n8k16", "bf16", WM / 16);
    const b = fragment.b("m16n8k16", "bf16", WN / 8);
    const warp = threadIdx.x / 32;
    const warpRow = warp / (BN / WN);
    const warpCol = warp % (BN / WN);
    const aRows = blockIdx.y * BM;
    const bCols = blockIdx.x * BN;
    // Pieces of 8 elements: BK/8 a row of A's tile, BN/8 a row of B's; each thread copies every THREADS-th.
    const piecesA = (BM * BK) / 8;
    const piecesB = (BK * BN) / 8;
    unrollInit: for (let f = 0; f < MI * NI; f++) {
      fillFragment(acc[f], 0);
    }
    const steps = K / BK;
    // Step `step`'s tiles are in stage step % 2: the first copied here, each next one during the step before.
    for (let step = -1; step < steps; step++) {
      // Copy step + 1's tiles into the other stage, which step − 1 read (done: the barrier ended that step).
      if (step + 1 < steps) {
        const stage = (step + 1) % 2;
        const k0 = (step + 1) * BK;
        unrollCopyA: for (let i = 0; i < (piecesA + THREADS - 1) / THREADS; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesA) {
            const r = p / (BK / 8);
            const c = (p % (BK / 8)) * 8;
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(A, (aRows + r) * K + k0 + c);
            store8(As, stage * BM * ldA + r * ldA + c, x0, x1, x2, x3, x4, x5, x6, x7);
          }
        }
        unrollCopyB: for (let i = 0; i < (piecesB + THREADS - 1) / THREADS; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesB) {
            const r = p / (BN / 8);
            const c = (p % (BN / 8)) * 8;
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(B, (k0 + r) * N + bCols + c);
            store8(Bs, stage * BK * ldB + r * ldB + c, x0, x1, x2, x3, x4, x5, x6, x7);
          }
        }
      }
      if (step >= 0) {
        const stage = step % 2;
        const aTile = stage * BM * ldA + warpRow * WM * ldA;
        const bTile = stage * BK * ldB + warpCol * WN;
        unrollK: for (let kk = 0; kk < BK; kk += 16) {
          unrollLoadA: for (let i = 0; i < MI; i++) {
            loadMatrix(a[i], As, aTile + i * 16 * ldA + kk, ldA);
          }
          unrollLoadB: for (let j = 0; j < NI; j++) {
            loadMatrix(b[j], Bs, bTile + kk * ldB + j * 8, ldB);
          }
          unrollMmaI: for (let i = 0; i < MI; i++) {
            unrollMmaJ: for (let j = 0; j < NI; j++) {
              mma(acc[i * NI + j], a[i], b[j]);
            }
          }
        }
      }
      // The copies of step + 1 visible, and every warp done with stage step % 2 before step + 2 overwrites it.
      syncThreads();
    }
    unrollStoreI: for (let i = 0; i < MI; i++) {
      unrollStoreJ: for (let j = 0; j < NI; j++) {
        storeFragment(acc[i * NI + j], C, (aRows + warpRow * WM + i * 16) * N + bCols + warpCol * WN + j * 8, N);
      }
    }
  },
);
