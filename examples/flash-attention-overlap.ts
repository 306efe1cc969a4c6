// FlashAttention forward with P in registers (flash-attention-regp.ts) and each consumer's softmax overlapped
// with its own previous P·V, as FlashAttention-3's intra-warpgroup pipelining: per key tile j a consumer issues
// S_j = Q·K_jᵀ, then O += P_{j-1}·V_{j-1} behind it, waits only for S_j (wgmmaWait(1): groups complete in order,
// and the CUDA backend keeps S final there while P·V still runs), computes the softmax of S_j (the exponentials
// in place, in f32) while the tensor cores multiply P·V, then waits for P·V, releases tile j−1's stage, rescales
// O and packs S_j into P's A fragments for the next tile. The first tile's "previous" P·V multiplies P = 0 (an
// exact no-op on O = 0) so that every tile has the same body; the last tile's P·V follows the loop. Since a
// stage now stays in use until the next tile's P·V is done, there are three stages, and each consumer stages its
// O at the end in its own rows of Q's buffer (which its last Q·Kᵀ has finished reading): Q 32 KB, K/V 3 × 64 KB
// at D = 128. The result is the plain kernel's bit for bit on the CPU (the same roundings in the same order).
// Everything else, parameters and launch included, is flash-attention-regp.ts's: seq a multiple of 128, D 64 or
// 128; mapQ 128 × 64 boxes, mapK and mapV 128 × 64, mapO 64 × 64; grid (seq / 128, batch·heads), block 384.
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

