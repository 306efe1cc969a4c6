// Checks: a vector access to a 2-D shared array needs a row first (TSK2007, with a note saying how).
import { kernel, load4, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const rows = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(8, 32);
  tile[threadIdx.x % 8][threadIdx.x] = input[threadIdx.x];
  syncThreads();
  const [a, b, c, d] = load4(tile, threadIdx.x * 4);
  out[threadIdx.x] = a + b + c + d;
});
