/**
 * The compile-time rules of clusters of blocks (docs/language.md §25, "Clusters of blocks"): the option's form
 * (TSK1004), cluster operations without the option (TSK3168), clusters on WebGPU (TSK3167), syncCluster() in
 * divergent control flow (TSK3001), what CUDA prints for each operation, and the manifest's cluster. Running
 * kernels with clusters on the CPU is tests/sgemm-wgmma-cluster.test.ts's.
 */

import { describe, expect, it } from "vitest";
import { compileSource } from "./compile-source.ts";

const imports = 'import { arriveBarrier, clusterRank, copyTile, initBarrier, kernel, shared, syncCluster, threadIdx, waitBarrier, warpgroupIdx, type i32, type ReadonlyUint32Array } from "tskernel";\n';
const source = (options: string, body: string) =>
  `${imports}export const k = kernel({ block: [128], ${options}targets: ["cuda", "js"] }, (n: i32, Y: Float32Array, X: Readonly<Float32Array>, map: ReadonlyUint32Array) => {\n  const bars = shared.barriers(2);\n  const tile = shared.f32(4096);\n${body}\n});\n`;
const compile = (options: string, body: string, targets: ("cuda" | "wgsl" | "js")[] = ["cuda", "js"]) => compileSource(source(options, body), { targets });

describe("clusters of blocks: the compile-time rules", () => {
  const body = [
    "  if (threadIdx.x === 0) {",
    "    initBarrier(bars, 0, 2);",
    "  }",
    "  syncCluster();",
    "  if (threadIdx.x === 0) {",
    "    copyTile(tile, 0, X, map, 0, 32 * clusterRank, bars, 1, { multicast: 3 });",
    "    arriveBarrier(bars, 0, { block: 1 - clusterRank });",
    "  }",
    "  waitBarrier(bars, 0, 0);",
    "  syncCluster();",
  ].join("\n");

  it("compiles for CUDA: __cluster_dims__, %cluster_ctarank, barrier.cluster, a multicast copy and a remote arrival", () => {
    const result = compile("cluster: [2], ", body);
    expect(result.rendered).toBe("");
    const cuda = result.files[0]!.cuda!.source;
    expect(cuda).toContain("__cluster_dims__(2, 1, 1) k(");
    expect(cuda).toContain('asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));');
    expect(cuda).toMatch(/tsk_cluster_sync\(\);/);
    expect(cuda).toMatch(/tsk_copy_tile_multicast\(&tile\[0\], map, 0, \(int\)\(32u \* \(unsigned int\)tsk_cluster_rank\(\)\), &bars\[1\], 3\);/);
    expect(cuda).toContain("tsk_mbarrier_arrive_cluster(&bars[0], 1 - tsk_cluster_rank());");
    expect(cuda).toContain("mbarrier.arrive.shared::cluster.b64 _, [remote];");
    expect(result.files[0]!.specializations[0]!.kernel.cluster).toEqual([2, 1, 1]);
  });

  it("TSK1004: a cluster is 1 to 3 positive integers of at most 8 blocks", () => {
    for (const bad of ["cluster: [3, 3], ", "cluster: [0], ", "cluster: 2, ", "cluster: [], "]) {
      expect(compile(bad, "").rendered).toContain("cluster is an array of 1 to 3 positive integers of at most 8 blocks in all, as in `cluster: [2]`");
    }
  });

  it("TSK3168: a cluster operation in a kernel that declares no clusters, at the operation", () => {
    const rendered = compile("", "  Y[0] = Y[0] + (clusterRank === 0 ? 1 : 0);").rendered;
    expect(rendered).toContain("error[TSK3168]: kernel 'k' uses clusterRank, which needs clusters of blocks, but it declares none");
    expect(compile("", "  syncCluster();").rendered).toContain("error[TSK3168]: kernel 'k' uses syncCluster(), which needs clusters of blocks, but it declares none\n --> kernel.ts:5:3");
  });

  it("TSK3088: a cluster kernel has whole warpgroups (the CPU runs its blocks as warpgroup roles), and says so", () => {
    const partial = compileSource(source("cluster: [2], ", "  syncCluster();").replace("block: [128]", "block: [96]"), { targets: ["cuda", "js"] });
    expect(partial.rendered).toContain(
      "error[TSK3088]: kernel 'k' uses cluster operations (syncCluster()), which the CPU runs as warpgroup roles, so its block must be a whole number of warpgroups of 128 threads; it has 96",
    );
  });

  it("TSK3167: WebGPU has no clusters", () => {
    const wgsl = compileSource(source("cluster: [2], ", "  Y[0] = 1;").replace('targets: ["cuda", "js"] ', ""), { targets: ["wgsl"] });
    expect(wgsl.rendered).toContain("error[TSK3167]: WebGPU has no clusters of blocks, and kernel 'k' runs in clusters of 2 × 1 × 1");
  });

  it("TSK3001: syncCluster() where not every thread of the block reaches it", () => {
    expect(compile("cluster: [2], ", "  if (threadIdx.x < 32) {\n    syncCluster();\n  }").rendered).toContain("error[TSK3001]: syncCluster() is reached in non-uniform control flow");
    // In a role (a branch on warpgroupIdx) too: every thread of every block meets there.
    expect(compile("cluster: [2], ", "  if (warpgroupIdx === 0) {\n    syncCluster();\n  }").rendered).toContain("error[TSK3001]");
  });
});
