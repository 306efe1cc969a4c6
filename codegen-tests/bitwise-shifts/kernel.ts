// Construct: bitwise operators and shifts: &, |, ^, ~, <<, >>, >>> on i32 and on u32, shifts by i32 and u32
// amounts (literal and run-time), and the compound forms.
import { kernel, threadIdx, u32, type i32, type u32 as U32 } from "tskernel";

export const bits = kernel({ block: [32] }, (outI: Int32Array, outU: Uint32Array, s: i32, su: U32) => {
  const t = threadIdx.x;
  const x = outI[t];
  const y = outU[t];
  const masked = (x & 0xff) | (t << 8) ^ ~x;
  const arith = x >> s;
  const logical = x >>> s;
  const logical4 = x >>> 4;
  const shiftedU = y << su;
  const shiftedUbyI = y >> s;
  const ushr = y >>> 3;
  const shiftByU = x << su;
  outI[t] = masked + arith + logical + logical4 + shiftByU;
  outU[t] = shiftedU ^ shiftedUbyI ^ ushr ^ ~y ^ (u32(t) & 7);
  let acc = x;
  acc <<= 2;
  acc >>= s;
  acc >>>= 1;
  acc &= 0x0f0f0f0f;
  acc |= 1;
  acc ^= t;
  outI[t + 32] = acc;
  let uacc = y;
  uacc >>>= s;
  uacc <<= 3;
  outU[t + 32] = uacc;
});
