// Elementwise kernels: GELU and softplus activations as used in neural networks (GELU's tanh approximation
// from Hendrycks & Gimpel, "Gaussian Error Linear Units (GELUs)") and BLAS saxpy (y = a·x + y). Demonstrates
// Math calls, top-level helper functions called from kernels, f32 literals, and fma from tskernel.
// Launch: block 256, grid ceil(n/256).
import { blockDim, blockIdx, fma, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

/** GELU, tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
function geluTanh(x: f32): f32 {
  const sqrt2OverPi = Math.sqrt(2 / Math.PI);
  const inner = sqrt2OverPi * fma(0.044715 * x, x * x, x);
  return 0.5 * x * (1 + Math.tanh(inner));
}

/** softplus(x) = log(1 + e^x), rewritten as max(x, 0) + log(1 + e^-|x|) so e^x never overflows. */
function softplusStable(x: f32): f32 {
  return Math.max(x, 0) + Math.log(1 + Math.exp(-Math.abs(x)));
}

export const gelu = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  // No barrier in this kernel, so surplus threads of the last block may simply leave.
  if (i >= n) return;
  out[i] = geluTanh(input[i]);
});

export const softplus = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = softplusStable(input[i]);
});

// The classic BLAS argument order (n, a, x, y). fma rounds a·x + y once, like CUDA's default contraction.
export const saxpy = kernel({ block: [256] }, (n: i32, a: f32, x: ReadonlyFloat32Array, y: Float32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = fma(a, x[i], y[i]);
});
