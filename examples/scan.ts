// Exclusive prefix sum of n floats (out[i] = x[0] + … + x[i−1], out[0] = 0) over many blocks, without atomics:
// reduce, then scan, then scan again, in three launches. The input is cut into tiles of 4·ITEMS·BLOCK
// elements. (1) scanTileSums: each block adds up one tile into partials[tile]. (2) scanPartials: one block
// turns partials into its own exclusive prefix sum, in place: the offset of each tile. (3) scanTiles: each
// block scans its tile again, starting from the tile's offset. The input is read twice and the output written
// once; launch 3 takes the tiles in reverse order, so that the tiles launch 1 read last, which the L2 cache
// may still hold, are read first. Within a block, each thread scans 4·ITEMS consecutive elements in
// registers, and the threads' totals are scanned in shared memory (Hillis and Steele: log2(BLOCK) steps).
// COALESCE picks the form. true (a GPU's): consecutive threads load consecutive vectors, and scanTiles stages
// the tile through shared memory so that each thread can then take consecutive elements. false (the CPU
// backend's, with few threads of many items each): each thread reads its 4·ITEMS consecutive elements in
// place, which on a CPU is one run of memory and spares scanTiles the copies through shared memory and a
// private array (on a GPU it would not coalesce); a block of one thread skips the threads' totals; and the
// running sum takes each vector's own prefix sums, one addition on its chain per vector instead of four. The
// forms differ only in rounding. `tskernel tune kernels` searches BLOCK, ITEMS and COALESCE per backend.
// n must be a multiple of 4, and the partials buffer must hold the number of tiles rounded up to a multiple
// of 4. Launches: (1) block BLOCK, ceil(n / tile) blocks as a grid (gx, gy) with gx·gy ≥ that; (2) block
// BLOCK, grid 1, count = the number of tiles; (3) as (1), with the same BLOCK and ITEMS as (1).
import { blockIdx, gridDim, kernel, load4, local, shared, store4, syncThreads, threadIdx, type bool, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const scanTileSums = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 64 }, { BLOCK: 1, ITEMS: 1024, COALESCE: false }] },
  (partials: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 2, COALESCE: Const<bool> = true) => {
    const red = shared.f32(BLOCK);
    const tid = threadIdx.x;
    const tile = blockIdx.y * gridDim.x + blockIdx.x;
    const base = tile * BLOCK * ITEMS * 4;
    let sum: f32 = 0;
    if (COALESCE) {
      // Coalesced: vector k·BLOCK + tid of the tile.
      unrollLoad: for (let k = 0; k < ITEMS; k++) {
        const i = base + (k * BLOCK + tid) * 4;
        if (i < n) {
          const [a, b, c, d] = load4(input, i);
          sum += a + b + (c + d);
        }
      }
    } else {
      // The vectors scanTiles gives this thread, its 4·ITEMS consecutive elements, up to n (a multiple of 4), into
      // two sums of alternate vectors, so that each rounded addition waits for the one two vectors back (a CPU
      // gains nothing from unrolling; a loop bound costs less than a check of every vector).
      const first = base + tid * ITEMS * 4;
      const end = Math.min(first + ITEMS * 4, n);
      let other: f32 = 0;
      for (let i = first; i < end; i += 8) {
        const [a, b, c, d] = load4(input, i);
        sum += a + b + (c + d);
        if (i + 4 < end) {
          const [e, f, g, h] = load4(input, i + 4);
          other += e + f + (g + h);
        }
      }
      sum += other;
    }
    red[tid] = sum;
    syncThreads();
    for (let s = BLOCK / 2; s > 0; s >>= 1) {
      if (tid < s) {
        red[tid] += red[tid + s];
      }
      syncThreads();
    }
    if (tid === 0 && base < n) {
      partials[tile] = red[0];
    }
  },
);

