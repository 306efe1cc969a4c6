/**
 * The memory-bound suite on the CPU backend against plain JavaScript loops doing the same work (issue 12:
 * "each kernel within 2× of a plain JavaScript loop, worker threads allowed"). For each case at its CPU
 * shapes: the plain loop over Float32Arrays on the main thread (what a JavaScript programmer would write:
 * one pass per row for softmax and layer norm, a running sum for the scan; each compiled as a function of its
 * own, freshCopy), then the case through the CPU
 * backend on one thread and on worker threads (one per core), each checked against float64 first and timed
 * as the median of several runs after a warm-up (performance.now, the same inputs for all).
 *
 * Other processes slow a shared machine unevenly, so each case is measured in rounds (`--rounds`, default 7):
 * in each round the three sides take turns, in an order that rotates from round to round, and the round's
 * ratio (the faster CPU side over the plain loop, both measured moments apart) is kept. The table reports the
 * median over the rounds of each side and of the ratio, with the ratio's range, and the machine's load: the
 * 1-minute load average and, per round, the share of the machine's CPU time that other processes took
 * (/proc/stat's busy time less this process's own, over all cores). Writes JSON under bench/results/ with
 * every round. Run with `npm run bench:cpu-kernels` (builds first); `--runs R`, `--rounds K`, `--workers N`,
 * `--kernels a,b` (some cases only), `--tag t` (the file name then ends in `-t`; with `--kernels` and no
 * tag, `-subset`).
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
const rounds = Number(option("--rounds", "7"));
const workers = Number(option("--workers", String(os.cpus().length)));
const only = option("--kernels", "");
const cases = only ? kernelCases.filter((c) => only.split(",").includes(c.id)) : kernelCases;
if (only && cases.length !== only.split(",").length) throw new Error(`--kernels: unknown case in '${only}'; the suite has ${kernelCases.map((c) => c.id).join(", ")}`);
const tagOption = option("--tag", only ? "subset" : "");
const tag = tagOption ? `-${tagOption}` : "";

/** CPU time of the whole machine (all cores), busy and total, in clock ticks; undefined off Linux. */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …: idle and iowait are the idle time.
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - fields[3]! - fields[4]!, total };
  } catch {
    return undefined;
  }
}

/**
 * Runs `measure` and returns, with its result, the share of the machine's CPU time (0 to 1, all cores) that
 * other processes used meanwhile: /proc/stat's busy time less this process's own (process.cpuUsage).
 */
async function withOthersLoad<T>(measure: () => Promise<T>): Promise<{ result: T; others?: number }> {
  const ticksPerSecond = 100; // USER_HZ, 100 on Linux
  const before = machineTicks();
  const ownBefore = process.cpuUsage();
  const result = await measure();
  const own = process.cpuUsage(ownBefore);
  const after = machineTicks();
  if (!before || !after || after.total <= before.total) return { result };
  const ownTicks = ((own.user + own.system) / 1e6) * ticksPerSecond;
  const others = (after.busy - before.busy - ownTicks) / (after.total - before.total);
  return { result, others: Math.min(1, Math.max(0, others)) };
}

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


/**
 * A copy of a plain loop's factory as a function of its own, made from its source. V8 compiles a closure
 * for the arrays and lengths it closes over (as constants: no checks of their type, no reloads of their
 * length or data) only while it is the one closure made from its function literal; the second shape of an
 * operation, or a second case of the same family, would otherwise time a slower loop than the first (the
 * look-back scan's plain loop, made after the scan's from the same literal, ran 2.35 ms against 1.00 ms for
 * the same work). Every plain loop gets the fast form this way.
 */
