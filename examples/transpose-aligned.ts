// Matrix transpose for any shape, with every write covering whole 32-byte memory sectors. When a side is not a
// multiple of 8 (8191 × 8190), rows of the output start at any offset within a sector, and the tiles of
// transpose.ts, aligned to the matrix rather than to memory, write parts of two sectors at each end of each
// warp's row segment: a sector is then completed by another block much later, and the memory must read it
// back to merge the two halves. Here each output row's segment is shifted back by that row's misalignment
// (0 to ALIGN−1 elements), so that it starts on a sector boundary; the block loads the ALIGN extra input rows
// the shift can reach, and one more row of blocks covers the end. Reads stay tile-aligned: a partial sector
// read costs only its own bandwidth, and the neighbouring block reads the rest of it from L2.
// out (cols×rows) = transpose of input (rows×cols). Launch: block 32×BLOCK_ROWS,
// grid (ceil(cols/TILE), ceil((rows + ALIGN − 1)/TILE)); TILE a multiple of 32 and of ALIGN, BLOCK_ROWS a
// divisor of TILE + ALIGN.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const transposeAligned = kernel(
  { block: [32, "BLOCK_ROWS"] },
  (out: Float32Array, input: ReadonlyFloat32Array, rows: i32, cols: i32, TILE: Const<i32> = 32, BLOCK_ROWS: Const<i32> = 8, ALIGN: Const<i32> = 8) => {
    // tile[i][j] holds input[r0 − ALIGN + i][c0 + j].
    const tile = shared.f32(TILE + ALIGN, TILE + 1);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    const c0 = blockIdx.x * TILE;
    const r0 = blockIdx.y * TILE;
    const firstRow = r0 - ALIGN;

    unrollLoad: for (let i = 0; i < TILE + ALIGN; i += BLOCK_ROWS) {
      const r = firstRow + ty + i;
      unrollLoadColumns: for (let j = 0; j < TILE; j += 32) {
        const c = c0 + tx + j;
        if (r >= 0 && r < rows && c < cols) {
          tile[ty + i][tx + j] = input[r * cols + c];
        }
      }
    }
    syncThreads();

    // Output row c (input column c) takes the elements r = start … start + TILE − 1, where start ≤ r0 is the
    // nearest index at which the row's data begins a sector. TILE is a multiple of ALIGN, so the next block
    // down starts exactly where this one stops.
    unrollStore: for (let i = 0; i < TILE; i += BLOCK_ROWS) {
      const c = c0 + ty + i;
      const start = r0 - ((c * rows + r0) & (ALIGN - 1));
      unrollStoreColumns: for (let j = 0; j < TILE; j += 32) {
        const r = start + tx + j;
        if (c < cols && r >= 0 && r < rows) {
          out[c * rows + r] = tile[r - firstRow][ty + i];
        }
      }
    }
  },
);
