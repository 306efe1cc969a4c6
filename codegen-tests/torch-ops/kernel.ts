// Launch declarations for the PyTorch module (tests/torch-module.test.ts compares the module with expected.py):
// a flattened shape and its backward kernel, a tensor written in place, an output that atomics fill (so it
// starts as zeros), specializations chosen by their requirements with a 2-D grid, a size given as an
// argument, a bool argument, bf16 tensors with a bf16 scalar (the scalar goes as its bits, the tensors as
// their addresses), and one operator over two element types (`shift`, built for f32 and bf16, with a backward
// kernel whose builds are in the other order: the forward's types choose it, not its position).
import { atomicAdd, blockDim, cast, f32, i32, u32, blockIdx, kernel, threadIdx, type bf16, type BFloat16Array, type bool, type BufferOf, type Const, type ReadonlyBFloat16Array, type ReadonlyBufferOf, type ReadonlyFloat32Array, type ReadonlyUint32Array } from "tskernel";

export const scale = kernel(
  { block: [128], tensors: { out: "output [...n]", input: "[...n]" }, grid: ["cdiv(n, 128)"], backward: "scaleBackward" },
  (out: Float32Array, input: ReadonlyFloat32Array, n: i32, factor: f32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = factor * input[i];
  },
);

export const scaleBackward = kernel(
  { block: [128], tensors: { gradInput: "output [...n]", gradOut: "[...n]" }, grid: ["cdiv(n, 128)"] },
  (gradInput: Float32Array, gradOut: ReadonlyFloat32Array, n: i32, factor: f32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gradInput[i] = factor * gradOut[i];
  },
);

export const scaleHalf = kernel(
  { block: [128], tensors: { out: "output [...n]", input: "[...n]" }, grid: ["cdiv(n, 128)"] },
  (out: BFloat16Array, input: ReadonlyBFloat16Array, n: i32, factor: bf16) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = factor * input[i];
  },
);

export const axpy = kernel(
  { block: [64], tensors: { y: "[n]", x: "[n]" }, grid: ["cdiv(n, 64)"] },
  (y: Float32Array, x: ReadonlyFloat32Array, n: i32, a: f32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
  },
);

export const histogram = kernel(
  { block: [256], tensors: { counts: "output [BINS]", values: "[n]" }, grid: ["min(cdiv(n, 256), 1024)"], specializations: [{ BINS: 16 }] },
  (counts: Uint32Array, values: ReadonlyUint32Array, n: i32, BINS: Const<i32> = 16) => {
    for (let i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 1024 * 256) atomicAdd(counts, i32(values[i] % u32(BINS)), 1);
  },
);

export const rowSums = kernel(
  {
    block: ["THREADS", "ROWS"],
    specializations: [{ THREADS: 32, ROWS: 4 }, { THREADS: 128, ROWS: 1 }],
    tensors: { sums: "output [rows]", matrix: "[rows, cols]" },
    grid: ["cdiv(rows, ROWS)", 1],
    requires: ["cols <= 2 * THREADS", "cols > 0"],
  },
  (sums: Float32Array, matrix: ReadonlyFloat32Array, rows: i32, cols: i32, absolute: bool, THREADS: Const<i32> = 32, ROWS: Const<i32> = 4) => {
    const row = blockIdx.x * ROWS + threadIdx.y;
    if (row >= rows || threadIdx.x !== 0) return;
    let sum: f32 = 0;
    for (let c = 0; c < cols; c++) sum += absolute ? Math.abs(matrix[row * cols + c]) : matrix[row * cols + c];
    sums[row] = sum;
  },
);

export const tile = kernel(
  { block: [256], tensors: { out: "output [times, n]", row: "[n]" }, grid: ["cdiv(times * n, 256)"] },
  (out: Float32Array, row: ReadonlyFloat32Array, n: i32, times: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < times * n) out[i] = row[i % n];
  },
);

export const shift = kernel(
  { block: [64], specializations: [{ T: "f32" }, { T: "bf16" }], tensors: { out: "output [n]", input: "[n]" }, grid: ["cdiv(n, 64)"], backward: "shiftBackward" },
  <T extends "f32" | "bf16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32, by: f32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cast<T>(f32(input[i]) + by);
  },
);

export const shiftBackward = kernel(
  { block: [64], specializations: [{ T: "bf16" }, { T: "f32" }], tensors: { gradInput: "output [n]", gradOut: "[n]" }, grid: ["cdiv(n, 64)"] },
  <T extends "f32" | "bf16">(gradInput: BufferOf<T>, gradOut: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gradInput[i] = gradOut[i];
  },
);
