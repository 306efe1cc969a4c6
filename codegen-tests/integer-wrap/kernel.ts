// Construct: i32 arithmetic that overflows, shifts by run-time amounts, and conversions of NaN and
// out-of-range floats (docs/language.md §5, §6), reduced from the differential fuzzer's CUDA failures on the
// H100. CUDA computes i32 `+ - * <<` and negation on unsigned bits (C++ leaves signed overflow undefined,
// and nvcc divided `x * x` as unsigned), masks shift amounts, converts floats with __float2int_rz, and
// clears the sign bit for Math.abs (ptxas folded `fabsf(NaN) >= 0.0f` to true). Counted loops keep `i++`.
import { kernel, threadIdx, f32, i32, u32, type ReadonlyFloat32Array, type ReadonlyInt32Array } from "tskernel";

export const integerWrap = kernel(
  { block: [64] },
  (outI: Int32Array, outU: Uint32Array, inI: ReadonlyInt32Array, inS: ReadonlyFloat32Array, v: i32, n: i32, s: u32) => {
    const t = threadIdx.x;
    const x = inI[t];
    outI[t * 8] = (x * x) / ((v & 32767) + 1);
    outI[t * 8 + 1] = x + 1499859162 > 5 ? 1 : 0;
    outI[t * 8 + 2] = -x;
    outI[t * 8 + 3] = x << n;
    outU[t * 4] = s >> n;
    outI[t * 8 + 4] = i32(inS[t]);
    outU[t * 4 + 1] = u32(inS[t]);
    outI[t * 8 + 5] = Math.abs(inS[t]) >= 0 ? 1 : 0;
    let acc = x;
    acc += v;
    acc *= 3;
    acc <<= n;
    acc -= -2147483648;
    for (let i = 0; i < n; i++) {
      acc += i;
    }
    for (let i = n; i <= 100; i++) {
      acc ^= i;
    }
    for (let i = 0; i < n; i += 4) {
      acc -= i;
    }
    outI[t * 8 + 6] = acc;
    outI[t * 8 + 7] = i32(f32(x) * 0.5);
  },
);
