// Block-level sum reduction with a shared-memory tree, in the style of Mark Harris's "Optimizing Parallel
// Reduction in CUDA": each block writes the sum of its share of the input to out[blockIdx.x]; a second
// launch (or the host) adds up the partial sums. Demonstrates a grid-stride loop, a barrier inside a loop
// with uniform bounds, and a halving `for (…; s >>= 1)` loop.
// Launch: block BLOCK (a power of two), any grid size g; out has g elements.
import { blockIdx, gridDim, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const reduceSum = kernel(
  { block: ["BLOCK"] },
  (out: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256) => {
    const partial = shared.f32(BLOCK);
    const tid = threadIdx.x;
    // Summing serially first lets any grid size cover any n, and keeps the tree below short.
    let sum: f32 = 0;
    for (let i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
      sum += input[i];
    }
    partial[tid] = sum;
    syncThreads();
    // Sequential addressing: the active threads stay contiguous, so whole warps retire together and
    // shared-memory accesses do not conflict.
    for (let s = BLOCK / 2; s > 0; s >>= 1) {
      if (tid < s) {
        partial[tid] += partial[tid + s];
      }
      syncThreads();
    }
    if (tid === 0) {
      out[blockIdx.x] = partial[0];
    }
  },
);
