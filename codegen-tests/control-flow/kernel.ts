// Construct: if / else-if / else chains, for, while, break, continue, nested loops, and an early return
// with no barrier after it.
import { kernel, threadIdx, blockIdx, blockDim, type f32, type i32 } from "tskernel";

export const control = kernel({ block: [128] }, (out: Float32Array, n: i32, limit: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  let acc: f32 = 0;
  if (i % 4 === 0) {
    acc = 1;
  } else if (i % 4 === 1) {
    acc = 2;
  } else if (i % 4 === 2) {
    acc = 3;
  } else {
    acc = 4;
  }
  for (let j = 0; j < limit; j++) {
    if (j === i) continue;
    if (j > 1000) break;
    for (let k = j; k > 0; k -= 2) {
      acc += 0.5;
    }
  }
  let w = i;
  while (w > 1) {
    if (w % 2 === 0) {
      w = w / 2;
      continue;
    }
    w = 3 * w + 1;
    if (w > 100000) break;
  }
  for (;;) {
    acc *= 0.5;
    if (acc < 1) break;
  }
  {
    const inner = acc * 2;
    acc = inner;
  }
  if (acc > 10) return;
  out[i] = acc + f32val(w);
});

function f32val(v: i32): f32 {
  return v > 0 ? 1 : 0;
}
