// Seeded bugs for checked builds (docs/language.md, "Checked GPU builds"): each kernel has one bug, on the line
// marked BUG, that exactly one thread hits, so that every backend reports the same text. corpus-cases.ts
// says how each is launched and what it must report; tests/checked-builds.test.ts and bench/gpu-checked.ts
// run them on the CPU's checked mode, WebGPU and CUDA.
import { atomicAdd, blockIdx, kernel, load4, local, shared, store4, syncThreads, threadIdx, type f32, type i32, type u32, type BFloat16Array, type ReadonlyBFloat16Array, type ReadonlyFloat32Array, type ReadonlyInt32Array, type ReadonlyUint8Array, type ReadonlyUint32Array } from "tskernel";

interface Particle {
  x: f32;
  v: f32;
}

/** An off-by-one tail: `<=` where `<` was meant reads one past the end of x. */
export const tailOffByOne = kernel({ block: [64] }, (out: Float32Array, x: Float32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i <= n) out[i] = x[i] * 2; // BUG: i === n reads past x
});

/** A write one element too far: the shift by one overruns out. */
export const shiftedWrite = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i + 1] = x[i]; // BUG: the last thread writes out[n]
});

/** A negative index: the first thread reads x[-1]. */
export const negativeIndex = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i] = x[i] - x[i - 1]; // BUG: i === 0 reads x[-1]
});

/** A wrong stride: rows are `width` apart, but the kernel steps by width + 1 (x has 70 of the 71 that needs). */
export const wrongStride = kernel({ block: [8, 8] }, (out: Float32Array, x: ReadonlyFloat32Array, width: i32, height: i32) => {
  const col = blockIdx.x * 8 + threadIdx.x;
  const row = blockIdx.y * 8 + threadIdx.y;
  if (col < width && row < height) out[row * width + col] = x[row * (width + 1) + col]; // BUG: (7, 7) reads x[70]
});

/** A shared-memory read past the end: the neighbour of the last thread. */
export const sharedReadPastEnd = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const tile = shared.f32(64);
  const t = threadIdx.x;
  tile[t] = x[blockIdx.x * 64 + t];
  syncThreads();
  out[blockIdx.x * 64 + t] = tile[t] + tile[t + 1]; // BUG: t === 63 reads tile[64]
});

/** A shared-memory write past the end: a tile sized for 32 written by 33 threads. */
export const sharedWritePastEnd = kernel({ block: [64] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const tile = shared.f32(32);
  const t = threadIdx.x;
  if (t <= 32) tile[t] = x[t]; // BUG: t === 32 writes tile[32]
  syncThreads();
  if (t < 32) out[t] = tile[t];
});

/** A 2-D shared tile read one column too far. */
export const sharedColumnPastEnd = kernel({ block: [8, 8] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const tile = shared.f32(8, 8);
  const tx = threadIdx.x;
  const ty = threadIdx.y;
  tile[ty][tx] = x[ty * 8 + tx];
  syncThreads();
  const right = tx === 7 && ty === 7 ? tx + 1 : tx;
  out[ty * 8 + tx] = tile[ty][right]; // BUG: thread (7, 7) reads tile[7][8]
});

/** An integer division by a zero that came from the data. */
export const divideByZero = kernel({ block: [64] }, (out: Int32Array, a: ReadonlyInt32Array, b: ReadonlyInt32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i] = a[i] / b[i]; // BUG: b holds one 0
});

/** A remainder by zero. */
export const remainderByZero = kernel({ block: [64] }, (out: Uint32Array, a: ReadonlyUint32Array, m: u32, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  const k = m - (i === 5 ? m : 0);
  if (i < n) out[i] = a[i] % k; // BUG: thread 5 takes the remainder by 0
});

/** An integer division by zero inside a helper (declared below): checked in the kernel's copy of the helper. */
export const helperDivide = kernel({ block: [64] }, (out: Int32Array, a: ReadonlyInt32Array, b: ReadonlyInt32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i] = share(a[i], b[i]);
});

/** a's share of b parts. */
function share(total: i32, parts: i32): i32 {
  return total / parts; // BUG: helperDivide's b holds one 0
}

/** A shift by 32: the bit count was meant to stop at 31. */
export const shiftTooFar = kernel({ block: [64] }, (out: Uint32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i] = 1 << i; // BUG: i === 32 shifts by 32
});

/** A load4 whose last group runs past a length that is not a multiple of 4. */
export const vectorTail = kernel({ block: [32] }, (out: Float32Array, x: ReadonlyFloat32Array, groups: i32) => {
  const g = blockIdx.x * 32 + threadIdx.x;
  if (g < groups) {
    const [a, b, c, d] = load4(x, g * 4); // BUG: the last group reads past x
    store4(out, g * 4, a + b, b + c, c + d, d + a);
  }
});

/** A load4 from an index that is not a multiple of 4 (CUDA faults on it unchecked). */
export const vectorMisaligned = kernel({ block: [32] }, (out: Float32Array, x: ReadonlyFloat32Array, offset: i32) => {
  const g = blockIdx.x * 32 + threadIdx.x;
  const start = g * 4 + (g === 3 ? offset : 0);
  const [a, b, c, d] = load4(x, start); // BUG: group 3 starts at 13
  store4(out, g * 4, a, b, c, d);
});

/** A histogram whose bins are one too few: the largest value lands past the end. */
export const histogramOverflow = kernel({ block: [64] }, (hist: Uint32Array, values: ReadonlyInt32Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) atomicAdd(hist, values[i], 1); // BUG: a value of 16 with 16 bins
});

/** A private array indexed by a count that reaches its size. */
export const privateOverflow = kernel({ block: [32] }, (out: Float32Array, counts: ReadonlyInt32Array) => {
  const acc = local.f32(4);
  const t = blockIdx.x * 32 + threadIdx.x;
  for (let k = 0; k < 4; k++) acc[k] = 0;
  const c = counts[t];
  acc[c] = 1; // BUG: thread 9's count is 4
  out[t] = acc[0] + acc[1] + acc[2] + acc[3];
});

/** An array of structs read one past the end. */
export const structPastEnd = kernel({ block: [64] }, (out: Float32Array, particles: Particle[], n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i] = particles[i + 1].x - particles[i].x; // BUG: the last thread reads particles[n]
});

/** A bf16 tail one past an odd length: on WGSL that element shares its u32 word with the last one. */
export const halfTailOffByOne = kernel({ block: [64] }, (out: BFloat16Array, x: ReadonlyBFloat16Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i <= n) out[i] = x[i]; // BUG: i === n reads past x
});

/** A byte written one past an odd length: on WGSL four bytes share a word. */
export const byteWritePastEnd = kernel({ block: [64] }, (out: Uint8Array, x: ReadonlyUint8Array, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) out[i + 1] = x[i]; // BUG: the last thread writes out[n]
});
