// How the H100's TF32 GEMM on warpgroup MMA is fed (issue 22 §4): a measurement, not a rung (bench/README.md,
// "Feeding TF32 wgmma"; bench/tf32-prep.sh builds its variants, bench/wgmma-probe.py times them against torch.mm).
// C = alpha·A·B + beta·C, A (M×K), B (K×N), C row-major, the multiply of examples/sgemm-wgmma-ws.ts (the block
// computes Cᵀ = Bᵀ·Aᵀ: A's 256×32 k-tile is wgmma's B operand in the 128-byte swizzle, B's 32×128 is read into A
// fragments, rounded to TF32) on a persistent grid: each block walks tiles t = blockIdx.x, + gridDim.x, … in
// groups of GROUP tile rows, the producer runs on into the next tile while the consumers store the last one
// straight from their accumulators (each warp's store covers four 32-byte pieces of C's rows).
// ROUND says how A reaches the tensor cores: 0 as the tensor memory accelerator copied it (wgmma then drops its
// low 13 bits: truncation), 1 rounded in place by the producer's threads LAG k-tiles behind the copies (LAG ≤
// STAGES − 2: the consumers release a stage only after the next one is full, so a longer lag deadlocks), 2 loaded
// by the producer's threads into registers, rounded and stored into the swizzle (the producer then keeps 104
// registers and the consumers 200: 104 + 2 · 200 = 504, the block's 168 a thread). FEED (timing only, a wrong
// product) takes copies away: 1 A's tile of every other k-tile, 2 everything after the first lap of stages.
// Requirements: M a multiple of 256, N of 128, K of 64; mapA is A's tensor map, createTensorMap(device, A,
// { rows: M, cols: K, boxRows: 256, boxCols: 32 }). Launch: block 384, a grid of at most one block a
// multiprocessor.
import {
  arriveAfterCopies,
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyAsync4,
  copyTile,
  fillFragment,
  fragment,
  fragmentColumn,
  fragmentElement,
  fragmentRow,
  gridDim,
  initBarrier,
  kernel,
  load4,
  loadFragment,
  local,
  roundTf32,
  setMaxRegisters,
  shared,
  store4,
  syncThreads,
  threadIdx,
  waitBarrier,
  warpgroupIdx,
  wgmma,
  wgmmaCommit,
  wgmmaWait,
  type Const,
  type f32,
  type i32,
  type ReadonlyFloat32Array,
  type ReadonlyUint32Array,
} from "tskernel";

// The block tile: BM rows of C (wgmma's N, one m64n256k8 accumulator a consumer), BN columns (two consumer
// warpgroups of wgmma's M = 64), BK = 32 k a stage (one 128-byte swizzle row of f32). STAGES is 4 (the ring's
// indices are masked with 3).
const BM = 256;
const BN = 128;
const BK = 32;
const STAGES = 4;

