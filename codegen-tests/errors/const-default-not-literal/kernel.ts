// A compile-time constant whose default is an expression, not a literal.
import { kernel, threadIdx, type Const, type i32 } from "tskernel";

export const fill = kernel({ block: ["TILE"] }, (out: Float32Array, TILE: Const<i32> = 4 * 4) => {
  out[threadIdx.x] = 1;
});
