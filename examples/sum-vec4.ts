// Sum of n floats in two launches of one kernel, without atomics: the first launch's G blocks each write the
// sum of their share to partials[blockIdx.x], the second (one block) adds up those G partial sums. Each
// thread reads 16 bytes at a time (load4), ITEMS vectors per step, into four running sums (one per vector
// lane), then the block adds its threads' sums with a shared-memory tree (reduce-sum.ts explains the tree).
// n must be a multiple of 4 (pad with zeros otherwise), and so must G, since the partial sums are the second
// launch's input. Launch 1: block BLOCK, grid G (one wave of the GPU: 1024 blocks of 256 threads on an H100),
// out = partials (G elements). Launch 2: block BLOCK, grid 1, input = partials, n = G, out = the result.
import { blockIdx, gridDim, kernel, load4, local, shared, store4, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const sumVec4 = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (out: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const partial = shared.f32(BLOCK);
    const xs = local.f32(4 * ITEMS);
    const tid = threadIdx.x;
    const quads = n / 4;
    let s0: f32 = 0;
    let s1: f32 = 0;
    let s2: f32 = 0;
    let s3: f32 = 0;
    for (let first = blockIdx.x * BLOCK * ITEMS + tid; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        // ITEMS independent loads in flight before the first addition.
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3] = load4(input, (first + k * BLOCK) * 4);
          store4(xs, 4 * k, x0, x1, x2, x3);
        }
        unrollAdd: for (let k = 0; k < ITEMS; k++) {
          s0 += xs[4 * k];
          s1 += xs[4 * k + 1];
          s2 += xs[4 * k + 2];
          s3 += xs[4 * k + 3];
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [x0, x1, x2, x3] = load4(input, q * 4);
            s0 += x0;
            s1 += x1;
            s2 += x2;
            s3 += x3;
          }
        }
      }
    }
    partial[tid] = s0 + s1 + (s2 + s3);
    syncThreads();
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
