// BLAS SAXPY, y = a·x + y, in place, one element per thread. fma rounds a·x + y once. Built by
// examples/cmake-app's CMakeLists.txt into saxpy.cu and saxpy.cuh (launch_saxpy).
// Launch: block 256, grid ceil(n/256).
import { blockDim, blockIdx, fma, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const saxpy = kernel({ block: [256] }, (n: i32, a: f32, x: ReadonlyFloat32Array, y: Float32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = fma(a, x[i], y[i]);
});
