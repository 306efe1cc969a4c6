/**
 * The command line's start-up (issue 24, "The command line as people use it"): `tskernel --version`,
 * `tskernel --help` and `tskernel check` of one small example, each timed as a whole process (spawn to exit,
 * Node's own start included) over several runs after a warm-up, the way a user or a script meets them. The
 * goals: --help and --version under 150 ms, the one-file check under 1 s.
 * Prints a summary and writes JSON to bench/results/<date>-cli-startup-<machine>.json (or --json FILE).
 * Run with `npm run bench:cli-startup` (`--runs N`, default 15).
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { packageRoot } from "../compiler/index.ts";
import { machineInfo, machineTag, summary } from "./machine.ts";

const root = packageRoot();
const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 15;
const bin = path.join(root, "bin", "tskernel.js");
const commands: { name: string; args: string[]; goalMs: number }[] = [
  { name: "--version", args: ["--version"], goalMs: 150 },
  { name: "--help", args: ["--help"], goalMs: 150 },
  { name: "check examples/matmul-naive.ts", args: ["check", path.join(root, "examples", "matmul-naive.ts")], goalMs: 1000 },
];

function time(args: readonly string[]): number {
  const start = performance.now();
  const run = spawnSync(process.execPath, [bin, ...args], { stdio: "ignore" });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`tskernel ${args.join(" ")} exited with ${run.status}`);
  return ms;
}

const machine = machineInfo();
const nodeAlone = (() => {
  const times: number[] = [];
  spawnSync(process.execPath, ["-e", "0"]);
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    times.push(performance.now() - start);
  }
  return summary(times);
})();
const results = commands.map(({ name, args, goalMs }) => {
  time(args); // warm-up: the file system's cache
  const times = Array.from({ length: runs }, () => time(args));
  return { command: `tskernel ${name}`, goalMs, ms: summary(times), samples: times.map((t) => Number(t.toFixed(1))) };
});
const date = new Date().toISOString().slice(0, 10);
const result = { benchmark: "cli-startup", date, machine, runs, nodeAloneMs: nodeAlone, commands: results, loadAverageAfter: machineInfo().loadAverage };
console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, node ${machine.node}, load ${machine.loadAverage.join(" ")}`);
console.log(`node -e 0: median ${nodeAlone.median} ms`);
for (const r of results) console.log(`${r.command}: median ${r.ms.median} ms (p10 ${r.ms.p10}, p90 ${r.ms.p90}, max ${r.ms.max}; goal < ${r.goalMs} ms)`);
const outFile = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1]! : path.join(root, "bench", "results", `${date}-cli-startup-${machineTag()}.json`);
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
