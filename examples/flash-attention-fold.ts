// FlashAttention forward with P in registers and the softmax scale folded into the exponentials (sm_90a; bf16
// inputs and output, f32 accumulation and softmax): examples/flash-attention-regp.ts, with the same parameters,
// tensor maps, launch and log-sum-exps, except that the row maxima are taken over the raw scores (the scale is
// positive, so the maximum is the same element) and each P element is 2 ** fma(s, scale·log2(e), −max·scale·log2(e)):
// one FFMA and one MUFU.EX2 an element, where regp multiplies each score by the scale first (64 FMULs a tile a
// thread) and subtracts the maximum after. As FlashAttention-3 does. The exponent is rounded once (the fma)
// instead of twice, so the output differs from regp's in the last bits (the test holds it to the float64 bound).
// D 64 takes four stages of K/V (32 KiB each; 160 KiB in all), D 128 two as regp (192 KiB). CONSUMERS warpgroups
// of 64 query rows each share a block's K/V tiles: 2 (BR = 128 rows a block, 384 threads), or 3 for D 64 (BR =
// 192, 512 threads: at D 64 a tile's exponentials take about as long as its multiplies, so a third consumer gives
// the tensor cores more to do while the others' exponentials run; its registers are 160 a consumer thread, 24 the
// producer's). Requirements and launch: seq a multiple of 128, D 64 or 128; mapQ BR × 64 boxes, mapK and mapV
// 128 × 64, mapO 64 × 64; grid (ceil(seq / BR), batch·heads), block THREADS = 128 · (CONSUMERS + 1). Where BR does
// not divide seq, the last block's consumers past the end compute on rows of the next head (or TMA's zeros) and
// store nothing.
import {
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyTile,
  fillFragment,
  fma,
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

// Key rows a tile.
const BC = 128;
// The lowest f32 that every target prints back exactly: a masked score, whose exp is 0.
const LOW = -3.4028233e38;

export const flashAttentionFold = kernel(
  {
    block: ["THREADS"],
    specializations: [{ D: 128 }, { D: 64, STAGES: 4 }, { D: 64, STAGES: 4, CONSUMERS: 3, THREADS: 512 }],
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
    STAGES: Const<i32> = 2,
    CONSUMERS: Const<i32> = 2,
    THREADS: Const<i32> = 384,
  ) => {
    // Query rows a block: CONSUMERS of 64.
    const BR = 64 * CONSUMERS;
    // Q's D/64 boxes of BR rows; each stage K's then V's D/64 boxes of BC rows; each consumer's O at the end
    // (64 × D: D/64 boxes of 64 rows).
    const Qs = shared.bf16(64 * CONSUMERS * D);
    const KVs = shared.bf16(STAGES * 2 * BC * D);
    const Os = shared.bf16(CONSUMERS * 64 * D);
    const qFull = shared.barriers(1);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const ready = shared.barriers(CONSUMERS);
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
    const tiles = causal !== 0 ? Math.min((q0 + BR + BC - 1) / BC, seq / BC) : seq / BC;
    if (tid === 0) {
      initBarrier(qFull, 0, 1);
      for (let s = 0; s < STAGES; s++) {
        initBarrier(full, s, 1);
        // Lane 0 of each consumer warp releases a stage.
        initBarrier(empty, s, 4 * CONSUMERS);
      }
      unrollReady: for (let c = 0; c < CONSUMERS; c++) {
        initBarrier(ready, c, 128);
      }
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      if (CONSUMERS === 2) {
        setMaxRegisters(40);
      } else {
        setMaxRegisters(24);
      }
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
      if (CONSUMERS === 2) {
        setMaxRegisters(232);
      } else {
        setMaxRegisters(160);
      }
      const c = warpgroupIdx - 1;
      const lane = tid & 31;
      const mine = c * 64 * D;
      // This consumer's first query row within the head.
      const rows = q0 + 64 * c;
      unrollClear: for (let b = 0; b < D / 64; b++) {
        fillFragment(Oacc[b], 0);
      }
      // Each thread holds two rows of S and O (elements with bit 1 of the index clear, and set): their running
      // maximum (of the raw scores) and (partial, this thread's columns) sum.
      let m0: f32 = LOW;
      let m1: f32 = LOW;
      let l0: f32 = 0;
      let l1: f32 = 0;
      let s = 0;
      let phase = 0;
      waitBarrier(qFull, 0, 0);
      for (let j = 0; j < tiles; j++) {
        waitBarrier(full, s, phase);
        fillFragment(S[0], 0);
        unrollQK: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(S[0], Qs, (kk >> 2) * BR * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, s * stage + (kk >> 2) * BC * 64 + 16 * (kk & 3));
        }
        wgmmaCommit();
        wgmmaWait(0);
        // Each row's maximum over this tile, of the raw scores (the causal mask on the tiles with a key after
        // this consumer's first row: its diagonal tile, and with three consumers a tile wholly past its rows).
        let x0: f32 = LOW;
        let x1: f32 = LOW;
        if (causal !== 0 && j * BC + BC - 1 > rows) {
          unrollMasked: for (let e = 0; e < 64; e++) {
            let v = fragmentElement(S[0], e);
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
            if ((e & 2) === 0) {
              x0 = Math.max(x0, fragmentElement(S[0], e));
            } else {
              x1 = Math.max(x1, fragmentElement(S[0], e));
            }
          }
        }
        x0 = Math.max(x0, subgroupShuffleXor(x0, 1));
        x0 = Math.max(x0, subgroupShuffleXor(x0, 2));
        x1 = Math.max(x1, subgroupShuffleXor(x1, 1));
        x1 = Math.max(x1, subgroupShuffleXor(x1, 2));
        const n0 = Math.max(m0, x0);
        const n1 = Math.max(m1, x1);
        // The new maxima in base 2, and the earlier tiles' weights relative to them (0 on the first tile, whose
        // m is LOW: LOW·scale·log2(e) is far below any score's, or −∞).
        const ns0 = n0 * scale2;
        const ns1 = n1 * scale2;
        const r0 = 2 ** (m0 * scale2 - ns0);
        const r1 = 2 ** (m1 * scale2 - ns1);
        let p0: f32 = 0;
        let p1: f32 = 0;
        // P into the A fragments: S's element e is element e & 7 of fragment e >> 3 (the same row and column).
        unrollExp: for (let e = 0; e < 64; e++) {
          if ((e & 2) === 0) {
            const p = 2 ** fma(fragmentElement(S[0], e), scale2, -ns0);
            setFragmentElement(P[e >> 3], e & 7, p);
            p0 += p;
          } else {
            const p = 2 ** fma(fragmentElement(S[0], e), scale2, -ns1);
            setFragmentElement(P[e >> 3], e & 7, p);
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
        // O += P·V, P from this thread's registers (the fragments hold the whole warpgroup's P together).
        unrollPV: for (let kk = 0; kk < BC / 16; kk++) {
          unrollPVColumns: for (let b = 0; b < D / 64; b++) {
            wgmma(Oacc[b], P[kk], KVs, s * stage + BC * D + b * BC * 64 + 1024 * kk, { bMajor: "n", bBoxRows: BC });
          }
        }
        wgmmaCommit();
        wgmmaWait(0);
        if (lane === 0) {
          arriveBarrier(empty, s);
        }
        s++;
        if (s === STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
      // The rows' sums over all four threads of each row, and O / sum out through the buffer.
      l0 += subgroupShuffleXor(l0, 1);
      l0 += subgroupShuffleXor(l0, 2);
      l1 += subgroupShuffleXor(l1, 1);
      l1 += subgroupShuffleXor(l1, 2);
      const inverse0 = 1 / l0;
      const inverse1 = 1 / l1;
      // The rows' log-sum-exps, by the first thread of each row's four (none past the end of the head).
      if ((tid & 3) === 0 && rows < seq) {
        L[head + rows + fragmentRow(Oacc[0], 0)] = m0 * scale2 + Math.log2(l0);
        L[head + rows + fragmentRow(Oacc[0], 2)] = m1 * scale2 + Math.log2(l1);
      }
      unrollNormalize: for (let b = 0; b < D / 64; b++) {
        unrollNormalizeElements: for (let e = 0; e < 32; e++) {
          setFragmentElement(Oacc[b], e, fragmentElement(Oacc[b], e) * ((e & 2) === 0 ? inverse0 : inverse1));
        }
        storeFragment(Oacc[b], Os, mine + b * 4096, { swizzle: 128, boxRows: 64 });
      }
      // Once all 128 threads of the consumer wrote their part of O, one of them stores it.
      arriveBarrier(ready, c);
      waitBarrier(ready, c, 0);
      if ((tid & 127) === 0 && rows < seq) {
        unrollStore: for (let b = 0; b < D / 64; b++) {
          storeTile(O, mapO, 64 * b, head + rows, Os, mine + b * 4096);
        }
        waitTileStores(0);
      }
    }
  },
);
