// f64 (docs/language.md, "Half precision and f64"): CUDA and the CPU; WGSL has no 64-bit float, so the
// kernel declares its targets. Conversions round once, straight from the double.
import { kernel, threadIdx, blockIdx, f32, f16, bf16, f64, i32, u32, type ReadonlyFloat64Array, type Float16Array, type BFloat16Array } from "tskernel";

export const doubles = kernel({ block: [64], targets: ["cuda", "js"] }, (out: Float64Array, outF: Float32Array, outH: Float16Array, outB: BFloat16Array, outI: Int32Array, x: ReadonlyFloat64Array, n: i32, k: f64) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  const d = x[i];
  out[i * 3] = d * k + 1e-300;
  out[i * 3 + 1] = Math.sqrt(Math.abs(d)) / 3;
  out[i * 3 + 2] = f64(i32(d)) + f64(u32(i)) * 0.1;
  outF[i] = f32(d);
  outH[i] = f16(d);
  outB[i * 2] = bf16(d);
  outB[i * 2 + 1] = bf16(i32(d * 1e6));
  outI[i] = i32(d * 1e9);
});
