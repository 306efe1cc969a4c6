/**
 * The machine a benchmark ran on, for its JSON and its file name: core count and processor ("2x-AMD-EPYC"),
 * memory, Node's version, and the load averages at the start (the CI machine is shared, so a figure is read
 * with the load it was taken under).
 */

import os from "node:os";

export function machineTag(): string {
  const model = (os.cpus()[0]?.model ?? "cpu").trim().split(/\s+/).slice(0, 2).join("-");
  return `${os.cpus().length}x-${model}`.replace(/[^\w.-]/g, "_");
}

export function machineInfo(): { cpus: number; cpuModel: string | undefined; memoryGiB: number; node: string; loadAverage: number[] } {
  return { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))) };
}

/** Median, 10th and 90th percentiles, min and max of some timings, rounded to 0.1 ms. */
export function summary(times: readonly number[]): { median: number; p10: number; p90: number; min: number; max: number; runs: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const round = (t: number) => Number(t.toFixed(1));
  const middle = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  return { median: round(middle), p10: round(at(0.1)), p90: round(at(0.9)), min: round(sorted[0]!), max: round(sorted.at(-1)!), runs: sorted.length };
}
