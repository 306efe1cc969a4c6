// Checks: a vector access whose constant start, after unrolling, is not a multiple of 4 (TSK3013), and one
// past the end of a shared array (TSK3008).
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const gather = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(16);
  store4(tile, threadIdx.x % 4 * 4, input[threadIdx.x], 0, 0, 0);
  syncThreads();
  let total: f32 = 0;
  unroll: for (let i = 0; i < 2; i++) {
    const [a, b, c, d] = load4(tile, i * 6);
    total += a + b + c + d;
  }
  const [e, f, g, h] = load4(tile, 16);
  out[threadIdx.x] = total + e + f + g + h;
});