export const tf32Feeding = kernel(
  {
    block: [384],
    // Warpgroup matrix operations and mbarriers: CUDA (sm_90a) and the CPU's emulation; WebGPU has neither.
    targets: ["cuda", "js"],
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
    mapA: ReadonlyUint32Array,
    ROUND: Const<i32> = 0,
    LAG: Const<i32> = 2,
    GROUP: Const<i32> = 8,
    FEED: Const<i32> = 0,
  ) => {
    const ldB = BN + 8;
    // A's STAGES tiles (each 32 KB, so each starts on a 1024-byte boundary), then B's.
    const tiles = shared.f32(STAGES * (BM * BK + BK * (BN + 8)));
    const bBase = STAGES * BM * BK;
    // full[s]: stage s is ready for the consumers (B's 128 copies, and A's tile landed, or landed and rounded).
    // empty[s]: the consumers' 8 warps are done with it. landed[s]: A's tile is in (ROUND = 1).
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const landed = shared.barriers(STAGES);
    const acc = fragment.accumulator("m64n256k8", "f32", 1);
    const a = fragment.a("m64n256k8", "tf32", 8);
    // ROUND = 2: the producer's A k-tile on its way from global memory to the stage (16 elements a thread).
    const staged = local.f32(64);
    const tid = threadIdx.x;
    const tilesM = M / BM;
    const tilesN = N / BN;
    const count = tilesM * tilesN;
    const steps = K / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, ROUND === 0 ? 129 : 256);
        initBarrier(empty, s, 8);
        initBarrier(landed, s, 1);
      }
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      // The producer: k-tile number r (counted over all of the block's tiles) into stage r % STAGES, once the
      // consumers have released that stage's use before (on the first lap the parity before phase 0 passes).
      if (ROUND === 2) {
        setMaxRegisters(104);
      } else {
        setMaxRegisters(56);
      }
      let r = 0;
      let rounded = 0;
      for (let t = blockIdx.x; t < count; t += gridDim.x) {
        const perGroup = GROUP * tilesN;
        const firstRow = (t / perGroup) * GROUP;
        const rows = Math.min(tilesM - firstRow, GROUP);
        const m0 = (firstRow + (t % perGroup) % rows) * BM;
        const n0 = ((t % perGroup) / rows) * BN;
        for (let kt = 0; kt < steps; kt++) {
          const s = r & 3;
          if (ROUND === 2) {
            // A's k-tile into registers before the wait for the stage, so that the loads' latency overlaps it.
            unrollLoadA: for (let i = 0; i < (BM * BK) / 4 / 128; i++) {
              const c = tid + i * 128;
              const [x0, x1, x2, x3] = load4(A, (m0 + (c >> 3)) * K + kt * BK + (c & 7) * 4);
              staged[4 * i] = x0;
              staged[4 * i + 1] = x1;
              staged[4 * i + 2] = x2;
              staged[4 * i + 3] = x3;
            }
          }
          waitBarrier(empty, s, ((r >> 2) & 1) ^ 1);
          if (ROUND === 2) {
            // Rounded, into the 128-byte swizzle wgmma reads: piece p of row m at piece p ^ (m & 7).
            unrollStoreA: for (let i = 0; i < (BM * BK) / 4 / 128; i++) {
              const c = tid + i * 128;
              const row = c >> 3;
              store4(tiles, s * BM * BK + row * 32 + (((c & 7) ^ (row & 7)) << 2), roundTf32(staged[4 * i]), roundTf32(staged[4 * i + 1]), roundTf32(staged[4 * i + 2]), roundTf32(staged[4 * i + 3]));
            }
          } else if (FEED === 2 && r >= STAGES) {
            // After the first lap nothing is copied: the consumers' ceiling.
            if (tid === 0) {
              arriveBarrier(full, s);
            }
          } else if (tid === 0) {
            if (FEED === 1 && (kt & 1) === 1) {
              // A's tile of every other k-tile is not copied, halving its traffic.
              arriveBarrier(full, s);
            } else if (ROUND === 1) {
              arriveExpectBytes(landed, s, BM * BK * 4);
              copyTile(tiles, s * BM * BK, A, mapA, kt * BK, m0, landed, s);
            } else {
              arriveExpectBytes(full, s, BM * BK * 4);
              copyTile(tiles, s * BM * BK, A, mapA, kt * BK, m0, full, s);
            }
          }
          if (FEED === 2 && r >= STAGES) {
            arriveBarrier(full, s);
          } else {
            unrollB: for (let i = 0; i < (BK * BN) / 4 / 128; i++) {
              const c = tid + i * 128;
              const row = c >> 5;
              const piece = c & 31;
              copyAsync4(tiles, bBase + s * BK * ldB + row * ldB + piece * 4, B, (kt * BK + row) * N + n0 + piece * 4);
            }
            arriveAfterCopies(full, s);
          }
          if (ROUND === 2) {
            arriveBarrier(full, s);
          }
          r++;
          if (ROUND === 1 && r - rounded > LAG) {
            // Round the A tile copied LAG k-tiles ago in place (16 bytes a thread at a time; the swizzle moves
            // whole 16-byte pieces, so the positions stay), then count this thread's arrival.
            const q = rounded & 3;
            waitBarrier(landed, q, (rounded >> 2) & 1);
            unrollRound: for (let i = 0; i < (BM * BK) / 4 / 128; i++) {
              const at = q * BM * BK + (tid + i * 128) * 4;
              const [x0, x1, x2, x3] = load4(tiles, at);
              store4(tiles, at, roundTf32(x0), roundTf32(x1), roundTf32(x2), roundTf32(x3));
            }
            arriveBarrier(full, q);
            rounded++;
          }
        }
      }
      // The last LAG tiles' rounding.
      while (ROUND === 1 && rounded < r) {
        const q = rounded & 3;
        waitBarrier(landed, q, (rounded >> 2) & 1);
        unrollRoundLast: for (let i = 0; i < (BM * BK) / 4 / 128; i++) {
          const at = q * BM * BK + (tid + i * 128) * 4;
          const [x0, x1, x2, x3] = load4(tiles, at);
          store4(tiles, at, roundTf32(x0), roundTf32(x1), roundTf32(x2), roundTf32(x3));
        }
        arriveBarrier(full, q);
        rounded++;
      }
    } else {
      // A consumer: 64 of each tile's columns (our n), all BM rows (our m).
      if (ROUND === 2) {
        setMaxRegisters(200);
      } else {
        setMaxRegisters(224);
      }
      const group = warpgroupIdx - 1;
      const lane = tid & 31;
      let r = 0;
      for (let t = blockIdx.x; t < count; t += gridDim.x) {
        const perGroup = GROUP * tilesN;
        const firstRow = (t / perGroup) * GROUP;
        const rows = Math.min(tilesM - firstRow, GROUP);
        const m0 = (firstRow + (t % perGroup) % rows) * BM;
        const n0 = ((t % perGroup) / rows) * BN;
        // Private arrays start from zeros only on the CPU: the accumulator is cleared for every tile and target.
        fillFragment(acc[0], 0);
        for (let step = 0; step < steps; step += 2) {
          // Two k-tiles, one for each set of A fragments (h): the in-flight group's set stays untouched.
          unrollPair: for (let h = 0; h < 2; h++) {
            const s = r & 3;
            waitBarrier(full, s, (r >> 2) & 1);
            unrollLoad: for (let j = 0; j < 4; j++) {
              loadFragment(a[h * 4 + j], tiles, bBase + s * BK * ldB + 8 * j * ldB + group * 64, 1, ldB);
            }
            unrollMultiply: for (let j = 0; j < 4; j++) {
              wgmma(acc[0], a[h * 4 + j], tiles, s * BM * BK + 8 * j);
            }
            wgmmaCommit();
            wgmmaWait(1);
            // The group of the k-tile before is complete: one arrival a warp hands its stage back.
            if ((step > 0 || h > 0) && lane === 0) {
              arriveBarrier(empty, (r + 3) & 3);
            }
            r++;
          }
        }
        wgmmaWait(0);
        if (lane === 0) {
          arriveBarrier(empty, (r + 3) & 3);
        }
        // The epilogue, straight from the accumulator: element e lies at our n (its row) and our m (its column).
        const base = m0 * N + n0 + group * 64;
        unrollStore: for (let e = 0; e < 128; e++) {
          const at = base + fragmentColumn(acc[0], e) * N + fragmentRow(acc[0], e);
          // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
          if (beta === 0) {
            C[at] = alpha * fragmentElement(acc[0], e);
          } else {
            C[at] = alpha * fragmentElement(acc[0], e) + beta * C[at];
          }
        }
      }
    }
  },
);
