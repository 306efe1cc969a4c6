// Checks: an import whose module specifier is not a string (a syntax error, found by the fuzzer, that
// crashed the compiler) is reported as TypeScript's error, with the kernel's own errors after it.
import { kernel, threadIdx, type f32 } from "tskernel";
import { type i32 } from (;

export const k = kernel({ block: [64] }, (out: Float32Array, x: f32, n: i32) => {
  if (threadIdx.x < n) out[threadIdx.x] = x;
});
