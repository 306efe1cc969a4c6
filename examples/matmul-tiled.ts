// Shared-memory tiled matrix multiply (C = A × B, A is m×k, B is k×n, C is m×n) from the classic CUDA
// introduction article, made safe for any sizes: tiles that hang over the edge of A or B are filled with
// zeros, which add nothing to the dot product. Demonstrates 2-D shared tiles, barriers in uniform control
// flow (no early return before the tile loop), a block shape taken from a Const, and `unroll:`.
// Launch: block TILE×TILE, grid (ceil(n/TILE), ceil(m/TILE)).
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulTiled = kernel(
  { block: ["TILE", "TILE"] },
  (
    C: Float32Array,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    m: i32,
    n: i32,
    k: i32,
    TILE: Const<i32> = 16,
  ) => {
    const aTile = shared.f32(TILE, TILE);
    const bTile = shared.f32(TILE, TILE);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row = blockIdx.y * TILE + ty;
    const col = blockIdx.x * TILE + tx;
    let sum: f32 = 0;
    for (let t = 0; t < k; t += TILE) {
      // Threads outside C still load: their elements are needed by the threads inside it.
      const aCol = t + tx;
      const bRow = t + ty;
      if (row < m && aCol < k) {
        aTile[ty][tx] = A[row * k + aCol];
      } else {
        aTile[ty][tx] = 0;
      }
      if (bRow < k && col < n) {
        bTile[ty][tx] = B[bRow * n + col];
      } else {
        bTile[ty][tx] = 0;
      }
      syncThreads();
      unroll: for (let i = 0; i < TILE; i++) {
        sum += aTile[ty][i] * bTile[i][tx];
      }
      // Nobody may overwrite the tiles for the next step while others still read them.
      syncThreads();
    }
    if (row < m && col < n) {
      C[row * n + col] = sum;
    }
  },
);
