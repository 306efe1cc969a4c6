// Checks: the `unroll:` label on a `while` loop is reported (TSK1015).
import { kernel, threadIdx, type f32, type ReadonlyFloat32Array } from "tskernel";

export const sum4 = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tid = threadIdx.x;
  let k = 0;
  let s: f32 = 0;
  unroll: while (k < 4) {
    s += input[tid * 4 + k];
    k++;
  }
  out[tid] = s;
});
