// 16-bit GEMM on warp-level tensor cores for any shape: C = alpha·A·B + beta·C with A (M×K), B (K×N) and C (M×N)
// row-major in bf16 or f16 (one kernel over the element type T), products accumulated in f32 by mma.sync
// m16n8k16 (sm_80 and later) and the result rounded to T once. It is matmul()'s 16-bit rung where the
// warpgroup rung (hgemm-wgmma-ws.ts, sm_90a) does not run: GPUs before the H100, and shapes whose rows are not
// whole 16-byte units (n or k not a multiple of 8), which tensor maps cannot describe. A block computes a BM×BN
// tile with (BM/WM)·(BN/WN) warps of WM×WN, each (WM/16)×(WN/8) m16n8k16 accumulators. A's and B's k-tiles
// (BM×BK, BK×BN) go into STAGES shared stages by asynchronous copies (copyAsync8: cp.async, 16 bytes), issued
// STAGES − 1 k-tiles ahead of the multiplies, one barrier a k-tile; the warps load their fragments with
// loadMatrix (ldmatrix), from rows padded by 8 elements (16-byte aligned, and the eight rows of each 8×8 matrix
// in different banks). The edges: a piece of 8 elements is copied whole only where it lies inside the matrix
// and the matrix's rows are whole 16-byte units; elsewhere it is loaded element by element into registers, with
// zeros outside (partial tiles multiply zeros), while the k-tile before is multiplied, and stored after. Blocks take tiles in groups of GROUP tile rows (the tiles that run together
// share A's rows and B's columns in L2). The epilogue stores each accumulator element that lies inside C. The
// CPU backend emulates mma.sync with the products in order (docs/language.md §25).
// Requirements: none on the shape; BK a multiple of 16, WM of 16, WN of 8, THREADS = 32·(BM/WM)·(BN/WN),
// STAGES from 2 to 9.
// Launch: grid (ceil(N / BN), ceil(M / BM)), block THREADS.
import {
  blockIdx,
  cast,
  commitAsync,
  copyAsync8,
  dtype,
  f32,
  fillFragment,
  fragment,
  fragmentColumn,
  fragmentElement,
  fragmentRow,
  gridDim,
  kernel,
  loadMatrix,
  local,
  mma,
  shared,
  store8,
  syncThreads,
  threadIdx,
  waitAsync,
  type BufferOf,
  type Const,
  type i32,
  type ReadonlyBufferOf,
} from "tskernel";

