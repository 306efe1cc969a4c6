// Checks: a kernel reading a module-level `let` (a closure capture) is reported (TSK1006).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

let gain: f32 = 2;

export const amplify = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = input[i] * gain;
});

export function setGain(g: f32): void {
  gain = g;
}
