// FlashAttention backward on warpgroup MMA (wgmma m64n64k16, sm_90a; bf16 inputs and outputs, f32 accumulation):
// given Q, K, V, the forward's O and L (flash-attention.ts: L = log2 Σ_j 2^(scale·log2(e)·s_ij) per query row)
// and dO, the gradients dQ, dK, dV of O = softmax(scale·Q·Kᵀ, causal or not)·V, with the same [batch·heads·seq, D]
// layouts. With P = 2^(scale·log2(e)·S − L) (the forward's probabilities, recomputed), Dsum = rowsum(dO ∘ O),
// dS = P ∘ (dO·Vᵀ − Dsum): dV = Pᵀ·dO, dK = scale·dSᵀ·Q, dQ = scale·dS·K. Three kernels, as FlashAttention-2's
// two-pass form (no atomics):
// - flashAttentionBackwardPre: Dsum, one row per D/8 threads (16 bytes of O and dO each).
// - flashAttentionBackwardKV: a block per 128 keys; warpgroup 0 copies the block's K and V once, then each
//   64-query tile of Q and dO (copyTile) and its L and Dsum (ordinary loads into shared memory) into STAGES
//   stages behind full/empty mbarriers; each consumer warpgroup owns 64 keys and computes per tile Sᵀ = K·Qᵀ and
//   dPᵀ = V·dOᵀ (K-major operands straight from the copies), Pᵀ and dSᵀ on the elements (L and Dsum by the
//   query, fragmentColumn; the exponent one fma), packs both as bf16 into wgmma A fragments in its registers
//   (as flash-attention-regp.ts keeps P) and accumulates dV += Pᵀ·dO and dK += dSᵀ·Q (dO and Q N-major from
//   their copies). Until 2026-11-27 Pᵀ and dSᵀ went through shared memory (storeFragment, and a barrier of the
//   consumer's threads before the multiplies): 65–73 % of cuDNN's backward on the H100, 81–88 % in registers
//   (bench/README.md). At the end dK·scale and
//   dV go out through the consumer's own rows of K and V (no other warpgroup reads them) and storeTile.
// - flashAttentionBackwardQ: a block per 128 queries; the producer copies Q and dO once, then each 64-key tile
//   of K and V; each consumer owns 64 queries: S = Q·Kᵀ, dP = dO·Vᵀ, dS on the elements (its two rows' L and
//   Dsum in registers), dS as bf16 A fragments in registers, dQ += dS·K (K N-major), and dQ·scale out through
//   its rows of Q.
// The scores and dP are recomputed in both kernels (seven multiplies of the work's five, in exchange for no
// atomics and no transposed operands). With causal ≠ 0, tiles wholly above the diagonal are skipped and the
// others masked where a key follows its query.
// Requirements: seq a multiple of 128, D 64 or 128. Tensor maps over [batch·heads·seq, D] (createTensorMap):
// Pre none; KV: mapQ and mapDO boxes of 64 rows × 64 columns, mapK and mapV 128 × 64, mapDK and mapDV 64 × 64;
// Q: mapQ and mapDO 128 × 64, mapK and mapV 64 × 64, mapDQ 64 × 64. Launch: Pre grid ceil(rows·D/8 / 128),
// block 128; KV and Q grid (seq / 128, batch·heads), block 384.
import {
  arriveBarrier,
  arriveExpectBytes,
  blockIdx,
  copyTile,
  f32,
  fillFragment,
  fma,
  fragment,
  fragmentColumn,
  fragmentElement,
  fragmentRow,
  initBarrier,
  kernel,
  load8,
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
  type i32,
  type ReadonlyBFloat16Array,
  type ReadonlyFloat32Array,
  type ReadonlyUint32Array,
} from "tskernel";

// The rows of a block (two consumers of 64) and of a streamed tile.
const BLOCK = 128;
const TILE = 64;