function freshCopy(factory: PlainLoop): PlainLoop {
  return new Function(`return (${factory.toString()});`)() as PlainLoop;
}

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
    const sides: { device: CpuDevice; set: Awaited<ReturnType<typeof runChecked>>["set"]; steps: ReturnType<typeof launchSteps> }[] = [];
    for (const device of [single, pooled]) {
      instance = kernelCase.build(shape, { library, limits: device.limits, backend: "cpu" });
      const { set, check } = await runChecked(device, instance);
      pass &&= check.pass;
      inputs ??= set.inputs;
      sides.push({ device, set, steps: launchSteps(instance, set.buffers) });
    }
    const launchAll = (side: (typeof sides)[number]) => async () => {
      for (const step of side.steps) await side.device.launch(step.kernel, step.options);
      await side.device.synchronize();
    };
    const plainLoop = freshCopy(plainLoops[kernelCase.family ?? kernelCase.id]!)(inputs!, shape, instance!);
    type Side = "plain" | "oneThread" | "workers";
    const perRound: Record<Side, number[]> = { plain: [], oneThread: [], workers: [] };
    const ratios: number[] = [];
    const othersLoad: (number | null)[] = [];
    const loads: number[] = [];
    const timers: Record<Side, () => Promise<number>> = {
      plain: async () => median(await timeAsync(plainLoop, runs)),
      oneThread: async () => median(await timeAsync(launchAll(sides[0]!), runs)),
      workers: async () => median(await timeAsync(launchAll(sides[1]!), runs)),
    };
    const order: Side[] = ["plain", "oneThread", "workers"];
    for (let round = 0; round < rounds; round++) {
      loads.push(os.loadavg()[0]!);
      const { others } = await withOthersLoad(async () => {
        // Each side goes first in turn, so that none always follows the same one.
        for (let k = 0; k < order.length; k++) {
          const side = order[(round + k) % order.length]!;
          perRound[side].push(await timers[side]());
        }
      });
      othersLoad.push(others ?? null);
      ratios.push(Math.min(perRound.oneThread[round]!, perRound.workers[round]!) / perRound.plain[round]!);
    }
    for (const { device, set } of sides) for (const buffer of set.buffers.values()) release(device, buffer);
    const plain = median(perRound.plain);
    const timings = { oneThread: median(perRound.oneThread), workers: median(perRound.workers) };
    const best = Math.min(timings.oneThread, timings.workers);
    const ratio = { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
    const spread = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values) });
    const measuredOthers = othersLoad.filter((v): v is number => v !== null);
    const row = {
      kernel: kernelCase.id,
      shape: shapeLabel(shape),
      plainMs: plain,
      oneThreadMs: timings.oneThread,
      workersMs: timings.workers,
      workers,
      bestOverPlain: best / plain,
      ratio,
      withinTwo: ratio.median <= 2,
      spreadMs: { plain: spread(perRound.plain), oneThread: spread(perRound.oneThread), workers: spread(perRound.workers) },
      checkPass: pass,
      load1,
      loads,
      othersLoad,
      othersLoadMedian: measuredOthers.length > 0 ? median(measuredOthers) : null,
      rounds: perRound,
      ratios,
    };
    const othersText = measuredOthers.length > 0 ? `, others ${(100 * median(measuredOthers)).toFixed(0)} % of the CPUs` : "";
    rows.push(row);
    console.log(
      `${label.padEnd(22)} plain ${plain.toFixed(2).padStart(7)} ms  1 thread ${timings.oneThread.toFixed(2).padStart(7)} ms  ${workers} threads ${timings.workers.toFixed(2).padStart(7)} ms  ` +
        `best/plain ${ratio.median.toFixed(2)}× (rounds ${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})${ratio.median <= 2 ? "" : "  (above 2×)"}${pass ? "" : "  CHECK FAILED"}  (load ${load1.toFixed(1)}${othersText})`,
    );
  }
}
single.dispose();
pooled.dispose();
const cpu = os.cpus()[0]?.model?.trim() ?? "unknown";
const name = `${new Date().toISOString().slice(0, 10)}-cpu-kernels-${os.cpus().length}x-${cpu.split(" ").slice(0, 2).join("-")}${tag}.json`;
const file = path.join(packageRoot(), "bench", "results", name);
const loadAverage = { before: loadBefore, after: os.loadavg() };
const method =
  "per round: the plain loop, one thread and the worker threads in turn (rotating which goes first), each the median of `runs` timed runs after a warm-up; " +
  "ratio: per round, the faster CPU side over the plain loop; table: medians over the rounds; othersLoad: per round, the share of all CPUs' time that other processes used (/proc/stat less this process)";
fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), host: { cpus: os.cpus().length, cpu, node: process.version }, method, loadAverage, runs, rounds, workers, rows }, null, 2)}\n`);
console.log(`load average (1, 5, 15 min) before ${loadBefore.map((l) => l.toFixed(2)).join(", ")}, after ${loadAverage.after.map((l) => l.toFixed(2)).join(", ")}`);
console.log(`wrote ${file}`);
process.exit(0);
