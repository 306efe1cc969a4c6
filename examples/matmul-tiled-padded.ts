// Shared-memory tiled matrix multiply of square n×n matrices without any bounds checks, from the classic
// CUDA introduction article: the caller pads A, B and C with zeros up to a multiple of TILE, so every load
// and store is in range and the inner loop carries no branches. Demonstrates the fastest form of the
// tiled kernel and the precondition it shifts onto the host.
// Launch: block TILE×TILE, grid (n/TILE, n/TILE); n must be a multiple of TILE (16).
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulTiledPadded = kernel(
  { block: ["TILE", "TILE"] },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, n: i32, TILE: Const<i32> = 16) => {
    const aTile = shared.f32(TILE, TILE);
    const bTile = shared.f32(TILE, TILE);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row = blockIdx.y * TILE + ty;
    const col = blockIdx.x * TILE + tx;
    let sum: f32 = 0;
    for (let t = 0; t < n; t += TILE) {
      aTile[ty][tx] = A[row * n + t + tx];
      bTile[ty][tx] = B[(t + ty) * n + col];
      syncThreads();
      unroll: for (let i = 0; i < TILE; i++) {
        sum += aTile[ty][i] * bTile[i][tx];
      }
      syncThreads();
    }
    C[row * n + col] = sum;
  },
);