/** Dsum[r] = Σ_d dO[r][d]·O[r][d] in f32: D/8 consecutive threads a row, 8 elements each, combined by shuffles. */
export const flashAttentionBackwardPre = kernel(
  { block: [128], specializations: [{ D: 128 }, { D: 64 }], targets: ["cuda", "js"] },
  (O: ReadonlyBFloat16Array, dO: ReadonlyBFloat16Array, Dsum: Float32Array, rows: i32, D: Const<i32> = 128) => {
    const t = blockIdx.x * 128 + threadIdx.x;
    const row = t / (D / 8);
    const part = t % (D / 8);
    let sum: f32 = 0;
    if (row < rows) {
      const [o0, o1, o2, o3, o4, o5, o6, o7] = load8(O, row * D + part * 8);
      const [g0, g1, g2, g3, g4, g5, g6, g7] = load8(dO, row * D + part * 8);
      sum = f32(o0) * f32(g0) + f32(o1) * f32(g1) + f32(o2) * f32(g2) + f32(o3) * f32(g3) + f32(o4) * f32(g4) + f32(o5) * f32(g5) + f32(o6) * f32(g6) + f32(o7) * f32(g7);
    }
    // The row's D/8 threads are consecutive lanes of one subgroup (8 or 16 of 32).
    sum += subgroupShuffleXor(sum, 1);
    sum += subgroupShuffleXor(sum, 2);
    sum += subgroupShuffleXor(sum, 4);
    if (D === 128) {
      sum += subgroupShuffleXor(sum, 8);
    }
    if (row < rows && part === 0) {
      Dsum[row] = sum;
    }
  },
);

