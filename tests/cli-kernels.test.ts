/**
 * `tskernel bench kernels` and `tskernel tune kernels` as scripts see them, on the CPU backend: the table, the
 * JSON (every row checked against float64, times and bandwidth present, a copy measured in the same run), the
 * chart, the tuner's report, and the errors for malformed options.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/main.ts";
import type { KernelBenchReport } from "../cli/kernels-bench/bench.ts";
import type { KernelTuneReport } from "../cli/kernels-bench/tune.ts";

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const temp = () => fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cli-kernels-"));

describe("tskernel bench kernels", () => {
  it("runs the chosen kernels at the chosen shapes on the CPU, checks each, and writes JSON and a chart", async () => {
    const dir = temp();
    const json = path.join(dir, "kernels.json");
    const chart = path.join(dir, "kernels.svg");
    const result = await cli("bench", "kernels", "--backend", "cpu", "--kernels", "sum,softmax,transpose", "--sizes", "65536,33x1024,45x70", "--runs", "2", "--json", json, "--chart", chart);
    expect(result.stderr).not.toContain("failed");
    expect(result.code).toBe(0);
    const { reports } = JSON.parse(fs.readFileSync(json, "utf8")) as { reports: KernelBenchReport[] };
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report!.backend).toBe("cpu");
    expect(report!.copy!.gbps).toBeGreaterThan(0);
    // sum takes the 1-D size; softmax and transpose the 2-D ones; softmax cannot take 45×70 (cols not a multiple of 4).
    expect(report!.rows.map((r) => `${r.kernel} ${r.label}`)).toEqual(["transpose 33×1024", "transpose 45×70", "sum n=2^16", "softmax 33×1024", "softmax 45×70"]);
    for (const row of report!.rows.filter((r) => r.note === undefined)) {
      expect(row.check!.pass, `${row.kernel} ${row.label}`).toBe(true);
      expect(row.ms).toBeGreaterThan(0);
      expect(row.gbps).toBeCloseTo(row.bytes! / (row.ms! * 1e6), 6);
      expect(row.percentOfCopy).toBeCloseTo((100 * row.gbps!) / report!.copy!.gbps, 6);
    }
    expect(report!.rows.find((r) => r.kernel === "softmax" && r.label === "45×70")!.note).toBe("cols must be a multiple of 4 (16-byte vectors)");
    expect(result.stdout).toMatch(/^kernel +shape +backend +time \(ms\) +GB\/s +% of copy +float64 check/);
    expect(result.stdout).toMatch(/\nsum +n=2\^16 +cpu +[\d.]+ +[\d.]+ +[\d.]+ % +pass/);
    const svg = fs.readFileSync(chart, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("softmax 33×1024");
  });

  it("rejects unknown kernels and malformed sizes with exit status 1", async () => {
    const kernel = await cli("bench", "kernels", "--backend", "cpu", "--kernels", "sum,bogus");
    expect(kernel.code).toBe(1);
    expect(kernel.stderr).toBe("tskernel: unknown kernel(s) 'bogus'; the suite has saxpy, gelu, transpose, sum, sum-onepass, softmax, softmax-subgroups, layernorm, layernorm-subgroups, scan, scan-lookback, scan-lookback-subgroups, histogram, layernorm-bf16, layernorm-bf16-shifted, layernorm-bf16-shifted-512, rmsnorm-bf16, softmax-bf16, gelu-bf16, gelu-bf16-one, gelu-bf16-tanh, dequantize-int8, dequantize-int8-prefetch, dequantize-int8-whole, blur-rgba8, blur-rgba8-wave\n");
    const size = await cli("bench", "kernels", "--backend", "cpu", "--sizes", "64x");
    expect(size.code).toBe(1);
    expect(size.stderr).toBe("tskernel: '64x' is not a size: write N for the 1-D kernels or RxC for the 2-D ones\n");
  });

  it("joins PyTorch's figures into the CUDA rows only: a CPU run keeps its rows as they are", async () => {
    const dir = temp();
    const torch = path.join(dir, "torch.json");
    fs.writeFileSync(torch, JSON.stringify({ cases: [{ id: "sum", label: "n=2^16", rounds: 3, ours: { ms: 1 }, torch: { ms: 2, gbps: 1 } }] }));
    const json = path.join(dir, "kernels.json");
    const result = await cli("bench", "kernels", "--backend", "cpu", "--kernels", "sum", "--sizes", "65536", "--runs", "1", "--torch", torch, "--json", json);
    expect(result.code).toBe(0);
    const { reports } = JSON.parse(fs.readFileSync(json, "utf8")) as { reports: KernelBenchReport[] };
    expect(reports[0]!.rows[0]!.torch).toBeUndefined();
    const broken = await cli("bench", "kernels", "--backend", "cpu", "--torch", path.join(dir, "missing.json"));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("cannot read");
  });

  it("explains itself in --help, with examples", async () => {
    for (const command of [["bench", "kernels"], ["tune", "kernels"]]) {
      const help = await cli(...command, "--help");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: tskernel ${command.join(" ")}`);
      expect(help.stdout).toMatch(/Example/);
    }
  });
});

describe("tskernel tune kernels", () => {
  it("measures every setting of the space, verified, and compares the fastest with the fixed choice", async () => {
    const json = path.join(temp(), "tune.json");
    const result = await cli("tune", "kernels", "--backend", "cpu", "--kernels", "sum", "--sizes", "65536", "--runs", "1", "--json", json);
    expect(result.code).toBe(0);
    const report = JSON.parse(fs.readFileSync(json, "utf8")) as KernelTuneReport;
    // BLOCK ∈ {128, 256, 512} × ITEMS ∈ {1, 2, 4, 8}, all valid on the CPU.
    expect(report.candidates).toHaveLength(12);
    expect(report.candidates.every((c) => c.status === "ok" && c.ms! > 0)).toBe(true);
    expect(report.candidates.filter((c) => c.isDefault).map((c) => c.constants)).toEqual([{ BLOCK: 256, ITEMS: 4 }]);
    const [best] = report.best;
    expect(best!.defaultConstants).toEqual({ BLOCK: 256, ITEMS: 4 });
    expect(best!.ms).toBe(Math.min(...report.candidates.map((c) => c.ms!)));
    expect(best!.defaultSlowdown).toBeCloseTo(best!.defaultMs! / best!.ms, 12);
    expect(result.stdout).toMatch(/^kernel +shape +fastest +ms +GB\/s +fixed choice/);
  });
});
