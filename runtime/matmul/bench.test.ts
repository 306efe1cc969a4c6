/** The matmul benchmark on the CPU at small sizes: every row runs and is checked, and the chart shows it. */

import { describe, expect, it } from "vitest";
import { CpuDevice } from "../cpu/cpu-device.ts";
import { compileSeedLibrary } from "../demo/seed-library.ts";
import { benchChartSvg, benchMatmul, formatBenchTable } from "./bench.ts";

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
      expect(row.error!.normwiseRelative, row.variant).toBeLessThan(row.n * 2 ** -23);
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
});
