// SAXPY (y = a·x + y) and GELU (tanh approximation) tuned for memory bandwidth: every access is 16 bytes
// wide (load4/store4: LDG.128/STG.128 on CUDA, vec4 bindings on WGSL), and each thread first loads ITEMS
// vectors of each input into registers, then computes and stores, so that ITEMS independent loads are in
// flight per thread before the first use. A grid-stride loop lets any grid cover any n (WebGPU allows at most
// 65535 workgroups per dimension). elementwise.ts has the one-element-per-thread versions of both.
// n must be a multiple of 4 (pad otherwise): the buffers are then bound as array<vec4<f32>> on WGSL.
// Launch: block BLOCK, grid min(ceil(n / (4·BLOCK·ITEMS)), the device's limit).
import { blockIdx, fma, gridDim, kernel, load4, local, store4, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

/** GELU, tanh approximation (as torch.nn.functional.gelu(x, approximate="tanh")): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
function geluTanh(x: f32): f32 {
  const sqrt2OverPi = Math.sqrt(2 / Math.PI);
  const inner = sqrt2OverPi * fma(0.044715 * x, x * x, x);
  return 0.5 * x * (1 + Math.tanh(inner));
}

// BLAS argument order. fma rounds a·x + y once, like CUDA's default contraction.
export const saxpyVec4 = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (n: i32, a: f32, x: ReadonlyFloat32Array, y: Float32Array, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const xs = local.f32(4 * ITEMS);
    const ys = local.f32(4 * ITEMS);
    const quads = n / 4;
    // Vector q of a chunk is first + k·BLOCK: consecutive threads take consecutive vectors (coalesced).
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        // A whole chunk: every load first, then every store.
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3] = load4(x, (first + k * BLOCK) * 4);
          store4(xs, 4 * k, x0, x1, x2, x3);
          const [y0, y1, y2, y3] = load4(y, (first + k * BLOCK) * 4);
          store4(ys, 4 * k, y0, y1, y2, y3);
        }
        unrollStore: for (let k = 0; k < ITEMS; k++) {
          const j = 4 * k;
          store4(y, (first + k * BLOCK) * 4, fma(a, xs[j], ys[j]), fma(a, xs[j + 1], ys[j + 1]), fma(a, xs[j + 2], ys[j + 2]), fma(a, xs[j + 3], ys[j + 3]));
        }
      } else {
        // The last, partial chunk.
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [x0, x1, x2, x3] = load4(x, q * 4);
            const [y0, y1, y2, y3] = load4(y, q * 4);
            store4(y, q * 4, fma(a, x0, y0), fma(a, x1, y1), fma(a, x2, y2), fma(a, x3, y3));
          }
        }
      }
    }
  },
);

export const geluVec4 = kernel(
  { block: ["BLOCK"], specializations: [{}, { BLOCK: 128, ITEMS: 2 }] },
  (out: Float32Array, input: ReadonlyFloat32Array, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const xs = local.f32(4 * ITEMS);
    const quads = n / 4;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < quads; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < quads) {
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3] = load4(input, (first + k * BLOCK) * 4);
          store4(xs, 4 * k, x0, x1, x2, x3);
        }
        unrollStore: for (let k = 0; k < ITEMS; k++) {
          const j = 4 * k;
          store4(out, (first + k * BLOCK) * 4, geluTanh(xs[j]), geluTanh(xs[j + 1]), geluTanh(xs[j + 2]), geluTanh(xs[j + 3]));
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < quads) {
            const [x0, x1, x2, x3] = load4(input, q * 4);
            store4(out, q * 4, geluTanh(x0), geluTanh(x1), geluTanh(x2), geluTanh(x3));
          }
        }
      }
    }
  },
);
