// Tensor-core SGEMM on warpgroup MMA (wgmma, sm_90a; TF32 inputs, f32 accumulation): C = alpha·A·B + beta·C
// with A (M×K), B (K×N) and C row-major. TF32 wgmma reads its shared-memory operand K-major only, and B is
// N-contiguous, so the block computes Cᵀ = Bᵀ·Aᵀ: A's tile (BM rows of m, 32 k each) is wgmma's B operand,
// stored by cp.async in the 128-byte swizzle (element (m, k) at swizzle(32·m + k)) and read by the tensor
// cores through a descriptor; B's tile (32 k-rows of 128 n, padded to 136 so that a warp's loads fall in 32
// banks) is read into A fragments, transposed by the column stride and rounded to TF32 (cvt.rna). Two
// warpgroups each multiply 64 columns of the block's 128 (our n) by all BM = 256 rows (our m, wgmma's N):
// the accumulator of m64n256k8, 128 floats a thread. STAGES k-tiles of 32 stream through shared memory by
// cp.async; each k-tile is one group of four wgmma k-steps, and one group stays in flight across the
// barrier (wgmmaWait(1)), so a stage is refilled only STAGES − 2 tiles ahead. The A fragments alternate
// between two sets, so that the in-flight group's registers are not reloaded. The epilogue goes through
// shared memory (rows of 132), 16 bytes per thread along C's rows. A's elements are truncated to TF32 by the
// tensor cores (their low 13 bits dropped); B's are rounded.
// Requirements: M a multiple of 256, N of 128, K of 64. Launch: grid (N / 128, M / 256), block 256.
import {
  blockIdx,
  commitAsync,
  copyAsync4,
  fillFragment,
  fragment,
  gridDim,
  kernel,
  load4,
  loadFragment,
  shared,
  store4,
  storeFragment,
  syncThreads,
  threadIdx,
  waitAsync,
  wgmma,
  wgmmaCommit,
  wgmmaWait,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
} from "tskernel";

// The block tile: BM rows of C (wgmma's N, one m64n256k8 accumulator a warpgroup), BN columns (two
// warpgroups of wgmma's M = 64), BK = 32 k a stage (one 128-byte swizzle row of f32).
const BM = 256;
const BN = 128;
const BK = 32;

