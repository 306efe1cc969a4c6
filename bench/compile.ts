/**
 * Compile-time benchmark (issue: compiler core, "Speed"). Measures on the current machine:
 * - cold: `tskernel build examples/*.ts --target cuda,wgsl` as a fresh process, start-up included;
 * - warm: compiling each example again in a process that has compiled it before (one ts-morph project
 *   reused, as an editor integration or a watch mode would), per kernel specialization.
 * Prints a table and writes JSON to bench/results/<date>-compile-<host>.json (or --json FILE).
 * Run with `npm run bench:compile` after `npm run build`.
 */

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { compileFiles, createProject, packageRoot } from "../compiler/index.ts";
import { median } from "../runtime/device.ts";

const root = packageRoot();
const examplesDir = path.join(root, "examples");
// The examples that build for WGSL too (not those that call threadFence(), TSK3050 there, or use matrix
// operations, TSK3048: WebGPU has neither).
const examples = fs
  .readdirSync(examplesDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => path.join(examplesDir, f))
  .filter((f) => !/\bthreadFence\(|\b(wg)?mma\(/.test(fs.readFileSync(f, "utf8")))
  .sort();

function measureCold(runs: number): number[] {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-bench-"));
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    execFileSync(process.execPath, [path.join(root, "bin", "tskernel.js"), "build", ...examples, "--target", "cuda,wgsl", "--out", out], { stdio: "pipe" });
    times.push(performance.now() - start);
  }
  fs.rmSync(out, { recursive: true, force: true });
  return times;
}

function measureWarm(rounds: number): { perKernelMs: number[]; kernels: number } {
  const project = createProject();
  let kernels = 0;
  for (const file of examples) {
    const result = compileFiles([file], { targets: ["cuda", "wgsl"], project });
    if (!result.ok) throw new Error(`example ${file} does not compile`);
    kernels += result.files[0]!.specializations.length;
  }
  const perKernelMs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    for (const file of examples) compileFiles([file], { targets: ["cuda", "wgsl"], project });
    perKernelMs.push((performance.now() - start) / kernels);
  }
  return { perKernelMs, kernels };
}

/** The machine in a file name: core count and processor, e.g. "2x-AMD-EPYC". */
function machineTag(): string {
  const model = (os.cpus()[0]?.model ?? "cpu").trim().split(/\s+/).slice(0, 2).join("-");
  return `${os.cpus().length}x-${model}`.replace(/[^\w.-]/g, "_");
}

const args = process.argv.slice(2);
const jsonIndex = args.indexOf("--json");
const cold = measureCold(5);
const warm = measureWarm(10);
const date = new Date().toISOString().slice(0, 10);
const result = {
  benchmark: "compile",
  date,
  machine: { host: os.hostname(), cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
  examples: examples.map((f) => path.relative(root, f)),
  kernelSpecializations: warm.kernels,
  coldBuildAllExamplesMs: { median: median(cold), runs: cold.map((t) => Math.round(t)) },
  warmPerKernelMs: { median: median(warm.perKernelMs), runs: warm.perKernelMs.map((t) => Number(t.toFixed(2))) },
  goals: { coldBuildAllExamplesMs: 2000, warmPerKernelMs: 20 },
};
console.log(`machine: ${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memoryGiB} GiB, node ${result.machine.node}`);
console.log(`cold build of ${examples.length} example files (${warm.kernels} kernel specializations, cuda+wgsl): median ${result.coldBuildAllExamplesMs.median.toFixed(0)} ms (goal < 2000 ms)`);
console.log(`warm compile per kernel specialization: median ${result.warmPerKernelMs.median.toFixed(2)} ms (goal < 20 ms)`);
const outFile = jsonIndex >= 0 ? args[jsonIndex + 1]! : path.join(root, "bench", "results", `${date}-compile-${machineTag()}.json`);
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