export const hgemmMmaGuarded = kernel(
  {
    block: ["THREADS"],
    targets: ["cuda", "js"],
    specializations: [
      // 128×256 tiles of eight 64×64 warps, three stages: the fastest of the builds measured on the H100
      // (bench/README.md, "16-bit GEMM for any shape").
      { T: "bf16" },
      { T: "f16" },
      // 64×128 tiles of eight 32×32 warps, and 64×64 of four: four and eight times the blocks, for products that
      // the large tiles leave multiprocessors idle in (matmul() takes the largest tiles that make 128 blocks).
      { T: "bf16", BM: 64, BN: 128, WM: 32, WN: 32, THREADS: 256 },
      { T: "f16", BM: 64, BN: 128, WM: 32, WN: 32, THREADS: 256 },
      { T: "bf16", BM: 64, BN: 64, WM: 32, WN: 32, THREADS: 128 },
      { T: "f16", BM: 64, BN: 64, WM: 32, WN: 32, THREADS: 128 },
      // Small tiles, for small products and the CPU tests.
      { T: "bf16", BM: 32, BN: 32, BK: 16, WM: 16, WN: 16, THREADS: 128, STAGES: 2 },
      { T: "f16", BM: 32, BN: 32, BK: 16, WM: 16, WN: 16, THREADS: 128, STAGES: 2 },
    ],
  },
  <T extends "bf16" | "f16">(
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyBufferOf<T>,
    B: ReadonlyBufferOf<T>,
    beta: f32,
    C: BufferOf<T>,
    BM: Const<i32> = 128,
    BN: Const<i32> = 256,
    BK: Const<i32> = 32,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    THREADS: Const<i32> = 256,
    STAGES: Const<i32> = 3,
    GROUP: Const<i32> = 8,
  ) => {
    const ldA = BK + 8;
    const ldB = BN + 8;
    const As = shared.of<T>(STAGES * BM * (BK + 8));
    const Bs = shared.of<T>(STAGES * BK * (BN + 8));
    const MI = WM / 16;
    const NI = WN / 8;
    const acc = fragment.accumulator("m16n8k16", "f32", (WM / 16) * (WN / 8));
    const a = fragment.a("m16n8k16", dtype<T>(), WM / 16);
    const b = fragment.b("m16n8k16", dtype<T>(), WN / 8);
    const warp = threadIdx.x / 32;
    const warpRow = warp / (BN / WN);
    const warpCol = warp % (BN / WN);
    // This block's tile: block ids walk GROUP tile rows column by column (a partial group at the bottom).
    const id = blockIdx.y * gridDim.x + blockIdx.x;
    const groupTiles = GROUP * gridDim.x;
    const firstRow = (id / groupTiles) * GROUP;
    const groupRows = Math.min(gridDim.y - firstRow, GROUP);
    const aRows = (firstRow + (id % groupTiles) % groupRows) * BM;
    const bCols = ((id % groupTiles) / groupRows) * BN;
    // Whether a piece of 8 elements that lies inside A (B) starts on 16 bytes: every row is whole 16-byte units.
    const wholeA = K % 8 === 0;
    const wholeB = N % 8 === 0;
    // Pieces of 8 elements: BK/8 a row of A's tile, BN/8 a row of B's; each thread copies every THREADS-th.
    const piecesA = (BM * BK) / 8;
    const piecesB = (BK * BN) / 8;
    // Each thread's pieces: PA of A's, PB of B's; a piece off the fast path goes through these registers.
    const PA = (piecesA + THREADS - 1) / THREADS;
    const PB = (piecesB + THREADS - 1) / THREADS;
    const edges = local.of<T>(8 * (PA + PB));
    unrollInit: for (let f = 0; f < MI * NI; f++) {
      fillFragment(acc[f], 0);
    }
    const steps = (K + BK - 1) / BK;
    // Iteration it multiplies k-tile it (it ≥ 0) and first copies k-tile it + STAGES − 1 into the stage k-tile
    // it − 1 used, so the copies run STAGES − 1 k-tiles ahead: the first STAGES − 1 iterations only copy.
    for (let it = 1 - STAGES; it < steps; it++) {
      if (it >= 0) {
        // k-tile it's group is done (of the groups committed since, STAGES − 2 may still run), and after the
        // barrier every thread's copies of it are visible and every warp is done with k-tile it − 1's stage.
        waitAsync(STAGES - 2);
        syncThreads();
      }
      const fill = it + STAGES - 1;
      const k0 = fill * BK;
      const fillStage = fill % STAGES;
      // k-tile fill's pieces: those inside the matrix with whole 16-byte rows by asynchronous copies, the others
      // element by element into registers (`edges`), whose loads then overlap this iteration's multiplies.
      if (fill < steps) {
        unrollCopyA: for (let i = 0; i < PA; i++) {
          const p = threadIdx.x + i * THREADS;
          const row = aRows + p / (BK / 8);
          const col = k0 + (p % (BK / 8)) * 8;
          if (p < piecesA && wholeA && row < M && col + 8 <= K) {
            copyAsync8(As, fillStage * BM * ldA + (p / (BK / 8)) * ldA + (p % (BK / 8)) * 8, A, row * K + col);
          } else {
            unrollEdgeA: for (let e = 0; e < 8; e++) {
              edges[i * 8 + e] = p < piecesA && row < M && col + e < K ? A[row * K + col + e] : cast<T>(0);
            }
          }
        }
        unrollCopyB: for (let i = 0; i < PB; i++) {
          const p = threadIdx.x + i * THREADS;
          const row = k0 + p / (BN / 8);
          const col = bCols + (p % (BN / 8)) * 8;
          if (p < piecesB && wholeB && row < K && col + 8 <= N) {
            copyAsync8(Bs, fillStage * BK * ldB + (p / (BN / 8)) * ldB + (p % (BN / 8)) * 8, B, row * N + col);
          } else {
            unrollEdgeB: for (let e = 0; e < 8; e++) {
              edges[(PA + i) * 8 + e] = p < piecesB && row < K && col + e < N ? B[row * N + col + e] : cast<T>(0);
            }
          }
        }
      }
      // A group every iteration, empty or not, so that waitAsync's count means the same k-tile throughout.
      commitAsync();
      if (it >= 0) {
        const stage = it % STAGES;
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
      // The edge pieces into fill's stage: k-tile it − 1 used it, and every warp was done with that at the barrier.
      // (The test of the 16-byte path is the copy's, written out again: as a helper, whose arguments are all
      // evaluated, the 128×256 build ran 7 % slower at 4096³ on the H100, bench/README.md.)
      if (fill < steps) {
        unrollEdgeStoreA: for (let i = 0; i < PA; i++) {
          const p = threadIdx.x + i * THREADS;
          const row = aRows + p / (BK / 8);
          const col = k0 + (p % (BK / 8)) * 8;
          if (p < piecesA && !(wholeA && row < M && col + 8 <= K)) {
            const at = fillStage * BM * ldA + (p / (BK / 8)) * ldA + (p % (BK / 8)) * 8;
            store8(As, at, edges[i * 8], edges[i * 8 + 1], edges[i * 8 + 2], edges[i * 8 + 3], edges[i * 8 + 4], edges[i * 8 + 5], edges[i * 8 + 6], edges[i * 8 + 7]);
          }
        }
        unrollEdgeStoreB: for (let i = 0; i < PB; i++) {
          const p = threadIdx.x + i * THREADS;
          const row = k0 + p / (BN / 8);
          const col = bCols + (p % (BN / 8)) * 8;
          if (p < piecesB && !(wholeB && row < K && col + 8 <= N)) {
            const at = fillStage * BK * ldB + (p / (BN / 8)) * ldB + (p % (BN / 8)) * 8;
            const e = (PA + i) * 8;
            store8(Bs, at, edges[e], edges[e + 1], edges[e + 2], edges[e + 3], edges[e + 4], edges[e + 5], edges[e + 6], edges[e + 7]);
          }
        }
      }
    }
    // Each accumulator element inside C, rounded to T once; with beta = 0 C is not read at all, as in BLAS (it
    // may hold anything, NaN included).
    unrollStoreI: for (let i = 0; i < MI; i++) {
      unrollStoreJ: for (let j = 0; j < NI; j++) {
        unrollStoreE: for (let e = 0; e < 4; e++) {
          const row = aRows + warpRow * WM + i * 16 + fragmentRow(acc[i * NI + j], e);
          const col = bCols + warpCol * WN + j * 8 + fragmentColumn(acc[i * NI + j], e);
          if (row < M && col < N) {
            const value = alpha * fragmentElement(acc[i * NI + j], e);
            C[row * N + col] = beta === 0 ? cast<T>(value) : cast<T>(value + beta * f32(C[row * N + col]));
          }
        }
      }
    }
  },
);
