// A 256-bin histogram of n u32 values, as torch.bincount(x, minlength=256) for values below 256: the bin of a
// value is its low byte. Privatized in shared memory (histogram-atomics.ts explains why): each block counts its
// share into a shared histogram with shared-memory atomics, then adds each nonzero bin to the global histogram
// with one global atomic. The input is read 16 bytes at a time (load4), ITEMS vectors per step with all their
// loads issued before the first atomic, in a grid-stride loop, so that a grid of about one wave of blocks
// covers any n (and the global atomics stay at 256 per block). The last n mod 4 values are counted by block 0.
// Launch: clearBins (block 256, grid 1), then histogram256Vec4 (block BLOCK, any grid; about one wave of the
// GPU, 1024 blocks on an H100): `hist` has 256 elements; clearBins zeroes it, the histogram adds to it.
import { atomicAdd, blockIdx, gridDim, kernel, load4, local, shared, store4, syncThreads, threadIdx, type Const, type i32, type ReadonlyUint32Array } from "tskernel";

export const clearBins = kernel({ block: [256] }, (hist: Uint32Array) => {
  hist[threadIdx.x] = 0;
});

export const histogram256Vec4 = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (hist: Uint32Array, data: ReadonlyUint32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const bins = shared.u32(256);
    const words = local.u32(4 * ITEMS);
    const tid = threadIdx.x;
    for (let b = tid; b < 256; b += BLOCK) {
      bins[b] = 0;
    }
    syncThreads();
    const quads = n / 4;
    for (let first = blockIdx.x * BLOCK * ITEMS + tid; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        // ITEMS independent loads in flight before the first atomic.
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [w0, w1, w2, w3] = load4(data, (first + k * BLOCK) * 4);
          store4(words, 4 * k, w0, w1, w2, w3);
        }
        unrollCount: for (let i = 0; i < 4 * ITEMS; i++) {
          atomicAdd(bins, words[i] & 255, 1);
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [w0, w1, w2, w3] = load4(data, q * 4);
            atomicAdd(bins, w0 & 255, 1);
            atomicAdd(bins, w1 & 255, 1);
            atomicAdd(bins, w2 & 255, 1);
            atomicAdd(bins, w3 & 255, 1);
          }
        }
      }
    }
    // The up to three values after the last whole vector.
    if (blockIdx.x === 0 && tid < n - 4 * quads) {
      atomicAdd(bins, data[4 * quads + tid] & 255, 1);
    }
    syncThreads();
    for (let b = tid; b < 256; b += BLOCK) {
      const count = bins[b];
      if (count > 0) {
        atomicAdd(hist, b, count);
      }
    }
  },
);
