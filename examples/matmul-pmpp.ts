// The first matrix multiply of the PMPP textbook (Kirk & Hwu, "Programming Massively Parallel
// Processors"), `matrixMulKernel`: P = M × N for square Width×Width matrices, one thread per element of P.
// Demonstrates the textbook's naming and its guard `(Row < Width) && (Col < Width)`, which lets the grid
// be rounded up to whole blocks.
// Launch: block 16×16, grid (ceil(Width/16), ceil(Width/16)).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matrixMulKernel = kernel(
  { block: [16, 16] },
  (M: ReadonlyFloat32Array, N: ReadonlyFloat32Array, P: Float32Array, Width: i32) => {
    const Row = blockIdx.y * blockDim.y + threadIdx.y;
    const Col = blockIdx.x * blockDim.x + threadIdx.x;
    if ((Row < Width) && (Col < Width)) {
      let Pvalue: f32 = 0;
      for (let k = 0; k < Width; k++) {
        Pvalue += M[Row * Width + k] * N[k * Width + Col];
      }
      P[Row * Width + Col] = Pvalue;
    }
  },
);
