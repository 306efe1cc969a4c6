// The kernels of the PyTorch example (examples/torch-app): GELU (tanh approximation, as
// torch.nn.functional.gelu(x, approximate="tanh")) and layer normalization over the last dimension (as
// torch.nn.functional.layer_norm(x, [cols], gamma, beta, eps)), each with the kernel of its gradients. Each
// kernel declares its launch beside its code (tensors, grid, requires, backward): `tskernel build --target
// torch` turns that into PyTorch operators with autograd, and the .cuh grid functions and the runtime read
// the same declaration (docs/torch.md).
//
// The transformer of the example computes in bf16. gelu and geluBackward are written over the element type
// and built for f32 and bf16 (`<T extends "f32" | "bf16">`): one operator each, which takes float32 or
// bfloat16 tensors and launches the build of their dtype (docs/torch.md §3), reading and writing the
// activations in their type, computing in f32 and rounding once on the store, as PyTorch's own bf16 GELU does.
// layerNormBf16 (with its gradients) is layerNorm written over the 16-bit float types (built for T: "bf16"),
// a kernel of its own since its loads differ from the f32 kernel's vectors of 4. layerNormBf16 takes gamma and beta in f32 (the model's parameters are f32 master
// weights): its gradients of them are sums over every row, which take f32 atomics (atomics on bf16 are not in
// the language, and sums of thousands of rows rounded to bf16 would lose most of their bits).
import {
  atomicAdd,
  blockDim,
  blockIdx,
  cast,
  f32,
  fma,
  kernel,
  load4,
  local,
  shared,
  store4,
  syncThreads,
  threadIdx,
  type BufferOf,
  type Const,
  type i32,
  type ReadonlyBufferOf,
  type ReadonlyFloat32Array,
} from "tskernel";

/** GELU's tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
function geluTanh(x: f32): f32 {
  const sqrt2OverPi = Math.sqrt(2 / Math.PI);
  const inner = sqrt2OverPi * fma(0.044715 * x, x * x, x);
  return 0.5 * x * (1 + Math.tanh(inner));
}

/** d/dx of geluTanh: 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t = tanh(√(2/π)·(x + 0.044715·x³)). */
function geluTanhSlope(x: f32): f32 {
  const sqrt2OverPi = Math.sqrt(2 / Math.PI);
  const t = Math.tanh(sqrt2OverPi * fma(0.044715 * x, x * x, x));
  const innerSlope = sqrt2OverPi * fma(0.134145 * x, x, 1);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * innerSlope;
}

export const gelu = kernel(
  { block: [256], specializations: [{ T: "f32" }, { T: "bf16" }], tensors: { out: "output [...n]", input: "[...n]" }, grid: ["cdiv(n, 256)"], backward: "geluBackward" },
  <T extends "f32" | "bf16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = cast<T>(geluTanh(f32(input[i])));
  },
);

export const geluBackward = kernel(
  { block: [256], specializations: [{ T: "f32" }, { T: "bf16" }], tensors: { gradInput: "output [...n]", input: "[...n]", gradOut: "[...n]" }, grid: ["cdiv(n, 256)"] },
  <T extends "f32" | "bf16">(gradInput: BufferOf<T>, input: ReadonlyBufferOf<T>, gradOut: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    gradInput[i] = cast<T>(f32(gradOut[i]) * geluTanhSlope(f32(input[i])));
  },
);

