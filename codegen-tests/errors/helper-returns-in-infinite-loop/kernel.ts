// Checks: a helper whose only exit is a `return` inside `while (true)` (TypeScript accepts it: every path returns).
import { blockDim, blockIdx, kernel, threadIdx, type i32 } from "tskernel";

function collatzSteps(start: i32): i32 {
  let x = start;
  let steps = 0;
  while (true) {
    if (x <= 1) return steps;
    x = x % 2 === 0 ? x / 2 : 3 * x + 1;
    steps++;
  }
}

export const collatz = kernel({ block: [256] }, (out: Int32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = collatzSteps(i + 1);
});
