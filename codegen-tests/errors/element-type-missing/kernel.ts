// Checks: a kernel written over an element type needs specializations that name it (TSK1140).
import { blockIdx, cast, kernel, threadIdx, type BufferOf, type DType, type i32 } from "tskernel";

export const fill = kernel({ block: [64] }, <T extends DType>(out: BufferOf<T>, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  out[i] = cast<T>(1);
});
