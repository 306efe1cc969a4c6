// Checks: atomics other than atomicAdd and atomicExchange on an f32 array are reported (TSK2011).
import { atomicMin, blockIdx, kernel, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";

export const smallest = kernel({ block: [64] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) {
    atomicMin(out, 0, input[i]);
  }
});
