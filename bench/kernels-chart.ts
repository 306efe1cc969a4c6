/**
 * Redraws the memory-bound suite's chart from a `tskernel bench kernels --json` file (or gpu-run's
 * kernels-bench.json): `node dist/bench/kernels-chart.js <in.json> <out.svg> [--roofline own|cuda] [--title T]`.
 * With `--roofline cuda` every backend's bars are a percentage of the CUDA copy of the same run. With
 * `--torch`, the input is torch-reference.py's JSON instead: ours, PyTorch's and Triton's from that process,
 * against the copy measured there.
 */

import fs from "node:fs";
import type { KernelBenchReport } from "../cli/kernels-bench/bench.ts";
import { kernelChartSvg } from "../cli/kernels-bench/report.ts";
import { readTorchResults, reportFromTorch } from "../cli/kernels-bench/torch.ts";

const [input, output, ...rest] = process.argv.slice(2);
const option = (name: string) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : undefined;
};
if (!input || !output) {
  console.error("usage: node dist/bench/kernels-chart.js <in.json> <out.svg> [--roofline own|cuda] [--title T] [--torch]");
  process.exit(1);
}
const reports = rest.includes("--torch") ? [reportFromTorch(readTorchResults(input))] : (JSON.parse(fs.readFileSync(input, "utf8")) as { reports: KernelBenchReport[] }).reports;
const roofline = option("--roofline") === "cuda" ? "cuda" : "own";
const title = option("--title") ?? `tskernel memory-bound kernels, ${reports.map((r) => `${r.device} (${r.backend})`).join(", ")}`;
fs.writeFileSync(output, kernelChartSvg(reports, title, { roofline }));
console.log(`wrote ${output}`);