// One row per block: THREADS threads hold the row in registers, ITEMS vectors of 4 each; the smallest
// specialization that holds a row runs (the first whose requirements hold).
export const layerNorm = kernel(
  {
    block: ["THREADS"],
    specializations: [{ THREADS: 64, ITEMS: 1 }, { THREADS: 128, ITEMS: 2 }, { THREADS: 256, ITEMS: 4 }],
    tensors: { out: "output [...rows, cols]", input: "[...rows, cols]", gamma: "[cols]", beta: "[cols]" },
    grid: ["rows"],
    requires: ["cols % 4 == 0", "cols <= 4 * THREADS * ITEMS"],
    backward: "layerNormBackward",
  },
  (
    out: Float32Array,
    input: ReadonlyFloat32Array,
    gamma: ReadonlyFloat32Array,
    beta: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 64,
    ITEMS: Const<i32> = 1,
  ) => {
    const red = shared.f32(THREADS);
    const v = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const base = blockIdx.x * cols;
    const inverseCols = 1 / f32(cols);

    // Lanes past the end of the row hold 0 and count in neither sum.
    let localSum: f32 = 0;
    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        const [a, b, d, e] = load4(input, base + c);
        store4(v, 4 * k, a, b, d, e);
      } else {
        store4(v, 4 * k, 0, 0, 0, 0);
      }
      localSum += v[4 * k] + v[4 * k + 1] + (v[4 * k + 2] + v[4 * k + 3]);
    }
    red[tx] = localSum;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) red[tx] += red[tx + s];
      syncThreads();
    }
    const mean = red[0] * inverseCols;
    syncThreads();

    let localSquares: f32 = 0;
    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          const d = v[4 * k + i] - mean;
          localSquares += d * d;
        }
      }
    }
    red[tx] = localSquares;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) red[tx] += red[tx + s];
      syncThreads();
    }
    const rstd = 1 / Math.sqrt(red[0] * inverseCols + eps);

    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        const [g0, g1, g2, g3] = load4(gamma, c);
        const [b0, b1, b2, b3] = load4(beta, c);
        const i = 4 * k;
        store4(out, base + c, (v[i] - mean) * rstd * g0 + b0, (v[i + 1] - mean) * rstd * g1 + b1, (v[i + 2] - mean) * rstd * g2 + b2, (v[i + 3] - mean) * rstd * g3 + b3);
      }
    }
  },
);

