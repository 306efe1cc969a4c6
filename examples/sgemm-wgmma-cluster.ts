// Warp-specialized tensor-core SGEMM in clusters of two blocks on a persistent grid (wgmma, sm_90a; TF32 inputs,
// f32 accumulation): C = alpha·A·B + beta·C with A (M×K), B (K×N) and C row-major. The block computes its tile as
// Cᵀ = Bᵀ·Aᵀ (TF32 wgmma reads shared operands K-major only, and B is N-major): A's 256×32 k-tile is wgmma's B
// operand in the 128-byte swizzle, B's 32×128 k-tile is read into A fragments, rounded to TF32. A producer
// warpgroup and two consumers hand stages over through "full" and "empty" mbarriers. The two blocks of a cluster
// compute neighbouring column tiles of the same rows and share A's k-tiles: each copies half of them (128 rows)
// by the tensor memory accelerator into both blocks' stage (`copyTile(…, { multicast: 3 })`), so each block reads
// 32 KB a k-tile from L2 instead of 48. B's k-tile comes by the tensor memory accelerator too, as four 32×32
// boxes in the 128-byte swizzle: one thread issues every copy of a stage, whose bytes alone complete it. So that
// the consumers' fragment loads from the swizzle meet no bank conflicts, the rows of a consumer's A fragments are
// a permutation of its 64 columns of C (see `columnInBox` below), and the epilogue stores each element at its
// column. The grid is persistent (a cluster walks units of two tiles), so the producer fills the next tile's
// stages while the consumers store the last one's C. Feeding, not the tensor cores, limits this GEMM on the
// H100: these three steps (multicast, B by TMA, persistence) took it from 83 % to 97 % of torch.mm TF32
// (bench/README.md, "Feeding TF32 wgmma" and what follows it). A stage is refilled only once both blocks'
// consumers released it: each warp arrives on the empty barrier of both blocks (`arriveBarrier(empty, s, { block:
// r })`), which therefore expects 16 arrivals. The blocks meet at syncCluster() after initializing their barriers
// and before they end (no block may leave while the other still arrives on its barriers). The consumers store C
// straight from their accumulators. B's elements are rounded to TF32 in registers; A's are truncated by the
// tensor cores, unless A's map rounds them as it copies (roundToTf32, as matmul()'s maps do: torch.mm's error).
// Requirements: M a multiple of 256, N of 256 (two column tiles a cluster), K of 64; mapA is A's tensor map with
// half-height boxes, createTensorMap(device, A, { rows: M, cols: K, boxRows: 128, boxCols: 32, roundToTf32: true }),
// mapB is B's in 32×32 boxes, createTensorMap(device, B, { rows: K, cols: N, boxRows: 32, boxCols: 32, roundToTf32: true })
// (plain maps work too, with A truncated). Launch: block 384, a
// grid of an even number of blocks, at most one a multiprocessor (matmul() takes min(tiles, multiprocessors)
// rounded down to even; any even grid is correct).
import {
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  clusterRank,
  copyTile,
  fillFragment,
  fragment,
  fragmentColumn,
  fragmentElement,
  gridDim,
  initBarrier,
  kernel,
  setFragmentElement,
  setMaxRegisters,
  shared,
  syncCluster,
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
// warpgroups of wgmma's M = 64), BK = 32 k a stage (one 128-byte swizzle row of f32).
export const BM = 256;
export const BN = 128;
export const BK = 32;

/** Unit u's first row of C: units walk SWIZZLE tile rows pair by pair (a partial group at the bottom). */
export function unitRow(u: i32, M: i32, N: i32, swizzle: i32): i32 {
  const groupUnits = swizzle * (N / BN / 2);
  const firstRow = (u / groupUnits) * swizzle;
  const groupRows = Math.min(M / BM - firstRow, swizzle);
  return (firstRow + (u % groupUnits) % groupRows) * BM;
}

/** Unit u's pair of column tiles (see unitRow). */
export function unitPair(u: i32, M: i32, N: i32, swizzle: i32): i32 {
  const groupUnits = swizzle * (N / BN / 2);
  const firstRow = (u / groupUnits) * swizzle;
  const groupRows = Math.min(M / BM - firstRow, swizzle);
  return (u % groupUnits) / groupRows;
}

/** Where element i of a run of 32-element (128-byte) rows lies in the 128-byte swizzle that copyTile writes. */
export function swizzle128(i: i32): i32 {
  return i ^ (((i >> 5) & 7) << 2);
}

export const sgemmWgmmaCluster = kernel(
  {
    block: [384],
    cluster: [2],
    // Warpgroup matrix operations, mbarriers and clusters: CUDA (sm_90a) and the CPU's emulation; WebGPU has none.
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
    mapB: ReadonlyUint32Array,
    STAGES: Const<i32> = 4,
    SWIZZLE: Const<i32> = 8,
  ) => {
    // A's STAGES tiles (each 32 KB) and B's (each 16 KB, four 32×32 boxes of 4 KB), every box on a 1024-byte
    // boundary (the swizzle's period).
    const aTiles = shared.f32(STAGES * BM * BK);
    const bTiles = shared.f32(STAGES * BK * BN);
    // full[s]: the producer's thread 0 has announced stage s's bytes and they have landed. empty[s]: both
    // blocks' consumers' 8 warps are done with it.
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const acc = fragment.accumulator("m64n256k8", "f32", 1);
    const a = fragment.a("m64n256k8", "tf32", 8);
    // A persistent grid: cluster c walks units c, c + clusters, …; unit u is a pair of column tiles in groups of
    // SWIZZLE block rows; the cluster's block of rank r takes column tile 2·(its pair) + r.
    const clusters = gridDim.x / 2;
    const units = (M / BM) * (N / BN / 2);
    const tid = threadIdx.x;
    const steps = K / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 1);
        // Both blocks' 8 consumer warps: the stage is refilled in both by the multicast.
        initBarrier(empty, s, 16);
      }
    }
    // The other block copies into this one's stages and arrives on its barriers: both are initialized first.
    syncCluster();
    if (warpgroupIdx === 0) {
      // The producer: the block's it-th k-tile (over all its tiles) into stage it % STAGES, once the consumers
      // have released the k-tile before it there. Its thread 0 issues the copies; the warpgroup needs few
      // registers, and the consumers' accumulators take the rest (128·56 + 256·224 = 65536 − 1024).
      setMaxRegisters(56);
      let it = 0;
      for (let u = blockIdx.x >> 1; u < units; u += clusters) {
        const m0 = unitRow(u, M, N, SWIZZLE);
        const n0 = (unitPair(u, M, N, SWIZZLE) * 2 + clusterRank) * BN;
        for (let kt = 0; kt < steps; kt++) {
          const s = it % STAGES;
          if (it >= STAGES) {
            waitBarrier(empty, s, ((it / STAGES) + 1) & 1);
          }
          // A's BM rows of 32 k (32 KB) and B's 32 k-rows of BN columns (16 KB) that the phase waits for: this
          // block's half of A (rows 128·r …) from its own copy, the other half from the other block's, both
          // multicast to both; B's four boxes from this block alone.
          if (tid === 0) {
            arriveExpectBytes(full, s, (BM + BN) * BK * 4);
            copyTile(aTiles, s * BM * BK + clusterRank * (BM / 2) * BK, A, mapA, kt * BK, m0 + clusterRank * (BM / 2), full, s, { multicast: 3 });
            unrollB: for (let b = 0; b < BN / 32; b++) {
              copyTile(bTiles, s * BK * BN + b * 32 * BK, B, mapB, n0 + 32 * b, kt * BK, full, s);
            }
          }
          it++;
        }
      }
    } else {
      // A consumer: 64 of the block's columns (our n), all BM rows (our m).
      setMaxRegisters(224);
      const group = warpgroupIdx - 1;
      // Which of the block's columns each row of this consumer's A fragments holds. Lane (g, q) of warp w holds
      // rows 16w + g and 16w + g + 8 at k-rows q and q + 4 of each k8 step (docs/language.md, the warpgroup A
      // layout); box element (k, c) lies at swizzle128(32k + c), its 16-byte piece c >> 2 XORed with k & 7. For
      // the 32 lanes' loads to hit 32 banks, the eight g of a warp must cover all eight pieces after the XOR with
      // q < 4: row 16w + g is column 4w + (g & 3) + 16(g >> 2) of box 2·group, row 16w + g + 8 the same column
      // of box 2·group + 1 (one box, 1024 elements, further: the same bank).
      const lane = tid & 31;
      const g = lane >> 2;
      const q = lane & 3;
      const columnInBox = 4 * ((tid >> 5) & 3) + (g & 3) + 16 * (g >> 2);
      const box = 2 * group * 32 * BK;
      // k-row q and q + 4 of the first k8 step; k8 step j is 8 rows (256 elements) on, as the XOR repeats every 8 rows.
      const atQ = box + swizzle128(32 * q + columnInBox);
      const atQ4 = box + swizzle128(32 * (q + 4) + columnInBox);
      let it = 0;
      for (let u = blockIdx.x >> 1; u < units; u += clusters) {
        const m0 = unitRow(u, M, N, SWIZZLE);
        const n0 = (unitPair(u, M, N, SWIZZLE) * 2 + clusterRank) * BN;
        // Private arrays start from zeros only on the CPU: the accumulator is cleared here for every target.
        fillFragment(acc[0], 0);
        for (let step = 0; step < steps; step += 2) {
          // Two k-tiles, one for each set of A fragments (h): the in-flight group's set stays untouched.
          unrollPair: for (let h = 0; h < 2; h++) {
            const kt = step + h;
            const s = it % STAGES;
            waitBarrier(full, s, (it / STAGES) & 1);
            const stageB = s * BK * BN;
            unrollLoad: for (let j = 0; j < 4; j++) {
              // Elements a0 (row g, k q), a1 (row g + 8, k q), a2 (row g, k q + 4), a3 (row g + 8, k q + 4).
              setFragmentElement(a[h * 4 + j], 0, bTiles[stageB + atQ + 256 * j]);
              setFragmentElement(a[h * 4 + j], 1, bTiles[stageB + atQ + 32 * BK + 256 * j]);
              setFragmentElement(a[h * 4 + j], 2, bTiles[stageB + atQ4 + 256 * j]);
              setFragmentElement(a[h * 4 + j], 3, bTiles[stageB + atQ4 + 32 * BK + 256 * j]);
            }
            unrollMultiply: for (let j = 0; j < 4; j++) {
              wgmma(acc[0], a[h * 4 + j], aTiles, s * BM * BK + 8 * j);
            }
            wgmmaCommit();
            wgmmaWait(1);
            // The group of the k-tile before is complete: lane r of each warp hands its stage back to block r.
            if (kt > 0 && (tid & 31) < 2) {
              arriveBarrier(empty, (it + STAGES - 1) % STAGES, { block: tid & 31 });
            }
            it++;
          }
        }
        wgmmaWait(0);
        // The tile's last stage, released here: the next tile's first k-tile does not release a stage.
        if ((tid & 31) < 2) {
          arriveBarrier(empty, (it + STAGES - 1) % STAGES, { block: tid & 31 });
        }
        // The epilogue, straight from the accumulator: element e lies at our m (its column) and at the row whose
        // column of C is columnInBox in box 2·group (rows g: elements with e & 2 clear) or 2·group + 1 (rows g + 8).
        const base = m0 * N + n0 + group * 64 + columnInBox;
        unrollStore: for (let e = 0; e < 128; e++) {
          const at = base + fragmentColumn(acc[0], e) * N + (e & 2) * 16;
          // With beta = 0 C is not read at all, as in BLAS (it may hold anything, NaN included).
          if (beta === 0) {
            C[at] = alpha * fragmentElement(acc[0], e);
          } else {
            C[at] = alpha * fragmentElement(acc[0], e) + beta * C[at];
          }
        }
      }
    }
    // No block ends while the other may still arrive on its empty barriers.
    syncCluster();
  },
);
