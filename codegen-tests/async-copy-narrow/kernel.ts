// Construct: asynchronous global→shared copies of narrow elements, 16 bytes each: copyAsync8 (eight bf16) and
// copyAsync16 (sixteen u8), double-buffered with commitAsync/waitAsync and read back with load8/load16.
import {
  blockIdx,
  commitAsync,
  copyAsync16,
  copyAsync8,
  f32,
  kernel,
  load16,
  load8,
  shared,
  syncThreads,
  threadIdx,
  waitAsync,
  type Const,
  type i32,
  type ReadonlyBFloat16Array,
  type ReadonlyUint8Array,
  type u32,
} from "tskernel";

// Each of 32 threads copies eight bf16 a step and adds the eight its neighbour (t + 1) copied, in f32.
export const pipelinedHalfSum = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyBFloat16Array, STEPS: Const<i32> = 4) => {
  const stages = shared.bf16(2, 256);
  const offset = blockIdx.x * STEPS * 256 + threadIdx.x * 8;
  copyAsync8(stages[0], threadIdx.x * 8, input, offset);
  commitAsync();
  let total: f32 = 0;
  for (let step = 0; step < STEPS; step++) {
    if (step + 1 < STEPS) {
      copyAsync8(stages[(step + 1) % 2], threadIdx.x * 8, input, offset + (step + 1) * 256);
    }
    commitAsync();
    waitAsync(1);
    syncThreads();
    const [e0, e1, e2, e3, e4, e5, e6, e7] = load8(stages[step % 2], ((threadIdx.x + 1) % 32) * 8);
    total += f32(e0) + f32(e1) + f32(e2) + f32(e3) + f32(e4) + f32(e5) + f32(e6) + f32(e7);
    syncThreads();
  }
  out[blockIdx.x * 32 + threadIdx.x] = total;
});

// The same with sixteen u8 a copy, summed exactly in u32.
export const pipelinedByteSum = kernel({ block: [32] }, (out: Uint32Array, input: ReadonlyUint8Array, STEPS: Const<i32> = 4) => {
  const stages = shared.u8(2, 512);
  const offset = blockIdx.x * STEPS * 512 + threadIdx.x * 16;
  copyAsync16(stages[0], threadIdx.x * 16, input, offset);
  commitAsync();
  let total: u32 = 0;
  for (let step = 0; step < STEPS; step++) {
    if (step + 1 < STEPS) {
      copyAsync16(stages[(step + 1) % 2], threadIdx.x * 16, input, offset + (step + 1) * 512);
    }
    commitAsync();
    waitAsync(1);
    syncThreads();
    const [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15] = load16(stages[step % 2], ((threadIdx.x + 1) % 32) * 16);
    total += b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8 + b9 + b10 + b11 + b12 + b13 + b14 + b15;
    syncThreads();
  }
  out[blockIdx.x * 32 + threadIdx.x] = total;
});