// The gradients of layerNorm, with x̂ = (x − mean)·rstd and g = gradOut·gamma over a row of C columns:
// gradInput = rstd·(g − mean(g) − x̂·mean(g·x̂)), gradGamma = Σ_rows gradOut·x̂, gradBeta = Σ_rows gradOut.
// Each block takes ROWS_PER_BLOCK rows one after another, recomputing each row's mean and rstd (cheaper than
// storing them), and keeps its share of gradGamma and gradBeta in registers, which it adds to the outputs
// with one atomicAdd per column at the end (the operator allocates them as zeros: they take atomics).
export const layerNormBackward = kernel(
  {
    block: ["THREADS"],
    specializations: [{ THREADS: 64, ITEMS: 1 }, { THREADS: 128, ITEMS: 2 }, { THREADS: 256, ITEMS: 4 }],
    tensors: {
      gradInput: "output [...rows, cols]",
      gradGamma: "output [cols]",
      gradBeta: "output [cols]",
      input: "[...rows, cols]",
      gamma: "[cols]",
      gradOut: "[...rows, cols]",
    },
    grid: ["cdiv(rows, ROWS_PER_BLOCK)"],
    requires: ["cols % 4 == 0", "cols <= 4 * THREADS * ITEMS"],
  },
  (
    gradInput: Float32Array,
    gradGamma: Float32Array,
    gradBeta: Float32Array,
    input: ReadonlyFloat32Array,
    gamma: ReadonlyFloat32Array,
    gradOut: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 64,
    ITEMS: Const<i32> = 1,
    ROWS_PER_BLOCK: Const<i32> = 16,
  ) => {
    const red = shared.f32(2, THREADS);
    const x = local.f32(4 * ITEMS);
    const dy = local.f32(4 * ITEMS);
    const sumGamma = local.f32(4 * ITEMS);
    const sumBeta = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const inverseCols = 1 / f32(cols);
    unroll: for (let i = 0; i < 4 * ITEMS; i++) {
      sumGamma[i] = 0;
      sumBeta[i] = 0;
    }

    for (let r = 0; r < ROWS_PER_BLOCK; r++) {
      const row = blockIdx.x * ROWS_PER_BLOCK + r;
      // The same for every thread of the block, so the barriers below stay uniform.
      if (row < rows) {
        const base = row * cols;
        let localSum: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            const [a, b, d, e] = load4(input, base + c);
            store4(x, 4 * k, a, b, d, e);
            const [p, q, s, t] = load4(gradOut, base + c);
            store4(dy, 4 * k, p, q, s, t);
          } else {
            store4(x, 4 * k, 0, 0, 0, 0);
            store4(dy, 4 * k, 0, 0, 0, 0);
          }
          localSum += x[4 * k] + x[4 * k + 1] + (x[4 * k + 2] + x[4 * k + 3]);
        }
        red[0][tx] = localSum;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) red[0][tx] += red[0][tx + s];
          syncThreads();
        }
        const mean = red[0][0] * inverseCols;
        syncThreads();

        let localSquares: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            unrollLane: for (let i = 0; i < 4; i++) {
              const d = x[4 * k + i] - mean;
              localSquares += d * d;
            }
          }
        }
        red[0][tx] = localSquares;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) red[0][tx] += red[0][tx + s];
          syncThreads();
        }
        const rstd = 1 / Math.sqrt(red[0][0] * inverseCols + eps);
        syncThreads();

        // x becomes x̂ and dy becomes g = dy·gamma; the sums of g and g·x̂ are reduced together.
        let localG: f32 = 0;
        let localGX: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            const [g0, g1, g2, g3] = load4(gamma, c);
            unrollLane: for (let i = 0; i < 4; i++) {
              const j = 4 * k + i;
              const xhat = (x[j] - mean) * rstd;
              sumGamma[j] += dy[j] * xhat;
              sumBeta[j] += dy[j];
              x[j] = xhat;
            }
            dy[4 * k] *= g0;
            dy[4 * k + 1] *= g1;
            dy[4 * k + 2] *= g2;
            dy[4 * k + 3] *= g3;
            unrollLane: for (let i = 0; i < 4; i++) {
              localG += dy[4 * k + i];
              localGX += dy[4 * k + i] * x[4 * k + i];
            }
          }
        }
        red[0][tx] = localG;
        red[1][tx] = localGX;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) {
            red[0][tx] += red[0][tx + s];
            red[1][tx] += red[1][tx + s];
          }
          syncThreads();
        }
        const meanG = red[0][0] * inverseCols;
        const meanGX = red[1][0] * inverseCols;
        syncThreads();

        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            const i = 4 * k;
            store4(
              gradInput,
              base + c,
              rstd * (dy[i] - meanG - x[i] * meanGX),
              rstd * (dy[i + 1] - meanG - x[i + 1] * meanGX),
              rstd * (dy[i + 2] - meanG - x[i + 2] * meanGX),
              rstd * (dy[i + 3] - meanG - x[i + 3] * meanGX),
            );
          }
        }
      }
    }

    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          atomicAdd(gradGamma, c + i, sumGamma[4 * k + i]);
          atomicAdd(gradBeta, c + i, sumBeta[4 * k + i]);
        }
      }
    }
  },
);

// ---- bf16 (the transformer's) ------------------------------------------------------------------------------

