// A division by zero in a block-uniform statement (and in a helper one calls), which the CPU's JavaScript runs once
// per block outside the thread loops (js.ts, uniform locals): its checked-mode fault names the block and no thread.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type i32 } from "tskernel";

export const uniformDivide = kernel({ block: [64] }, (out: Int32Array, a: i32, b: i32) => {
  const tile = shared.i32(64);
  const q = (a + blockIdx.x) / b; // BUG: b is 0
  tile[threadIdx.x] = q;
  syncThreads();
  out[threadIdx.x] = tile[63 - threadIdx.x];
});

/** The same division in a helper called from a block-uniform statement: the helper's fault names no thread either. */
export const uniformHelperDivide = kernel({ block: [64] }, (out: Int32Array, a: i32, b: i32) => {
  const tile = shared.i32(64);
  const q = quotient(a + blockIdx.x, b);
  tile[threadIdx.x] = q;
  syncThreads();
  out[threadIdx.x] = tile[63 - threadIdx.x];
});

function quotient(x: i32, y: i32): i32 {
  return x / y; // BUG: y is 0
}
