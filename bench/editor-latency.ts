/**
 * The editor plugin's latency (issue 24, "In the editor"): how long after an edit of the largest example an
 * editor gets the file's semantic diagnostics from tsserver, with tskernel's among them. A real tsserver
 * (this checkout's TypeScript) serves a project that installs tskernel (a link to this checkout, so dist/ must
 * be built) and names `tskernel/ts-plugin` in its tsconfig.json; the largest file of examples/ is opened, the
 * compiler's first (cold) compile is left out, then each edit (alternately adding and removing a space in the
 * kernel's body, never saved) is followed at once by a `semanticDiagnosticsSync` request, and the time from
 * sending the edit to the answer is one sample. The same is measured with the plugin compiling in tsserver's
 * thread (`"worker": false`) and on a project without the plugin (what tsserver alone takes), in interleaved
 * rounds; the plugin's own compile times are read from tsserver's log.
 * Prints a summary and writes JSON to bench/results/<date>-editor-latency-<machine>.json (or --json FILE).
 * Run with `npm run bench:editor` (`--edits N` per round, default 40; `--file F` to edit another kernel file).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { packageRoot } from "../compiler/index.ts";
import { TsServer } from "../tests/tools/tsserver.ts";
import { machineInfo, machineTag, summary } from "./machine.ts";

const root = packageRoot();
const edits = Number(process.argv[process.argv.indexOf("--edits") + 1]) || 40;
const examples = fs.readdirSync(path.join(root, "examples")).filter((f) => f.endsWith(".ts")).map((f) => path.join(root, "examples", f));
const fileArgument = process.argv.includes("--file") ? path.resolve(process.argv[process.argv.indexOf("--file") + 1]!) : undefined;
const largest = fileArgument ?? examples.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0]!;
const text = fs.readFileSync(largest, "utf8");
// An edit inside a kernel: a space after the first `syncThreads();` (every ladder kernel has one), so the
// edited text is a new version that still compiles.
const anchor = text.indexOf("syncThreads();");
if (anchor < 0) throw new Error(`${largest} has no syncThreads(); pick another place to edit`);
const before = text.slice(0, anchor + "syncThreads();".length);
const line = before.split("\n").length;
const offset = before.length - before.lastIndexOf("\n");

/** `plugin`: the plugin's entry in tsconfig.json (`worker` true or false), or undefined for none. */
async function measure(plugin: { worker: boolean } | undefined): Promise<{ latencies: number[]; compileMs: number[]; diagnostics: number }> {
  const withPlugin = plugin !== undefined;
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-editor-bench-"));
  fs.mkdirSync(path.join(project, "node_modules"));
  fs.symlinkSync(root, path.join(project, "node_modules", "tskernel"), "dir");
  fs.writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "bench", private: true, type: "module" })}\n`);
  const plugins = plugin ? [{ name: "tskernel/ts-plugin", worker: plugin.worker }] : [];
  fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "nodenext", noEmit: true, plugins }, include: ["src"] }));
  fs.mkdirSync(path.join(project, "src"));
  const file = path.join(project, "src", path.basename(largest));
  fs.writeFileSync(file, text);
  const log = path.join(project, "tsserver.log");
  const server = new TsServer(path.join(root, "node_modules", "typescript", "lib", "tsserver.js"), ["--pluginProbeLocations", project, "--logVerbosity", "normal", "--logFile", log], project);
  try {
    server.open(file, text, project);
    if (withPlugin) await server.nextEvent("projectsUpdatedInBackground", 0);
    let diagnostics = (await server.semanticDiagnostics(file)).filter((d) => d.source === "tskernel").length;
    const compiledBefore = compileTimes(log).length;
    const latencies: number[] = [];
    for (let i = 0; i < edits; i++) {
      const start = performance.now();
      if (i % 2 === 0) server.edit(file, { line, offset }, { line, offset }, " ");
      else server.edit(file, { line, offset }, { line, offset: offset + 1 }, "");
      diagnostics = (await server.semanticDiagnostics(file)).filter((d) => d.source === "tskernel").length;
      latencies.push(performance.now() - start);
    }
    return { latencies, compileMs: compileTimes(log).slice(compiledBefore), diagnostics };
  } finally {
    await server.close();
    fs.rmSync(project, { recursive: true, force: true });
  }
}

/** The plugin's compile times, in order, from tsserver's log. */
function compileTimes(log: string): number[] {
  return [...fs.readFileSync(log, "utf8").matchAll(/tskernel: compiled \S+ \(version [^)]*\) in ([\d.]+) ms/g)].map((m) => Number(m[1]));
}

const machine = machineInfo();
// Interleaved rounds of the three, so that the machine's load weighs on each alike.
const rounds = 2;
type Measured = Awaited<ReturnType<typeof measure>>;
const runs = { worker: [] as Measured[], thread: [] as Measured[], none: [] as Measured[] };
for (let round = 0; round < rounds; round++) {
  runs.worker.push(await measure({ worker: true }));
  runs.thread.push(await measure({ worker: false }));
  runs.none.push(await measure(undefined));
}
const merge = (list: Measured[]) => ({ latencies: list.flatMap((r) => r.latencies), compileMs: list.flatMap((r) => r.compileMs), diagnostics: list[0]!.diagnostics });
const withPlugin = merge(runs.worker);
const inThread = merge(runs.thread);
const withoutPlugin = merge(runs.none);
for (const [name, run] of [["worker", withPlugin], ["thread", inThread]] as const) {
  if (run.compileMs.length !== edits * rounds) throw new Error(`the plugin (${name}) compiled ${run.compileMs.length} times for ${edits * rounds} edits`);
}
const date = new Date().toISOString().slice(0, 10);
const result = {
  benchmark: "editor-latency",
  date,
  machine,
  typescript: (JSON.parse(fs.readFileSync(path.join(root, "node_modules", "typescript", "package.json"), "utf8")) as { version: string }).version,
  file: path.relative(root, largest),
  edits: edits * rounds,
  rounds,
  tskernelDiagnostics: withPlugin.diagnostics,
  editToDiagnosticsMs: summary(withPlugin.latencies),
  editToDiagnosticsCompilingInTsserversThreadMs: summary(inThread.latencies),
  editToDiagnosticsWithoutPluginMs: summary(withoutPlugin.latencies),
  pluginCompileMs: summary(withPlugin.compileMs),
  pluginCompileInTsserversThreadMs: summary(inThread.compileMs),
  loadAverageAfter: machineInfo().loadAverage,
  goal: { editToDiagnosticsMs: 200 },
  samples: {
    withPlugin: withPlugin.latencies.map((t) => Number(t.toFixed(1))),
    compilingInTsserversThread: inThread.latencies.map((t) => Number(t.toFixed(1))),
    withoutPlugin: withoutPlugin.latencies.map((t) => Number(t.toFixed(1))),
  },
};
const show = (s: ReturnType<typeof summary>) => `median ${s.median} ms (p10 ${s.p10}, p90 ${s.p90}, max ${s.max})`;
console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, node ${machine.node}, load ${machine.loadAverage.join(" ")}`);
console.log(`${result.file}, ${result.edits} edits: edit → semantic diagnostics ${show(result.editToDiagnosticsMs)} (goal < 200 ms)`);
console.log(`  the plugin's compile (in its worker): ${show(result.pluginCompileMs)}`);
console.log(`  compiling in tsserver's thread instead: ${show(result.editToDiagnosticsCompilingInTsserversThreadMs)}; its compile ${show(result.pluginCompileInTsserversThreadMs)}`);
console.log(`  without the plugin: ${show(result.editToDiagnosticsWithoutPluginMs)}`);
const outFile = process.argv.includes("--json") ? process.argv[process.argv.indexOf("--json") + 1]! : path.join(root, "bench", "results", `${date}-editor-latency-${machineTag()}.json`);
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
