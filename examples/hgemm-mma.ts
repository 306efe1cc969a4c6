// Warp-level tensor-core bf16 GEMM (mma.sync m16n8k16, f32 accumulation): C = A·B with A (M×K) and B (K×N)
// row-major bf16 and C (M×N) row-major f32. Each block computes a BM×BN tile of C with (BM/WM)·(BN/WN) warps;
// each warp a WM×WN tile as (WM/16)×(WN/8) m16n8k16 accumulator fragments. The tiles of A (BM×BK) and B (BK×N)
// go from global memory into two shared stages, 16 bytes a thread at a time (load8/store8) through registers:
// each step reads the next step's pieces, multiplies its own stage while they arrive, then writes them into the
// stage the previous step read, and ends with one barrier. Each warp loads its fragments from the shared tiles with loadMatrix (ldmatrix on CUDA: .x4 for an A
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
  local,
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
    // Pieces of 8 elements: BK/8 a row of A's tile, BN/8 a row of B's; each thread copies every THREADS-th
    // (PA of A's and PB of B's), through registers (`staged`: the next step's pieces while this step multiplies).
    const piecesA = (BM * BK) / 8;
    const piecesB = (BK * BN) / 8;
    const PA = (piecesA + THREADS - 1) / THREADS;
    const PB = (piecesB + THREADS - 1) / THREADS;
    const staged = local.bf16(8 * (((BM * BK) / 8 + THREADS - 1) / THREADS + ((BK * BN) / 8 + THREADS - 1) / THREADS));
    unrollInit: for (let f = 0; f < MI * NI; f++) {
      fillFragment(acc[f], 0);
    }
    const steps = K / BK;
    // Step `step`'s tiles are in stage step % 2: the first stored here, each next one during the step before.
    for (let step = -1; step < steps; step++) {
      // Read step + 1's pieces from global memory into registers (their latency overlaps this step's multiplies).
      if (step + 1 < steps) {
        const k0 = (step + 1) * BK;
        unrollLoadA: for (let i = 0; i < PA; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesA) {
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(A, (aRows + p / (BK / 8)) * K + k0 + (p % (BK / 8)) * 8);
            staged[i * 8] = x0;
            staged[i * 8 + 1] = x1;
            staged[i * 8 + 2] = x2;
            staged[i * 8 + 3] = x3;
            staged[i * 8 + 4] = x4;
            staged[i * 8 + 5] = x5;
            staged[i * 8 + 6] = x6;
            staged[i * 8 + 7] = x7;
          }
        }
        unrollLoadB: for (let i = 0; i < PB; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesB) {
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(B, (k0 + p / (BN / 8)) * N + bCols + (p % (BN / 8)) * 8);
            staged[(PA + i) * 8] = x0;
            staged[(PA + i) * 8 + 1] = x1;
            staged[(PA + i) * 8 + 2] = x2;
            staged[(PA + i) * 8 + 3] = x3;
            staged[(PA + i) * 8 + 4] = x4;
            staged[(PA + i) * 8 + 5] = x5;
            staged[(PA + i) * 8 + 6] = x6;
            staged[(PA + i) * 8 + 7] = x7;
          }
        }
      }
      if (step >= 0) {
        const stage = step % 2;
        const aTile = stage * BM * ldA + warpRow * WM * ldA;
        const bTile = stage * BK * ldB + warpCol * WN;
        unrollK: for (let kk = 0; kk < BK; kk += 16) {
          unrollFragA: for (let i = 0; i < MI; i++) {
            loadMatrix(a[i], As, aTile + i * 16 * ldA + kk, ldA);
          }
          unrollFragB: for (let j = 0; j < NI; j++) {
            loadMatrix(b[j], Bs, bTile + kk * ldB + j * 8, ldB);
          }
          unrollMmaI: for (let i = 0; i < MI; i++) {
            unrollMmaJ: for (let j = 0; j < NI; j++) {
              mma(acc[i * NI + j], a[i], b[j]);
            }
          }
        }
      }
      // Store step + 1's pieces into the other stage, which step − 1 read (done: the barrier ended that step).
      if (step + 1 < steps) {
        const next = (step + 1) % 2;
        unrollStoreA: for (let i = 0; i < PA; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesA) {
            const at = next * BM * ldA + (p / (BK / 8)) * ldA + (p % (BK / 8)) * 8;
            store8(As, at, staged[i * 8], staged[i * 8 + 1], staged[i * 8 + 2], staged[i * 8 + 3], staged[i * 8 + 4], staged[i * 8 + 5], staged[i * 8 + 6], staged[i * 8 + 7]);
          }
        }
        unrollStoreB: for (let i = 0; i < PB; i++) {
          const p = threadIdx.x + i * THREADS;
          if (p < piecesB) {
            const at = next * BK * ldB + (p / (BN / 8)) * ldB + (p % (BN / 8)) * 8;
            const s = (PA + i) * 8;
            store8(Bs, at, staged[s], staged[s + 1], staged[s + 2], staged[s + 3], staged[s + 4], staged[s + 5], staged[s + 6], staged[s + 7]);
          }
        }
      }
      // Step + 1's tiles visible, and every warp done with stage step % 2 before step + 2 overwrites it.
      syncThreads();
    }
    unrollStoreI: for (let i = 0; i < MI; i++) {
      unrollStoreJ: for (let j = 0; j < NI; j++) {
        storeFragment(acc[i * NI + j], C, (aRows + warpRow * WM + i * 16) * N + bCols + warpCol * WN + j * 8, N);
      }
    }
  },
);
