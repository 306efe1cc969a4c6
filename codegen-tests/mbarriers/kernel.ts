// mbarriers and warpgroup roles: warpgroup 0 fills two stages of shared memory in turn, warpgroup 1 waits for
// each, reads it (another thread's element, so the wait is what makes it safe) and hands it back. MISS, for
// the tests of misuse (tests/mbarriers.test.ts): 1 drops the producer's wait, 2 the consumer's, 3 expects an
// arrival that never comes, 4 waits for the wrong parity.
import { arriveBarrier, initBarrier, kernel, setMaxRegisters, shared, syncThreads, threadIdx, waitBarrier, warpgroupIdx, type Const, type i32, type ReadonlyFloat32Array } from "tskernel";

export const pipeline = kernel(
  { block: [256], targets: ["cuda", "js"], specializations: [{}] },
  (n: i32, X: ReadonlyFloat32Array, Y: Float32Array, MISS: Const<i32> = 0) => {
    const stage = shared.f32(2 * 128);
    const full = shared.barriers(2);
    const empty = shared.barriers(2);
    const tid = threadIdx.x;
    const lane = tid & 127;
    if (tid === 0) {
      for (let s = 0; s < 2; s++) {
        initBarrier(full, s, MISS === 3 ? 129 : 128);
        initBarrier(empty, s, 4);
      }
    }
    syncThreads();
    const chunks = n / 128;
    if (warpgroupIdx === 0) {
      setMaxRegisters(24);
      for (let i = 0; i < chunks; i++) {
        const s = i % 2;
        if (i >= 2 && MISS !== 1) {
          waitBarrier(empty, s, ((i / 2) + 1) & 1);
        }
        stage[s * 128 + lane] = X[i * 128 + lane] * 2;
        arriveBarrier(full, s);
      }
    } else {
      setMaxRegisters(240);
      for (let i = 0; i < chunks; i++) {
        const s = i % 2;
        if (MISS === 4) {
          waitBarrier(full, s, ((i / 2) + 1) & 1);
        } else if (MISS !== 2) {
          waitBarrier(full, s, (i / 2) & 1);
        }
        Y[i * 128 + lane] = stage[s * 128 + 127 - lane] + 1;
        // One arrival a warp: the barrier expects four.
        if ((lane & 31) === 0) {
          arriveBarrier(empty, s);
        }
      }
    }
  },
);
