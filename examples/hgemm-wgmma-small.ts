// Warp-specialized 16-bit GEMM on warpgroup MMA in small tiles (wgmma m64n128k16, sm_90a; bf16 or f16 inputs and
// output, one kernel over the element type T, f32 accumulation): C = alpha·A·B + beta·C with A (M×K), B (K×N) and
// C row-major. It is hgemm-wgmma-ws.ts's structure (read that file's comment first) with a quarter of its tile:
// 64×128 instead of 128×256, one consumer warpgroup instead of two. matmul() takes it where the large tiles leave
// a quarter or more of the multiprocessors idle: at 1024³ the large kernel has 32 tiles for the H100's 132
// multiprocessors, this one 128. A block is 256 threads: warpgroup 0 copies A's 64×64 box and B's two 64×64 boxes of each k-tile into
// STAGES stages (copyTile, whose bytes complete the stage's "full" mbarrier); warpgroup 1 multiplies them as they
// land (four k16 wgmmas a stage, one group in flight, the stage before handed back on its "empty" mbarrier), then
// writes α·acc (+ β·C, which copyTile brought in) rounded to T into a 64×128 buffer in the swizzled box layout
// and stores it with the tensor memory accelerator while the producer already fills the next tile's stages. The
// grid is persistent (blocks walk tiles t = blockIdx.x, + gridDim.x, … in groups of GROUP tile rows). Seven
// stages (185 KiB with the buffer): on the H100 the deeper the pipeline the faster at 1024³ and above (eight best
// there, six at 512³ and 768³), though three would let two blocks share a multiprocessor (bench/README.md, "Small
// 16-bit products").
// Requirements: N and K multiples of 8 (the tensor maps' rows are whole 16-byte units); tiles at the edges are
// partial (zeros read outside the matrices, stores clipped to C). Tensor maps (createTensorMap): mapA of A, mapB
// of B and mapC of C, each in boxes of 64 × 64. Launch: block 256, any grid (matmul() uses min(tiles,
// multiprocessors)).
import {
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyTile,
  fillFragment,
  fragment,
  gridDim,
  initBarrier,
  kernel,
  shared,
  storeFragment,
  storeTile,
  syncThreads,
  threadIdx,
  waitBarrier,
  waitTileStores,
  warpgroupIdx,
  wgmma,
  wgmmaCommit,
  wgmmaWait,
  type BufferOf,
  type Const,
  type f32,
  type i32,
  type ReadonlyBufferOf,
  type ReadonlyUint32Array,
} from "tskernel";

// The block tile: BM rows of C (one consumer of 64), BN columns (one m64n128k16 accumulator), BK = 64 k a stage
// (one 128-byte swizzle row of 16-bit elements). A stage holds A's BM×BK box and B's two BK×64 boxes.
const BM = 64;
const BN = 128;
const BK = 64;
// A stage's elements: BM·BK + BK·BN (module constants are literals).
const STAGE = 12288;

