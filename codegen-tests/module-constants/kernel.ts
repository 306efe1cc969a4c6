// Construct: module-level constants (`const TILE = 16`, a negative one, an f32 one, a bool one) used in a
// kernel, as a shared-array size, in arithmetic and as a loop bound.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

const TILE = 16;
const OFFSET = -3;
const SCALE = 0.25;
const USE_SCALE = true;

export const tiled = kernel({ block: [16] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const buf = shared.f32(TILE);
  const t = threadIdx.x;
  buf[t] = input[blockIdx.x * TILE + t];
  syncThreads();
  let s = buf[TILE - 1 - t];
  for (let k = 0; k < TILE; k++) {
    s += buf[k];
  }
  if (USE_SCALE) {
    s *= SCALE;
  }
  out[blockIdx.x * TILE + t + OFFSET + 3] = s;
});
