// Construct: f32 literals at the ends of the type: the largest finite value either way (its shortest
// spelling, 3.4028235e38, lies above it, and WGSL rejected the literal printed so: found by the fuzzer),
// the smallest subnormal and normal values, the largest value below 1, and an integer that rounds.
import { kernel, threadIdx, type f32 } from "tskernel";

export const extremes = kernel({ block: [32] }, (out: Float32Array, x: f32) => {
  const t = threadIdx.x;
  const max: f32 = 3.4028235e38;
  const lowest: f32 = -3.4028234663852886e38;
  const subnormal: f32 = 1.4e-45;
  const normal: f32 = 1.1754944e-38;
  const belowOne: f32 = 0.99999994;
  const rounds: f32 = 16777217;
  out[t] = x < 0 ? max : lowest;
  out[t + 32] = x * subnormal + normal;
  out[t + 64] = belowOne * rounds;
});