export const hgemmWgmmaSmall = kernel(
  {
    block: [256],
    // Warpgroup matrix operations, mbarriers and the tensor memory accelerator: CUDA (sm_90a) and the CPU's emulation.
    targets: ["cuda", "js"],
    specializations: [{ T: "bf16" }, { T: "f16" }],
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
    mapA: ReadonlyUint32Array,
    mapB: ReadonlyUint32Array,
    mapC: ReadonlyUint32Array,
    STAGES: Const<i32> = 7,
    GROUP: Const<i32> = 8,
  ) => {
    const tiles = shared.of<T>(STAGES * STAGE);
    // The consumer's epilogue buffer: 64 rows × 128 columns as two 64×64 boxes.
    const out = shared.of<T>(BM * BN);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // The consumer's 128 threads (the buffer is free / written), and the bytes of C's old boxes (β ≠ 0).
    const joined = shared.barriers(1);
    const loaded = shared.barriers(1);
    const acc = fragment.accumulator("m64n128k16", "f32", 1);
    const tid = threadIdx.x;
    const tilesM = (M + BM - 1) / BM;
    const tilesN = (N + BN - 1) / BN;
    const count = tilesM * tilesN;
    const steps = (K + BK - 1) / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 1);
        initBarrier(empty, s, 4);
      }
      initBarrier(joined, 0, 128);
      initBarrier(loaded, 0, 1);
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      // The producer: one thread copies; the warpgroup waits together (a wait is warpgroup-wide). (No register
      // moves between the warpgroups: the consumer's accumulator is 64 registers, 90 a thread in all.)
      let s = 0;
      let phase = 0;
      for (let t = blockIdx.x; t < count; t += gridDim.x) {
        const perGroup = GROUP * tilesN;
        const firstRow = (t / perGroup) * GROUP;
        const rows = Math.min(tilesM - firstRow, GROUP);
        const m0 = (firstRow + (t % perGroup) % rows) * BM;
        const n0 = ((t % perGroup) / rows) * BN;
        for (let kt = 0; kt < steps; kt++) {
          waitBarrier(empty, s, phase ^ 1);
          if (tid === 0) {
            arriveExpectBytes(full, s, STAGE * 2);
            copyTile(tiles, s * STAGE, A, mapA, kt * BK, m0, full, s);
            unrollB: for (let j = 0; j < BN / 64; j++) {
              copyTile(tiles, s * STAGE + BM * BK + j * 64 * BK, B, mapB, n0 + 64 * j, kt * BK, full, s);
            }
          }
          s++;
          if (s === STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    } else {
      // The consumer: all 64 rows and 128 columns of each tile.
      const lane = tid & 31;
      const leader = (tid & 127) === 0;
      let s = 0;
      let phase = 0;
      let joinPhase = 0;
      let loadPhase = 0;
      for (let t = blockIdx.x; t < count; t += gridDim.x) {
        const perGroup = GROUP * tilesN;
        const firstRow = (t / perGroup) * GROUP;
        const rows = Math.min(tilesM - firstRow, GROUP);
        const m0 = (firstRow + (t % perGroup) % rows) * BM;
        const n0 = ((t % perGroup) / rows) * BN;
        // Private arrays start from zeros only on the CPU: the accumulator is cleared for every tile and target.
        fillFragment(acc[0], 0);
        let previous = 0;
        for (let kt = 0; kt < steps; kt++) {
          waitBarrier(full, s, phase);
          unrollK: for (let kk = 0; kk < BK / 16; kk++) {
            wgmma(acc[0], tiles, s * STAGE + 16 * kk, tiles, s * STAGE + BM * BK + 1024 * kk, { bMajor: "n", bBoxRows: BK });
          }
          wgmmaCommit();
          wgmmaWait(1);
          // The group before this one is complete: one arrival a warp hands its stage back.
          if (kt > 0 && lane === 0) {
            arriveBarrier(empty, previous);
          }
          previous = s;
          s++;
          if (s === STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
        wgmmaWait(0);
        if (lane === 0) {
          arriveBarrier(empty, previous);
        }
        // The epilogue: once the last tile's stores have read the buffer, write this tile into it, then store.
        if (leader) {
          waitTileStores(0);
        }
        arriveBarrier(joined, 0);
        waitBarrier(joined, 0, joinPhase);
        joinPhase ^= 1;
        // With β = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
        if (beta === 0) {
          storeFragment(acc[0], out, 0, { swizzle: 128, boxRows: 64, alpha });
        } else {
          if (leader) {
            arriveExpectBytes(loaded, 0, BM * BN * 2);
            unrollLoadC: for (let j = 0; j < BN / 64; j++) {
              copyTile(out, j * 64 * 64, C, mapC, n0 + 64 * j, m0, loaded, 0);
            }
          }
          waitBarrier(loaded, 0, loadPhase);
          loadPhase ^= 1;
          storeFragment(acc[0], out, 0, { swizzle: 128, boxRows: 64, alpha, beta });
        }
        arriveBarrier(joined, 0);
        waitBarrier(joined, 0, joinPhase);
        joinPhase ^= 1;
        if (leader) {
          unrollStoreC: for (let j = 0; j < BN / 64; j++) {
            storeTile(C, mapC, n0 + 64 * j, m0, out, j * 64 * 64);
          }
        }
      }
      if (leader) {
        waitTileStores(0);
      }
    }
  },
);
