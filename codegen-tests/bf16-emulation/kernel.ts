// bf16 alone, which every WebGPU device runs (emulated in u32 words and f32 values; docs/language.md,
// "Half precision"): arithmetic rounded after every operation, a helper, a 2-D shared array whose
// neighbouring elements share words and are written by different threads, conversions from and to
// integers. tests/half-precision.test.ts runs it on the CPU and WebGPU against a float64 reference.
// (A file with an f16 kernel needs shader-f16 for all of its WebGPU kernels: WGSL enables f16 per module.)
import { kernel, threadIdx, blockIdx, shared, syncThreads, f32, bf16, i32, u32, type BFloat16Array, type ReadonlyBFloat16Array } from "tskernel";

function blend(a: bf16, b: bf16): bf16 {
  return a * b - a / b;
}

export const bfloats = kernel({ block: [64] }, (out: BFloat16Array, outF: Float32Array, x: ReadonlyBFloat16Array, ints: Int32Array, n: i32, shift: bf16) => {
  const tile = shared.bf16(2, 64);
  const t = threadIdx.x;
  const i = blockIdx.x * 64 + t;
  const b: bf16 = i < n ? x[i] : 0;
  tile[t & 1][t] = b * shift;
  tile[1 - (t & 1)][t] = -b;
  syncThreads();
  if (i >= n) return;
  const neighbour = tile[0][t ^ 1] + tile[1][t ^ 1];
  out[i * 4] = blend(b, shift) + neighbour;
  out[i * 4 + 1] = bf16(ints[i]) - bf16(u32(ints[i]) >> 9);
  out[i * 4 + 2] = Math.min(Math.abs(b), 100) * 3;
  let acc: bf16 = b;
  acc *= shift;
  acc -= 1;
  acc++;
  out[i * 4 + 3] = acc;
  outF[i * 2] = f32(neighbour) * 0.5;
  outF[i * 2 + 1] = b > neighbour ? 1.5 : f32(i32(b * 64));
  ints[i] = i32(neighbour);
});
