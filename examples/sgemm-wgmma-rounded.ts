// The TF32 SGEMM of examples/sgemm-wgmma-cluster.ts with A rounded to TF32 (to nearest) instead of truncated by
// the tensor cores, so that its error is torch.mm's (bench/README.md, "Rounding A"). C = alpha·A·B + beta·C, A
// (M×K), B (K×N) and C row-major. A is rounded once for the whole grid, inside the launch, into a scratch copy Ar
// that A's tensor map describes. The producer warpgroup of each block, besides copying, claims half k-tiles of its
// rows (128 rows × 32 k) in rounds of CLAIMS k-tiles, ahead of its copies, atomically (flag 0 → 1), so that the
// blocks that need one row at once share its rounding; rounds what it took from A into Ar; and publishes it
// (syncWarpgroup, then a release add to the round's count). Before a round's copies it waits for that count
// (waitFlag, acquire): the compiler puts the proxy fences that make the rounders' ordinary stores visible to the
// tensor memory accelerator around the barrier, the release and the wait (docs/language.md §23). Everything else —
// clusters of two with A multicast, B by TMA in 32×32 boxes, the permuted fragment rows, the persistent grid — is
// sgemm-wgmma-cluster's, whose comments explain it. The last block to finish sets every flag back to 0, so the
// scratch buffers are ready for the next launch. (Rounding on the way in, per block, ran into shared memory's
// bandwidth; a fourth warpgroup of rounders does not fit: the consumers' accumulators need the registers of a
// 384-thread block. bench/README.md, "Rounding A", has the measurements.)
// Requirements: those of sgemm-wgmma-cluster (M a multiple of 256, N of 256, K of 64; a grid of an even number of
// blocks, at most one a multiprocessor: all of them run at once, as the waits need). mapA is Ar's tensor map,
// createTensorMap(device, Ar, { rows: M, cols: K, boxRows: 128, boxCols: 32 }), mapB is B's,
// createTensorMap(device, B, { rows: K, cols: N, boxRows: 32, boxCols: 32 }); Ar is M×K f32, flags
// 2·(M / 128)·(K / 32) + M / 128 + 1 i32, all 0 before the first launch (each launch leaves them so). Launch:
// block 384.
import {
  arriveBarrier,
  arriveExpectBytes,
  atomicAdd,
  atomicCompareExchange,
  atomicLoad,
  atomicStore,
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
  load4,
  local,
  roundTf32,
  setFragmentElement,
  setMaxRegisters,
  shared,
  store4,
  syncCluster,
  syncThreads,
  syncWarpgroup,
  threadIdx,
  waitBarrier,
  waitFlag,
  warpgroupBroadcast,
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
// The tiles, their order and the swizzle are sgemm-wgmma-cluster's.
import { BK, BM, BN, swizzle128, unitPair, unitRow } from "./sgemm-wgmma-cluster.ts";

export const sgemmWgmmaRounded = kernel(
  {
    block: [384],
    cluster: [2],
    // Warpgroup matrix operations, mbarriers, clusters and ordered atomics: CUDA (sm_90a) and the CPU's emulation.
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
    Ar: Float32Array,
    flags: Int32Array,
    STAGES: Const<i32> = 4,
    SWIZZLE: Const<i32> = 8,
    CLAIMS: Const<i32> = 16,
    LEAD: Const<i32> = 2,
    BATCH: Const<i32> = 2,
  ) => {
    const aTiles = shared.f32(STAGES * BM * BK);
    const bTiles = shared.f32(STAGES * BK * BN);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    // claimed[j]: this block took half k-tile j of the round; last[0]: this block finished last.
    const claimed = shared.i32(CLAIMS);
    // A producer thread's pieces of BATCH half k-tiles between their loads and their rounded stores.
    const held = local.f32(32 * BATCH);
    const last = shared.i32(1);
    const acc = fragment.accumulator("m64n256k8", "f32", 1);
    const a = fragment.a("m64n256k8", "tf32", 8);
    const clusters = gridDim.x / 2;
    const units = (M / BM) * (N / BN / 2);
    const tid = threadIdx.x;
    const steps = K / BK;
    // Flag h·steps + t: half k-tile t of row half h (rows 128h …) is 0 untouched, 1 claimed. Then, at halfTiles +
    // h·steps + r, how many of round r's half k-tiles of row half h are in Ar; at 2·halfTiles + h, how many of row
    // half h's; then, at 2·halfTiles + M / 128, the count of blocks that have finished.
    const halfTiles = (M / (BM / 2)) * steps;
    const finishedAt = 2 * halfTiles + M / (BM / 2);
    if (tid === 0) {
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 1);
        initBarrier(empty, s, 16);
      }
    }
    syncCluster();
    if (warpgroupIdx === 0) {
      // The producer: sgemm-wgmma-cluster's, which also rounds A, in rounds of CLAIMS k-tiles: passes of claims
      // (below) at a unit's start and halfway through each round take half k-tiles of rounds ahead, one thread a
      // half k-tile claiming it if nobody has (a plain look first spares the atomic on rows already done); all 128
      // threads round what a pass took, then publish it. At a round's first k-tile the warpgroup waits for the
      // round's count (whoever rounded its half k-tiles), then for the stage; a unit whose row half is wholly
      // rounded already (its count, read once) skips both.
      // Its loads of BATCH = 2 half k-tiles in flight a thread need 104 registers, the consumers' accumulators
      // take the rest (128·104 + 256·200 = 65536 − 1024; at 168 the consumers' wgmmas serialize).
      setMaxRegisters(104);
      const rounds = (steps + CLAIMS - 1) / CLAIMS;
      let it = 0;
      for (let u = blockIdx.x >> 1; u < units; u += clusters) {
        const m0 = unitRow(u, M, N, SWIZZLE);
        const n0 = (unitPair(u, M, N, SWIZZLE) * 2 + clusterRank) * BN;
        const row0 = m0 + clusterRank * (BM / 2);
        const half = row0 / (BM / 2);
        // Whether every half k-tile of the row half is in Ar already (its count, read once a unit; broadcast from
        // the first thread so that the whole warpgroup takes the same branch): then no claims and no waits.
        const roundedBefore = atomicLoad(flags, 2 * halfTiles + half, "acquire");
        const whole = warpgroupBroadcast(roundedBefore) === steps;
        // kt = −1: the unit's start, which rounds what its first LEAD + 1 rounds need before any copy.
        for (let kt = -1; kt < steps; kt++) {
          if (kt >= 0) {
            // A round's k-tiles are copied once all of them are in Ar, whoever rounded them: one wait a round (a wait
            // a k-tile, in the copies' path, kept the producer from running ahead of the consumers).
            if (!whole && kt % CLAIMS === 0) {
              waitFlag(flags, halfTiles + half * steps + kt / CLAIMS, Math.min(CLAIMS, steps - kt));
            }
            const s = it % STAGES;
            if (it >= STAGES) {
              waitBarrier(empty, s, ((it / STAGES) + 1) & 1);
            }
            if (tid === 0) {
              arriveExpectBytes(full, s, (BM + BN) * BK * 4);
              copyTile(aTiles, s * BM * BK + clusterRank * (BM / 2) * BK, Ar, mapA, kt * BK, row0, full, s, { multicast: 3 });
              unrollB: for (let b = 0; b < BN / 32; b++) {
                copyTile(bTiles, s * BK * BN + b * 32 * BK, B, mapB, n0 + 32 * b, kt * BK, full, s);
              }
            }
            it++;
          }
          // Passes of claims halfway through each round, after the copy: the pass's loads and barriers then overlap
          // the wait for the next stage instead of delaying a copy.
          // A pass at the unit's start claims rounds 0 … LEAD; halfway through round r, round r + LEAD + 1. (Passes
          // that shared a round between the blocks on its row, a few half k-tiles each with a sweep for the rest
          // before the round's wait, ran slower: bench/README.md, "Rounding A in the language".)
          const firstRound = kt < 0 ? 0 : kt / CLAIMS + LEAD + 1;
          const endRound = whole ? 0 : Math.min(kt < 0 ? LEAD + 1 : kt % CLAIMS === CLAIMS >> 1 ? kt / CLAIMS + LEAD + 2 : 0, rounds);
          for (let r = firstRound; r < endRound; r++) {
            const t0 = r * CLAIMS;
            if (tid < CLAIMS) {
              let won = 0;
              if (t0 + tid < steps) {
                const state = atomicLoad(flags, half * steps + t0 + tid);
                if (state === 0) {
                  const before = atomicCompareExchange(flags, half * steps + t0 + tid, 0, 1);
                  if (before === 0) {
                    won = 1;
                  }
                }
              }
              claimed[tid] = won;
            }
            syncWarpgroup();
            // BATCH half k-tiles at once: their loads are in flight together (the rounding waits on memory).
            for (let j0 = 0; j0 < CLAIMS; j0 += BATCH) {
              unrollLoads: for (let b = 0; b < BATCH; b++) {
                if (claimed[j0 + b] === 1) {
                  // 128 rows of 32 k: 1024 pieces of 4, eight a thread (piece tid + 128i: row p / 8, k 4·(p % 8)).
                  unrollLoadPieces: for (let i = 0; i < 8; i++) {
                    const p = tid + 128 * i;
                    const [x, y, z, w] = load4(A, (row0 + (p >> 3)) * K + (t0 + j0 + b) * BK + 4 * (p & 7));
                    held[32 * b + 4 * i] = x;
                    held[32 * b + 4 * i + 1] = y;
                    held[32 * b + 4 * i + 2] = z;
                    held[32 * b + 4 * i + 3] = w;
                  }
                }
              }
              unrollStores: for (let b = 0; b < BATCH; b++) {
                if (claimed[j0 + b] === 1) {
                  unrollStorePieces: for (let i = 0; i < 8; i++) {
                    const p = tid + 128 * i;
                    const h = 32 * b + 4 * i;
                    store4(Ar, (row0 + (p >> 3)) * K + (t0 + j0 + b) * BK + 4 * (p & 7), roundTf32(held[h]), roundTf32(held[h + 1]), roundTf32(held[h + 2]), roundTf32(held[h + 3]));
                  }
                }
              }
            }
            // Every thread's stores, then one more of the round's half k-tiles done: the barrier (with the fence the
            // compiler puts before it, and the one after the round's wait) publishes them to every block's copies.
            syncWarpgroup();
            if (tid < CLAIMS) {
              if (claimed[tid] === 1) {
                atomicAdd(flags, halfTiles + half * steps + r, 1, "release");
                atomicAdd(flags, 2 * halfTiles + half, 1, "release");
              }
            }
          }
        }
      }
    } else {
      // A consumer: 64 of the block's columns (our n), all BM rows (our m).
      setMaxRegisters(200);
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
    syncCluster();
    // The last block to get here sets every flag back to 0 for the next launch: the others are done with them.
    if (tid === 0) {
      const finished = atomicAdd(flags, finishedAt, 1, "acqRel");
      last[0] = finished === gridDim.x - 1 ? 1 : 0;
    }
    syncThreads();
    if (last[0] === 1) {
      for (let i = tid; i <= finishedAt; i += 384) {
        atomicStore(flags, i, 0);
      }
    }
  },
);