export const scanPartials = kernel(
  // 1024 threads where the device allows them (one chunk of 16384 tile sums), 256 or 64 elsewhere; 64 on the
  // CPU backend, whose threads run one after another, so that a wide tree only costs.
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 1024 }, { BLOCK: 64, ITEMS: 4 }] },
  (partials: Float32Array, count: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 16) => {
    const sums = shared.f32(BLOCK);
    const v = local.f32(ITEMS);
    const tid = threadIdx.x;
    let carry: f32 = 0;
    // Chunks of BLOCK·ITEMS values; thread tid takes ITEMS consecutive values of each, 16 bytes at a time.
    // The buffer holds a whole number of vectors; lanes at or past `count` are read as 0.
    for (let start = 0; start < count; start += BLOCK * ITEMS) {
      const first = start + tid * ITEMS;
      let total: f32 = 0;
      unrollLoad: for (let k = 0; k < ITEMS; k += 4) {
        let a: f32 = 0;
        let b: f32 = 0;
        let c: f32 = 0;
        let d: f32 = 0;
        if (first + k < count) {
          const [x0, x1, x2, x3] = load4(partials, first + k);
          a = x0;
          b = first + k + 1 < count ? x1 : 0;
          c = first + k + 2 < count ? x2 : 0;
          d = first + k + 3 < count ? x3 : 0;
        }
        store4(v, k, a, b, c, d);
        total += a;
        total += b;
        total += c;
        total += d;
      }
      // Inclusive scan of the threads' totals; then thread tid's offset is the total of threads before it.
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
      let before: f32 = 0;
      if (tid > 0) {
        before = sums[tid - 1];
      }
      let running = carry + before;
      unrollScan: for (let j = 0; j < ITEMS; j++) {
        const x = v[j];
        v[j] = running;
        running += x;
      }
      unrollStore: for (let k = 0; k < ITEMS; k += 4) {
        if (first + k < count) {
          store4(partials, first + k, v[k], v[k + 1], v[k + 2], v[k + 3]);
        }
      }
      carry += sums[BLOCK - 1];
      // Every thread has read this chunk's sums before the next chunk writes them.
      syncThreads();
    }
  },
);

export const scanTiles = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 64 }, { BLOCK: 1, ITEMS: 1024, COALESCE: false }] },
  (out: Float32Array, input: ReadonlyFloat32Array, partials: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 2, COALESCE: Const<bool> = true) => {
    const staged = shared.f32(BLOCK * ITEMS * 4);
    const sums = shared.f32(BLOCK);
    const v = local.f32(4 * ITEMS);
    const tid = threadIdx.x;
    const tiles = (n + BLOCK * ITEMS * 4 - 1) / (BLOCK * ITEMS * 4);
    const tile = tiles - 1 - (blockIdx.y * gridDim.x + blockIdx.x);
    const live = tile >= 0;
    const base = tile * BLOCK * ITEMS * 4;

    let total: f32 = 0;
    if (COALESCE) {
      // Coalesced loads into shared memory, so that each thread can then take consecutive elements.
      unrollLoad: for (let k = 0; k < ITEMS; k++) {
        const q = (k * BLOCK + tid) * 4;
        if (live && base + q < n) {
          const [a, b, c, d] = load4(input, base + q);
          store4(staged, q, a, b, c, d);
        } else {
          store4(staged, q, 0, 0, 0, 0);
        }
      }
      syncThreads();
      unrollMine: for (let k = 0; k < ITEMS; k++) {
        const [a, b, c, d] = load4(staged, tid * ITEMS * 4 + 4 * k);
        store4(v, 4 * k, a, b, c, d);
        total += a;
        total += b;
        total += c;
        total += d;
      }
    } else if (BLOCK > 1) {
      // The threads' totals only offset the threads after the first: a block of one thread skips this pass.
      // Without COALESCE each thread's elements are its 4·ITEMS consecutive ones, in input and out, up to n.
      const first = base + tid * ITEMS * 4;
      const end = live ? Math.min(first + 4 * ITEMS, n) : first;
      for (let i = first; i < end; i += 4) {
        const [a, b, c, d] = load4(input, i);
        total += a + b + (c + d);
      }
    }
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
    let running: f32 = 0;
    if (live) {
      running = partials[tile];
    }
    if (tid > 0) {
      running += sums[tid - 1];
    }
    if (COALESCE) {
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
        if (live && base + q < n) {
          const [a, b, c, d] = load4(staged, q);
          store4(out, base + q, a, b, c, d);
        }
      }
    } else {
      // The same elements again, straight from the input. Each vector's own prefix sums come first, so that
      // the running sum waits for one rounded addition per vector instead of four: on a CPU that chain of
      // additions, each waiting for the last, is what bounds the loop.
      const first = base + tid * ITEMS * 4;
      const end = live ? Math.min(first + 4 * ITEMS, n) : first;
      for (let i = first; i < end; i += 4) {
        const [a, b, c, d] = load4(input, i);
        const ab = a + b;
        const abc = ab + c;
        store4(out, i, running, running + a, running + ab, running + abc);
        running += abc + d;
      }
    }
  },
);
