// Warpgroup matrix operations (wgmma, sm_90a): each warpgroup of the block computes D = A·B + C for a 64×K
// panel of A and a K×64 panel of B (K = 8·STEPS). B goes into shared memory in wgmma's K-major,
// 128-byte-swizzled layout (element (k, n) at swizzle(32·n + k)); A is loaded transposed from At (column
// stride 64) to show the fifth argument; the result is stored both ways. Two k-steps per commit, and a wait
// that leaves none in flight.
import { fragment, kernel, loadFragment, shared, storeFragment, syncThreads, threadIdx, wgmma, wgmmaCommit, wgmmaWait, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const warpgroupPanel = kernel(
  { block: ["THREADS"], specializations: [{}], targets: ["cuda", "js"] },
  (At: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: ReadonlyFloat32Array, D: Float32Array, Dt: Float32Array, THREADS: Const<i32> = 256, STEPS: Const<i32> = 2) => {
    const Bs = shared.f32(64 * 32);
    const acc = fragment.accumulator("m64n64k8", "f32", 1);
    const a = fragment.a("m64n64k8", "tf32", STEPS);
    // B (K×64, row-major) into the swizzled tile: row n of the tile holds column n of B, k along it.
    for (let i = threadIdx.x; i < 64 * 32; i += THREADS) {
      const n = i >> 5;
      const k = i & 31;
      Bs[i ^ (((i >> 5) & 7) << 2)] = k < 8 * STEPS ? B[k * 64 + n] : 0;
    }
    syncThreads();
    loadFragment(acc[0], C, 0, 64);
    unrollLoads: for (let s = 0; s < STEPS; s++) {
      // A[r][c] = At[(8s + c)·64 + r]: rows step by 1, columns by 64.
      loadFragment(a[s], At, s * 8 * 64, 1, 64);
    }
    unrollSteps: for (let s = 0; s < STEPS; s++) {
      wgmma(acc[0], a[s], Bs, s * 8);
    }
    wgmmaCommit();
    wgmmaWait(0);
    storeFragment(acc[0], D, 0, 64);
    storeFragment(acc[0], Dt, 0, 1, 64);
  },
);
