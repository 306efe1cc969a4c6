// f16 and bf16 (docs/language.md, "Half precision"): locals, parameters, shared arrays, helpers, literals
// typed by context, every conversion, arithmetic rounded after each operation, Math functions, compound
// assignments and increments. tests/half-precision.test.ts runs it against a float64 reference.
import {
  kernel, threadIdx, blockIdx, shared, syncThreads, f32, f16, bf16, i32, u32,
  type Float16Array, type BFloat16Array, type ReadonlyFloat16Array, type ReadonlyBFloat16Array, type ReadonlyFloat32Array,
} from "tskernel";

function blend(a: bf16, b: bf16): bf16 {
  return a * b - a / b;
}

function halve(h: f16): f16 {
  return h * 0.5;
}

export const halves = kernel({ block: [64] }, (outH: Float16Array, outB: BFloat16Array, outF: Float32Array, outI: Int32Array, xh: ReadonlyFloat16Array, xb: ReadonlyBFloat16Array, xf: ReadonlyFloat32Array, n: i32, scale: f16, shift: bf16) => {
  const tile = shared.bf16(64);
  const t = threadIdx.x;
  const i = blockIdx.x * 64 + t;
  const b: bf16 = i < n ? xb[i] : 0;
  tile[t] = b * shift;
  syncThreads();
  if (i >= n) return;
  const a = xh[i];
  const x = xf[i];
  // f16: each operation rounded.
  outH[i * 6] = a * scale + 1;
  outH[i * 6 + 1] = a / (scale - 0.25);
  outH[i * 6 + 2] = Math.sqrt(Math.abs(a));
  outH[i * 6 + 3] = f16(b);
  let acc: f16 = 0;
  for (let k = 0; k < 3; k++) {
    acc += halve(a);
  }
  acc++;
  outH[i * 6 + 4] = acc;
  outH[i * 6 + 5] = f16(x) - -a;
  // bf16: values rounded after every operation, the same on every target.
  outB[i * 5] = b * b + bf16(x);
  outB[i * 5 + 1] = bf16(a);
  outB[i * 5 + 2] = blend(b, 2.5);
  outB[i * 5 + 3] = tile[63 - t] + b;
  outB[i * 5 + 4] = Math.max(b, bf16(i)) / shift;
  // Widening is exact; conversions to integers truncate and saturate.
  outF[i * 4] = f32(a) * x;
  outF[i * 4 + 1] = f32(b);
  outF[i * 4 + 2] = a < 0 ? f32(b) : -f32(a);
  outF[i * 4 + 3] = f32(tile[t]);
  outI[i * 3] = i32(a);
  outI[i * 3 + 1] = i32(b * 1000);
  outI[i * 3 + 2] = i32(u32(b));
});