/** dK and dV for 128 keys a block, over the query tiles (see the file's comment). */
export const flashAttentionBackwardKV = kernel(
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
    dO: ReadonlyBFloat16Array,
    L: ReadonlyFloat32Array,
    Dsum: ReadonlyFloat32Array,
    dK: BFloat16Array,
    dV: BFloat16Array,
    mapQ: ReadonlyUint32Array,
    mapK: ReadonlyUint32Array,
    mapV: ReadonlyUint32Array,
    mapDO: ReadonlyUint32Array,
    mapDK: ReadonlyUint32Array,
    mapDV: ReadonlyUint32Array,
    seq: i32,
    scale: f32,
    causal: i32,
    D: Const<i32> = 128,
    STAGES: Const<i32> = 2,
  ) => {
    // K's D/64 boxes of BLOCK rows, then V's; each stage Q's D/64 boxes of TILE rows, then dO's; each stage the
    // tile's L, then its Dsum.
    const KVs = shared.bf16(2 * BLOCK * D);
    const QOs = shared.bf16(STAGES * 2 * TILE * D);
    const LDs = shared.f32(STAGES * 2 * TILE);
    const kvFull = shared.barriers(1);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const ready = shared.barriers(2);
    const St = fragment.accumulator("m64n64k16", "f32", 1);
    const dPt = fragment.accumulator("m64n64k16", "f32", 1);
    // Pᵀ and dSᵀ (64 keys × TILE queries) as wgmma's A, one 64 × 16 bf16 fragment per 16 queries: accumulator
    // element e is element e & 7 of fragment e >> 3 (the same row and column), so they never leave registers.
    const Pt = fragment.a("m64n64k16", "bf16", TILE / 16);
    const dSt = fragment.a("m64n64k16", "bf16", TILE / 16);
    const dVacc = fragment.accumulator("m64n64k16", "f32", D / 64);
    const dKacc = fragment.accumulator("m64n64k16", "f32", D / 64);
    const tid = threadIdx.x;
    const stage = 2 * TILE * D;
    const scale2 = scale * Math.LOG2E;
    const k0 = blockIdx.x * BLOCK;
    const head = blockIdx.y * seq;
    // Query tiles: all, or with causal ≠ 0 those whose last query reaches the block's first key.
    const first = causal !== 0 ? k0 / TILE : 0;
    const tiles = seq / TILE;
    if (tid === 0) {
      initBarrier(kvFull, 0, 1);
      for (let s = 0; s < STAGES; s++) {
        // The producer's 128 threads store L and Dsum; its thread 0 also announces the copies' bytes.
        initBarrier(full, s, 129);
        initBarrier(empty, s, 8);
      }
      initBarrier(ready, 0, 128);
      initBarrier(ready, 1, 128);
    }
    syncThreads();
    if (warpgroupIdx === 0) {
      // The producer needs few registers; the consumers hold 192 accumulators (D = 128) and take the rest
      // (128·24 + 256·240 ≤ 65536).
      setMaxRegisters(24);
      if (tid === 0) {
        arriveExpectBytes(kvFull, 0, 2 * BLOCK * D * 2);
        unrollKV: for (let b = 0; b < D / 64; b++) {
          copyTile(KVs, b * BLOCK * 64, K, mapK, 64 * b, head + k0, kvFull, 0);
          copyTile(KVs, BLOCK * D + b * BLOCK * 64, V, mapV, 64 * b, head + k0, kvFull, 0);
        }
      }
      let s = 0;
      let phase = 0;
      for (let i = first; i < tiles; i++) {
        waitBarrier(empty, s, phase ^ 1);
        if (tid === 0) {
          arriveExpectBytes(full, s, stage * 2);
          unrollQO: for (let b = 0; b < D / 64; b++) {
            copyTile(QOs, s * stage + b * TILE * 64, Q, mapQ, 64 * b, head + i * TILE, full, s);
            copyTile(QOs, s * stage + TILE * D + b * TILE * 64, dO, mapDO, 64 * b, head + i * TILE, full, s);
          }
        }
        // Threads 0-63 the tile's L, 64-127 its Dsum.
        if (tid < TILE) {
          LDs[s * 2 * TILE + tid] = L[head + i * TILE + tid];
        } else {
          LDs[s * 2 * TILE + tid] = Dsum[head + i * TILE + tid - TILE];
        }
        arriveBarrier(full, s);
        s++;
        if (s === STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
    } else {
      setMaxRegisters(240);
      const c = warpgroupIdx - 1;
      const lane = tid & 31;
      // This consumer's first key within the head.
      const keys = k0 + 64 * c;
      unrollClear: for (let b = 0; b < D / 64; b++) {
        fillFragment(dVacc[b], 0);
        fillFragment(dKacc[b], 0);
      }
      let s = 0;
      let phase = 0;
      waitBarrier(kvFull, 0, 0);
      for (let i = first; i < tiles; i++) {
        waitBarrier(full, s, phase);
        fillFragment(St[0], 0);
        fillFragment(dPt[0], 0);
        unrollS: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(St[0], KVs, (kk >> 2) * BLOCK * 64 + c * 64 * 64 + 16 * (kk & 3), QOs, s * stage + (kk >> 2) * TILE * 64 + 16 * (kk & 3));
        }
        unrollDP: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(dPt[0], KVs, BLOCK * D + (kk >> 2) * BLOCK * 64 + c * 64 * 64 + 16 * (kk & 3), QOs, s * stage + TILE * D + (kk >> 2) * TILE * 64 + 16 * (kk & 3));
        }
        wgmmaCommit();
        wgmmaWait(0);
        // Pᵀ (rows: keys, columns: the tile's queries) from the scores and L, masked where the key follows the
        // query; dSᵀ = Pᵀ ∘ (dPᵀ − Dsum of the query).
        const q0 = i * TILE;
        const lds = s * 2 * TILE;
        // The exponent as one fma (L is in base 2 of the scaled scores).
        if (causal !== 0 && q0 < keys + 64) {
          unrollMasked: for (let e = 0; e < 32; e++) {
            const column = fragmentColumn(St[0], e);
            let p = 2 ** fma(fragmentElement(St[0], e), scale2, -LDs[lds + column]);
            if (keys + fragmentRow(St[0], e) > q0 + column) {
              p = 0;
            }
            setFragmentElement(Pt[e >> 3], e & 7, p);
            setFragmentElement(dSt[e >> 3], e & 7, p * (fragmentElement(dPt[0], e) - LDs[lds + TILE + column]));
          }
        } else {
          unrollP: for (let e = 0; e < 32; e++) {
            const column = fragmentColumn(St[0], e);
            const p = 2 ** fma(fragmentElement(St[0], e), scale2, -LDs[lds + column]);
            setFragmentElement(Pt[e >> 3], e & 7, p);
            setFragmentElement(dSt[e >> 3], e & 7, p * (fragmentElement(dPt[0], e) - LDs[lds + TILE + column]));
          }
        }
        // dV += Pᵀ·dO and dK += dSᵀ·Q, the queries as k (Pᵀ and dSᵀ from registers, dO and Q N-major).
        unrollDV: for (let kk = 0; kk < TILE / 16; kk++) {
          unrollDVColumns: for (let b = 0; b < D / 64; b++) {
            wgmma(dVacc[b], Pt[kk], QOs, s * stage + TILE * D + b * TILE * 64 + 1024 * kk, { bMajor: "n", bBoxRows: TILE });
          }
        }
        unrollDK: for (let kk = 0; kk < TILE / 16; kk++) {
          unrollDKColumns: for (let b = 0; b < D / 64; b++) {
            wgmma(dKacc[b], dSt[kk], QOs, s * stage + b * TILE * 64 + 1024 * kk, { bMajor: "n", bBoxRows: TILE });
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
      // dK·scale and dV out through this consumer's own rows of K and V, which only it read.
      unrollOut: for (let b = 0; b < D / 64; b++) {
        unrollScale: for (let e = 0; e < 32; e++) {
          setFragmentElement(dKacc[b], e, fragmentElement(dKacc[b], e) * scale);
        }
        storeFragment(dKacc[b], KVs, b * BLOCK * 64 + c * 64 * 64, { swizzle: 128, boxRows: 64 });
        storeFragment(dVacc[b], KVs, BLOCK * D + b * BLOCK * 64 + c * 64 * 64, { swizzle: 128, boxRows: 64 });
      }
      arriveBarrier(ready, c);
      waitBarrier(ready, c, 0);
      if ((tid & 127) === 0) {
        unrollStore: for (let b = 0; b < D / 64; b++) {
          storeTile(dK, mapDK, 64 * b, head + keys, KVs, b * BLOCK * 64 + c * 64 * 64);
          storeTile(dV, mapDV, 64 * b, head + keys, KVs, BLOCK * D + b * BLOCK * 64 + c * 64 * 64);
        }
        waitTileStores(0);
      }
    }
  },
);

/** dQ for 128 queries a block, over the key tiles (see the file's comment). */
export const flashAttentionBackwardQ = kernel(
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
    dO: ReadonlyBFloat16Array,
    L: ReadonlyFloat32Array,
    Dsum: ReadonlyFloat32Array,
    dQ: BFloat16Array,
    mapQ: ReadonlyUint32Array,
    mapK: ReadonlyUint32Array,
    mapV: ReadonlyUint32Array,
    mapDO: ReadonlyUint32Array,
    mapDQ: ReadonlyUint32Array,
    seq: i32,
    scale: f32,
    causal: i32,
    D: Const<i32> = 128,
    STAGES: Const<i32> = 2,
  ) => {
    // Q's D/64 boxes of BLOCK rows, then dO's; each stage K's D/64 boxes of TILE rows, then V's.
    const QOs = shared.bf16(2 * BLOCK * D);
    const KVs = shared.bf16(STAGES * 2 * TILE * D);
    const qFull = shared.barriers(1);
    const full = shared.barriers(STAGES);
    const empty = shared.barriers(STAGES);
    const ready = shared.barriers(2);
    const S = fragment.accumulator("m64n64k16", "f32", 1);
    const dP = fragment.accumulator("m64n64k16", "f32", 1);
    // dS (64 queries × TILE keys) as wgmma's A, one 64 × 16 bf16 fragment per 16 keys (element e of the
    // accumulators is element e & 7 of fragment e >> 3).
    const dS = fragment.a("m64n64k16", "bf16", TILE / 16);
    const dQacc = fragment.accumulator("m64n64k16", "f32", D / 64);
    const tid = threadIdx.x;
    const stage = 2 * TILE * D;
    const scale2 = scale * Math.LOG2E;
    const q0 = blockIdx.x * BLOCK;
    const head = blockIdx.y * seq;
    // Key tiles: all, or with causal ≠ 0 those that start no later than the block's last query.
    const tiles = causal !== 0 ? (q0 + BLOCK) / TILE : seq / TILE;
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
        arriveExpectBytes(qFull, 0, 2 * BLOCK * D * 2);
        unrollQO: for (let b = 0; b < D / 64; b++) {
          copyTile(QOs, b * BLOCK * 64, Q, mapQ, 64 * b, head + q0, qFull, 0);
          copyTile(QOs, BLOCK * D + b * BLOCK * 64, dO, mapDO, 64 * b, head + q0, qFull, 0);
        }
      }
      let s = 0;
      let phase = 0;
      for (let j = 0; j < tiles; j++) {
        waitBarrier(empty, s, phase ^ 1);
        if (tid === 0) {
          arriveExpectBytes(full, s, stage * 2);
          unrollKV: for (let b = 0; b < D / 64; b++) {
            copyTile(KVs, s * stage + b * TILE * 64, K, mapK, 64 * b, head + j * TILE, full, s);
            copyTile(KVs, s * stage + TILE * D + b * TILE * 64, V, mapV, 64 * b, head + j * TILE, full, s);
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
      // This consumer's first query within the head, and its thread's two rows' L and Dsum (elements with bit 1
      // of the index clear, and set).
      const rows = q0 + 64 * c;
      const l0 = L[head + rows + fragmentRow(S[0], 0)];
      const l1 = L[head + rows + fragmentRow(S[0], 2)];
      const d0 = Dsum[head + rows + fragmentRow(S[0], 0)];
      const d1 = Dsum[head + rows + fragmentRow(S[0], 2)];
      unrollClear: for (let b = 0; b < D / 64; b++) {
        fillFragment(dQacc[b], 0);
      }
      let s = 0;
      let phase = 0;
      waitBarrier(qFull, 0, 0);
      for (let j = 0; j < tiles; j++) {
        waitBarrier(full, s, phase);
        fillFragment(S[0], 0);
        fillFragment(dP[0], 0);
        unrollS: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(S[0], QOs, (kk >> 2) * BLOCK * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, s * stage + (kk >> 2) * TILE * 64 + 16 * (kk & 3));
        }
        unrollDP: for (let kk = 0; kk < D / 16; kk++) {
          wgmma(dP[0], QOs, BLOCK * D + (kk >> 2) * BLOCK * 64 + c * 64 * 64 + 16 * (kk & 3), KVs, s * stage + TILE * D + (kk >> 2) * TILE * 64 + 16 * (kk & 3));
        }
        wgmmaCommit();
        wgmmaWait(0);
        // dS = P ∘ (dP − Dsum), P from the scores and the row's L, masked where the key follows the query.
        const key0 = j * TILE;
        if (causal !== 0 && key0 + TILE - 1 > rows) {
          unrollMasked: for (let e = 0; e < 32; e++) {
            let p = 2 ** fma(fragmentElement(S[0], e), scale2, -((e & 2) === 0 ? l0 : l1));
            if (key0 + fragmentColumn(S[0], e) > rows + fragmentRow(S[0], e)) {
              p = 0;
            }
            setFragmentElement(dS[e >> 3], e & 7, p * (fragmentElement(dP[0], e) - ((e & 2) === 0 ? d0 : d1)));
          }
        } else {
          unrollDS: for (let e = 0; e < 32; e++) {
            const p = 2 ** fma(fragmentElement(S[0], e), scale2, -((e & 2) === 0 ? l0 : l1));
            setFragmentElement(dS[e >> 3], e & 7, p * (fragmentElement(dP[0], e) - ((e & 2) === 0 ? d0 : d1)));
          }
        }
        // dQ += dS·K, the keys as k (dS from registers, K N-major).
        unrollDQ: for (let kk = 0; kk < TILE / 16; kk++) {
          unrollDQColumns: for (let b = 0; b < D / 64; b++) {
            wgmma(dQacc[b], dS[kk], KVs, s * stage + b * TILE * 64 + 1024 * kk, { bMajor: "n", bBoxRows: TILE });
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
      // dQ·scale out through this consumer's own rows of Q, which only it read.
      unrollOut: for (let b = 0; b < D / 64; b++) {
        unrollScale: for (let e = 0; e < 32; e++) {
          setFragmentElement(dQacc[b], e, fragmentElement(dQacc[b], e) * scale);
        }
        storeFragment(dQacc[b], QOs, b * BLOCK * 64 + c * 64 * 64, { swizzle: 128, boxRows: 64 });
      }
      arriveBarrier(ready, c);
      waitBarrier(ready, c, 0);
      if ((tid & 127) === 0) {
        unrollStore: for (let b = 0; b < D / 64; b++) {
          storeTile(dQ, mapDQ, 64 * b, head + rows, QOs, b * BLOCK * 64 + c * 64 * 64);
        }
        waitTileStores(0);
      }
    }
  },
);
