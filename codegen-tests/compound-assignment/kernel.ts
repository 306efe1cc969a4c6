// Construct: compound assignments (+= -= *= /= %= &= |= ^= <<= >>=) and ++/-- on locals, buffer
// elements and shared elements, with f32 and integer types.
import { kernel, shared, syncThreads, threadIdx, type f32, type i32 } from "tskernel";

export const compound = kernel({ block: [32] }, (outF: Float32Array, outI: Int32Array, scale: f32) => {
  const t = threadIdx.x;
  const buf = shared.i32(32);
  let x: f32 = outF[t];
  x += 1;
  x -= scale;
  x *= 2;
  x /= scale;
  x++;
  x--;
  let k: i32 = t;
  k += 3;
  k -= 1;
  k *= 5;
  k /= 2;
  k %= 7;
  k++;
  ++k;
  k--;
  --k;
  outF[t] += x;
  outF[t + 32] *= 0.5;
  outF[t + 64]++;
  outI[t] |= k;
  outI[t] &= 0xff;
  outI[t] ^= 0x0f;
  outI[t] <<= 1;
  outI[t] >>= 1;
  outI[t]--;
  buf[t] = k;
  buf[t] += 1;
  buf[t]++;
  syncThreads();
  outI[t + 32] = buf[31 - t];
});
