// A 256-bin histogram of bytes, privatized in shared memory as in Kirk and Hwu's "Programming Massively
// Parallel Processors" (the histogram chapter): each block counts its share of the input into a shared
// histogram with shared-memory atomics, then adds each of its bins to the global histogram with one global
// atomic, so that global memory sees 256 atomics per block instead of one per byte.
// The bytes come packed four to a u32, the first in the low bits.
// Launch: block 256, any grid (a grid-stride loop covers any length); `hist` has 256 elements and is added
// to, so zero it first.
import { atomicAdd, blockIdx, gridDim, kernel, shared, syncThreads, threadIdx, type i32, type ReadonlyUint32Array } from "tskernel";

export const histogram256 = kernel({ block: [256] }, (hist: Uint32Array, data: ReadonlyUint32Array, words: i32) => {
  const bins = shared.u32(256);
  bins[threadIdx.x] = 0;
  syncThreads();
  for (let i = blockIdx.x * 256 + threadIdx.x; i < words; i += 256 * gridDim.x) {
    const word = data[i];
    atomicAdd(bins, word & 255, 1);
    atomicAdd(bins, (word >> 8) & 255, 1);
    atomicAdd(bins, (word >> 16) & 255, 1);
    atomicAdd(bins, word >> 24, 1);
  }
  syncThreads();
  const count = bins[threadIdx.x];
  if (count > 0) {
    atomicAdd(hist, threadIdx.x, count);
  }
});
