// Construct: every atomic function on global buffers (i32, u32, f32) and on shared arrays (1-D and a row of a
// 2-D one), as a statement and as a value, in divergent control flow, and mixed with plain accesses that are
// separated from the atomics by barriers. tests/atomics.test.ts runs both kernels on every backend.
import {
  atomicAdd,
  atomicAnd,
  atomicCompareExchange,
  atomicExchange,
  atomicMax,
  atomicMin,
  atomicOr,
  atomicSub,
  atomicXor,
  blockIdx,
  f32,
  kernel,
  shared,
  syncThreads,
  threadIdx,
  u32,
  type i32,
  type ReadonlyInt32Array,
} from "tskernel";

export const globalAtomics = kernel(
  { block: [64] },
  (counts: Int32Array, bits: Uint32Array, sums: Float32Array, olds: Int32Array, halves: Float32Array, keys: ReadonlyInt32Array, n: i32) => {
    const i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) {
      const key = keys[i];
      atomicAdd(counts, key & 15, 1);
      olds[i] = atomicSub(counts, 16, 1);
      atomicMin(counts, 17, key);
      atomicMax(counts, 18, key);
      atomicAnd(bits, 0, ~(1 << u32(key & 31)));
      atomicOr(bits, 1, 1 << u32(key & 31));
      atomicXor(bits, 2, u32(key));
      olds[n + i] = atomicExchange(counts, 19, key);
      let won = 0;
      if (atomicCompareExchange(counts, 20, -1, i) === -1) {
        won = 1;
      }
      atomicAdd(counts, 21, won);
      olds[2 * n + i] = atomicAdd(counts, 22, 2) + 1;
      const half = atomicAdd(sums, 0, 0.5);
      halves[i] = half;
      halves[n + i] = atomicExchange(sums, 1, f32(i));
    }
  },
);

export const sharedAtomics = kernel(
  { block: [64] },
  (bins: Uint32Array, extremes: Int32Array, order: Int32Array, sums: Float32Array, values: ReadonlyInt32Array) => {
    const counts = shared.u32(16);
    const grid = shared.i32(2, 8);
    const acc = shared.f32(4);
    const next = shared.i32(2);
    const t = threadIdx.x;
    if (t < 16) {
      counts[t] = 0;
      grid[t >> 3][t & 7] = (t >> 3) === 0 ? -1000000 : 1000000;
    }
    if (t < 4) {
      acc[t] = 0;
    }
    if (t < 2) {
      next[t] = t - 1;
    }
    syncThreads();
    const v = values[blockIdx.x * 64 + t];
    atomicAdd(counts, v & 15, 1);
    atomicMax(grid[0], v & 7, v);
    atomicMin(grid[1], v & 7, v);
    atomicAdd(acc, t & 3, 0.25);
    const slot = atomicAdd(next, 1, 1);
    order[blockIdx.x * 64 + slot] = t;
    if (atomicCompareExchange(next, 0, -1, t) === -1) {
      atomicAdd(sums, 4, 1);
    }
    syncThreads();
    if (t < 16) {
      bins[blockIdx.x * 16 + t] = counts[t];
      extremes[blockIdx.x * 17 + t] = grid[t >> 3][t & 7];
      counts[t] += 1;
    }
    if (t === 16) {
      extremes[blockIdx.x * 17 + 16] = next[0];
    }
    if (t < 4) {
      atomicAdd(sums, t, acc[t]);
    }
  },
);

// Atomics in loop conditions run before each test: every thread takes tickets until they run out, so the
// tickets below n are taken once each, whatever the order. `continue` goes through the update and the next test.
export const ticketLoops = kernel({ block: [32] }, (queue: Int32Array, taken: Int32Array, n: i32) => {
  let mine = 0;
  while (atomicAdd(queue, 0, 1) < n) {
    mine += 1;
  }
  let steps = 0;
  for (; atomicAdd(queue, 1, 1) < n; steps++) {
    if ((steps & 1) === 0) {
      continue;
    }
    atomicAdd(taken, 2, 1);
  }
  atomicAdd(taken, 0, mine);
  atomicAdd(taken, 1, steps);
});
