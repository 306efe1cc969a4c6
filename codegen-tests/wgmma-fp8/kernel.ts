// 8-bit float warpgroup MMA (docs/language.md §25, "8-bit inputs"): one warpgroup multiplies A (64×128 e4m3,
// row-major) by B (128×128 e5m2, given as Bᵀ: 128 rows of k, so K-major) with m64n128k32, A and B copied into
// shared arrays in the 128-byte swizzle, four k-steps of 32, and stores the f32 accumulator.
// tests/wgmma-fp8.test.ts runs the same form on the CPU for every shape and pair of types.
import { fillFragment, fragment, kernel, shared, storeFragment, syncThreads, threadIdx, wgmma, wgmmaCommit, wgmmaWait, type ReadonlyFloat8E4M3Array, type ReadonlyFloat8E5M2Array } from "tskernel";

export const fp8Tile = kernel({ block: [128], targets: ["cuda", "js"] }, (C: Float32Array, A: ReadonlyFloat8E4M3Array, Bt: ReadonlyFloat8E5M2Array) => {
  const As = shared.e4m3(64 * 128);
  const Bs = shared.e5m2(128 * 128);
  const acc = fragment.accumulator("m64n128k32", "f32", 1);
  // Row r of A (and of Bᵀ) is one 128-byte row; its 16-byte pieces are swizzled by the row's place in its group of 8.
  for (let i = threadIdx.x; i < 64 * 128; i += 128) {
    As[i ^ (((i >> 7) & 7) << 4)] = A[i];
  }
  for (let i = threadIdx.x; i < 128 * 128; i += 128) {
    Bs[i ^ (((i >> 7) & 7) << 4)] = Bt[i];
  }
  syncThreads();
  fillFragment(acc[0], 0);
  for (let s = 0; s < 4; s++) {
    wgmma(acc[0], As, 32 * s, Bs, 32 * s);
  }
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], C, 0, 128);
});