export const sgemmWgmma = kernel(
  {
    block: [256],
    // Warpgroup matrix operations: CUDA (sm_90a) and the CPU's emulation; WebGPU has none.
    targets: ["cuda", "js"],
    specializations: [
      // Four stages (two tiles ahead).
      {},
      // Three stages (one tile ahead): less shared memory.
      { STAGES: 3 },
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
    STAGES: Const<i32> = 4,
    SWIZZLE: Const<i32> = 8,
  ) => {
    const ldB = BN + 8;
    const ldE = BN + 4;
    // One array: A's STAGES tiles (each 32 KB, so each starts on a 1024-byte boundary), then B's; the
    // epilogue's staging tile (BM rows of ldE) reuses it from the start.
    const tiles = shared.f32(STAGES * (BM * BK + BK * (BN + 8)));
    const bBase = STAGES * BM * BK;
    const acc = fragment.accumulator("m64n256k8", "f32", 1);
    const a = fragment.a("m64n256k8", "tf32", 8);
    // Blocks in launch order walk SWIZZLE block rows column by column (a partial group at the bottom).
    const pid = blockIdx.y * gridDim.x + blockIdx.x;
    const groupBlocks = SWIZZLE * gridDim.x;
    const firstRow = (pid / groupBlocks) * SWIZZLE;
    const groupRows = Math.min(gridDim.y - firstRow, SWIZZLE);
    const m0 = (firstRow + (pid % groupBlocks) % groupRows) * BM;
    const n0 = ((pid % groupBlocks) / groupRows) * BN;
    const tid = threadIdx.x;
    const group = tid / 128;
    // Private arrays start from zeros only on the CPU: the accumulator is cleared here for every target.
    fillFragment(acc[0], 0);
    const steps = K / BK;
    const ahead = STAGES - 2;
    // The first tiles, one group of copies each.
    for (let s = 0; s < ahead; s++) {
      unrollFirstA: for (let i = 0; i < (BM * BK) / 4 / 256; i++) {
        const c = tid + i * 256;
        const r = c >> 3;
        const piece = c & 7;
        copyAsync4(tiles, s * BM * BK + r * 32 + ((piece ^ (r & 7)) << 2), A, (m0 + r) * K + s * BK + piece * 4);
      }
      unrollFirstB: for (let i = 0; i < (BK * BN) / 4 / 256; i++) {
        const c = tid + i * 256;
        const r = c >> 5;
        const piece = c & 31;
        copyAsync4(tiles, bBase + s * BK * ldB + r * ldB + piece * 4, B, (s * BK + r) * N + n0 + piece * 4);
      }
      commitAsync();
    }
    for (let step = 0; step < steps; step += 2) {
      // Two k-tiles, one for each set of A fragments (h): the in-flight group's set stays untouched.
      unrollPair: for (let h = 0; h < 2; h++) {
        const kt = step + h;
        // This tile has landed once at most ahead − 1 groups of copies are in flight; the barrier publishes
        // every thread's copies (and the compiler's fence.proxy.async, to the tensor cores), and says that
        // every warpgroup's group before the previous one is complete, so its stage may be refilled.
        if (STAGES === 3) {
          waitAsync(0);
        } else {
          waitAsync(1);
        }
        syncThreads();
        const next = kt + ahead;
        if (next < steps) {
          const w = next % STAGES;
          unrollNextA: for (let i = 0; i < (BM * BK) / 4 / 256; i++) {
            const c = tid + i * 256;
            const r = c >> 3;
            const piece = c & 7;
            copyAsync4(tiles, w * BM * BK + r * 32 + ((piece ^ (r & 7)) << 2), A, (m0 + r) * K + next * BK + piece * 4);
          }
          unrollNextB: for (let i = 0; i < (BK * BN) / 4 / 256; i++) {
            const c = tid + i * 256;
            const r = c >> 5;
            const piece = c & 31;
            copyAsync4(tiles, bBase + w * BK * ldB + r * ldB + piece * 4, B, (next * BK + r) * N + n0 + piece * 4);
          }
        }
        commitAsync();
        const s = kt % STAGES;
        // Fragment j of the set: Bᵀ's 64 columns of this warpgroup (rows) by k-step j's 8 k (columns).
        unrollLoad: for (let j = 0; j < 4; j++) {
          loadFragment(a[h * 4 + j], tiles, bBase + s * BK * ldB + 8 * j * ldB + group * 64, 1, ldB);
        }
        unrollMultiply: for (let j = 0; j < 4; j++) {
          wgmma(acc[0], a[h * 4 + j], tiles, s * BM * BK + 8 * j);
        }
        wgmmaCommit();
        wgmmaWait(1);
      }
    }
    wgmmaWait(0);
    // The epilogue: Cᵀ's fragment into the tiles as C's BM × BN tile (rows of ldE), then 16 bytes a thread.
    waitAsync(0);
    syncThreads();
    storeFragment(acc[0], tiles, group * 64, 1, ldE);
    syncThreads();
    unrollOut: for (let i = 0; i < (BM * BN) / 4 / 256; i++) {
      const piece = tid + i * 256;
      const r = piece >> 5;
      const c = (piece & 31) * 4;
      const [x0, x1, x2, x3] = load4(tiles, r * ldE + c);
      const at = (m0 + r) * N + n0 + c;
      // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
      if (beta === 0) {
        store4(C, at, alpha * x0, alpha * x1, alpha * x2, alpha * x3);
      } else {
        const [c0, c1, c2, c3] = load4(C, at);
        store4(C, at, alpha * x0 + beta * c0, alpha * x1 + beta * c1, alpha * x2 + beta * c2, alpha * x3 + beta * c3);
      }
    }
  },
);
