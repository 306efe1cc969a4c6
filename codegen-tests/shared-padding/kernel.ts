// Construct: shared arrays whose alignments differ, so that CUDA pads between them: a one-word array, then an
// array read and written 16 bytes at a time (load4/store4: 16-byte aligned, 12 bytes of padding before it),
// then a three-word array (4-byte aligned: no padding). Above 48 KB (the default) the arrays are views into
// one dynamic buffer at those offsets; below (VECTORS = 256) they are static, with __align__(16) on the
// vector array. Either way the manifest's sharedBytes counts the padding: what CUDA allocates.
import { blockIdx, f32, kernel, load4, shared, store4, syncThreads, threadIdx, u32, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

// Each block reverses VECTORS vectors of 4 floats (and the floats inside each) through shared memory, and adds
// its block number to the first float of each vector and 7 to the last, read from the two small arrays.
export const paddedTiles = kernel({ block: [256], specializations: [{}, { VECTORS: 256 }] }, (out: Float32Array, input: ReadonlyFloat32Array, VECTORS: Const<i32> = 3200) => {
  const first = shared.u32(1);
  const tile = shared.f32(VECTORS * 4);
  const last = shared.i32(3);
  const base = blockIdx.x * VECTORS * 4;
  if (threadIdx.x === 0) {
    first[0] = u32(blockIdx.x);
    last[2] = 7;
  }
  for (let v = threadIdx.x; v < VECTORS; v += 256) {
    const [a, b, c, d] = load4(input, base + 4 * v);
    store4(tile, 4 * (VECTORS - 1 - v), d, c, b, a);
  }
  syncThreads();
  for (let v = threadIdx.x; v < VECTORS; v += 256) {
    const [a, b, c, d] = load4(tile, 4 * v);
    store4(out, base + 4 * v, a + f32(first[0]), b, c, d + f32(last[2]));
  }
});
