// Construct: f32 arithmetic: + - * / % (remainder of floats), ** and unary minus, with literals taking f32.
import { kernel, threadIdx, type f32 } from "tskernel";

export const floats = kernel({ block: [64] }, (out: Float32Array, y: f32) => {
  const t = threadIdx.x;
  const x = out[t];
  const r = x % y;
  let m: f32 = x;
  m %= 2.5;
  const p = x ** y + -x * 3 - (x - y) / 2;
  out[t] = r + m + p - -y;
});
