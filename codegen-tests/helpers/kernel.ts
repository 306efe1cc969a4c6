// Construct: helper functions calling helpers (declared before and after their callers), helpers with
// bool and integer types, and early returns inside helpers.
import { blockDim, blockIdx, f32, kernel, threadIdx, type bool, type i32, type ReadonlyFloat32Array } from "tskernel";

function square(x: f32): f32 {
  return x * x;
}

function sumOfSquares(a: f32, b: f32): f32 {
  return square(a) + square(b);
}

function hypotenuse(a: f32, b: f32): f32 {
  const s = sumOfSquares(a, b);
  if (s === 0) {
    return 0;
  }
  return Math.sqrt(s);
}

export const helpers = kernel({ block: [256] }, (out: Float32Array, xs: ReadonlyFloat32Array, ys: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const h = hypotenuse(xs[i], ys[i]);
  out[i] = isEven(i) ? h : -h + f32(gcd(i, 12));
});

function isEven(k: i32): bool {
  return k % 2 === 0;
}

function gcd(a: i32, b: i32): i32 {
  let x = a;
  let y = b;
  while (y !== 0) {
    const t = y;
    y = x % y;
    x = t;
  }
  return x;
}
