// Construct: scalar types and literals: i32 extremes (incl. -2147483648), u32 up to 0xFFFFFFFF, f32 with
// exponents (1e-8), hex, bools, and literals taking their context's type.
import { kernel, threadIdx, u32, type bool, type f32, type i32 } from "tskernel";

export const literals = kernel({ block: [32] }, (outF: Float32Array, outI: Int32Array, outU: Uint32Array) => {
  const t = threadIdx.x;
  const minI: i32 = -2147483648;
  const maxI: i32 = 2147483647;
  const hexI: i32 = 0x7fffffff;
  const negHex: i32 = -0x10;
  const allOnes = u32(0xFFFFFFFF);
  const bigU: u32 = 4000000000;
  const unsuffixedBig = 3000000000;
  const tiny: f32 = 1e-8;
  const huge: f32 = 3.4e38;
  const third: f32 = 1 / 3;
  const negZero: f32 = -0.0;
  const wholeF: f32 = 2;
  let flag: bool = true;
  let other = false;
  if (t > 16) {
    other = true;
    flag = false;
  }
  outI[t] = minI + t;
  outI[t + 32] = maxI - t;
  outI[t + 64] = hexI ^ negHex;
  outU[t] = allOnes - bigU;
  outU[t + 32] = unsuffixedBig + 1;
  outF[t] = tiny * huge + third + negZero * wholeF;
  if (flag !== other) {
    outF[t + 32] = 0.1;
  }
});
