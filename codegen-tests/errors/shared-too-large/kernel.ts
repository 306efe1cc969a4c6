// Checks: shared.f32(256, 256) is 256 KiB, more than the 227 KiB a CUDA block can have (TSK3002), and more
// than WebGPU's 64 KiB.
import { blockIdx, kernel, shared, syncThreads, threadIdx, type ReadonlyFloat32Array } from "tskernel";

export const bigTile = kernel({ block: [256] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(256, 256);
  const tid = threadIdx.x;
  for (let r = 0; r < 256; r++) {
    tile[r][tid] = input[(blockIdx.x * 256 + r) * 256 + tid];
  }
  syncThreads();
  out[blockIdx.x * 256 + tid] = tile[tid][0];
});
