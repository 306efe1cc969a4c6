/**
 * `tskernel bench kernels` as the CLI runs it (the CLI parses the options and calls this): opens each
 * backend in turn (CUDA first), compiles the suite's examples for it, runs the bench, joins PyTorch's
 * figures from torch-reference.py's output when given one, prints the table on stdout (progress on stderr),
 * and writes the JSON and the chart. Exit status 1 when a backend is missing, an option is malformed, or a
 * kernel fails its float64 check.
 */

import fs from "node:fs";
import path from "node:path";
import type { BackendName } from "../../runtime/device.ts";
import { packageRoot } from "../../compiler/index.ts";
import { targetFor } from "../../runtime/matmul/candidates.ts";
import { openDevice } from "../open-device.ts";
import { benchKernels, type KernelBenchReport } from "./bench.ts";
import { resolveCases, suiteFiles, type KernelCase, type Shape } from "./cases.ts";
import { kernelChartSvg, formatKernelTable } from "./report.ts";
import { joinTorch, readTorchResults } from "./torch.ts";

export interface BenchKernelsOptions {
  readonly backends: readonly (BackendName | "auto")[];
  /** Shapes as the command line spells them: `N` for the 1-D kernels, `RxC` for the 2-D ones. */
  readonly sizes?: string;
  /** Case ids to run (default: all). */
  readonly kernels?: string;
  readonly runs?: number;
  readonly json?: string;
  readonly chart?: string;
  /** Where to write the roofline chart (roofline.ts). */
  readonly roofline?: string;
  readonly workers?: number;
  /** torch-reference.py's JSON, to join with the CUDA rows. */
  readonly torch?: string;
}

interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** `1048576,512x1024` → [[1048576], [512, 1024]]; a message for anything else. */
export function parseShapes(text: string): Shape[] | string {
  const shapes: Shape[] = [];
  for (const item of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const parts = item.split(/[x×]/).map(Number);
    if (parts.length > 2 || !parts.every((p) => Number.isInteger(p) && p > 0)) return `'${item}' is not a size: write N for the 1-D kernels or RxC for the 2-D ones`;
    shapes.push(parts);
  }
  return shapes.length > 0 ? shapes : "expected comma-separated sizes (N or RxC)";
}

export function selectCases(text: string | undefined): KernelCase[] | string {
  const cases = resolveCases(text);
  return typeof cases === "string" ? cases : [...cases];
}

