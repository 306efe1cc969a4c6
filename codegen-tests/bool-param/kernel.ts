// Construct: bool scalar parameters used in conditions, in a ternary and combined with &&, ||, and a
// Const<bool> that selects code at compile time.
import { blockDim, blockIdx, kernel, syncThreads, shared, threadIdx, type bool, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const relu = kernel(
  { block: [64] },
  (out: Float32Array, input: ReadonlyFloat32Array, n: i32, leaky: bool, inPlace: bool, CLAMP: Const<bool> = true) => {
    const buf = shared.f32(64);
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? input[i] : 0;
    // A bool parameter is uniform: a barrier under it is allowed.
    if (leaky) {
      syncThreads();
    }
    const x = buf[threadIdx.x];
    let y = x > 0 ? x : leaky ? x * 0.01 : 0;
    if (CLAMP && !inPlace) {
      y = Math.min(y, 6);
    }
    if (i < n && (inPlace || leaky)) {
      out[i] = y;
    }
  },
);
