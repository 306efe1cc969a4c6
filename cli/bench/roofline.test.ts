/**
 * The rooflines of `bench matmul` and `bench kernels` on the CPU: each measured kernel placed at the
 * intensity its source gives (the tiled matmul's TILE/4 flops per byte, SAXPY's 2 flops per 12 bytes, worked by
 * hand) and at the flop rate of the run's own JSON, under the memory roof of the run's copy; the chart's
 * scales are logarithmic both ways; and what has no flops is named instead of drawn.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../tests/golden-cases.ts";
import { runCli } from "../main.ts";
import { IntensityEstimates, rooflineSvg } from "./roofline.ts";

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

/** The circles of a roofline SVG with their figures and place. */
function circles(svg: string): { label: string; intensity: number; gflops: number; cx: number; cy: number }[] {
  return [...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)" r="4" fill="[^"]+" data-label="([^"]+)" data-intensity="([^"]+)" data-gflops="([^"]+)"\/>/g)].map((m) => ({
    cx: Number(m[1]),
    cy: Number(m[2]),
    label: m[3]!,
    intensity: Number(m[4]),
    gflops: Number(m[5]),
  }));
}

const tempFile = (name: string) => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-roofline-")), name);

describe("the roofline chart", () => {
  it("places points on logarithmic scales: a tenfold step is the same distance anywhere", () => {
    const points = [1, 10, 100].map((v) => ({ label: `p${v}`, backend: "cpu", intensity: v / 10, gflops: v }));
    const found = circles(rooflineSvg(points, [{ backend: "cpu", device: "test", bandwidth: 10, peak: { gflops: 1000, source: "nominal" } }], "t"));
    expect(found.map((c) => c.label)).toEqual(["p1", "p10", "p100"]);
    expect(found[1]!.cx - found[0]!.cx).toBeCloseTo(found[2]!.cx - found[1]!.cx, 0);
    expect(found[0]!.cy - found[1]!.cy).toBeCloseTo(found[1]!.cy - found[2]!.cy, 0);
    expect(found[1]!.cx).toBeGreaterThan(found[0]!.cx);
    expect(found[1]!.cy).toBeLessThan(found[0]!.cy);
  });

  it("estimates the tiled matmul at TILE/4 flops per byte, for the constants the run used", () => {
    const estimates = new IntensityEstimates();
    const tiled = path.join(repoRoot, "examples", "matmul-tiled.ts");
    expect(estimates.of(tiled, "matmulTiled", { TILE: 16 })).toBe(4);
    expect(estimates.of(tiled, "matmulTiled", { TILE: 8 })).toBe(2);
  });
});

describe("--roofline on the CPU", () => {
  it("bench kernels: each kernel at its intensity and intensity × its GB/s, under the copy's bandwidth; the transpose named, not drawn", async () => {
    const svgFile = tempFile("kernels.svg");
    const jsonFile = tempFile("kernels.json");
    const run = await cli("bench", "kernels", "--backend", "cpu", "--kernels", "saxpy,transpose", "--sizes", "65536,128x128", "--runs", "1", "--json", jsonFile, "--roofline", svgFile);
    expect(run.code, run.stderr).toBe(0);
    const report = (JSON.parse(fs.readFileSync(jsonFile, "utf8")) as { reports: { copy: { gbps: number }; rows: { kernel: string; gbps: number }[] }[] }).reports[0]!;
    const svg = fs.readFileSync(svgFile, "utf8");
    const saxpy = report.rows.find((r) => r.kernel === "saxpy")!;
    // SAXPY reads x and y and writes y (12 bytes) for one fma (2 flops).
    expect(circles(svg).map((c) => [c.label, c.intensity, c.gflops])).toEqual([["saxpy n=2^16", 2 / 12, (2 / 12) * saxpy.gbps]]);
    expect(svg).toContain(`memory: copy ${report.copy.gbps >= 100 ? report.copy.gbps.toFixed(0) : report.copy.gbps.toFixed(1)} GB/s`);
    expect(svg).toContain("compute: no known peak");
    expect(svg).toMatch(/not shown \(0 flops per byte, estimated\):<\/text>\n<text [^>]*>transpose<\/text>/);
  });

  it("bench matmul: every rung that ran at its estimated intensity and measured GFLOP/s, under the copy and the fastest rung", async () => {
    const svgFile = tempFile("matmul.svg");
    const jsonFile = tempFile("matmul.json");
    const run = await cli("bench", "matmul", "--backend", "cpu", "--sizes", "32", "--runs", "1", "--json", jsonFile, "--roofline", svgFile);
    expect(run.code, run.stderr).toBe(0);
    const rows = (JSON.parse(fs.readFileSync(jsonFile, "utf8")) as { rows: { variant: string; n: number; gflops: number | null }[] }).rows.filter((r) => r.gflops !== null && Number.isFinite(r.gflops));
    const found = circles(fs.readFileSync(svgFile, "utf8"));
    expect(found.map((c) => c.label).sort()).toEqual(rows.map((r) => `${r.variant} n=32`).sort());
    for (const row of rows) expect(found.find((c) => c.label === `${row.variant} n=32`)!.gflops).toBe(row.gflops);
    // The naive rung: one fma-shaped multiply-add per 8 bytes of A and B.
    expect(found.find((c) => c.label === "naive n=32")!.intensity).toBe(0.25);
    const fastest = Math.max(...rows.map((r) => r.gflops!));
    expect(fs.readFileSync(svgFile, "utf8")).toContain(`compute: fastest measured ${fastest >= 100 ? fastest.toFixed(0) : fastest >= 1 ? fastest.toFixed(1) : fastest.toPrecision(2)} GFLOP/s`);
  });
});
