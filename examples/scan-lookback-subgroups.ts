// Exclusive prefix sum of n floats (out[i] = x[0] + … + x[i−1], out[0] = 0) in one pass, by decoupled look-back
// as examples/scan-lookback.ts, with less waiting per tile:
// - Each published value is one 32-bit word that is its own readiness: a tile's sum (`aggregates`) and its
//   inclusive prefix (`prefixes`) are stored as their f32 bits (bitcastU32) with one atomicStore, in words
//   that clearScanWords set to NOT_READY first. A reader needs one atomicLoad per word and no fence at all:
//   there is no separate flag whose value must be ordered after the value it announces. NOT_READY is a NaN
//   pattern (0xffffffff); a sum whose bits are exactly that (a NaN in the data can propagate it) is published
//   as the NaN 0x7fffffff instead, so a NaN in the data gives NaN outputs from there on, as any sum of it
//   would, and never looks unpublished.
// - The tile is scanned with subgroup scans (subgroupInclusiveAdd of the threads' totals, one shared slot per
//   subgroup), not a shared-memory tree: four barriers per tile instead of about thirty.
// - The look-back is the first subgroup's: lane k reads the words of the tile k places back (both at once),
//   waits while neither is published, and a subgroupMin finds the nearest lane that holds a prefix; a
//   subgroupAdd of the values up to it gives the window's part. ROUNDS windows of subgroupSize tiles, then
//   thread 0 one tile at a time (more tiles in flight than that: rare).
// Every thread runs the look-back's subgroup operations (they need uniform control flow); only the first
// subgroup's lanes load. A block takes its tile from a counter (atomicAdd), so it only ever waits on tiles
// whose blocks are already running (docs/language.md §23).
// The tile is 4·ITEMS·BLOCK elements: loaded 16 bytes per thread and row into shared memory, where each thread
// then takes 4·ITEMS consecutive elements. Shared rows are padded by one vector every ITEMS vectors, so that
// the threads of a subgroup reading their own ITEMS vectors hit different banks. The values wait there, not in
// registers, during the look-back, so that more blocks fit on a multiprocessor. The default tile, 256 threads ×
// 12 vectors (48 KiB), is within 2 % of the tuner's fastest on the H100 (384 × 16, more shared memory than
// WebGPU allows) and 74 % of the copy bandwidth there (bench/README.md).
//
// Targets: CUDA and the CPU backend. It compiles for WGSL, but WebGPU does not promise that a workgroup waiting
// on another lets that one run, so do not launch it there (use scan.ts). Any subgroup size from 4 to 128.
// n must be a multiple of 4. Buffers: `aggregates`, `prefixes` (u32, one word per tile) and `counter` (u32,
// one). Launches: clearScanWords (block 256, any grid), then scanLookbackSubgroups (block BLOCK, a multiple
// of 128, ceil(n / (4·ITEMS·BLOCK)) blocks in one row of the grid).
import {
  atomicAdd,
  atomicLoad,
  atomicStore,
  bitcastF32,
  bitcastU32,
  blockIdx,
  gridDim,
  i32,
  kernel,
  load4,
  shared,
  store4,
  subgroupAdd,
  subgroupInclusiveAdd,
  subgroupInvocationId,
  subgroupMin,
  subgroupShuffleUp,
  subgroupSize,
  syncThreads,
  threadIdx,
  type Const,
  type f32,
  type ReadonlyFloat32Array,
  type u32,
} from "tskernel";

/** A word no tile has published yet: a NaN pattern that publishing never writes (see `publish`). */
const NOT_READY = 0xffffffff;
/** What a sum whose bits are NOT_READY is published as: another NaN. */
const NAN_BITS = 0x7fffffff;

/** The word that publishes `value`: its bits, unless they are NOT_READY's. */
function publish(value: f32): u32 {
  const bits = bitcastU32(value);
  return bits === NOT_READY ? NAN_BITS : bits;
}

export const clearScanWords = kernel({ block: [256] }, (aggregates: Uint32Array, prefixes: Uint32Array, counter: Uint32Array, tiles: i32) => {
  const first = blockIdx.x * 256 + threadIdx.x;
  for (let i = first; i < tiles; i += gridDim.x * 256) {
    aggregates[i] = NOT_READY;
    prefixes[i] = NOT_READY;
  }
  if (first === 0) {
    counter[0] = 0;
  }
});

