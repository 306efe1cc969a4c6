// Construct: several specializations of one kernel through `specializations: [...]`, with i32, f32 and
// bool constants, one value left to its default, and a Const used in the block shape.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const blockSum = kernel(
  {
    block: ["BLOCK"],
    specializations: [{ BLOCK: 64 }, { BLOCK: 128, SCALE: 0.5 }, { BLOCK: 256, SQUARE: true }],
  },
  (out: Float32Array, input: ReadonlyFloat32Array, BLOCK: Const<i32> = 32, SCALE: Const<f32> = 1, SQUARE: Const<boolean> = false) => {
    const partial = shared.f32(BLOCK);
    const tid = threadIdx.x;
    const v = input[blockIdx.x * BLOCK + tid];
    partial[tid] = SQUARE ? v * v : v;
    syncThreads();
    for (let s = BLOCK / 2; s > 0; s >>= 1) {
      if (tid < s) {
        partial[tid] += partial[tid + s];
      }
      syncThreads();
    }
    if (tid === 0) {
      const total: f32 = partial[0] * SCALE;
      out[blockIdx.x] = total;
    }
  },
);
