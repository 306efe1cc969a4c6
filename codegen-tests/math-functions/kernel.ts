// Construct: every Math function on f32, Math constants, fma, and Math.min/max/abs on i32 and u32
// (including variadic min/max).
import { blockDim, blockIdx, fma, kernel, threadIdx, u32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const mathAll = kernel(
  { block: [256] },
  (out: Float32Array, outI: Int32Array, outU: Uint32Array, input: ReadonlyFloat32Array, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const x = input[i];
    const y = input[i + n];
    const a = Math.sqrt(Math.abs(x)) + Math.floor(x) + Math.ceil(y) + Math.trunc(x - y);
    const b = Math.exp(x) + Math.log(Math.abs(y) + 1) + Math.log2(2 + x * x) + Math.pow(x, y) + x ** 2;
    const c = Math.sin(x) + Math.cos(y) + Math.tan(x) + Math.tanh(y) + Math.atan2(y, x) + Math.sign(x - y);
    const d = Math.min(x, y) + Math.max(x, y, 0) + Math.min(x, y, a, b);
    const e = Math.PI * Math.E + Math.LN2 + Math.LN10 + Math.LOG2E + Math.LOG10E + Math.SQRT2 + Math.SQRT1_2;
    out[i] = fma(a, b, c) + d + e;
    const k = i - 128;
    outI[i] = Math.abs(k) + Math.min(k, 7) + Math.max(k, -7, n) + Math.min(k, 0);
    const u = u32(i);
    outU[i] = Math.abs(u) + Math.min(u, 9) + Math.max(u, u32(n));
  },
);
