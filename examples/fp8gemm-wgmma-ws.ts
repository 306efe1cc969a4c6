// Warp-specialized fp8 GEMM on warpgroup MMA (wgmma m64n256k32, sm_90a; e4m3 inputs, f32 accumulation, bf16
// output): C = alpha·A·B + beta·C with A (M×K, row-major e4m3), B given as Bᵀ (N×K, row-major e4m3: K-major, the
// layout torch._scaled_mm takes for its second operand) and C (M×N, row-major bf16). alpha carries the product of
// the per-tensor scales of A and B (scale_a·scale_b of torch._scaled_mm). The structure of
// examples/hgemm-wgmma-ws.ts: a persistent grid walking BM×BN tiles in groups of GROUP tile rows; warpgroup 0, the
// producer, copies A's BM×128 box and Bᵀ's BN×128 box (one 128-byte swizzle row of k each: both K-major, as the
// 8-bit wgmma needs) into STAGES stages behind "full" and "empty" mbarriers with the tensor memory accelerator;
// warpgroups 1 and 2, the consumers, each multiply 64 of the tile's rows by its 256 columns, four k32 wgmmas a
// stage, one group in flight. The epilogue is hgemm's: α·acc (+ β·C brought in by copyTile when β ≠ 0) rounded
// once to bf16 into a swizzled 64×256 buffer per consumer, stored by storeTile.
// Requirements: K a multiple of 16 and N of 8 (the tensor maps' rows are whole 16-byte units); tiles at the edges
// are partial (zeros read outside the matrices, stores clipped to C). Tensor maps (createTensorMap): mapA of A with
// boxes of 128 rows × 128 columns, mapB of Bᵀ with 256 × 128, mapC of C with 64 × 64. Launch: block 384, a grid of
// at most one block a multiprocessor. On the H100 (2026-11-27, two runs, bench/README.md "fp8 GEMM"): 106–108 % and
// 105–106 % of torch._scaled_mm at 4096³ and 8192³ (99–103 % of it with use_fast_accum, whose error it matches);
// tests/fp8gemm-wgmma-ws.test.ts runs it on the CPU's emulation and compiles it with nvcc for sm_90a.
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
  setMaxRegisters,
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
  type BFloat16Array,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat8E4M3Array,
  type ReadonlyUint32Array,
} from "tskernel";

// The block tile: BM rows of C (two consumers of 64), BN columns (one m64n256k32 accumulator a consumer),
// BK = 128 k a stage (one 128-byte swizzle row of e4m3). A stage holds A's BM×BK box and Bᵀ's BN×BK box.
const BM = 128;
const BN = 256;
const BK = 128;
// A stage's elements (bytes): BM·BK + BN·BK (module constants are literals).
const STAGE = 49152;

export const fp8gemmWgmmaWs = kernel(
  {
    block: [384],
    // Warpgroup matrix operations, mbarriers and the tensor memory accelerator: CUDA (sm_90a) and the CPU's emulation.
    targets: ["cuda", "js"],
  },
  (
    M: i32,
    N: i32,
    K: i32,
    alpha: f32,
    A: ReadonlyFloat8E4M3Array,
    Bt: ReadonlyFloat8E4M3Array,
    beta: f32,
    C: BFloat16Array,
    mapA: ReadonlyUint32Array,
    mapB: ReadonlyUint32Array,
    mapC: ReadonlyUint32Array,
    STAGES: Const<i32> = 3,
    GROUP: Const<i32> = 8,
  ) => {
    const tiles = shared.e4m3(STAGES * STAGE);
    // Each consumer's epilogue buffer: its 64 rows × 256 columns as four 64×64 boxes.
    const out = shared.bf16(2 * 64 * BN);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // Per consumer: its 128 threads (the buffer is free / written), and the bytes of C's old boxes (β ≠ 0).
    const joined = shared.barriers(2);
    const loaded = shared.barriers(2);
    const acc = fragment.accumulator("m64n256k32", "f32", 1);
    const tid = threadIdx.x;
    // Partial tiles at the edges: the tensor memory accelerator reads zeros outside A, B and C and stores only
    // the elements inside C, so the ragged last tile row, column and k-step need no code of their own.
    const tilesM = (M + BM - 1) / BM;
    const tilesN = (N + BN - 1) / BN;
    const count = tilesM * tilesN;
    const steps = (K + BK - 1) / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 1);
        initBarrier(empty, s, 8);
      }
      for (let c = 0; c < 2; c++) {
        initBarrier(joined, c, 128);
        initBarrier(loaded, c, 1);
      }
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      // The producer: one thread copies; the warpgroup waits together (a wait is warpgroup-wide). It needs few
      // registers; the consumers' accumulators take the rest (128·40 + 256·232 ≤ 65536).
      setMaxRegisters(40);
      let s = 0;
      let phase = 0;
      for (let t = blockIdx.x; t < count; t += gridDim.x) {
        const perGroup = GROUP * tilesN;
        const firstRow = (t / perGroup) * GROUP;
        const rows = Math.min(tilesM - firstRow, GROUP);
        const m0 = (firstRow + (t % perGroup) % rows) * BM;
        const n0 = ((t % perGroup) / rows) * BN;
        for (let kt = 0; kt < steps; kt++) {
          // The stage's use before this one is released (on the first lap the parity of the phase before 0).
          waitBarrier(empty, s, phase ^ 1);
          if (tid === 0) {
            arriveExpectBytes(full, s, STAGE);
            copyTile(tiles, s * STAGE, A, mapA, kt * BK, m0, full, s);
            // Bᵀ's rows n0 … n0 + 255, k from kt·BK: B K-major, 128 bytes of k a row.
            copyTile(tiles, s * STAGE + BM * BK, Bt, mapB, kt * BK, n0, full, s);
          }
          s++;
          if (s === STAGES) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    } else {
      // A consumer: rows 64·c … 64·c + 63 of each tile.
      setMaxRegisters(232);
      const c = warpgroupIdx - 1;
      const lane = tid & 31;
      const leader = (tid & 127) === 0;
      const mine = c * 64 * BN;
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
          unrollK: for (let kk = 0; kk < BK / 32; kk++) {
            wgmma(acc[0], tiles, s * STAGE + c * 64 * BK + 32 * kk, tiles, s * STAGE + BM * BK + 32 * kk);
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
        arriveBarrier(joined, c);
        waitBarrier(joined, c, joinPhase);
        joinPhase ^= 1;
        // With β = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
        if (beta === 0) {
          storeFragment(acc[0], out, mine, { swizzle: 128, boxRows: 64, alpha });
        } else {
          if (leader) {
            arriveExpectBytes(loaded, c, 64 * BN * 2);
            unrollLoadC: for (let j = 0; j < BN / 64; j++) {
              copyTile(out, mine + j * 64 * 64, C, mapC, n0 + 64 * j, m0 + 64 * c, loaded, c);
            }
          }
          waitBarrier(loaded, c, loadPhase);
          loadPhase ^= 1;
          storeFragment(acc[0], out, mine, { swizzle: 128, boxRows: 64, alpha, beta });
        }
        arriveBarrier(joined, c);
        waitBarrier(joined, c, joinPhase);
        joinPhase ^= 1;
        if (leader) {
          unrollStoreC: for (let j = 0; j < BN / 64; j++) {
            storeTile(C, mapC, n0 + 64 * j, m0 + 64 * c, out, mine + j * 64 * 64);
          }
        }
      }
      if (leader) {
        waitTileStores(0);
      }
    }
  },
);
