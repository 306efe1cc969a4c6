// FlashAttention forward, pipelined within each consumer warpgroup: examples/flash-attention.ts's kernel (read it
// first; the same arguments, layout, requirements and launch) with the next key tile's S = Q·Kᵀ issued before
// this tile's softmax, so that the tensor cores multiply while the consumer's threads compute exponentials, as
// FlashAttention-3 does within a warpgroup. Each consumer holds two S accumulators (S[0] for even tiles, S[1] for
// odd ones: the tile loop is unrolled by pairs so that every fragment index is a constant). K and V have barriers
// of their own, as in FlashAttention-3: at the top of tile j the consumer waits for every group (tile j's Q·Kᵀ
// and tile j − 1's P·V), hands back K_j's and V_{j−1}'s stages, and issues tile j + 1's Q·Kᵀ, which the tensor
// cores run during tile j's softmax; with one set of barriers a stage, tile j + 1 would be waited for before
// tile j − 1's stage went back, and two stages would deadlock (the CPU emulation reported it).
// Measured slower than the plain kernel on the H100 (2026-11-26, in one run: 57.0 / 59.7 / 54.7 / 57.9 % of cuDNN's
// forward on bench/README.md's four shapes, against 64.9 / 68.2 / 58.8 / 67.4 %;
// bench/results/2026-11-26-flash-attention-h100-pipelined.json): the wait at the top of each tile also waits for
// the P·V just issued, so only Q·Kᵀ overlaps, and the two consumers already overlapped each other's softmax.
// Kept as the form FlashAttention-3's schedule takes in the language; attention() runs the plain kernel.
import {
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyTile,
  fillFragment,
  fragment,
  fragmentColumn,
  fragmentElement,
  fragmentRow,
  initBarrier,
  kernel,
  setFragmentElement,
  setMaxRegisters,
  shared,
  storeFragment,
  storeTile,
  subgroupShuffleXor,
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
  type ReadonlyBFloat16Array,
  type ReadonlyUint32Array,
} from "tskernel";

// Query rows a block (two consumers of 64) and key rows a tile.
const BR = 128;
const BC = 128;
// The lowest f32 that every target prints back exactly: a masked score, whose exp is 0.
const LOW = -3.4028233e38;

