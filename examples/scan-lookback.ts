// Exclusive prefix sum of n floats (out[i] = x[0] + … + x[i−1], out[0] = 0) in one pass over the data: each
// block scans one tile of 4·ITEMS·BLOCK elements and learns the sum of all tiles before it from the tiles
// themselves, by decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", 2016). A block takes its tile from a counter (atomicAdd), not from blockIdx, so tiles are taken
// in the order blocks start and a block only ever waits on tiles whose blocks are already running. Once its
// tile is loaded and scanned, the block publishes the tile's sum (flag AGGREGATE), then reads the flags of the
// BLOCK tiles before it at once (one thread each, waiting while a flag is still 0), finds the nearest of them
// that has published its inclusive prefix (flag PREFIX; atomicMin) and adds up the values back to it; if none
// has, the next BLOCK tiles, ROUNDS windows in all, then thread 0 goes on one tile at a time. It publishes its own inclusive
// prefix (flag PREFIX) and writes its tile. Each value is written before its flag, with threadFence() between
// them, and read after it, with threadFence() between: a block that sees the flag sees the value. So the
// input is read once and the output written once: 8 bytes per element, against 12 for examples/scan.ts.
//
// Targets: CUDA and the CPU backend. WebGPU has no device-scope fence and does not promise that a workgroup
// waiting on another lets that one run, so threadFence() is a compile error there (TSK3050): use scan.ts.
// n must be a multiple of 4. Buffers: `aggregates` and `prefixes` (f32) and `flags` (u32) hold one element
// per tile, `counter` (u32) one. Launches: clearScanState (block 256, any grid; ceil(tiles / 256) blocks clear
// every flag), then scanLookback (block BLOCK, ceil(n / (4·ITEMS·BLOCK)) blocks in one row of the grid).
// The default tile, 256 threads × 8 vectors (8192 elements), is the tuner's on the H100: the time each tile
// spends publishing and looking back is the same for any tile size, so larger tiles amortize it (4096-element
// tiles ran 21 % slower; bench/README.md).
import { atomicAdd, atomicLoad, atomicMin, atomicStore, blockIdx, gridDim, kernel, load4, local, shared, store4, syncThreads, threadFence, threadIdx, type Const, type f32, i32, type ReadonlyFloat32Array } from "tskernel";

/** A tile's flag: nothing published yet, its sum published, its inclusive prefix published. */
const EMPTY = 0;
const AGGREGATE = 1;
const PREFIX = 2;

export const clearScanState = kernel({ block: [256] }, (flags: Uint32Array, counter: Uint32Array, tiles: i32) => {
  const first = blockIdx.x * 256 + threadIdx.x;
  for (let i = first; i < tiles; i += gridDim.x * 256) {
    flags[i] = EMPTY;
  }
  if (first === 0) {
    counter[0] = 0;
  }
});

