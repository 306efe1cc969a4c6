/**
 * The memory-bound suite on the CPU backend against plain JavaScript loops doing the same work (issue 12:
 * "each kernel within 2× of a plain JavaScript loop, worker threads allowed"). For each case at its CPU
 * shapes: the plain loop over Float32Arrays on the main thread (what a JavaScript programmer would write:
 * one pass per row for softmax and layer norm, a running sum for the scan), then the case through the CPU
 * backend on one thread and on worker threads (one per core), each checked against float64 first and timed
 * as the median of several runs after a warm-up (performance.now, the same inputs for all). Other processes
 * slow a 2-core machine unevenly, so each case is measured in several rounds (`--rounds`, default 3), the
 * three sides taking turns within each round, and the medians over the rounds are reported, each round's
 * figures kept in the JSON with the 1-minute load average when the case started. Writes JSON under
 * bench/results/. Run with `npm run bench:cpu-kernels` (builds first); `--runs R`, `--rounds K`, `--workers N`,
 * `--kernels a,b` (some cases only; the file name then ends in `-` and `--tag`'s value, default `subset`).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { packageRoot } from "../compiler/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { median } from "../runtime/device.ts";
import { timeAsync } from "./timing.ts";
import { compileKernelLibrary } from "../runtime/kernels.ts";
import { launchSteps, release, runChecked } from "../cli/kernels-bench/bench.ts";
import { kernelCases, shapeLabel, suiteFiles, type CaseInstance, type InputArray, type Shape } from "../cli/kernels-bench/cases.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : fallback;
};
const runs = Number(option("--runs", "7"));
const rounds = Number(option("--rounds", "3"));
const workers = Number(option("--workers", String(os.cpus().length)));
const only = option("--kernels", "");
const cases = only ? kernelCases.filter((c) => only.split(",").includes(c.id)) : kernelCases;
if (only && cases.length !== only.split(",").length) throw new Error(`--kernels: unknown case in '${only}'; the suite has ${kernelCases.map((c) => c.id).join(", ")}`);
const tag = only ? `-${option("--tag", "subset")}` : "";

/**
 * The plain loop of each operation (a case's `family`, else its id), on the case's own input arrays; returns
 * what it wrote, for the check.
 */
type PlainLoop = (inputs: ReadonlyMap<string, InputArray>, shape: Shape, instance: CaseInstance) => () => void;
const plainLoops: Record<string, PlainLoop> = {
  saxpy: (inputs, [n], instance) => {
    const x = inputs.get("x")!;
    const y = Float32Array.from(inputs.get("y")!);
    const a = instance.parameters.a!;
    return () => {
      for (let i = 0; i < n!; i++) y[i] = a * x[i]! + y[i]!;
    };
  },
  gelu: (inputs, [n]) => {
    const x = inputs.get("x")!;
    const out = new Float32Array(n!);
    const c = Math.sqrt(2 / Math.PI);
    return () => {
      for (let i = 0; i < n!; i++) {
        const v = x[i]!;
        out[i] = 0.5 * v * (1 + Math.tanh(c * (v + 0.044715 * v * v * v)));
      }
    };
  },
  transpose: (inputs, [rows, cols]) => {
    const x = inputs.get("x")!;
    const out = new Float32Array(rows! * cols!);
    return () => {
      for (let r = 0; r < rows!; r++) for (let c = 0; c < cols!; c++) out[c * rows! + r] = x[r * cols! + c]!;
    };
  },
  sum: (inputs, [n]) => {
    const x = inputs.get("x")!;
    let total = 0;
    return () => {
      let s = 0;
      for (let i = 0; i < n!; i++) s += x[i]!;
      total = s;
      void total;
    };
  },
  softmax: (inputs, [rows, cols]) => {
    const x = inputs.get("x")!;
    const out = new Float32Array(rows! * cols!);
    return () => {
      for (let r = 0; r < rows!; r++) {
        const base = r * cols!;
        let max = -Infinity;
        for (let c = 0; c < cols!; c++) max = Math.max(max, x[base + c]!);
        let total = 0;
        for (let c = 0; c < cols!; c++) total += out[base + c] = Math.exp(x[base + c]! - max);
        const scale = 1 / total;
        for (let c = 0; c < cols!; c++) out[base + c]! *= scale;
      }
    };
  },
  layernorm: (inputs, [rows, cols], instance) => {
    const x = inputs.get("x")!;
    const gamma = inputs.get("gamma")!;
    const beta = inputs.get("beta")!;
    const eps = instance.parameters.eps!;
    const out = new Float32Array(rows! * cols!);
    return () => {
      for (let r = 0; r < rows!; r++) {
        const base = r * cols!;
        let mean = 0;
        for (let c = 0; c < cols!; c++) mean += x[base + c]!;
        mean /= cols!;
        let variance = 0;
        for (let c = 0; c < cols!; c++) variance += (x[base + c]! - mean) ** 2;
        const rstd = 1 / Math.sqrt(variance / cols! + eps);
        for (let c = 0; c < cols!; c++) out[base + c] = (x[base + c]! - mean) * rstd * gamma[c]! + beta[c]!;
      }
    };
  },
  histogram: (inputs, [n]) => {
    const x = inputs.get("x")!;
    const hist = new Uint32Array(256);
    return () => {
      hist.fill(0);
      for (let i = 0; i < n!; i++) hist[x[i]! & 255]!++;
    };
  },
  scan: (inputs, [n]) => {
    const x = inputs.get("x")!;
    const out = new Float32Array(n!);
    return () => {
      let running = 0;
      for (let i = 0; i < n!; i++) {
        out[i] = running;
        running += x[i]!;
      }
    };
  },
};


