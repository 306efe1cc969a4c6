/** The matmul benchmark on the CPU at small sizes: every row runs and is checked, and the chart shows it. */

import { describe, expect, it } from "vitest";
import { CpuDevice } from "../../runtime/cpu/cpu-device.ts";
import { compileSeedLibrary } from "../demo/seed-library.ts";
import { benchVariants, seedVariants } from "../demo/variants.ts";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import { packageRoot } from "../../compiler/index.ts";
import path from "node:path";
import { matmulTolerance } from "../../runtime/matmul/matmul.ts";
import { benchChartSvg, benchMatmul, formatBenchTable, referenceTimes, type BenchRow } from "./matmul.ts";

describe("benchMatmul", () => {
  it("times and checks every runnable rung, and explains the others", async () => {
    const rows = await benchMatmul(new CpuDevice(), { sizes: [64, 70], runs: 3, library: compileSeedLibrary("cpu") });
    for (const row of rows) {
      if (row.note) {
        expect(row.note).toMatch(/^n is not a multiple of \d+$|^n > \d+$/);
        expect(Number.isNaN(row.gflops)).toBe(true);
        continue;
      }
      expect(row.gflops, row.variant).toBeGreaterThan(0);
      expect(row.error!.nonFinite, row.variant).toBe(0);
      expect(row.error!.normwiseRelative, row.variant).toBeLessThan(matmulTolerance(row.precision ?? "fp32", row.n));
    }
    expect(rows.filter((r) => r.n === 64 && !r.note).length).toBeGreaterThanOrEqual(10);
    expect(rows.some((r) => r.n === 70 && r.note === "n is not a multiple of 16")).toBe(true);
    const table = formatBenchTable(rows);
    expect(table.split("\n")).toHaveLength(rows.length + 2);
    const svg = benchChartSvg(rows, "test & chart");
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain("test &amp; chart");
    expect(svg.match(/<rect x=/g)!.length).toBe(rows.filter((r) => Number.isFinite(r.gflops)).length);
  });

  it("runs a rung where its kernel's targets include the backend's target: the tensor-core rung on the CPU and CUDA, not on WebGPU", () => {
    const files = ["sgemm-tensorcore.ts", "matmul-tiled.ts"].map((file) => path.join(packageRoot(), "examples", file));
    const ids = (target: "js" | "wgsl" | "cuda", backend: "cpu" | "webgpu" | "cuda") => benchVariants(compileKernelLibrary(files, [target]), backend).map((v) => v.id);
    // The example declares targets: ["cuda", "js"]; the bench lists no backends of its own.
    expect(ids("wgsl", "webgpu")).toContain("tiled-16");
    expect(ids("wgsl", "webgpu")).not.toContain("sgemm-tensorcore");
    expect(ids("js", "cpu")).toContain("sgemm-tensorcore");
    expect(ids("cuda", "cuda")).toContain("sgemm-tensorcore");
  });

  it("gives a backend without a reference of its own percentages of another backend's reference from the same run", async () => {
    const variants = seedVariants.filter((v) => v.id === "tiled-16");
    const cudaRows: BenchRow[] = [
      { backend: "cuda", n: 64, variant: "cuBLAS SGEMM (FP32)", ms: 0.002, gflops: 262, percentOfReference: 100 },
      { backend: "cuda", n: 64, variant: "cuBLAS SGEMM (TF32)", ms: 0.001, gflops: 524, percentOfReference: 200 },
    ];
    expect(referenceTimes(cudaRows)).toEqual(new Map([[64, 0.002]]));
    const externalReference = { name: "cuBLAS SGEMM (FP32), CUDA part of this run", msByN: referenceTimes(cudaRows) };
    const rows = await benchMatmul(new CpuDevice(), { sizes: [64, 48], runs: 1, variants, library: compileSeedLibrary("cpu"), externalReference });
    const [at64, at48] = rows;
    expect(at64!.percentOfReference).toBeCloseTo((100 * 0.002) / at64!.ms, 10);
    expect(at64!.percentOf).toBe("cuBLAS SGEMM (FP32), CUDA part of this run");
    // No reference time at n = 48: the row stays absolute.
    expect(at48!.n).toBe(48);
    expect(at48!.percentOfReference).toBeUndefined();
    expect(at48!.percentOf).toBeUndefined();
    // Rows of two backends in one table name their backend.
    const table = formatBenchTable([...cudaRows, ...rows]).split("\n");
    expect(table[2]).toMatch(/^64 {2}cuBLAS SGEMM \(FP32\) \(cuda\) +0\.002 +262\.0 +100\.0 %/);
    expect(table[4]).toMatch(new RegExp(`^64 {2}tiled-16 \\(cpu\\) +${at64!.ms.toFixed(3)} +${at64!.gflops.toFixed(1)} +${at64!.percentOfReference!.toFixed(1)} %`));
  });
});
