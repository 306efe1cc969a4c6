/**
 * Where CUDA publishes ordinary shared-memory writes to the copy engine in a kernel that stores tiles
 * (cuda-barriers.ts, storeFences): `fence.proxy.async` before an arrival, syncThreads or tile store that a
 * path reaches with a write to shared memory since the last such fence, through branches and loops (the back
 * edge, a fixed point, and break), and none before a consumer's release of a stage it only read. Compile-only: the fence has no
 * effect on the CPU backend, and the golden flash-attention kernels show it in place.
 */

import { describe, expect, it } from "vitest";
import { compileSource } from "./compile-source.ts";

const source = `import { arriveBarrier, arriveExpectBytes, copyTile, initBarrier, kernel, shared, storeTile, syncThreads, threadIdx, waitBarrier, waitTileStores, bf16, f32, type BFloat16Array, type ReadonlyBFloat16Array, type ReadonlyUint32Array, type i32 } from "tskernel";

export const release = kernel({ block: [128], targets: ["cuda"] }, (A: ReadonlyBFloat16Array, C: BFloat16Array, mapA: ReadonlyUint32Array, mapC: ReadonlyUint32Array, n: i32) => {
  const As = shared.bf16(64 * 64);
  const Es = shared.bf16(64 * 64);
  const full = shared.barriers(1);
  const empty = shared.barriers(1);
  const done = shared.barriers(1);
  if (threadIdx.x === 0) {
    initBarrier(full, 0, 1);
    initBarrier(empty, 0, 128);
    initBarrier(done, 0, 128);
  }
  syncThreads();
  let sum = 0.0;
  for (let t = 0; t < n; t++) {
    if (threadIdx.x === 0) {
      arriveExpectBytes(full, 0, 8192);
      copyTile(As, 0, A, mapA, 0, 64 * t, full, 0);
    }
    waitBarrier(full, 0, t & 1);
    sum += f32(As[threadIdx.x]);
    arriveBarrier(empty, 0);
    waitBarrier(empty, 0, t & 1);
  }
  if (threadIdx.x < 64) {
    Es[threadIdx.x] = bf16(sum);
  }
  arriveBarrier(done, 0);
  waitBarrier(done, 0, 0);
  if (threadIdx.x === 0) {
    Es[4095] = bf16(sum);
    storeTile(C, mapC, 0, 0, Es, 0);
    waitTileStores(0);
  }
});

export const loop = kernel({ block: [128], targets: ["cuda"] }, (C: BFloat16Array, mapC: ReadonlyUint32Array, n: i32) => {
  const Es = shared.bf16(64 * 64);
  const ready = shared.barriers(1);
  if (threadIdx.x === 0) {
    initBarrier(ready, 0, 128);
  }
  syncThreads();
  for (let t = 0; t < n; t++) {
    arriveBarrier(ready, 0);
    waitBarrier(ready, 0, t & 1);
    if (threadIdx.x === 0) {
      storeTile(C, mapC, 0, 64 * t, Es, 0);
      waitTileStores(0);
    }
    Es[threadIdx.x] = bf16(t);
  }
});

export const settled = kernel({ block: [128], targets: ["cuda"] }, (C: BFloat16Array, mapC: ReadonlyUint32Array, n: i32) => {
  const Es = shared.bf16(64 * 64);
  const vacant = shared.barriers(1);
  const written = shared.barriers(1);
  if (threadIdx.x === 0) {
    initBarrier(vacant, 0, 128);
    initBarrier(written, 0, 128);
  }
  syncThreads();
  for (let t = 0; t < n; t++) {
    arriveBarrier(vacant, 0);
    waitBarrier(vacant, 0, t & 1);
    Es[threadIdx.x] = bf16(t);
    if (t === 5) {
      break;
    }
    arriveBarrier(written, 0);
    waitBarrier(written, 0, t & 1);
    if (threadIdx.x === 0) {
      storeTile(C, mapC, 0, 64 * t, Es, 0);
      waitTileStores(0);
    }
  }
  syncThreads();
});
`;

/** The CUDA line of each kernel function that holds `text`, by kernel. */
function lines(text: string): string[] {
  const result = compileSource(source, { targets: ["cuda"] });
  expect(result.rendered).toBe("");
  return result.files[0]!.cuda!.source.split("\n").filter((line) => line.includes(text) && !line.includes("__device__"));
}

describe("proxy fences before arrivals in a kernel that stores tiles (CUDA)", () => {
  it("fences after shared writes only: none at a stage release or a syncThreads after barrier inits", () => {
    const fence = "tsk_fence_proxy_async_store();";
    expect(lines("tsk_mbarrier_arrive(&empty[0])").map((line) => line.trim())).toEqual(["tsk_mbarrier_arrive(&empty[0]);"]);
    expect(lines("tsk_mbarrier_arrive_expect(&full[0]").every((line) => !line.includes(fence))).toBe(true);
    // The write in one arm of a branch reaches the arrival after it; the store's own thread wrote again since.
    expect(lines("tsk_mbarrier_arrive(&done[0])").map((line) => line.trim())).toEqual([`${fence} tsk_mbarrier_arrive(&done[0]);`]);
    expect(lines("tsk_store_tile(mapC").map((line) => line.trim().startsWith(fence))).toEqual([true, false, false]);
    // The first syncThreads of each kernel follows only barrier inits.
    // The last syncThreads follows a break taken after a write.
    expect(lines("__syncthreads();").map((line) => line.includes(fence))).toEqual([false, false, false, true]);
    // The loop's write reaches the arrival at its top through the back edge.
    expect(lines("tsk_mbarrier_arrive(&ready[0])").map((line) => line.trim())).toEqual([`${fence} tsk_mbarrier_arrive(&ready[0]);`]);
    // The body's own fenced arrival settles the back edge: the arrival at the top of the next iteration has none.
    expect(lines("tsk_mbarrier_arrive(&vacant[0])").map((line) => line.trim())).toEqual(["tsk_mbarrier_arrive(&vacant[0]);"]);
    expect(lines("tsk_mbarrier_arrive(&written[0])").map((line) => line.trim())).toEqual([`${fence} tsk_mbarrier_arrive(&written[0]);`]);
  });
});
