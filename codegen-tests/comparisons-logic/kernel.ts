// Construct: comparisons on f32, i32, u32 and bool, and the logical operators &&, ||, ! mixed with
// parentheses (WGSL needs them where && and || meet).
import { kernel, threadIdx, u32, type bool, type f32, type i32 } from "tskernel";

export const compare = kernel({ block: [64] }, (out: Int32Array, x: f32, n: i32, strict: bool) => {
  const t = threadIdx.x;
  const ut = u32(t);
  const inRange = t >= 0 && t < n;
  const fTest = x <= 1.5 || x > 100;
  const uTest = ut !== 3 && ut === u32(n);
  const eqBools = inRange === fTest;
  const mixed = (inRange && !fTest) || (uTest && strict) || !(t <= 4);
  const chained = inRange && fTest && uTest && !strict;
  const either = inRange || fTest || uTest;
  if (mixed !== eqBools || (chained && either)) {
    out[t] = 1;
  } else if (!mixed) {
    out[t] = 2;
  }
  if (x != 0 && n == 3) {
    out[t + 64] = 3;
  }
});
