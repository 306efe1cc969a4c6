// Checks: a block formula whose quotient is not a whole number for the specialization (96 / 64) is TSK3009.
import { blockIdx, kernel, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copyTiles = kernel({ block: ["TILE / PER_THREAD"] }, (out: Float32Array, input: ReadonlyFloat32Array, TILE: Const<i32> = 96, PER_THREAD: Const<i32> = 64) => {
  const i = blockIdx.x * TILE + threadIdx.x;
  out[i] = input[i];
});
