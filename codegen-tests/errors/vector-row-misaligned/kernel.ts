// Checks: load4 on the rows of a 2-D shared array whose rows are 33 floats long (TSK3014): every row after
// the first would start off a 16-byte boundary.
import { commitAsync, copyAsync4, kernel, load4, shared, store4, syncThreads, threadIdx, waitAsync, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const rows = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(8, 33);
  tile[threadIdx.x % 8][threadIdx.x] = input[threadIdx.x];
  syncThreads();
  const [a, b, c, d] = load4(tile[threadIdx.x % 8], 0);
  out[threadIdx.x] = a + b + c + d;
});
