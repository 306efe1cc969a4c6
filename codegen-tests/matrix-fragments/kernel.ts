// Warp-level matrix operations: each warp multiplies a 16×K row panel of A by a K×8 column panel of B
// (K a multiple of 8) into one accumulator, with the fragments of a step in arrays indexed by loop counters:
// an unrolled loop (constant indices on CUDA) and a plain one (run-time indices, uniform). WebGPU has no matrix
// operations: the kernel declares the targets it is for, and a WGSL build skips it.
import { fillFragment, fragment, kernel, loadFragment, mma, shared, storeFragment, syncThreads, threadIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const warpPanels = kernel(
  { block: ["THREADS"], specializations: [{}], targets: ["cuda", "js"] },
  (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: Float32Array, K: i32, THREADS: Const<i32> = 64, STEPS: Const<i32> = 2) => {
    const tile = shared.f32(THREADS * 4);
    const acc = fragment.accumulator("m16n8k8", "f32", 1);
    const a = fragment.a("m16n8k8", "tf32", STEPS);
    const b = fragment.b("m16n8k8", "tf32", STEPS);
    const warp = threadIdx.x / 32;
    fillFragment(acc[0], 0.5);
    for (let k0 = 0; k0 < K; k0 += 8 * STEPS) {
      unrollLoads: for (let s = 0; s < STEPS; s++) {
        loadFragment(a[s], A, warp * 16 * K + k0 + s * 8, K);
        loadFragment(b[s], B, (k0 + s * 8) * 8, 8);
      }
      for (let s = 0; s < STEPS; s++) {
        mma(acc[0], a[s], b[s]);
      }
    }
    // Through shared memory, as an epilogue would.
    storeFragment(acc[0], tile, warp * 128, 8);
    syncThreads();
    C[warp * 128 + threadIdx.x % 32] = tile[warp * 128 + threadIdx.x % 32];
  },
);