// layerNorm over bf16 rows: the same blocks, specializations and sums in f32, the row widened to f32 in
// registers as it is read (element by element: load4 takes concrete 16-bit buffers, not ones of a type
// parameter) and written four elements (8 bytes) at a time, rounded to bf16 once. gamma and beta are f32.
export const layerNormBf16 = kernel(
  {
    block: ["THREADS"],
    specializations: [
      { T: "bf16", THREADS: 64, ITEMS: 1 },
      { T: "bf16", THREADS: 128, ITEMS: 2 },
      { T: "bf16", THREADS: 256, ITEMS: 4 },
    ],
    tensors: { out: "output [...rows, cols]", input: "[...rows, cols]", gamma: "[cols]", beta: "[cols]" },
    grid: ["rows"],
    requires: ["cols % 4 == 0", "cols <= 4 * THREADS * ITEMS"],
    backward: "layerNormBf16Backward",
  },
  <T extends "bf16" | "f16">(
    out: BufferOf<T>,
    input: ReadonlyBufferOf<T>,
    gamma: ReadonlyFloat32Array,
    beta: ReadonlyFloat32Array,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 64,
    ITEMS: Const<i32> = 1,
  ) => {
    const red = shared.f32(THREADS);
    const v = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const base = blockIdx.x * cols;
    const inverseCols = 1 / f32(cols);

    let localSum: f32 = 0;
    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          v[4 * k + i] = f32(input[base + c + i]);
        }
      } else {
        store4(v, 4 * k, 0, 0, 0, 0);
      }
      localSum += v[4 * k] + v[4 * k + 1] + (v[4 * k + 2] + v[4 * k + 3]);
    }
    red[tx] = localSum;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) red[tx] += red[tx + s];
      syncThreads();
    }
    const mean = red[0] * inverseCols;
    syncThreads();

    let localSquares: f32 = 0;
    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          const d = v[4 * k + i] - mean;
          localSquares += d * d;
        }
      }
    }
    red[tx] = localSquares;
    syncThreads();
    for (let s = THREADS / 2; s > 0; s >>= 1) {
      if (tx < s) red[tx] += red[tx + s];
      syncThreads();
    }
    const rstd = 1 / Math.sqrt(red[0] * inverseCols + eps);

    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        const [g0, g1, g2, g3] = load4(gamma, c);
        const [b0, b1, b2, b3] = load4(beta, c);
        const i = 4 * k;
        store4(
          out,
          base + c,
          cast<T>((v[i] - mean) * rstd * g0 + b0),
          cast<T>((v[i + 1] - mean) * rstd * g1 + b1),
          cast<T>((v[i + 2] - mean) * rstd * g2 + b2),
          cast<T>((v[i + 3] - mean) * rstd * g3 + b3),
        );
      }
    }
  },
);

