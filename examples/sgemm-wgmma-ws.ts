// Warp-specialized tensor-core SGEMM on warpgroup MMA (wgmma, sm_90a; TF32 inputs, f32 accumulation):
// C = alpha·A·B + beta·C with A (M×K), B (K×N) and C row-major. The multiply is sgemm-wgmma.ts's (the block
// computes Cᵀ = Bᵀ·Aᵀ: A's tile is wgmma's B operand in the 128-byte swizzle, B's tile is read into A
// fragments, rounded to TF32), but the block's three warpgroups have roles: warpgroup 0, the producer, only
// copies k-tiles into STAGES stages of shared memory (A's tile by the tensor memory accelerator, copyTile from
// one thread, straight into the swizzle; B's by cp.async from all 128 threads, each arriving at the stage's
// "full" mbarrier once its copies land), and warpgroups 1 and 2, the consumers, only wait for a full stage,
// multiply, and hand the stage back through its "empty" mbarrier once their wgmma group on it is complete. No syncThreads() after the barriers' initialization: the warpgroups drift, and the copies of later
// stages overlap the multiplies. One wgmma group stays in flight across tiles (wgmmaWait(1)), so the A
// fragments alternate between two sets. The consumers' epilogue goes through shared memory (rows of 132),
// 16 bytes a thread along C's rows, behind a barrier of their own (an mbarrier of 256 arrivals): code after
// the roles joined would run with the producer's few registers, so the accumulators would spill there. B's elements are
// rounded to TF32 in registers; A's are truncated by the tensor cores unless A's map rounds them as it copies.
// Requirements: M a multiple of 256, N of 128, K of 64; mapA is A's tensor map, createTensorMap(device, A,
// { rows: M, cols: K, boxRows: 256, boxCols: 32, roundToTf32: true }) as matmul() makes it (torch.mm's error; without
// roundToTf32, A truncated). Launch: grid (N / 128, M / 256), block 384.
import {
  arriveAfterCopies,
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyAsync4,
  copyTile,
  fillFragment,
  fragment,
  gridDim,
  initBarrier,
  kernel,
  load4,
  loadFragment,
  setMaxRegisters,
  shared,
  store4,
  storeFragment,
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
// warpgroups of wgmma's M = 64), BK = 32 k a stage (one 128-byte swizzle row of f32).
const BM = 256;
const BN = 128;
const BK = 32;

export const sgemmWgmmaWs = kernel(
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
    STAGES: Const<i32> = 4,
    SWIZZLE: Const<i32> = 8,
  ) => {
    const ldB = BN + 8;
    const ldE = BN + 4;
    // One array: A's STAGES tiles (each 32 KB, so each starts on a 1024-byte boundary), then B's; the
    // epilogue's staging tile (BM rows of ldE) reuses it from the start.
    const tiles = shared.f32(STAGES * (BM * BK + BK * (BN + 8)));
    const bBase = STAGES * BM * BK;
    // full[s]: the producer's 128 threads have copied stage s (and A's tile has landed). empty[s]: the
    // consumers' 8 warps are done with it.
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // joined[0]: the consumers' 256 threads, as a barrier of their own (phase 0: done multiplying; 1: stored).
    const joined = shared.barriers(1);
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
    const steps = K / BK;
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 129);
        initBarrier(empty, s, 8);
      }
      initBarrier(joined, 0, 256);
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      // The producer: tile kt into stage kt % STAGES, once the consumers have released the tile before it there.
      // It needs few registers; the consumers' accumulators take the rest (128·56 + 256·224 = 65536 − 1024).
      setMaxRegisters(56);
      for (let kt = 0; kt < steps; kt++) {
        const s = kt % STAGES;
        if (kt >= STAGES) {
          waitBarrier(empty, s, ((kt / STAGES) + 1) & 1);
        }
        // A's BM rows of 32 k: one box, 32 KB, that the phase waits for besides the 128 arrivals below.
        if (tid === 0) {
          arriveExpectBytes(full, s, BM * BK * 4);
          copyTile(tiles, s * BM * BK, A, mapA, kt * BK, m0, full, s);
        }
        unrollB: for (let i = 0; i < (BK * BN) / 4 / 128; i++) {
          const c = tid + i * 128;
          const r = c >> 5;
          const piece = c & 31;
          copyAsync4(tiles, bBase + s * BK * ldB + r * ldB + piece * 4, B, (kt * BK + r) * N + n0 + piece * 4);
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
            loadFragment(a[h * 4 + j], tiles, bBase + s * BK * ldB + 8 * j * ldB + group * 64, 1, ldB);
          }
          unrollMultiply: for (let j = 0; j < 4; j++) {
            wgmma(acc[0], a[h * 4 + j], tiles, s * BM * BK + 8 * j);
          }
          wgmmaCommit();
          wgmmaWait(1);
          // The group of the tile before is complete: one arrival a warp hands its stage back.
          if (kt > 0 && (tid & 31) === 0) {
            arriveBarrier(empty, (kt + STAGES - 1) % STAGES);
          }
        }
      }
      wgmmaWait(0);
      // The epilogue, by the consumers alone (syncThreads() would wait for the producer, and a role may not
      // call it): once both have finished multiplying (phase 0 of joined), each stores its fragment into the
      // tiles as C's BM × BN tile (rows of ldE); once both have stored (phase 1), 16 bytes a thread go out.
      arriveBarrier(joined, 0);
      waitBarrier(joined, 0, 0);
      storeFragment(acc[0], tiles, group * 64, 1, ldE);
      arriveBarrier(joined, 0);
      waitBarrier(joined, 0, 1);
      const ct = tid - 128;
      unrollOut: for (let i = 0; i < (BM * BN) / 4 / 256; i++) {
        const piece = ct + i * 256;
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
    }
  },
);