export const scanLookbackSubgroups = kernel(
  // CUDA and the CPU only: it compiles for WGSL, but its blocks wait on each other, and WebGPU does not promise
  // that a waiting workgroup lets the others run.
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }, { BLOCK: 256, ITEMS: 4 }, { BLOCK: 128, ITEMS: 16 }], targets: ["cuda", "js"] },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    aggregates: Uint32Array,
    prefixes: Uint32Array,
    counter: Uint32Array,
    n: i32,
    BLOCK: Const<i32> = 256,
    ITEMS: Const<i32> = 12,
    ROUNDS: Const<i32> = 4,
  ) => {
    // BLOCK·ITEMS vectors, one padding vector after every ITEMS of them.
    const staged = shared.f32(BLOCK * (ITEMS + 1) * 4);
    // One slot per subgroup, sized for the smallest subgroups (4 lanes).
    const subgroupSums = shared.f32(BLOCK / 4);
    const tileOf = shared.i32(1);
    const carry = shared.f32(1);
    const tid = threadIdx.x;
    const lane = subgroupInvocationId;

    if (tid === 0) {
      tileOf[0] = i32(atomicAdd(counter, 0, 1));
    }
    syncThreads();
    const tile = tileOf[0];
    const base = tile * BLOCK * ITEMS * 4;

    // Coalesced loads: vector q = k·BLOCK + tid of the tile, stored at q + ⌊q / ITEMS⌋ vectors.
    unrollLoad: for (let k = 0; k < ITEMS; k++) {
      const q = k * BLOCK + tid;
      const at = (q + q / ITEMS) * 4;
      if (base + 4 * q < n) {
        const [a, b, c, d] = load4(input, base + 4 * q);
        store4(staged, at, a, b, c, d);
      } else {
        store4(staged, at, 0, 0, 0, 0);
      }
    }
    syncThreads();
    // This thread's vectors tid·ITEMS … tid·ITEMS + ITEMS − 1: stored from tid·(ITEMS + 1) on.
    let total: f32 = 0;
    unrollMine: for (let k = 0; k < ITEMS; k++) {
      const [a, b, c, d] = load4(staged, (tid * (ITEMS + 1) + k) * 4);
      total += a;
      total += b;
      total += c;
      total += d;
    }
    const inclusive = subgroupInclusiveAdd(total);
    // The lower lanes' sum: the inclusive sum one lane down (lane 0: none), not inclusive − total, which rounds.
    const lower = subgroupShuffleUp(inclusive, 1);
    const subgroup = tid / subgroupSize;
    if (lane === subgroupSize - 1) {
      subgroupSums[subgroup] = inclusive;
    }
    syncThreads();
    let before: f32 = 0;
    let aggregate: f32 = 0;
    for (let w = 0; w < BLOCK / subgroupSize; w++) {
      const s = subgroupSums[w];
      if (w < subgroup) {
        before += s;
      }
      aggregate += s;
    }

    // Publish the tile's sum (tile 0: its inclusive prefix, which is its sum).
    if (tid === 0) {
      if (tile === 0) {
        atomicStore(prefixes, 0, publish(aggregate));
      } else {
        atomicStore(aggregates, tile, publish(aggregate));
      }
    }

    // Look back, in the first subgroup: `found` and `exclusive` are the same in all its lanes.
    let found = tile === 0;
    let exclusive: f32 = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let value: f32 = 0;
      let isPrefix = false;
      if (!found && tid < subgroupSize) {
        const j = tile - 1 - round * subgroupSize - lane;
        if (j >= 0) {
          let p = atomicLoad(prefixes, j);
          let a = atomicLoad(aggregates, j);
          while (p === NOT_READY && a === NOT_READY) {
            p = atomicLoad(prefixes, j);
            a = atomicLoad(aggregates, j);
          }
          if (p !== NOT_READY) {
            value = bitcastF32(p);
            isPrefix = true;
          } else {
            value = bitcastF32(a);
          }
        } else {
          // Before tile 0 there is nothing to add: as if a prefix of 0 were published there.
          isPrefix = true;
        }
      }
      // The nearest lane holding a prefix (subgroupSize: none), and the window's values up to it.
      const nearest = subgroupMin(isPrefix ? lane : subgroupSize);
      const part = subgroupAdd(lane <= nearest ? value : 0);
      if (!found) {
        exclusive += part;
        found = nearest < subgroupSize;
      }
    }
    if (tid === 0) {
      // Further back than the windows reach: one tile at a time.
      let j = tile - 1 - ROUNDS * subgroupSize;
      while (!found) {
        let p = atomicLoad(prefixes, j);
        let a = atomicLoad(aggregates, j);
        while (p === NOT_READY && a === NOT_READY) {
          p = atomicLoad(prefixes, j);
          a = atomicLoad(aggregates, j);
        }
        if (p !== NOT_READY) {
          exclusive += bitcastF32(p);
          found = true;
        } else {
          exclusive += bitcastF32(a);
          j -= 1;
        }
      }
      if (tile > 0) {
        atomicStore(prefixes, tile, publish(exclusive + aggregate));
      }
      carry[0] = exclusive;
    }
    syncThreads();

    let running = carry[0] + before;
    if (lane > 0) {
      running += lower;
    }
    // Each thread reads its vectors again (they wait in shared memory, not in registers, so that more blocks
    // fit on a multiprocessor) and overwrites them with their exclusive sums: only it reads them.
    unrollScan: for (let k = 0; k < ITEMS; k++) {
      const at = (tid * (ITEMS + 1) + k) * 4;
      const [a, b, c, d] = load4(staged, at);
      const sa = running;
      const sb = sa + a;
      const sc = sb + b;
      const sd = sc + c;
      running = sd + d;
      store4(staged, at, sa, sb, sc, sd);
    }
    syncThreads();
    unrollStore: for (let k = 0; k < ITEMS; k++) {
      const q = k * BLOCK + tid;
      if (base + 4 * q < n) {
        const [a, b, c, d] = load4(staged, (q + q / ITEMS) * 4);
        store4(out, base + 4 * q, a, b, c, d);
      }
    }
  },
);
