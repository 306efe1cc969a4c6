// SAXPY (y = a·x + y), compiled to WGSL at build time by the tskernel bundler plugin: the app imports
// `saxpy` from this file and gets the WGSL, its launch description and a launcher typed from the signature
// below (n: number, a: number, x and y: buffers). Launch: block 256 (fixed here), grid ceil(n/256).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";
import { axpy } from "./blas.ts";

export const saxpy = kernel({ block: [256] }, (n: i32, a: f32, x: ReadonlyFloat32Array, y: Float32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = axpy(a, x[i], y[i]);
});
