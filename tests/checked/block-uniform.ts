// A division by zero in a block-uniform statement, which the CPU's JavaScript runs once per block outside the
// thread loops (js.ts, uniform locals): its checked-mode fault names the block and no thread.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type i32 } from "tskernel";

export const uniformDivide = kernel({ block: [64] }, (out: Int32Array, a: i32, b: i32) => {
  const tile = shared.i32(64);
  const q = (a + blockIdx.x) / b; // BUG: b is 0
  tile[threadIdx.x] = q;
  syncThreads();
  out[threadIdx.x] = tile[63 - threadIdx.x];
});
