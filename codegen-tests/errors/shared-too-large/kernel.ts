// Checks: shared.f32(128, 128) is 64 KiB, more than CUDA's 48 KiB of static shared memory (TSK3002).
import { blockIdx, kernel, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const bigTile = kernel({ block: [128] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(128, 128);
  const tid = threadIdx.x;
  for (let r = 0; r < 128; r++) {
    tile[r][tid] = input[(blockIdx.x * 128 + r) * 128 + tid];
  }
  syncThreads();
  out[blockIdx.x * 128 + tid] = tile[tid][0];
});
