// General matrix multiply D = α·A·B + β·C (A is m×k, B is k×n, C and D are m×n, all row-major), the BLAS
// SGEMM contract with the result in its own matrix so that C stays an input. Shared-memory tiles of A and B;
// tiles that hang over an edge are filled with zeros, so any sizes work. Built by examples/cmake-app's
// CMakeLists.txt into gemm.cu and gemm.cuh (launch_gemm_TILE_16).
// Launch: block TILE×TILE, grid (ceil(n/TILE), ceil(m/TILE)).
import { blockIdx, fma, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const gemm = kernel(
  { block: ["TILE", "TILE"] },
  (
    D: Float32Array,
    A: ReadonlyFloat32Array,
    B: ReadonlyFloat32Array,
    C: ReadonlyFloat32Array,
    alpha: f32,
    beta: f32,
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
    let acc: f32 = 0;
    for (let t = 0; t < k; t += TILE) {
      // Every thread loads, also those outside D: the threads inside it need their elements.
      aTile[ty][tx] = row < m && t + tx < k ? A[row * k + t + tx] : 0;
      bTile[ty][tx] = t + ty < k && col < n ? B[(t + ty) * n + col] : 0;
      syncThreads();
      unroll: for (let i = 0; i < TILE; i++) {
        acc = fma(aTile[ty][i], bTile[i][tx], acc);
      }
      // The next step overwrites the tiles: wait until every thread is done reading them.
      syncThreads();
    }
    if (row < m && col < n) {
      D[row * n + col] = fma(alpha, acc, beta * C[row * n + col]);
    }
  },
);
