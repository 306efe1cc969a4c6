// Checks: f64 on WebGPU, which has no 64-bit float, is TSK3120, with the note on the `targets` option.
import { blockIdx, f32, f64, kernel, threadIdx, type i32 } from "tskernel";

export const accumulate = kernel({ block: [64] }, (out: Float32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  let sum = 0.0;
  for (let k = 0; k < 8; k++) {
    const wide: f64 = f64(out[i * 8 + k]);
    sum += f32(wide);
  }
  out[i] = sum;
});
