// Construct: 1-D and 2-D shared arrays of f32, i32 and u32, sized by literals and by a Const, with barriers.
import { blockIdx, kernel, shared, syncThreads, threadIdx, u32, type Const, type i32, type ReadonlyFloat32Array, type u32 as U32 } from "tskernel";

export const sharedUse = kernel(
  { block: ["TILE", "TILE"] },
  (out: Float32Array, counts: Int32Array, input: ReadonlyFloat32Array, TILE: Const<i32> = 8) => {
    const tile = shared.f32(TILE, TILE + 1);
    const row = shared.f32(64);
    const hist = shared.i32(TILE);
    const flags = shared.u32(2, TILE);
    const tx = threadIdx.x;
    const ty = threadIdx.y;
    tile[ty][tx] = input[(blockIdx.x * TILE + ty) * TILE + tx];
    row[ty * TILE + tx] = 0;
    if (ty === 0) {
      hist[tx] = 0;
      flags[0][tx] = u32(tx);
      flags[1][tx] = 0;
    }
    syncThreads();
    out[(blockIdx.x * TILE + tx) * TILE + ty] = tile[tx][ty] + row[63 - tx];
    if (ty === 0) {
      counts[blockIdx.x * TILE + tx] = hist[tx] + i32of(flags[0][TILE - 1 - tx]);
    }
  },
);

function i32of(v: U32): i32 {
  return v > 3 ? 1 : 0;
}
