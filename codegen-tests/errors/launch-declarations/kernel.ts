// One mistake per kernel in the launch declarations (options tensors, grid, requires, backward).
import { blockIdx, f32, kernel, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const badShape = kernel({ block: [64], tensors: { out: "output rows, cols", input: "[rows]" }, grid: ["rows"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[blockIdx.x];
});

export const notABuffer = kernel({ block: [64], tensors: { out: "output [n]", n: "[n]" }, grid: ["n"] }, (out: Float32Array, n: i32) => {
  out[blockIdx.x] = 0;
});

export const missingShape = kernel({ block: [64], tensors: { out: "output [n]" }, grid: ["n"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const readOnlyOutput = kernel({ block: [64], tensors: { out: "output [n]", input: "output [n]" }, grid: ["n"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const unknownName = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["cdiv(m, 64)"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const badFormula = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["cdiv(n, 64"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const floatSize = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["n"] }, (out: Float32Array, input: ReadonlyFloat32Array, n: f32) => {
  out[blockIdx.x] = input[0] * n;
});

export const outputOnlySize = kernel({ block: [64], tensors: { out: "output [m]", input: "[n]" }, grid: ["n"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const noGrid = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" } }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const noBlock = kernel({ tensors: { out: "output [n]", input: "[n]" }, grid: ["n"] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const gridAlone = kernel({ block: [64], grid: ["4"] }, (out: Float32Array) => {
  out[blockIdx.x] = 0;
});

export const missingBackward = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["n"], backward: "nowhere" }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  out[blockIdx.x] = input[0];
});

export const unpairable = kernel({ block: [64], tensors: { out: "output [n]", input: "[n]" }, grid: ["n"], backward: "unpairableBackward" }, (out: Float32Array, input: ReadonlyFloat32Array, TILE: Const<i32> = 4) => {
  out[blockIdx.x] = input[0] * f32(TILE);
});

export const unpairableBackward = kernel({ block: [64], tensors: { gradX: "output [n]", gradOut: "[n]" }, grid: ["n"] }, (gradX: Float32Array, gradOut: ReadonlyFloat32Array) => {
  gradX[blockIdx.x] = gradOut[0];
});
