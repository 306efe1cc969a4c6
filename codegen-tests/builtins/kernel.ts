// Construct: threadIdx, blockIdx, blockDim and gridDim, each on x, y and z, with a fixed 3-D block.
import { blockDim, blockIdx, gridDim, kernel, threadIdx } from "tskernel";

export const coords = kernel({ block: [8, 4, 2] }, (out: Int32Array) => {
  const x = blockIdx.x * blockDim.x + threadIdx.x;
  const y = blockIdx.y * blockDim.y + threadIdx.y;
  const z = blockIdx.z * blockDim.z + threadIdx.z;
  const width = gridDim.x * blockDim.x;
  const height = gridDim.y * blockDim.y;
  const depth = gridDim.z * blockDim.z;
  const index = (z * height + y) * width + x;
  out[index] = index + depth;
});
