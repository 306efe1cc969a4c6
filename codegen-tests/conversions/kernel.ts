// Construct: explicit conversions between f32, i32 and u32 in every direction, and bool to each numeric type.
import { f32, i32, kernel, threadIdx, u32 } from "tskernel";

export const convert = kernel({ block: [64] }, (outF: Float32Array, outI: Int32Array, outU: Uint32Array, input: Float32Array) => {
  const t = threadIdx.x;
  const x = input[t];
  const xi = i32(x);
  const xu = u32(x);
  const fromI = f32(xi);
  const fromU = f32(xu);
  const iFromU = i32(xu);
  const uFromI = u32(xi);
  const positive = x > 0;
  outF[t] = fromI + fromU + f32(positive);
  outI[t] = iFromU + i32(positive) + i32(f32(t) * 0.5);
  outU[t] = uFromI + u32(positive) + u32(t);
  outF[t + 64] = f32(1) + f32(-3);
  outI[t + 64] = i32(-x * 2);
});
