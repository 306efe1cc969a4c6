/**
 * `tskernel bench launch` on the CPU, as the CLI runs it: every output of the ten-launch sequence passes its
 * float64 check after a run whose launches were not awaited, every figure is a positive time, and the JSON and
 * the chart hold them. A test of the command's work, not of its speed (performance is the benchmark's to show).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { benchLaunchCommand } from "./launch-command.ts";
import type { LaunchBenchReport } from "./launch.ts";

describe("tskernel bench launch", () => {
  it("checks the sequence's outputs against float64 and writes the figures as JSON and a chart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-bench-launch-"));
    const json = path.join(dir, "launch.json");
    const chart = path.join(dir, "launch.svg");
    let stdout = "";
    const status = await benchLaunchCommand({ backends: ["cpu"], burst: 50, runs: 1, json, chart }, { stdout: (t) => (stdout += t), stderr: () => {} });
    expect(status).toBe(0);
    const { reports } = JSON.parse(fs.readFileSync(json, "utf8")) as { reports: LaunchBenchReport[] };
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report!.backend).toBe("cpu");
    const { tiny, sequence } = report!;
    for (const value of [tiny.queuedUs, tiny.notAwaitedUs, tiny.synchronizedUs, tiny.replayedUs, tiny.shortBurst.queuedUs, tiny.onStreamUs, tiny.kernelUs]) expect(value).toBeGreaterThan(0);
    expect(sequence.launches).toBe(10);
    expect(sequence.steps.map((s) => s.name)).toEqual(["layernorm", "sgemm-warptiling", "gelu", "sgemm-warptiling", "saxpy", "softmax", "transpose", "layernorm", "sum (launch 1)", "sum (launch 2)"]);
    for (const step of sequence.steps) expect(step.pass, step.name).toBe(true);
    expect(sequence.sumMs).toBeCloseTo(sequence.steps.reduce((total, s) => total + s.ms, 0), 9);
    expect(sequence.launchedRatio).toBeCloseTo(sequence.launchedMs / sequence.sumMs, 9);
    expect(stdout).toContain("every output checked against float64: pass");
    const svg = fs.readFileSync(chart, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("cpu: launched");
  });
});
