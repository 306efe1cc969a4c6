// Construct: 16-byte vector accesses (load4/store4 on global buffers, 1-D and 2-D shared arrays and private
// arrays) and asynchronous global→shared copies (copyAsync4, commitAsync, waitAsync) in a double-buffered loop.
import {
  blockIdx,
  commitAsync,
  copyAsync4,
  kernel,
  load4,
  local,
  shared,
  store4,
  syncThreads,
  threadIdx,
  waitAsync,
  type Const,
  type i32,
  type ReadonlyFloat32Array,
  type ReadonlyInt32Array,
  type f32,
} from "tskernel";

// Each thread moves four floats through a 2-D shared tile, scaling them, and four ints straight across.
export const vectorCopy = kernel(
  { block: [32] },
  (out: Float32Array, input: ReadonlyFloat32Array, ints: Int32Array, intsIn: ReadonlyInt32Array, scale: f32, WIDTH: Const<i32> = 128) => {
    const tile = shared.f32(2, WIDTH);
    const flat = shared.f32(WIDTH);
    const scratch = local.f32(8);
    const base = blockIdx.x * WIDTH + threadIdx.x * 4;
    const [a, b, c, d] = load4(input, base);
    store4(tile[1], threadIdx.x * 4, a * scale, b * scale, c * scale, d * scale);
    store4(scratch, 4, a, b, c, d);
    syncThreads();
    let [x, y, z, w] = load4(tile[1], threadIdx.x * 4);
    x += scratch[4];
    store4(flat, threadIdx.x * 4, x, y, z, w);
    syncThreads();
    const [p, q, r, s] = load4(flat, (threadIdx.x ^ 1) * 4);
    store4(out, base, p, q, r, s);
    const [i0, i1, i2, i3] = load4(intsIn, base);
    store4(ints, base, i3, i2, i1, i0);
  },
);

// Sums STEPS tiles of 4·32 floats per block, copying the next tile asynchronously while adding the current one.
export const pipelinedSum = kernel(
  { block: [32] },
  (out: Float32Array, input: ReadonlyFloat32Array, STEPS: Const<i32> = 4) => {
    const stages = shared.f32(2, 128);
    const offset = blockIdx.x * STEPS * 128 + threadIdx.x * 4;
    copyAsync4(stages[0], threadIdx.x * 4, input, offset);
    commitAsync();
    let total: f32 = 0;
    for (let step = 0; step < STEPS; step++) {
      if (step + 1 < STEPS) {
        copyAsync4(stages[(step + 1) % 2], threadIdx.x * 4, input, offset + (step + 1) * 128);
      }
      commitAsync();
      waitAsync(1);
      syncThreads();
      const [e0, e1, e2, e3] = load4(stages[step % 2], ((threadIdx.x + 1) % 32) * 4);
      total += e0 + e1 + e2 + e3;
      syncThreads();
    }
    out[blockIdx.x * 32 + threadIdx.x] = total;
  },
);