// Other processes on the machine slow both sides unevenly: the load is recorded with the results.
const loadBefore = os.loadavg();
const library = compileKernelLibrary(suiteFiles.map((f) => path.join(packageRoot(), f)), ["js"]);
const single = new CpuDevice();
const pooled = new CpuDevice({ workers });
const rows: Record<string, unknown>[] = [];
for (const kernelCase of cases) {
  for (const shape of kernelCase.cpuShapes) {
    const label = `${kernelCase.id} ${shapeLabel(shape)}`;
    const load1 = os.loadavg()[0]!;
    let pass = true;
    let inputs: ReadonlyMap<string, InputArray> | undefined;
    let instance: CaseInstance | undefined;
    const sides = [];
    for (const [name, device] of [["oneThread", single], ["workers", pooled]] as const) {
      instance = kernelCase.build(shape, { library, limits: device.limits, backend: "cpu" });
      const { set, check } = await runChecked(device, instance);
      pass &&= check.pass;
      inputs ??= set.inputs;
      sides.push({ name, device, set, steps: launchSteps(instance, set.buffers) });
    }
    const plainLoop = plainLoops[kernelCase.family ?? kernelCase.id]!(inputs!, shape, instance!);
    const perRound: Record<"plain" | "oneThread" | "workers", number[]> = { plain: [], oneThread: [], workers: [] };
    for (let round = 0; round < rounds; round++) {
      for (const { name, device, steps } of sides) {
        perRound[name].push(median(await timeAsync(async () => {
          for (const step of steps) await device.launch(step.kernel, step.options);
        }, runs)));
      }
      perRound.plain.push(median(await timeAsync(plainLoop, runs)));
    }
    for (const { device, set } of sides) for (const buffer of set.buffers.values()) release(device, buffer);
    const plain = median(perRound.plain);
    const timings = { oneThread: median(perRound.oneThread), workers: median(perRound.workers) };
    const best = Math.min(timings.oneThread, timings.workers);
    const row = { kernel: kernelCase.id, shape: shapeLabel(shape), plainMs: plain, oneThreadMs: timings.oneThread, workersMs: timings.workers, workers, bestOverPlain: best / plain, withinTwo: best / plain <= 2, checkPass: pass, load1, rounds: perRound };
    rows.push(row);
    console.log(`${label.padEnd(22)} plain ${plain.toFixed(2).padStart(8)} ms   1 thread ${timings.oneThread.toFixed(2).padStart(8)} ms   ${workers} workers ${timings.workers.toFixed(2).padStart(8)} ms   best/plain ${(best / plain).toFixed(2)}×${best / plain <= 2 ? "" : "  (above 2×)"}${pass ? "" : "  CHECK FAILED"}  (load ${load1.toFixed(1)})`);
  }
}
single.dispose();
pooled.dispose();
const cpu = os.cpus()[0]?.model?.trim() ?? "unknown";
const name = `${new Date().toISOString().slice(0, 10)}-cpu-kernels-${os.cpus().length}x-${cpu.split(" ").slice(0, 2).join("-")}${tag}.json`;
const file = path.join(packageRoot(), "bench", "results", name);
const loadAverage = { before: loadBefore, after: os.loadavg() };
fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), host: { cpus: os.cpus().length, cpu, node: process.version }, loadAverage, runs, rounds, workers, rows }, null, 2)}\n`);
console.log(`load average (1, 5, 15 min) before ${loadBefore.map((l) => l.toFixed(2)).join(", ")}, after ${loadAverage.after.map((l) => l.toFixed(2)).join(", ")}`);
console.log(`wrote ${file}`);
process.exit(0);
