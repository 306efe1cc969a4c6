// Warp-specialized tensor-core SGEMM in clusters of two blocks (wgmma, sm_90a; TF32 inputs, f32 accumulation):
// C = alpha·A·B + beta·C with A (M×K), B (K×N) and C row-major. The multiply and the roles are
// sgemm-wgmma-ws.ts's (the block computes Cᵀ = Bᵀ·Aᵀ: A's 256×32 k-tile is wgmma's B operand in the 128-byte
// swizzle, B's 32×128 k-tile is read into A fragments, rounded to TF32; a producer warpgroup and two consumers
// with "full" and "empty" mbarriers per stage), but the two blocks of a cluster compute neighbouring column
// tiles of the same rows and share A's k-tiles: each copies half of them (128 rows) by the tensor memory
// accelerator into both blocks' stage (`copyTile(…, { multicast: 3 })`), so each block reads 32 KB a k-tile from
// L2 instead of 48 (feeding, not the tensor cores, limits this GEMM on the H100: bench/README.md, "Feeding
// TF32 wgmma"). A stage is refilled only once both blocks' consumers released it: each warp arrives on the empty
// barrier of both blocks (`arriveBarrier(empty, s, { block: r })`), which therefore expects 16 arrivals. The
// blocks meet at syncCluster() after initializing their barriers and before they end (no block may leave while
// the other still arrives on its barriers). The consumers store C straight from their accumulators. A's
// elements are truncated to TF32 by the tensor cores; B's are rounded.
// Requirements: M a multiple of 256, N of 256 (two column tiles a cluster), K of 64; mapA is A's tensor map with
// half-height boxes, createTensorMap(device, A, { rows: M, cols: K, boxRows: 128, boxCols: 32 }). Launch: grid
// (N / 128, M / 256), block 384.
import {
  arriveAfterCopies,
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  clusterRank,
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
  loadFragment,
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
const BM = 256;
const BN = 128;
const BK = 32;

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
    STAGES: Const<i32> = 4,
    SWIZZLE: Const<i32> = 8,
  ) => {
    const ldB = BN + 8;
    // A's STAGES tiles (each 32 KB, so each starts on a 1024-byte boundary) and B's in arrays of their own: only
    // B's is written by cp.async, so the waits need no proxy fence for wgmma's reads of A's.
    const aTiles = shared.f32(STAGES * BM * BK);
    const bTiles = shared.f32(STAGES * BK * (BN + 8));
    // full[s]: the producer's 128 threads have copied stage s (and A's tile has landed). empty[s]: both blocks'
    // consumers' 8 warps are done with it.
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const acc = fragment.accumulator("m64n256k8", "f32", 1);
    const a = fragment.a("m64n256k8", "tf32", 8);
    // Clusters in launch order walk SWIZZLE block rows column pair by column pair (a partial group at the
    // bottom); the cluster's block of rank r takes column tile 2·(its pair) + r.
    const pairs = gridDim.x / 2;
    const pid = blockIdx.y * pairs + (blockIdx.x >> 1);
    const groupBlocks = SWIZZLE * pairs;
    const firstRow = (pid / groupBlocks) * SWIZZLE;
    const groupRows = Math.min(gridDim.y - firstRow, SWIZZLE);
    const m0 = (firstRow + (pid % groupBlocks) % groupRows) * BM;
    const n0 = (((pid % groupBlocks) / groupRows) * 2 + clusterRank) * BN;
    const tid = threadIdx.x;
    const steps = K / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 129);
        // Both blocks' 8 consumer warps: the stage is refilled in both by the multicast.
        initBarrier(empty, s, 16);
      }
    }
    // The other block copies into this one's stages and arrives on its barriers: both are initialized first.
    syncCluster();
    if (warpgroupIdx === 0) {
      // The producer: tile kt into stage kt % STAGES, once the consumers have released the tile before it there.
      // It needs few registers; the consumers' accumulators take the rest (128·56 + 256·224 = 65536 − 1024).
      setMaxRegisters(56);
      for (let kt = 0; kt < steps; kt++) {
        const s = kt % STAGES;
        if (kt >= STAGES) {
          waitBarrier(empty, s, ((kt / STAGES) + 1) & 1);
        }
        // A's BM rows of 32 k (32 KB) that the phase waits for besides the 128 arrivals below: this block's half
        // (rows 128·r …) from its own copy, the other half from the other block's, both multicast to both.
        if (tid === 0) {
          arriveExpectBytes(full, s, BM * BK * 4);
          copyTile(aTiles, s * BM * BK + clusterRank * (BM / 2) * BK, A, mapA, kt * BK, m0 + clusterRank * (BM / 2), full, s, { multicast: 3 });
        }
        unrollB: for (let i = 0; i < (BK * BN) / 4 / 128; i++) {
          const c = tid + i * 128;
          const r = c >> 5;
          const piece = c & 31;
          copyAsync4(bTiles, s * BK * ldB + r * ldB + piece * 4, B, (kt * BK + r) * N + n0 + piece * 4);
        }
        arriveAfterCopies(full, s);
      }
    } else {
      // A consumer: 64 of the block's columns (our n), all BM rows (our m).
      setMaxRegisters(224);
      const group = warpgroupIdx - 1;
      // Private arrays start from zeros only on the CPU: the accumulator is cleared here for every target.
      fillFragment(acc[0], 0);
      for (let step = 0; step < steps; step += 2) {
        // Two k-tiles, one for each set of A fragments (h): the in-flight group's set stays untouched.
        unrollPair: for (let h = 0; h < 2; h++) {
          const kt = step + h;
          const s = kt % STAGES;
          waitBarrier(full, s, (kt / STAGES) & 1);
          unrollLoad: for (let j = 0; j < 4; j++) {
            loadFragment(a[h * 4 + j], bTiles, s * BK * ldB + 8 * j * ldB + group * 64, 1, ldB);
          }
          unrollMultiply: for (let j = 0; j < 4; j++) {
            wgmma(acc[0], a[h * 4 + j], aTiles, s * BM * BK + 8 * j);
          }
          wgmmaCommit();
          wgmmaWait(1);
          // The group of the tile before is complete: lane r of each warp hands its stage back to block r.
          if (kt > 0 && (tid & 31) < 2) {
            arriveBarrier(empty, (kt + STAGES - 1) % STAGES, { block: tid & 31 });
          }
        }
      }
      wgmmaWait(0);
      // The epilogue, straight from the accumulator: element e lies at our n (its row) and our m (its column);
      // each warp's store covers four 32-byte pieces of C's rows.
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
    // No block ends while the other may still arrive on its empty barriers.
    syncCluster();
  },
);
