// Every conversion to and from f16 and bf16 (docs/language.md, "Half precision"): from f32, f64, i32, u32 and
// the other half type (each rounded once, to nearest even), to f32 (exact) and to integers (truncated and
// saturated, NaN 0). tests/half-conversions.test.ts feeds it every 16-bit encoding and the f32s at every
// rounding midpoint on the CPU; bench/types-gpu.ts compares CUDA with the CPU on the same inputs.
import {
  kernel, threadIdx, blockIdx, f32, f16, bf16, i32, u32,
  type Float16Array, type BFloat16Array, type ReadonlyFloat16Array, type ReadonlyBFloat16Array, type ReadonlyFloat32Array, type ReadonlyFloat64Array, type ReadonlyInt32Array,
} from "tskernel";

export const conversions = kernel({ block: [256], targets: ["cuda", "js"] }, (
  toF16: Float16Array, toBf16: BFloat16Array, widened: Float32Array, toInt: Int32Array,
  f: ReadonlyFloat32Array, d: ReadonlyFloat64Array, ints: ReadonlyInt32Array, h: ReadonlyFloat16Array, b: ReadonlyBFloat16Array, n: i32,
) => {
  const i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  toF16[i * 5] = f16(f[i]);
  toF16[i * 5 + 1] = f16(d[i]);
  toF16[i * 5 + 2] = f16(ints[i]);
  toF16[i * 5 + 3] = f16(u32(ints[i]));
  toF16[i * 5 + 4] = f16(b[i]);
  toBf16[i * 5] = bf16(f[i]);
  toBf16[i * 5 + 1] = bf16(d[i]);
  toBf16[i * 5 + 2] = bf16(ints[i]);
  toBf16[i * 5 + 3] = bf16(u32(ints[i]));
  toBf16[i * 5 + 4] = bf16(h[i]);
  widened[i * 2] = f32(h[i]);
  widened[i * 2 + 1] = f32(b[i]);
  toInt[i * 4] = i32(h[i]);
  toInt[i * 4 + 1] = i32(u32(h[i]));
  toInt[i * 4 + 2] = i32(b[i]);
  toInt[i * 4 + 3] = i32(u32(b[i]));
});
