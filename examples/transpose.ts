// Matrix transpose through shared memory, from Mark Harris's "An Efficient Matrix Transpose in CUDA C/C++":
// a TILE×TILE tile is read with coalesced row accesses and written back, transposed, with coalesced row
// accesses too. The tile has one extra column so that reading a column of it touches TILE different
// shared-memory banks instead of one. Each thread handles TILE/BLOCK_ROWS elements.
// out (cols×rows) = transpose of input (rows×cols). Launch: block TILE×BLOCK_ROWS,
// grid (ceil(cols/TILE), ceil(rows/TILE)); bounds checks allow any rows and cols.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const transposeShared = kernel(
  // 64-wide tiles for the CPU backend, where fewer, larger blocks cost less (the suite's CPU transpose for
  // sides that are not multiples of 4: without transpose-aligned.ts's extra rows and shifted segments, which
  // serve a GPU's memory sectors, it ran 23 % faster there; bench/README.md).
  { block: ["TILE", "BLOCK_ROWS"], specializations: [{}, { TILE: 64 }] },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    TILE: Const<i32> = 32,
    BLOCK_ROWS: Const<i32> = 8,
  ) => {
    const tile = shared.f32(TILE, TILE + 1);
    const tx = threadIdx.x;
    const ty = threadIdx.y;

    const inCol = blockIdx.x * TILE + tx;
    const inRow = blockIdx.y * TILE + ty;
    unroll: for (let j = 0; j < TILE; j += BLOCK_ROWS) {
      if (inCol < cols && inRow + j < rows) {
        tile[ty + j][tx] = input[(inRow + j) * cols + inCol];
      }
    }
    syncThreads();

    // The block's position swaps too, and threadIdx.x again runs along the output's rows for coalescing.
    const outCol = blockIdx.y * TILE + tx;
    const outRow = blockIdx.x * TILE + ty;
    unroll: for (let j = 0; j < TILE; j += BLOCK_ROWS) {
      if (outCol < rows && outRow + j < cols) {
        out[(outRow + j) * rows + outCol] = tile[tx][ty + j];
      }
    }
  },
);
