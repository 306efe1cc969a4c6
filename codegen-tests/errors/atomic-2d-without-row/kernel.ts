// Checks: an atomic on a 2-D shared array takes a row, then a column (TSK2007 with a note).
import { atomicAdd, kernel, shared, syncThreads, threadIdx } from "tskernel";

export const grid2d = kernel({ block: [16] }, (out: Uint32Array) => {
  const bins = shared.u32(4, 4);
  bins[threadIdx.x >> 2][threadIdx.x & 3] = 0;
  syncThreads();
  atomicAdd(bins, threadIdx.x & 3, 1);
  syncThreads();
  out[threadIdx.x] = bins[threadIdx.x >> 2][threadIdx.x & 3];
});
