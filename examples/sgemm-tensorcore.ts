// Tensor-core SGEMM (TF32 inputs, f32 accumulation): C = alpha·A·B + beta·C with A (M×K), B (K×N) and C
// row-major. Each block computes a BM×BN tile of C with (BM/WM)·(BN/WN) warps; each warp a WM×WN tile as
// (WM/16)×(WN/8) m16n8k8 accumulator fragments (mma.sync on CUDA, the exact emulation on the CPU). The tiles of
// A and B stream through STAGES shared-memory stages by asynchronous copies (cp.async), so a step's loads
// overlap the STAGES − 1 steps of multiplies before it. The shared rows are padded so that a warp's fragment
// loads fall in 32 different banks: A's rows are BK + 4 floats (lane (g, q) reads word 4g + q), B's BN + 8
// (lane (g, q) reads word 8q + g). Fragment loads round A and B to TF32 (cvt.rna), once per element and warp.
// The block tiles are visited in groups of SWIZZLE block rows, so that tiles running at once share their
// panels of A and B in L2. The epilogue goes through shared memory, one 16-row strip of each warp at a time,
// so that C is read and written 16 bytes per thread along rows.
// Requirements: M, N multiples of BM, BN; K a multiple of BK; BK a multiple of 8 (and of 4·THREADS/BM, 4·THREADS/
// BN... in short: BM·BK and BK·BN multiples of 4·THREADS); WM a multiple of 16, WN of 8 and 16·WN of 128;
// THREADS = 32·(BM/WM)·(BN/WN); 2 ≤ STAGES ≤ 4; (THREADS/32)·16·(WN + 8) ≤ STAGES·BM·(BK + 4).
// Launch: grid (N / BN, M / BM), block THREADS.
import {
  blockIdx,
  commitAsync,
  copyAsync4,
  fragment,
  gridDim,
  kernel,
  load4,
  loadFragment,
  fillFragment,
  mma,
  shared,
  store4,
  storeFragment,
  syncThreads,
  threadIdx,
  waitAsync,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

export const sgemmTensorCore = kernel(
  {
    block: ["THREADS"],
    targets: ["cuda", "js"],
    specializations: [
      // 128×128 tiles of four 64×64 warps, three stages: large aligned products.
      {},
      // Four stages.
      { STAGES: 4 },
      // 128×256 tiles of eight 64×64 warps.
      { BN: 256, THREADS: 256 },
      // 256×128 tiles of eight 64×64 warps.
      { BM: 256, THREADS: 256 },
      // 128×128 tiles of eight 64×32 warps: more warps to hide latency, fewer registers each.
      { WN: 32, THREADS: 256 },
      // Shallower steps (BK = 16) in four stages: two blocks fit a multiprocessor's shared memory.
      { BK: 16, STAGES: 4 },
      { BK: 16, STAGES: 4, WN: 32, THREADS: 256 },
      // Small tiles, for small products and the CPU tests.
      { BM: 64, BN: 64, BK: 16, WM: 32, WN: 32, STAGES: 2, THREADS: 128, SWIZZLE: 0 },
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
    BK: Const<i32> = 32,
    WM: Const<i32> = 64,
    WN: Const<i32> = 64,
    STAGES: Const<i32> = 3,
    THREADS: Const<i32> = 128,
    SWIZZLE: Const<i32> = 8,
  ) => {
    const ldA = BK + 4;
    const ldB = BN + 8;
    const As = shared.f32(STAGES * BM * (BK + 4));
    const Bs = shared.f32(STAGES * BK * (BN + 8));
    const MI = WM / 16;
    const NI = WN / 8;
    const acc = fragment.accumulator("m16n8k8", "f32", (WM / 16) * (WN / 8));
    const a = fragment.a("m16n8k8", "tf32", 2 * (WM / 16));
    const b = fragment.b("m16n8k8", "tf32", 2 * (WN / 8));
    // Blocks in launch order walk SWIZZLE block rows column by column (a partial group at the bottom).
    const pid = blockIdx.y * gridDim.x + blockIdx.x;
    const groupBlocks = Math.max(SWIZZLE, 1) * gridDim.x;
    const firstRow = (pid / groupBlocks) * Math.max(SWIZZLE, 1);
    const groupRows = Math.min(gridDim.y - firstRow, Math.max(SWIZZLE, 1));
    const cRow = SWIZZLE > 0 ? firstRow + (pid % groupBlocks) % groupRows : blockIdx.y;
    const cCol = SWIZZLE > 0 ? (pid % groupBlocks) / groupRows : blockIdx.x;
    const warp = threadIdx.x / 32;
    const lane = threadIdx.x % 32;
    const warpRow = warp / (BN / WN);
    const warpCol = warp % (BN / WN);
    // Each thread copies 16-byte pieces of the tiles: BK/4 per row of A's tile, BN/4 per row of B's.
    const innerRowA = threadIdx.x / (BK / 4);
    const innerColA = (threadIdx.x % (BK / 4)) * 4;
    const rowStrideA = (THREADS * 4) / BK;
    const innerRowB = threadIdx.x / (BN / 4);
    const innerColB = (threadIdx.x % (BN / 4)) * 4;
    const rowStrideB = (THREADS * 4) / BN;
    const aRows = cRow * BM;
    const bCols = cCol * BN;
    unrollInit: for (let f = 0; f < MI * NI; f++) {
      fillFragment(acc[f], 0);
    }
    const steps = K / BK;
    // The first STAGES − 1 tiles, one group of copies each (empty past the end of K).
    for (let s = 0; s < STAGES - 1; s++) {
      if (s < steps) {
        unrollFirstA: for (let r = 0; r < BM; r += rowStrideA) {
          copyAsync4(As, s * BM * ldA + (innerRowA + r) * ldA + innerColA, A, (aRows + innerRowA + r) * K + s * BK + innerColA);
        }
        unrollFirstB: for (let r = 0; r < BK; r += rowStrideB) {
          copyAsync4(Bs, s * BK * ldB + (innerRowB + r) * ldB + innerColB, B, (s * BK + innerRowB + r) * N + bCols + innerColB);
        }
      }
      commitAsync();
    }
    let readStage = 0;
    let writeStage = STAGES - 1;
    for (let step = 0; step < steps; step++) {
      // This step's tiles have landed once at most STAGES − 2 groups are in flight; the barrier makes every
      // thread's copies visible and says that all are done with the stage the previous step read.
      if (STAGES === 2) {
        waitAsync(0);
      } else if (STAGES === 3) {
        waitAsync(1);
      } else {
        waitAsync(2);
      }
      syncThreads();
      const next = step + STAGES - 1;
      if (next < steps) {
        unrollNextA: for (let r = 0; r < BM; r += rowStrideA) {
          copyAsync4(As, writeStage * BM * ldA + (innerRowA + r) * ldA + innerColA, A, (aRows + innerRowA + r) * K + next * BK + innerColA);
        }
        unrollNextB: for (let r = 0; r < BK; r += rowStrideB) {
          copyAsync4(Bs, writeStage * BK * ldB + (innerRowB + r) * ldB + innerColB, B, (next * BK + innerRowB + r) * N + bCols + innerColB);
        }
      }
      commitAsync();
      const aStage = readStage * BM * ldA + warpRow * WM * ldA;
      const bStage = readStage * BK * ldB + warpCol * WN;
      // Fragments in two register buffers: the loads of k-slice kk + 8 go out before the multiplies of kk.
      unrollFirstLoadA: for (let i = 0; i < MI; i++) {
        loadFragment(a[i], As, aStage + i * 16 * ldA, ldA);
      }
      unrollFirstLoadB: for (let j = 0; j < NI; j++) {
        loadFragment(b[j], Bs, bStage + j * 8, ldB);
      }
      unrollK: for (let kk = 0; kk < BK; kk += 8) {
        const current = (kk / 8) % 2;
        if (kk + 8 < BK) {
          unrollLoadA: for (let i = 0; i < MI; i++) {
            loadFragment(a[(1 - current) * MI + i], As, aStage + i * 16 * ldA + kk + 8, ldA);
          }
          unrollLoadB: for (let j = 0; j < NI; j++) {
            loadFragment(b[(1 - current) * NI + j], Bs, bStage + (kk + 8) * ldB + j * 8, ldB);
          }
        }
        unrollMmaI: for (let i = 0; i < MI; i++) {
          unrollMmaJ: for (let j = 0; j < NI; j++) {
            mma(acc[i * NI + j], a[current * MI + i], b[current * NI + j]);
          }
        }
      }
      readStage = readStage + 1 === STAGES ? 0 : readStage + 1;
      writeStage = writeStage + 1 === STAGES ? 0 : writeStage + 1;
    }
    // The epilogue reuses A's stages: each warp stages one 16×WN strip at a time in its own 16 rows of WN + 8.
    waitAsync(0);
    syncThreads();
    const ldE = WN + 8;
    const strip = warp * 16 * ldE;
    unrollEpilogue: for (let i = 0; i < MI; i++) {
      unrollStoreJ: for (let j = 0; j < NI; j++) {
        storeFragment(acc[i * NI + j], As, strip + j * 8, ldE);
      }
      syncThreads();
      unrollOut: for (let p = 0; p < (16 * WN) / 128; p++) {
        const piece = lane + p * 32;
        const r = piece / (WN / 4);
        const c = (piece % (WN / 4)) * 4;
        const [x0, x1, x2, x3] = load4(As, strip + r * ldE + c);
        const at = (aRows + warpRow * WM + i * 16 + r) * N + bCols + warpCol * WN + c;
        // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
        if (beta === 0) {
          store4(C, at, alpha * x0, alpha * x1, alpha * x2, alpha * x3);
        } else {
          const [c0, c1, c2, c3] = load4(C, at);
          store4(C, at, alpha * x0 + beta * c0, alpha * x1 + beta * c1, alpha * x2 + beta * c2, alpha * x3 + beta * c3);
        }
      }
      syncThreads();
    }
  },
);
