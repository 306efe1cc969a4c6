// A private (register) array declared inside a loop instead of at the top level of the kernel body.
import { kernel, local, threadIdx, type i32 } from "tskernel";

export const sums = kernel({ block: [32] }, (out: Float32Array, n: i32) => {
  for (let i = 0; i < n; i++) {
    const acc = local.f32(4);
    acc[0] = 1;
    out[threadIdx.x] = acc[0];
  }
});
