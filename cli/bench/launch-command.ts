/**
 * `tskernel bench launch` as the CLI runs it: opens each backend in turn (CUDA first), compiles the
 * benchmark's examples for it, runs bench/launch.ts's measurement, joins PyTorch's per-op figures from
 * bench/torch-launch.py's JSON when given one (CUDA), prints the report on stdout (progress on stderr) and
 * writes the JSON and the chart. Exit status 1 when a backend is missing or an output fails its float64 check.
 */

import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "../../compiler/index.ts";
import type { BackendName } from "../../runtime/device.ts";
import { targetFor } from "../../runtime/matmul/candidates.ts";
import { openDevice } from "../open-device.ts";
import { benchLaunch, formatLaunchReport, launchBenchFiles, launchChartSvg, type LaunchBenchReport, type TorchLaunchResult } from "./launch.ts";

export interface BenchLaunchOptions {
  readonly backends: readonly (BackendName | "auto")[];
  /** "gpu" or "small" shapes; default gpu on a GPU backend, small on the CPU. */
  readonly scale?: "gpu" | "small";
  readonly burst?: number;
  readonly runs?: number;
  readonly json?: string;
  readonly chart?: string;
  /** bench/torch-launch.py's JSON. */
  readonly torch?: string;
  readonly workers?: number;
}

interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export async function benchLaunchCommand(options: BenchLaunchOptions, io: Io): Promise<number> {
  let torch: TorchLaunchResult | undefined;
  if (options.torch) {
    try {
      torch = JSON.parse(fs.readFileSync(options.torch, "utf8")) as TorchLaunchResult;
    } catch (error) {
      io.stderr(`tskernel: cannot read ${options.torch}: ${(error as Error).message}\n`);
      return 1;
    }
  }
  const { compileKernelLibrary } = await import("../../runtime/index.ts");
  const backends = [...options.backends].sort((a, b) => Number(b === "cuda") - Number(a === "cuda"));
  const reports: LaunchBenchReport[] = [];
  for (const backend of backends) {
    const device = await openDevice({ backend, workers: options.workers }, io);
    if (!device) return 1;
    const library = compileKernelLibrary(launchBenchFiles.map((file) => path.join(packageRoot(), file)), [targetFor(device.backend)]);
    const report = await benchLaunch(device, {
      library,
      scale: options.scale ?? (device.backend === "cpu" ? "small" : "gpu"),
      burst: options.burst,
      runs: options.runs,
      onProgress: (message) => io.stderr(`  ${message}\n`),
    });
    reports.push(report);
    io.stdout(`${formatLaunchReport(report, report.backend === "cuda" ? torch : undefined)}\n\n`);
    device.dispose();
  }
  const names = reports.map((r) => `${r.device} (${r.backend})`).join(", ");
  const withTorch = reports.some((r) => r.backend === "cuda") ? torch : undefined;
  if (options.json) fs.writeFileSync(options.json, `${JSON.stringify({ date: new Date().toISOString(), reports, ...(withTorch ? { torch: withTorch } : {}) }, null, 2)}\n`);
  if (options.chart) fs.writeFileSync(options.chart, launchChartSvg(reports, `tskernel launch throughput, ${names}, ${new Date().toISOString().slice(0, 10)}`, withTorch));
  const failed = reports.filter((r) => !r.sequence.pass);
  for (const report of failed) io.stderr(`tskernel: a kernel of the sequence failed its float64 check on ${report.backend}\n`);
  return failed.length > 0 ? 1 : 0;
}
