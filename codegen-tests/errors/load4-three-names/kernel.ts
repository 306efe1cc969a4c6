// Checks: load4 destructured into three names (TSK1028): every element needs a name.
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const sum3 = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const [a, b, c] = load4(input, threadIdx.x * 4);
  out[threadIdx.x] = a + b + c;
});
