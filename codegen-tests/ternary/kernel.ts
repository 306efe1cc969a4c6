// Construct: the conditional operator on f32, i32 and bool values, nested, with a literal branch, and
// as a bool (WGSL select(false, true, cond)).
import { kernel, threadIdx, type bool, type f32, type i32 } from "tskernel";

export const choose = kernel({ block: [64] }, (outF: Float32Array, outI: Int32Array, threshold: f32, n: i32) => {
  const t = threadIdx.x;
  const x = outF[t];
  const clipped = x > threshold ? threshold : x;
  const sign = x > 0 ? 1 : x < 0 ? -1 : 0;
  const index = t < n ? t : n - 1;
  const big: bool = x > threshold ? true : false;
  const pick = (big ? x : -x) + (t % 2 === 0 ? 0.5 : 1.5);
  outF[t] = clipped + pick;
  outI[t] = big ? sign : index;
});
