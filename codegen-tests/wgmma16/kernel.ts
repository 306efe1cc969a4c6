// 16-bit warpgroup matrix operations (wgmma m64nNk16, sm_90a): one warpgroup computes C = A·B for a 64×64 bf16
// A and a 64×256 bf16 B, both row-major: thread 0 copies A's box (K-major) and B's four 64-column boxes
// (N-major) into shared memory behind an mbarrier with the tensor memory accelerator, four k16 steps multiply
// them (and two more read B K-major from Bᵀ's box, to show that form), and the accumulator goes out through
// the swizzled box layout and the tensor memory accelerator's store, rounded to bf16.
import {
  arriveExpectBytes,
  copyTile,
  fillFragment,
  fragment,
  initBarrier,
  kernel,
  shared,
  storeFragment,
  storeTile,
  syncThreads,
  threadIdx,
  waitBarrier,
  waitTileStores,
  wgmma,
  wgmmaCommit,
  wgmmaWait,
  type BFloat16Array,
  type ReadonlyBFloat16Array,
  type ReadonlyUint32Array,
} from "tskernel";

export const panel16 = kernel(
  { block: [128], targets: ["cuda", "js"] },
  (A: ReadonlyBFloat16Array, B: ReadonlyBFloat16Array, Bt: ReadonlyBFloat16Array, C: BFloat16Array, mapA: ReadonlyUint32Array, mapB: ReadonlyUint32Array, mapBt: ReadonlyUint32Array, mapC: ReadonlyUint32Array) => {
    const As = shared.bf16(64 * 64);
    const Bs = shared.bf16(64 * 256);
    const Bts = shared.bf16(256 * 64);
    const Es = shared.bf16(64 * 256);
    const bars = shared.barriers(1);
    const acc = fragment.accumulator("m64n256k16", "f32", 1);
    if (threadIdx.x === 0) {
      initBarrier(bars, 0, 1);
    }
    syncThreads();
    if (threadIdx.x === 0) {
      arriveExpectBytes(bars, 0, (64 * 64 + 2 * 64 * 256) * 2);
      copyTile(As, 0, A, mapA, 0, 0, bars, 0);
      copyTile(Bts, 0, Bt, mapBt, 0, 0, bars, 0);
      unrollBoxes: for (let j = 0; j < 4; j++) {
        copyTile(Bs, 4096 * j, B, mapB, 64 * j, 0, bars, 0);
      }
    }
    waitBarrier(bars, 0, 0);
    fillFragment(acc[0], 0);
    unrollSteps: for (let s = 0; s < 4; s++) {
      wgmma(acc[0], As, 16 * s, Bs, 1024 * s, { bMajor: "n", bBoxRows: 64 });
    }
    wgmma(acc[0], As, 0, Bts, 0);
    wgmma(acc[0], As, 16, Bts, 16, { bMajor: "k" });
    wgmmaCommit();
    wgmmaWait(0);
    storeFragment(acc[0], Es, 0, { swizzle: 128, boxRows: 64 });
    syncThreads();
    if (threadIdx.x === 0) {
      unrollStores: for (let j = 0; j < 4; j++) {
        storeTile(C, mapC, 64 * j, 0, Es, 4096 * j);
      }
      waitTileStores(0);
    }
  },
);
