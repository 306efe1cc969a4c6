// Construct: `unroll:` on constant loops: a plain one, one whose body declares a local, an outer loop with a plain inner loop and the other way round,
// a descending one, one bounded by a Const, and one whose bound is not constant (stays a loop).
import { kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32 } from "tskernel";

export const unrolled = kernel({ block: [16] }, (out: Float32Array, n: i32, K: Const<i32> = 4) => {
  const t = threadIdx.x;
  const tile = shared.f32(16, 4);
  unroll: for (let j = 0; j < 4; j++) {
    tile[t][j] = out[t * 4 + j];
  }
  syncThreads();
  let sum: f32 = 0;
  unroll: for (let j = 0; j < 4; j++) {
    const v = tile[t][j];
    sum += v * v;
  }
  // TypeScript rejects a nested `unroll:` label (duplicate label), so only one loop of a nest is marked.
  unroll: for (let a = 0; a < 2; a++) {
    for (let b = 0; b < 3; b++) {
      sum += f32val(a * 3 + b);
    }
  }
  for (let a = 0; a < n; a++) {
    unroll: for (let b = 0; b < 3; b++) {
      sum += tile[t][b];
    }
  }
  unroll: for (let j = 3; j >= 0; j -= 1) {
    sum -= tile[t][j];
  }
  unroll: for (let j = 0; j < K; j += 2) {
    sum += tile[t][j];
  }
  unroll: for (let j = 0; j < n; j++) {
    sum += 1;
  }
  out[t] = sum;
});

function f32val(v: i32): f32 {
  return v > 2 ? 1 : 0;
}