// layerNormBackward over bf16 rows (input and gradOut bf16, widened in registers; gradInput rounded to bf16
// once), with gamma, gradGamma and gradBeta in f32: the same formulas, blocks and atomics.
export const layerNormBf16Backward = kernel(
  {
    block: ["THREADS"],
    specializations: [
      { T: "bf16", THREADS: 64, ITEMS: 1 },
      { T: "bf16", THREADS: 128, ITEMS: 2 },
      { T: "bf16", THREADS: 256, ITEMS: 4 },
    ],
    tensors: {
      gradInput: "output [...rows, cols]",
      gradGamma: "output [cols]",
      gradBeta: "output [cols]",
      input: "[...rows, cols]",
      gamma: "[cols]",
      gradOut: "[...rows, cols]",
    },
    grid: ["cdiv(rows, ROWS_PER_BLOCK)"],
    requires: ["cols % 4 == 0", "cols <= 4 * THREADS * ITEMS"],
  },
  <T extends "bf16" | "f16">(
    gradInput: BufferOf<T>,
    gradGamma: Float32Array,
    gradBeta: Float32Array,
    input: ReadonlyBufferOf<T>,
    gamma: ReadonlyFloat32Array,
    gradOut: ReadonlyBufferOf<T>,
    rows: i32,
    cols: i32,
    eps: f32,
    THREADS: Const<i32> = 64,
    ITEMS: Const<i32> = 1,
    ROWS_PER_BLOCK: Const<i32> = 16,
  ) => {
    const red = shared.f32(2, THREADS);
    const x = local.f32(4 * ITEMS);
    const dy = local.f32(4 * ITEMS);
    const sumGamma = local.f32(4 * ITEMS);
    const sumBeta = local.f32(4 * ITEMS);
    const tx = threadIdx.x;
    const inverseCols = 1 / f32(cols);
    unroll: for (let i = 0; i < 4 * ITEMS; i++) {
      sumGamma[i] = 0;
      sumBeta[i] = 0;
    }

    for (let r = 0; r < ROWS_PER_BLOCK; r++) {
      const row = blockIdx.x * ROWS_PER_BLOCK + r;
      // The same for every thread of the block, so the barriers below stay uniform.
      if (row < rows) {
        const base = row * cols;
        let localSum: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            unrollLane: for (let i = 0; i < 4; i++) {
              x[4 * k + i] = f32(input[base + c + i]);
              dy[4 * k + i] = f32(gradOut[base + c + i]);
            }
          } else {
            store4(x, 4 * k, 0, 0, 0, 0);
            store4(dy, 4 * k, 0, 0, 0, 0);
          }
          localSum += x[4 * k] + x[4 * k + 1] + (x[4 * k + 2] + x[4 * k + 3]);
        }
        red[0][tx] = localSum;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) red[0][tx] += red[0][tx + s];
          syncThreads();
        }
        const mean = red[0][0] * inverseCols;
        syncThreads();

        let localSquares: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            unrollLane: for (let i = 0; i < 4; i++) {
              const d = x[4 * k + i] - mean;
              localSquares += d * d;
            }
          }
        }
        red[0][tx] = localSquares;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) red[0][tx] += red[0][tx + s];
          syncThreads();
        }
        const rstd = 1 / Math.sqrt(red[0][0] * inverseCols + eps);
        syncThreads();

        let localG: f32 = 0;
        let localGX: f32 = 0;
        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            const [g0, g1, g2, g3] = load4(gamma, c);
            unrollLane: for (let i = 0; i < 4; i++) {
              const j = 4 * k + i;
              const xhat = (x[j] - mean) * rstd;
              sumGamma[j] += dy[j] * xhat;
              sumBeta[j] += dy[j];
              x[j] = xhat;
            }
            dy[4 * k] *= g0;
            dy[4 * k + 1] *= g1;
            dy[4 * k + 2] *= g2;
            dy[4 * k + 3] *= g3;
            unrollLane: for (let i = 0; i < 4; i++) {
              localG += dy[4 * k + i];
              localGX += dy[4 * k + i] * x[4 * k + i];
            }
          }
        }
        red[0][tx] = localG;
        red[1][tx] = localGX;
        syncThreads();
        for (let s = THREADS / 2; s > 0; s >>= 1) {
          if (tx < s) {
            red[0][tx] += red[0][tx + s];
            red[1][tx] += red[1][tx + s];
          }
          syncThreads();
        }
        const meanG = red[0][0] * inverseCols;
        const meanGX = red[1][0] * inverseCols;
        syncThreads();

        unroll: for (let k = 0; k < ITEMS; k++) {
          const c = (k * THREADS + tx) * 4;
          if (c < cols) {
            const i = 4 * k;
            store4(
              gradInput,
              base + c,
              cast<T>(rstd * (dy[i] - meanG - x[i] * meanGX)),
              cast<T>(rstd * (dy[i + 1] - meanG - x[i + 1] * meanGX)),
              cast<T>(rstd * (dy[i + 2] - meanG - x[i + 2] * meanGX)),
              cast<T>(rstd * (dy[i + 3] - meanG - x[i + 3] * meanGX)),
            );
          }
        }
      }
    }

    unroll: for (let k = 0; k < ITEMS; k++) {
      const c = (k * THREADS + tx) * 4;
      if (c < cols) {
        unrollLane: for (let i = 0; i < 4; i++) {
          atomicAdd(gradGamma, c + i, sumGamma[4 * k + i]);
          atomicAdd(gradBeta, c + i, sumBeta[4 * k + i]);
        }
      }
    }
  },
);