export const flashAttentionPipelined = kernel(
  {
    block: [384],
    specializations: [{ D: 128 }, { D: 64 }],
    // Warpgroup matrix operations, mbarriers and the tensor memory accelerator: CUDA (sm_90a) and the CPU's emulation.
    targets: ["cuda", "js"],
  },
  (
    Q: ReadonlyBFloat16Array,
    K: ReadonlyBFloat16Array,
    V: ReadonlyBFloat16Array,
    O: BFloat16Array,
    mapQ: ReadonlyUint32Array,
    mapK: ReadonlyUint32Array,
    mapV: ReadonlyUint32Array,
    mapO: ReadonlyUint32Array,
    seq: i32,
    scale: f32,
    causal: i32,
    D: Const<i32> = 128,
    STAGES: Const<i32> = 2,
  ) => {
    // Q's D/64 boxes of BR rows; each stage K's then V's D/64 boxes of BC rows; each consumer's P (64 × BC, two
    // boxes of 64 rows), which also stages its O at the end.
    const Qs = shared.bf16(BR * D);
    const KVs = shared.bf16(STAGES * 2 * BC * D);
    const Ps = shared.bf16(2 * 64 * BC);
    const qFull = shared.barriers(1);
    // K and V of a stage have barriers of their own: K's stage goes back once Q·Kᵀ is done, V's once P·V is.
    const fullK = shared.barriers(STAGES);
    const fullV = shared.barriers(STAGES);
    const emptyK = shared.barriers(STAGES);
    const emptyV = shared.barriers(STAGES);
    const ready = shared.barriers(2);
    // Two S accumulators: the tile being softmaxed and the next one being multiplied.
    const S = fragment.accumulator("m64n128k16", "f32", 2);
    const Oacc = fragment.accumulator("m64n64k16", "f32", D / 64);
    const tid = threadIdx.x;
    const stage = 2 * BC * D;
    // Scores in base 2: softmax(scale·s) = 2 ** (scale·log2(e)·s − max) / sum.
    const scale2 = scale * Math.LOG2E;
    const q0 = blockIdx.x * BR;
    const head = blockIdx.y * seq;
    // Key tiles: all of them, or with causal ≠ 0 those that reach no later than the block's last query row.
    const tiles = causal !== 0 ? (q0 + BR) / BC : seq / BC;
    if (tid === 0) {
      initBarrier(qFull, 0, 1);
      for (let s = 0; s < STAGES; s++) {
        initBarrier(fullK, s, 1);
        initBarrier(fullV, s, 1);
        initBarrier(emptyK, s, 8);
        initBarrier(emptyV, s, 8);
      }
      initBarrier(ready, 0, 128);
      initBarrier(ready, 1, 128);
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      setMaxRegisters(40);
      if (tid === 0) {
        arriveExpectBytes(qFull, 0, BR * D * 2);
        unrollQ: for (let b = 0; b < D / 64; b++) {
          copyTile(Qs, b * BR * 64, Q, mapQ, 64 * b, head + q0, qFull, 0);
        }
      }
      let s = 0;
      let phase = 0;
      for (let j = 0; j < tiles; j++) {
        waitBarrier(emptyK, s, phase ^ 1);
        if (tid === 0) {
          arriveExpectBytes(fullK, s, BC * D * 2);
          unrollK: for (let b = 0; b < D / 64; b++) {
            copyTile(KVs, s * stage + b * BC * 64, K, mapK, 64 * b, head + j * BC, fullK, s);
          }
        }
        waitBarrier(emptyV, s, phase ^ 1);
        if (tid === 0) {
          arriveExpectBytes(fullV, s, BC * D * 2);
          unrollV: for (let b = 0; b < D / 64; b++) {
            copyTile(KVs, s * stage + BC * D + b * BC * 64, V, mapV, 64 * b, head + j * BC, fullV, s);
          }
        }
        s++;
        if (s === STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
    } else {
      setMaxRegisters(232);
      const c = warpgroupIdx - 1;
      const lane = tid & 31;
      const mine = c * 64 * BC;
      // This consumer's first query row within the head.
      const rows = q0 + 64 * c;
      unrollClear: for (let b = 0; b < D / 64; b++) {
        fillFragment(Oacc[b], 0);
      }
      // Each thread holds two rows of S and O (elements with bit 1 of the index clear, and set): their running
      // maximum and (partial, this thread's columns) sum.
      let m0: f32 = LOW;
      let m1: f32 = LOW;
      let l0: f32 = 0;
      let l1: f32 = 0;
      let readyPhase = 0;
      waitBarrier(qFull, 0, 0);
      // The first tile's S = Q·Kᵀ, into S[0].
      waitBarrier(fullK, 0, 0);
      fillFragment(S[0], 0);
      unrollQK0: for (let kk = 0; kk < D / 16; kk++) {
        wgmma(S[0], Qs, (kk >> 2) * BR * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, (kk >> 2) * BC * 64 + 16 * (kk & 3));
      }
      wgmmaCommit();
      for (let pair = 0; pair < tiles; pair += 2) {
        unrollPair: for (let h = 0; h < 2; h++) {
          const j = pair + h;
          if (j < tiles) {
            // Tile j is in S[h] (issued the iteration before) and stage j % STAGES; the next goes into S[1 − h].
            const s = j % STAGES;
            // Tile j's Q·Kᵀ and tile j − 1's P·V are complete: K_j's and V_{j−1}'s stages go back.
            wgmmaWait(0);
            if (lane === 0) {
              arriveBarrier(emptyK, s);
              if (j > 0) {
                arriveBarrier(emptyV, (j + STAGES - 1) % STAGES);
              }
            }
            // The next tile's Q·Kᵀ runs on the tensor cores during this tile's softmax.
            if (j + 1 < tiles) {
              const next = (j + 1) % STAGES;
              waitBarrier(fullK, next, ((j + 1) / STAGES) & 1);
              fillFragment(S[1 - h], 0);
              unrollQK: for (let kk = 0; kk < D / 16; kk++) {
                wgmma(S[1 - h], Qs, (kk >> 2) * BR * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, next * stage + (kk >> 2) * BC * 64 + 16 * (kk & 3));
              }
              wgmmaCommit();
            }
            // Scores in base 2 (scale·log2(e) folded in, so that exp is 2 ** x), the causal mask on the diagonal
            // tile only, and each row's maximum over this tile.
            let x0: f32 = LOW;
            let x1: f32 = LOW;
            if (causal !== 0 && j === tiles - 1) {
              unrollMasked: for (let e = 0; e < 64; e++) {
                let v = fragmentElement(S[h], e) * scale2;
                if (j * BC + fragmentColumn(S[h], e) > rows + fragmentRow(S[h], e)) {
                  v = LOW;
                }
                setFragmentElement(S[h], e, v);
                if ((e & 2) === 0) {
                  x0 = Math.max(x0, v);
                } else {
                  x1 = Math.max(x1, v);
                }
              }
            } else {
              unrollScores: for (let e = 0; e < 64; e++) {
                const v = fragmentElement(S[h], e) * scale2;
                setFragmentElement(S[h], e, v);
                if ((e & 2) === 0) {
                  x0 = Math.max(x0, v);
                } else {
                  x1 = Math.max(x1, v);
                }
              }
            }
            x0 = Math.max(x0, subgroupShuffleXor(x0, 1));
            x0 = Math.max(x0, subgroupShuffleXor(x0, 2));
            x1 = Math.max(x1, subgroupShuffleXor(x1, 1));
            x1 = Math.max(x1, subgroupShuffleXor(x1, 2));
            const n0 = Math.max(m0, x0);
            const n1 = Math.max(m1, x1);
            // The earlier tiles' weights relative to the new maximum (0 on the first tile, whose m is LOW).
            const r0 = 2 ** (m0 - n0);
            const r1 = 2 ** (m1 - n1);
            let p0: f32 = 0;
            let p1: f32 = 0;
            unrollExp: for (let e = 0; e < 64; e++) {
              if ((e & 2) === 0) {
                const p = 2 ** (fragmentElement(S[h], e) - n0);
                setFragmentElement(S[h], e, p);
                p0 += p;
              } else {
                const p = 2 ** (fragmentElement(S[h], e) - n1);
                setFragmentElement(S[h], e, p);
                p1 += p;
              }
            }
            l0 = l0 * r0 + p0;
            l1 = l1 * r1 + p1;
            m0 = n0;
            m1 = n1;
            unrollRescale: for (let b = 0; b < D / 64; b++) {
              unrollRescaleElements: for (let e = 0; e < 32; e++) {
                setFragmentElement(Oacc[b], e, fragmentElement(Oacc[b], e) * ((e & 2) === 0 ? r0 : r1));
              }
            }
            // P as bf16 into this consumer's buffer; once all 128 threads wrote theirs, O += P·V.
            storeFragment(S[h], Ps, mine, { swizzle: 128, boxRows: 64 });
            arriveBarrier(ready, c);
            waitBarrier(ready, c, readyPhase);
            readyPhase ^= 1;
            waitBarrier(fullV, s, (j / STAGES) & 1);
            unrollPV: for (let kk = 0; kk < BC / 16; kk++) {
              unrollPVColumns: for (let b = 0; b < D / 64; b++) {
                wgmma(Oacc[b], Ps, mine + (kk >> 2) * 4096 + 16 * (kk & 3), KVs, s * stage + BC * D + b * BC * 64 + 1024 * kk, { bMajor: "n", bBoxRows: BC });
              }
            }
            // Left in flight: the next tile's wait completes it, with the next Q·Kᵀ.
            wgmmaCommit();
          }
        }
      }
      wgmmaWait(0);
      if (lane === 0) {
        arriveBarrier(emptyV, (tiles + STAGES - 1) % STAGES);
      }
      // The rows' sums over all four threads of each row, and O / sum out through the buffer.
      l0 += subgroupShuffleXor(l0, 1);
      l0 += subgroupShuffleXor(l0, 2);
      l1 += subgroupShuffleXor(l1, 1);
      l1 += subgroupShuffleXor(l1, 2);
      const inverse0 = 1 / l0;
      const inverse1 = 1 / l1;
      unrollNormalize: for (let b = 0; b < D / 64; b++) {
        unrollNormalizeElements: for (let e = 0; e < 32; e++) {
          setFragmentElement(Oacc[b], e, fragmentElement(Oacc[b], e) * ((e & 2) === 0 ? inverse0 : inverse1));
        }
        storeFragment(Oacc[b], Ps, mine + b * 4096, { swizzle: 128, boxRows: 64 });
      }
      arriveBarrier(ready, c);
      waitBarrier(ready, c, readyPhase);
      if ((tid & 127) === 0) {
        unrollStore: for (let b = 0; b < D / 64; b++) {
          storeTile(O, mapO, 64 * b, head + rows, Ps, mine + b * 4096);
        }
        waitTileStores(0);
      }
    }
  },
);
