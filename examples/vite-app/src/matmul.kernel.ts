// Tiled matrix multiply C = A·B (A m×k, B k×n, C m×n, row-major) with TILE×TILE shared-memory tiles; tiles
// over the edge are zero-filled, so any sizes work. TILE is a compile-time constant: the plugin builds the
// default (16) and 8; the app picks one with launcher(device, matmul, { TILE }). Launch: grid
// (ceil(n/TILE), ceil(m/TILE)); the block is fixed by TILE.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmul = kernel(
  { block: ["TILE", "TILE"], specializations: [{ TILE: 16 }, { TILE: 8 }] },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, m: i32, n: i32, k: i32, TILE: Const<i32> = 16) => {
    const aTile = shared.f32(TILE, TILE);
    const bTile = shared.f32(TILE, TILE);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row = blockIdx.y * TILE + ty;
    const col = blockIdx.x * TILE + tx;
    let sum: f32 = 0;
    for (let t = 0; t < k; t += TILE) {
      aTile[ty][tx] = row < m && t + tx < k ? A[row * k + t + tx] : 0;
      bTile[ty][tx] = t + ty < k && col < n ? B[(t + ty) * n + col] : 0;
      syncThreads();
      for (let i = 0; i < TILE; i++) {
        sum += aTile[ty][i] * bTile[i][tx];
      }
      syncThreads();
    }
    if (row < m && col < n) C[row * n + col] = sum;
  },
);