export const flashAttentionOverlap = kernel(
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
    L: Float32Array,
    mapQ: ReadonlyUint32Array,
    mapK: ReadonlyUint32Array,
    mapV: ReadonlyUint32Array,
    mapO: ReadonlyUint32Array,
    seq: i32,
    scale: f32,
    causal: i32,
    D: Const<i32> = 128,
    STAGES: Const<i32> = 3,
  ) => {
    // Q's D/64 boxes of BR rows (consumer c's rows 64c… of each, where it stages its O at the end); each stage
    // K's then V's D/64 boxes of BC rows.
    const Qs = shared.bf16(BR * D);
    const KVs = shared.bf16(STAGES * 2 * BC * D);
    const qFull = shared.barriers(1);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const ready = shared.barriers(2);
    const S = fragment.accumulator("m64n128k16", "f32", 1);
    const Oacc = fragment.accumulator("m64n64k16", "f32", D / 64);
    // P (64 × BC) as wgmma's A: one 64 × 16 bf16 fragment per 16 keys.
    const P = fragment.a("m64n64k16", "bf16", BC / 16);
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
        initBarrier(full, s, 1);
        initBarrier(empty, s, 8);
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
        waitBarrier(empty, s, phase ^ 1);
        if (tid === 0) {
          arriveExpectBytes(full, s, stage * 2);
          unrollKV: for (let b = 0; b < D / 64; b++) {
            copyTile(KVs, s * stage + b * BC * 64, K, mapK, 64 * b, head + j * BC, full, s);
            copyTile(KVs, s * stage + BC * D + b * BC * 64, V, mapV, 64 * b, head + j * BC, full, s);
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
      // This consumer's first query row within the head.
      const rows = q0 + 64 * c;
      unrollClear: for (let b = 0; b < D / 64; b++) {
        fillFragment(Oacc[b], 0);
      }
      unrollClearP: for (let kk = 0; kk < BC / 16; kk++) {
        fillFragment(P[kk], 0);
      }
      // Each thread holds two rows of S and O (elements with bit 1 of the index clear, and set): their running
      // maximum and (partial, this thread's columns) sum.
      let m0: f32 = LOW;
      let m1: f32 = LOW;
      let l0: f32 = 0;
      let l1: f32 = 0;
      let s = 0;
      let phase = 0;
      // The stage of the previous tile, whose V the next P·V reads (on the first tile, this tile's: P is 0).
      let sPrev = 0;
      waitBarrier(qFull, 0, 0);
      for (let j = 0; j < tiles; j++) {
        waitBarrier(full, s, phase);
        fillFragment(S[0], 0);
        unrollQK: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(S[0], Qs, (kk >> 2) * BR * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, s * stage + (kk >> 2) * BC * 64 + 16 * (kk & 3));
        }
        wgmmaCommit();
        // The previous tile's P·V behind it, P from this thread's registers.
        unrollPV: for (let kk = 0; kk < BC / 16; kk++) {
          unrollPVColumns: for (let b = 0; b < D / 64; b++) {
            wgmma(Oacc[b], P[kk], KVs, sPrev * stage + BC * D + b * BC * 64 + 1024 * kk, { bMajor: "n", bBoxRows: BC });
          }
        }
        wgmmaCommit();
        // S is final; P·V may still run (it reads P and writes O, which nothing touches before the wait below).
        wgmmaWait(1);
        // Scores in base 2 (scale·log2(e) folded in, so that exp is 2 ** x), the causal mask on the diagonal
        // tile only, and each row's maximum over this tile.
        let x0: f32 = LOW;
        let x1: f32 = LOW;
        if (causal !== 0 && j === tiles - 1) {
          unrollMasked: for (let e = 0; e < 64; e++) {
            let v = fragmentElement(S[0], e) * scale2;
            if (j * BC + fragmentColumn(S[0], e) > rows + fragmentRow(S[0], e)) {
              v = LOW;
            }
            setFragmentElement(S[0], e, v);
            if ((e & 2) === 0) {
              x0 = Math.max(x0, v);
            } else {
              x1 = Math.max(x1, v);
            }
          }
        } else {
          unrollScores: for (let e = 0; e < 64; e++) {
            const v = fragmentElement(S[0], e) * scale2;
            setFragmentElement(S[0], e, v);
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
        // The exponentials in place (f32): P's fragments are still being read.
        unrollExp: for (let e = 0; e < 64; e++) {
          if ((e & 2) === 0) {
            const p = 2 ** (fragmentElement(S[0], e) - n0);
            setFragmentElement(S[0], e, p);
            p0 += p;
          } else {
            const p = 2 ** (fragmentElement(S[0], e) - n1);
            setFragmentElement(S[0], e, p);
            p1 += p;
          }
        }
        l0 = l0 * r0 + p0;
        l1 = l1 * r1 + p1;
        m0 = n0;
        m1 = n1;
        // The previous P·V done: its stage is free (none before the first tile), O can be rescaled, P rewritten.
        wgmmaWait(0);
        if (j > 0 && lane === 0) {
          arriveBarrier(empty, sPrev);
        }
        unrollRescale: for (let b = 0; b < D / 64; b++) {
          unrollRescaleElements: for (let e = 0; e < 32; e++) {
            setFragmentElement(Oacc[b], e, fragmentElement(Oacc[b], e) * ((e & 2) === 0 ? r0 : r1));
          }
        }
        // P into the A fragments: S's element e is element e & 7 of fragment e >> 3 (the same row and column).
        unrollPack: for (let e = 0; e < 64; e++) {
          setFragmentElement(P[e >> 3], e & 7, fragmentElement(S[0], e));
        }
        sPrev = s;
        s++;
        if (s === STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
      // The last tile's P·V (its stage needs no release: the producer loads nothing more).
      unrollLastPV: for (let kk = 0; kk < BC / 16; kk++) {
        unrollLastPVColumns: for (let b = 0; b < D / 64; b++) {
          wgmma(Oacc[b], P[kk], KVs, sPrev * stage + BC * D + b * BC * 64 + 1024 * kk, { bMajor: "n", bBoxRows: BC });
        }
      }
      wgmmaCommit();
      wgmmaWait(0);
      // The rows' sums over all four threads of each row, and O / sum out through this consumer's rows of Q.
      l0 += subgroupShuffleXor(l0, 1);
      l0 += subgroupShuffleXor(l0, 2);
      l1 += subgroupShuffleXor(l1, 1);
      l1 += subgroupShuffleXor(l1, 2);
      const inverse0 = 1 / l0;
      const inverse1 = 1 / l1;
      // The rows' log-sum-exps, by the first thread of each row's four.
      if ((tid & 3) === 0) {
        L[head + rows + fragmentRow(Oacc[0], 0)] = m0 + Math.log2(l0);
        L[head + rows + fragmentRow(Oacc[0], 2)] = m1 + Math.log2(l1);
      }
      unrollNormalize: for (let b = 0; b < D / 64; b++) {
        unrollNormalizeElements: for (let e = 0; e < 32; e++) {
          setFragmentElement(Oacc[b], e, fragmentElement(Oacc[b], e) * ((e & 2) === 0 ? inverse0 : inverse1));
        }
        storeFragment(Oacc[b], Qs, b * BR * 64 + c * 4096, { swizzle: 128, boxRows: 64 });
      }
      // Once all 128 threads of the consumer wrote their part of O, one of them stores it.
      arriveBarrier(ready, c);
      waitBarrier(ready, c, 0);
      if ((tid & 127) === 0) {
        unrollStore: for (let b = 0; b < D / 64; b++) {
          storeTile(O, mapO, 64 * b, head + rows, Qs, b * BR * 64 + c * 4096);
        }
        waitTileStores(0);
      }
    }
  },
);
