// Warp-specialized bf16 (and f16: hgemmWgmmaWsF16) GEMM on warpgroup MMA (wgmma m64n256k16, sm_90a; 16-bit
// inputs and output, f32 accumulation): C = alpha·A·B + beta·C with A (M×K), B (K×N) and C row-major, the structure that reached 99 %
// of torch.mm bf16 as a hand-written probe (bench/hgemm-probe.cu, EPI=1). The grid is persistent: each block
// walks tiles t = blockIdx.x, + gridDim.x, …, of BM×BN, in groups of GROUP tile rows so that the blocks running
// together share A's rows and B's columns in L2. Warpgroup 0, the producer, hands k-tiles to the consumers
// through STAGES stages of shared memory, each a "full" and an "empty" mbarrier: one thread copies A's
// BM×64 box (K-major) and B's four 64×64 boxes (N-major) with the tensor memory accelerator (copyTile), and the
// copies' bytes complete the stage. Warpgroups 1 and 2, the consumers, each multiply 64 of the tile's rows
// against all 256 columns: four k16 wgmmas a stage, one group left in flight, the stage before handed back.
// Both wgmma operands are read from the copies as they land: no thread touches them. A consumer's epilogue goes
// through its own 64×256 buffer in the swizzled box layout (storeFragment rounds α·acc, plus β·C that copyTile
// brought in when β ≠ 0, to bf16 once) and out by the tensor memory accelerator (storeTile), while the producer
// already fills the next tile's stages. The consumers' own mbarriers (128 arrivals each) order the buffer's
// writes before the stores, and the stores' reads (waitTileStores) before the next tile's writes.
// Requirements: N and K multiples of 8 (the tensor maps' rows are whole 16-byte units); tiles at the edges
// are partial (zeros read outside the matrices, stores clipped to C). Tensor maps (createTensorMap): mapA of A with boxes
// of 128 rows × 64 columns, mapB of B with 64 × 64, mapC of C with 64 × 64. Launch: block 384, a grid of at most
// one block a multiprocessor (matmul() uses min(tiles, multiprocessors)).
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
  type Float16Array,
  type f32,
  type i32,
  type ReadonlyBFloat16Array,
  type ReadonlyFloat16Array,
  type ReadonlyUint32Array,
} from "tskernel";

// The block tile: BM rows of C (two consumers of 64), BN columns (one m64n256k16 accumulator a consumer),
// BK = 64 k a stage (one 128-byte swizzle row of bf16). A stage holds A's BM×BK box and B's four BK×64 boxes.
const BM = 128;
const BN = 256;
const BK = 64;
// A stage's elements: BM·BK + BK·BN (module constants are literals).
const STAGE = 24576;

export const hgemmWgmmaWs = kernel(
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
    A: ReadonlyBFloat16Array,
    B: ReadonlyBFloat16Array,
    beta: f32,
    C: BFloat16Array,
    mapA: ReadonlyUint32Array,
    mapB: ReadonlyUint32Array,
    mapC: ReadonlyUint32Array,
    STAGES: Const<i32> = 3,
    GROUP: Const<i32> = 8,
  ) => {
    const tiles = shared.bf16(STAGES * STAGE);
    // Each consumer's epilogue buffer: its 64 rows × 256 columns as four 64×64 boxes.
    const out = shared.bf16(2 * 64 * BN);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // Per consumer: its 128 threads (the buffer is free / written), and the bytes of C's old boxes (β ≠ 0).
    const joined = shared.barriers(2);
    const loaded = shared.barriers(2);
    const acc = fragment.accumulator("m64n256k16", "f32", 1);
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
          unrollK: for (let kk = 0; kk < BK / 16; kk++) {
            wgmma(acc[0], tiles, s * STAGE + c * 64 * BK + 16 * kk, tiles, s * STAGE + BM * BK + 1024 * kk, { bMajor: "n", bBoxRows: BK });
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

// The same kernel in f16 (a kernel's buffer types are part of its signature; wgmma …k16.f32.f16.f16).
export const hgemmWgmmaWsF16 = kernel(
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
    A: ReadonlyFloat16Array,
    B: ReadonlyFloat16Array,
    beta: f32,
    C: Float16Array,
    mapA: ReadonlyUint32Array,
    mapB: ReadonlyUint32Array,
    mapC: ReadonlyUint32Array,
    STAGES: Const<i32> = 3,
    GROUP: Const<i32> = 8,
  ) => {
    const tiles = shared.f16(STAGES * STAGE);
    // Each consumer's epilogue buffer: its 64 rows × 256 columns as four 64×64 boxes.
    const out = shared.f16(2 * 64 * BN);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // Per consumer: its 128 threads (the buffer is free / written), and the bytes of C's old boxes (β ≠ 0).
    const joined = shared.barriers(2);
    const loaded = shared.barriers(2);
    const acc = fragment.accumulator("m64n256k16", "f32", 1);
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
          unrollK: for (let kk = 0; kk < BK / 16; kk++) {
            wgmma(acc[0], tiles, s * STAGE + c * 64 * BK + 16 * kk, tiles, s * STAGE + BM * BK + 1024 * kk, { bMajor: "n", bBoxRows: BK });
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