export async function benchKernelsCommand(options: BenchKernelsOptions, io: Io): Promise<number> {
  const cases = selectCases(options.kernels);
  const shapes = options.sizes === undefined ? undefined : parseShapes(options.sizes);
  for (const problem of [cases, shapes]) {
    if (typeof problem === "string") {
      io.stderr(`tskernel: ${problem}\n`);
      return 1;
    }
  }
  const byDims = (kernelCase: KernelCase) => (shapes as Shape[]).filter((s) => s.length === kernelCase.dims);
  let torch: ReturnType<typeof readTorchResults> | undefined;
  if (options.torch) {
    try {
      torch = readTorchResults(options.torch);
    } catch (error) {
      io.stderr(`tskernel: cannot read ${options.torch}: ${(error as Error).message}\n`);
      return 1;
    }
  }
  const { compileKernelLibrary } = await import("../../runtime/index.ts");
  const backends = [...options.backends].sort((a, b) => Number(b === "cuda") - Number(a === "cuda"));
  const reports: KernelBenchReport[] = [];
  for (const backend of backends) {
    const device = await openDevice({ backend, workers: options.workers }, io);
    if (!device) return 1;
    const library = compileKernelLibrary(suiteFiles.map((file) => path.join(packageRoot(), file)), [targetFor(device.backend)]);
    let report;
    try {
      report = await benchKernels(device, {
        library,
        cases: cases as KernelCase[],
        shapes: shapes ? byDims : undefined,
        runs: options.runs,
        onProgress: (message) => io.stderr(`  ${message}\n`),
      });
    } catch (error) {
      // The copy that every row is compared with could not run (a device out of memory, say).
      io.stderr(`tskernel: bench kernels on ${device.backend} failed: ${(error as Error).message}\n`);
      return 1;
    }
    if (torch) report = joinTorch(report, torch);
    reports.push(report);
    device.dispose();
  }
  io.stdout(`${formatKernelTable(reports)}\n`);
  const names = reports.map((r) => (reports.length > 1 ? `${r.device} (${r.backend})` : r.device)).join(", ");
  if (options.json) fs.writeFileSync(options.json, `${JSON.stringify({ date: new Date().toISOString(), reports }, null, 2)}\n`);
  if (options.chart) fs.writeFileSync(options.chart, kernelChartSvg(reports, `tskernel memory-bound kernels, ${names}, ${new Date().toISOString().slice(0, 10)}`));
  if (options.roofline) {
    const { IntensityEstimates, kernelSuitePoints, nominalPeakGflops, rooflineSvg } = await import("../bench/roofline.ts");
    const estimates = new IntensityEstimates().ofEntries(suiteFiles.map((file) => path.join(packageRoot(), file)));
    const { points, omitted } = kernelSuitePoints(reports.flatMap((r) => r.rows), estimates);
    const roofs = reports.map((r) => {
      const nominal = nominalPeakGflops(r.device);
      return { backend: r.backend, device: r.device, bandwidth: r.copy?.gbps, peak: nominal === undefined ? undefined : { gflops: nominal, source: "nominal" as const } };
    });
    fs.writeFileSync(options.roofline, rooflineSvg(points, roofs, `tskernel memory-bound kernels on the roofline, ${names}, ${new Date().toISOString().slice(0, 10)}`, omitted));
  }
  const failed = reports.flatMap((r) => r.rows).filter((r) => r.check && !r.check.pass);
  for (const row of failed) io.stderr(`tskernel: ${row.kernel} ${row.label} on ${row.backend} failed its float64 check\n`);
  return failed.length > 0 ? 1 : 0;
}

export interface TuneKernelsOptions {
  readonly backend: BackendName | "auto";
  readonly sizes?: string;
  readonly kernels?: string;
  readonly runs?: number;
  readonly json?: string;
}

/** `tskernel tune kernels`: the search of tune.ts on one backend; the table of fastest and fixed choices on stdout. */
export async function tuneKernelsCommand(options: TuneKernelsOptions, io: Io): Promise<number> {
  const cases = selectCases(options.kernels);
  const shapes = options.sizes === undefined ? undefined : parseShapes(options.sizes);
  for (const problem of [cases, shapes]) {
    if (typeof problem === "string") {
      io.stderr(`tskernel: ${problem}\n`);
      return 1;
    }
  }
  const { compileKernelLibrary } = await import("../../runtime/index.ts");
  const { tuneKernels, formatTuneKernelsTable } = await import("./tune.ts");
  const device = await openDevice({ backend: options.backend }, io);
  if (!device) return 1;
  const library = compileKernelLibrary(suiteFiles.map((file) => path.join(packageRoot(), file)), [targetFor(device.backend)]);
  const report = await tuneKernels(device, {
    library,
    cases: cases as KernelCase[],
    shapes: shapes ? (c) => (shapes as Shape[]).filter((s) => s.length === c.dims) : undefined,
    runs: options.runs,
    onProgress: (line) => io.stderr(`${line}\n`),
  });
  device.dispose();
  io.stdout(`${formatTuneKernelsTable(report)}\n`);
  if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
  const wrong = report.candidates.filter((c) => c.status === "wrong");
  for (const c of wrong) io.stderr(`tskernel: ${c.kernel} ${c.label} with ${Object.entries(c.constants).map(([k, v]) => `${k}=${v}`).join(" ")} failed its float64 check\n`);
  return report.best.length > 0 && wrong.length === 0 ? 0 : 1;
}
