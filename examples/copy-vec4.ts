// A device-to-device copy written in the language: out[i] = x[i], every access 16 bytes wide (load4/store4),
// each thread loading ITEMS vectors before it stores them, over a grid-stride loop (elementwise-vec4.ts's
// shape without the arithmetic). `tskernel bench kernels` uses it as the copy bandwidth of WebGPU, where the
// API's own copyBufferToBuffer is several times slower than the memory on some drivers (Dawn on the H100's
// Vulkan driver: 848 GB/s against 3000 GB/s for these kernels), so that "% of copy" compares kernels with
// the fastest copy a kernel gets. n must be a multiple of 4. Launch: block BLOCK, grid
// min(ceil(n / (4·BLOCK·ITEMS)), the device's limit).
import { blockIdx, gridDim, kernel, load4, local, store4, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const copyVec4 = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (out: Float32Array, x: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const xs = local.f32(4 * ITEMS);
    const quads = n / 4;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3] = load4(x, (first + k * BLOCK) * 4);
          store4(xs, 4 * k, x0, x1, x2, x3);
        }
        unrollStore: for (let k = 0; k < ITEMS; k++) {
          store4(out, (first + k * BLOCK) * 4, xs[4 * k], xs[4 * k + 1], xs[4 * k + 2], xs[4 * k + 3]);
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [x0, x1, x2, x3] = load4(x, q * 4);
            store4(out, q * 4, x0, x1, x2, x3);
          }
        }
      }
    }
  },
);