export const scanLookback = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 64, ITEMS: 2 }], targets: ["cuda", "js"] },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    aggregates: Float32Array,
    prefixes: Float32Array,
    flags: Uint32Array,
    counter: Uint32Array,
    n: i32,
    BLOCK: Const<i32> = 256,
    ITEMS: Const<i32> = 8,
    ROUNDS: Const<i32> = 4,
  ) => {
    const staged = shared.f32(BLOCK * ITEMS * 4);
    const sums = shared.f32(BLOCK);
    const window = shared.f32(BLOCK);
    // [0]: the tile; [1]: 1 once the look-back has found every tile before this one; [2]: the nearest place
    // in the window whose tile has published its prefix (BLOCK while none has).
    const state = shared.i32(3);
    const carry = shared.f32(1);
    const v = local.f32(4 * ITEMS);
    const tid = threadIdx.x;

    if (tid === 0) {
      state[0] = i32(atomicAdd(counter, 0, 1));
    }
    syncThreads();
    const tile = state[0];
    const base = tile * BLOCK * ITEMS * 4;

    // Coalesced loads into shared memory, so that each thread can then take consecutive elements.
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const q = (k * BLOCK + tid) * 4;
      if (base + q < n) {
        const [a, b, c, d] = load4(input, base + q);
        store4(staged, q, a, b, c, d);
      } else {
        store4(staged, q, 0, 0, 0, 0);
      }
    }
    syncThreads();
    let total: f32 = 0;
    unrollMine: for (let k = 0; k < ITEMS; k++) {
      const [a, b, c, d] = load4(staged, tid * ITEMS * 4 + 4 * k);
      store4(v, 4 * k, a, b, c, d);
      total += a;
      total += b;
      total += c;
      total += d;
    }
    // Inclusive scan of the threads' totals (Hillis and Steele); sums[BLOCK − 1] is the tile's sum.
    let inclusive = total;
    sums[tid] = inclusive;
    syncThreads();
    for (let offset = 1; offset < BLOCK; offset <<= 1) {
      let other: f32 = 0;
      if (tid >= offset) {
        other = sums[tid - offset];
      }
      syncThreads();
      inclusive += other;
      sums[tid] = inclusive;
      syncThreads();
    }
    const aggregate = sums[BLOCK - 1];

    // Publish the tile's sum (tile 0: its inclusive prefix), value first, then the flag.
    if (tid === 0) {
      if (tile === 0) {
        prefixes[0] = aggregate;
        threadFence();
        atomicStore(flags, 0, PREFIX);
        state[1] = 1;
      } else {
        aggregates[tile] = aggregate;
        threadFence();
        atomicStore(flags, tile, AGGREGATE);
        state[1] = 0;
      }
      carry[0] = 0;
      state[2] = BLOCK;
    }
    syncThreads();

    // Look back ROUNDS windows of BLOCK tiles: thread k reads the tile k places further back, and the threads
    // that find a prefix take the nearest place (atomicMin); thread 0 then adds up the window up to there.
    for (let round = 0; round < ROUNDS; round++) {
      const j = tile - 1 - round * BLOCK - tid;
      let value: f32 = 0;
      if (state[1] === 0) {
        if (j >= 0) {
          let kind = atomicLoad(flags, j);
          while (kind === EMPTY) {
            kind = atomicLoad(flags, j);
          }
          threadFence();
          if (kind === PREFIX) {
            value = atomicLoad(prefixes, j);
            atomicMin(state, 2, tid);
          } else {
            value = atomicLoad(aggregates, j);
          }
        } else {
          // Before tile 0 there is nothing to add: as if a prefix of 0 were published there.
          atomicMin(state, 2, tid);
        }
      }
      window[tid] = value;
      syncThreads();
      if (tid === 0 && state[1] === 0) {
        const nearest = state[2];
        let acc = carry[0];
        for (let k = 0; k <= Math.min(nearest, BLOCK - 1); k++) {
          acc += window[k];
        }
        carry[0] = acc;
        if (nearest < BLOCK) {
          state[1] = 1;
        }
      }
      // Every thread has read state[1] and thread 0 the window before the next round writes them.
      syncThreads();
    }
    if (tid === 0) {
      let acc = carry[0];
      // Further back than the windows reach (rare: more tiles in flight than ROUNDS · BLOCK): one at a time.
      if (state[1] === 0) {
        let j = tile - 1 - ROUNDS * BLOCK;
        let found = false;
        while (!found) {
          let kind = atomicLoad(flags, j);
          while (kind === EMPTY) {
            kind = atomicLoad(flags, j);
          }
          threadFence();
          if (kind === PREFIX) {
            acc += atomicLoad(prefixes, j);
            found = true;
          } else {
            acc += atomicLoad(aggregates, j);
            j -= 1;
          }
        }
        carry[0] = acc;
      }
      if (tile > 0) {
        prefixes[tile] = acc + aggregate;
        threadFence();
        atomicStore(flags, tile, PREFIX);
      }
    }
    syncThreads();

    let running = carry[0];
    if (tid > 0) {
      running += sums[tid - 1];
    }
    // Each thread overwrites only its own elements of `staged`, which only it has read since the barrier.
    unrollScan: for (let i = 0; i < 4 * ITEMS; i++) {
      const x = v[i];
      v[i] = running;
      running += x;
    }
    unrollBack: for (let k = 0; k < ITEMS; k++) {
      store4(staged, tid * ITEMS * 4 + 4 * k, v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
    }
    syncThreads();
    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const q = (k * BLOCK + tid) * 4;
      if (base + q < n) {
        const [a, b, c, d] = load4(staged, q);
        store4(out, base + q, a, b, c, d);
      }
    }
  },
);
