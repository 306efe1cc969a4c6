// The m16n8k16 warp shape with each way of loading its fragments: two warps, each D = A·B + C on its own 16×16
// A and 16×8 B (row-major, C and D 16×8 f32), A and B loaded by loadFragment from global memory (mode 0, the
// lanes' element loads) or by loadMatrix from shared tiles (ldmatrix on CUDA): row-major (1: .x4 for A, .x2.trans
// for B), A transposed (2: .x4.trans), A and B transposed (3: B by .x2). bf16 and f16. tests/mma16.test.ts runs
// it on the CPU against the in-order reference, bench/mma16-loads-check.cu on the GPU against the bound.
import { fragment, kernel, loadFragment, loadMatrix, mma, shared, storeFragment, syncThreads, threadIdx, type i32, type ReadonlyBFloat16Array, type ReadonlyFloat16Array, type ReadonlyFloat32Array } from "tskernel";

export const mma16LoadsBf16 = kernel({ block: [64], targets: ["cuda", "js"] }, (A: ReadonlyBFloat16Array, B: ReadonlyBFloat16Array, C: ReadonlyFloat32Array, D: Float32Array, mode: i32) => {
  const acc = fragment.accumulator("m16n8k16", "f32", 1);
  const a = fragment.a("m16n8k16", "bf16", 2);
  const b = fragment.b("m16n8k16", "bf16", 2);
  const As = shared.bf16(2 * 16 * 24);
  const Bs = shared.bf16(2 * 16 * 24);
  const w = threadIdx.x / 32;
  const lane = threadIdx.x % 32;
  // This warp's A and B in shared rows of 24: row-major, or transposed (A from mode 2 on, B in mode 3).
  for (let i = lane; i < 256; i += 32) {
    As[w * 384 + (mode >= 2 ? (i % 16) * 24 + i / 16 : (i / 16) * 24 + (i % 16))] = A[w * 256 + i];
  }
  for (let i = lane; i < 128; i += 32) {
    Bs[w * 384 + (mode === 3 ? (i % 8) * 24 + i / 8 : (i / 8) * 24 + (i % 8))] = B[w * 128 + i];
  }
  syncThreads();
  loadFragment(acc[0], C, w * 128, 8);
  if (mode === 0) {
    loadFragment(a[1], A, w * 256, 16);
    loadFragment(b[1], B, w * 128, 8);
  } else if (mode === 1) {
    loadMatrix(a[1], As, w * 384, 24);
    loadMatrix(b[1], Bs, w * 384, 24);
  } else if (mode === 2) {
    loadMatrix(a[1], As, w * 384, 1, 24);
    loadMatrix(b[1], Bs, w * 384, 24);
  } else {
    loadMatrix(a[1], As, w * 384, 1, 24);
    loadMatrix(b[1], Bs, w * 384, 1, 24);
  }
  mma(acc[0], a[1], b[1]);
  storeFragment(acc[0], D, w * 128, 8);
});

export const mma16LoadsF16 = kernel({ block: [64], targets: ["cuda", "js"] }, (A: ReadonlyFloat16Array, B: ReadonlyFloat16Array, C: ReadonlyFloat32Array, D: Float32Array, mode: i32) => {
  const acc = fragment.accumulator("m16n8k16", "f32", 1);
  const a = fragment.a("m16n8k16", "f16", 2);
  const b = fragment.b("m16n8k16", "f16", 2);
  const As = shared.f16(2 * 16 * 24);
  const Bs = shared.f16(2 * 16 * 24);
  const w = threadIdx.x / 32;
  const lane = threadIdx.x % 32;
  // This warp's A and B in shared rows of 24: row-major, or transposed (A from mode 2 on, B in mode 3).
  for (let i = lane; i < 256; i += 32) {
    As[w * 384 + (mode >= 2 ? (i % 16) * 24 + i / 16 : (i / 16) * 24 + (i % 16))] = A[w * 256 + i];
  }
  for (let i = lane; i < 128; i += 32) {
    Bs[w * 384 + (mode === 3 ? (i % 8) * 24 + i / 8 : (i / 8) * 24 + (i % 8))] = B[w * 128 + i];
  }
  syncThreads();
  loadFragment(acc[0], C, w * 128, 8);
  if (mode === 0) {
    loadFragment(a[1], A, w * 256, 16);
    loadFragment(b[1], B, w * 128, 8);
  } else if (mode === 1) {
    loadMatrix(a[1], As, w * 384, 24);
    loadMatrix(b[1], Bs, w * 384, 24);
  } else if (mode === 2) {
    loadMatrix(a[1], As, w * 384, 1, 24);
    loadMatrix(b[1], Bs, w * 384, 24);
  } else {
    loadMatrix(a[1], As, w * 384, 1, 24);
    loadMatrix(b[1], Bs, w * 384, 1, 24);
  }
  mma(acc[0], a[1], b[1]);
  storeFragment(acc[0], D, w * 128, 8);
});
