// Matrix transpose through a shared tile, 16 bytes per global access: each thread reads four consecutive
// elements of an input row (load4) and writes four consecutive elements of an output row (store4), so every
// warp moves whole 128-byte lines both ways, with TILE/BLOCK_ROWS of each in flight per thread. The tile
// has PAD extra columns: a thread gathering four elements of a tile column then reads from different
// shared-memory banks than its neighbours (two-way conflicts at most). transpose.ts is the one-element-per-
// thread version, for matrices whose sides are not multiples of 4 (rows of such a matrix are not 16-byte
// aligned). out (cols×rows) = transpose of input (rows×cols); rows and cols must be multiples of 4; partial
// tiles at the edges are fine. Launch: block (TILE/4)×BLOCK_ROWS, grid (ceil(cols/TILE), ceil(rows/TILE)).
import { blockIdx, kernel, load4, shared, store4, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const transposeVec4 = kernel(
  // The second specialization fits WebGPU's default 16 KB of workgroup memory.
  { block: ["TILE / 4", "BLOCK_ROWS"], specializations: [{}, { TILE: 32, BLOCK_ROWS: 32 }] },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    TILE: Const<i32> = 64,
    BLOCK_ROWS: Const<i32> = 16,
    PAD: Const<i32> = 1,
  ) => {
    const tile = shared.f32(TILE, TILE + PAD);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const row0 = blockIdx.y * TILE;
    const col0 = blockIdx.x * TILE;

    // cols is a multiple of 4, so a vector that starts inside the matrix lies wholly inside it.
    unrollLoad: for (let j = 0; j < TILE; j += BLOCK_ROWS) {
      const r = ty + j;
      if (row0 + r < rows && col0 + 4 * tx < cols) {
        const [a, b, c, d] = load4(input, (row0 + r) * cols + col0 + 4 * tx);
        tile[r][4 * tx] = a;
        tile[r][4 * tx + 1] = b;
        tile[r][4 * tx + 2] = c;
        tile[r][4 * tx + 3] = d;
      }
    }
    syncThreads();

    // Row c of the output tile is column c of the input tile; threadIdx.x again runs along the row.
    unrollStore: for (let j = 0; j < TILE; j += BLOCK_ROWS) {
      const c = ty + j;
      if (col0 + c < cols && row0 + 4 * tx < rows) {
        store4(out, (col0 + c) * rows + row0 + 4 * tx, tile[4 * tx][c], tile[4 * tx + 1][c], tile[4 * tx + 2][c], tile[4 * tx + 3][c]);
      }
    }
  },
);
