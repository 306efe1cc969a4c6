// The 2×2 tiled kernel of the "Tiled Matrix Multiplication" visual article, which walks through every
// phase by hand: with TILE_WIDTH = 2 each block loads a 2×2 tile of M and of N per phase, so the whole
// computation fits on a diagram. Demonstrates a tiny Const-sized block and the Mds/Nds phase loop.
// P = M × N, all Width×Width. Launch: block 2×2, grid (Width/2, Width/2); Width must be a multiple of
// TILE_WIDTH, as in the article.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulTiled2x2 = kernel(
  { block: ["TILE_WIDTH", "TILE_WIDTH"] },
  (M: ReadonlyFloat32Array, N: ReadonlyFloat32Array, P: Float32Array, Width: i32, TILE_WIDTH: Const<i32> = 2) => {
    const Mds = shared.f32(TILE_WIDTH, TILE_WIDTH);
    const Nds = shared.f32(TILE_WIDTH, TILE_WIDTH);
    const bx = blockIdx.x;
    const by = blockIdx.y;
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const Row = by * TILE_WIDTH + ty;
    const Col = bx * TILE_WIDTH + tx;
    let Pvalue: f32 = 0;
    for (let ph = 0; ph < Width / TILE_WIDTH; ph++) {
      Mds[ty][tx] = M[Row * Width + ph * TILE_WIDTH + tx];
      Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * Width + Col];
      syncThreads();
      for (let k = 0; k < TILE_WIDTH; k++) {
        Pvalue += Mds[ty][k] * Nds[k][tx];
      }
      syncThreads();
    }
    P[Row * Width + Col] = Pvalue;
  },
);
