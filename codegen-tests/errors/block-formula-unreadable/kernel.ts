// Checks: a block entry that is not a formula of constants joined by * and / is TSK1004.
import { blockIdx, kernel, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copyTiles = kernel({ block: ["TILE + 1"] }, (out: Float32Array, input: ReadonlyFloat32Array, TILE: Const<i32> = 96) => {
  const i = blockIdx.x * TILE + threadIdx.x;
  out[i] = input[i];
});
