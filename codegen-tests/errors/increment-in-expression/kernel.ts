// Checks: `i++` used as a value inside an index (`out[k++]`) is reported (TSK1011).
import { blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const compact = kernel({ block: [1] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  let k: i32 = 0;
  for (let j = 0; j < n; j++) {
    if (input[j] > 0) {
      out[k++] = input[j];
    }
  }
  out[n + blockIdx.x + threadIdx.x] = 0;
});
