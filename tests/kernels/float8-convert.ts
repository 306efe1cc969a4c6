// The 8-bit float conversions of a kernel, element by element: each x[i] stored into an e4m3 and an e5m2 array
// (rounded to nearest even, saturating) and each code of c4 and c5 loaded as its f32. tests/float8.test.ts runs
// it over every code and every rounding midpoint on the CPU.
import { blockIdx, kernel, threadIdx, type Float8E4M3Array, type Float8E5M2Array, type i32, type ReadonlyFloat32Array, type ReadonlyFloat8E4M3Array, type ReadonlyFloat8E5M2Array } from "tskernel";

export const float8Convert = kernel(
  { block: [64], targets: ["cuda", "js"] },
  (e4: Float8E4M3Array, e5: Float8E5M2Array, back4: Float32Array, back5: Float32Array, x: ReadonlyFloat32Array, c4: ReadonlyFloat8E4M3Array, c5: ReadonlyFloat8E5M2Array, n: i32) => {
    const i = blockIdx.x * 64 + threadIdx.x;
    if (i >= n) return;
    e4[i] = x[i];
    e5[i] = x[i];
    back4[i] = c4[i];
    back5[i] = c5[i];
  },
);
