// Checks: a specialization's element type must be one of the language's (TSK1141).
import { blockIdx, cast, kernel, threadIdx, type BufferOf, type DType, type i32 } from "tskernel";

export const fill = kernel({ block: [64], specializations: [{ T: "f32" }, { T: "f8" as DType }] }, <T extends DType>(out: BufferOf<T>, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  out[i] = cast<T>(1);
});
