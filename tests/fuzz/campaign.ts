/**
 * A robustness campaign: makes inputs from a seed (mutations of the examples and codegen cases, and
 * generated deep and large programs), judges each (oracle.ts) in a child process that is killed and
 * restarted when an input runs past the time limit, sends a sample of the accepted outputs to nvcc
 * (`-arch=sm_90`) and Dawn, runs a sample through the real `bin/tskernel.js`, and counts everything. Every
 * failure is written to the output folder as the input text and its reason, to become a regression test.
 *
 * Input i of seed s is a pure function of (s, i), so any failure replays with `--seed s --only i`.
 */

import { fork, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { compileCudaAsync, nvccAvailable, type CudaCompileResult } from "../tools/nvcc.ts";
import { validateWgsl } from "../tools/dawn.ts";
import { generateLarge } from "./generate-large.ts";
import { mutate } from "./mutate.ts";
import { Oracle, type OracleResult } from "./oracle.ts";
import { inputRng } from "./rng.ts";

/** An input slower than this is a failure (the issue's limit). */
export const timeLimitMs = 10_000;

export interface Corpus {
  readonly names: readonly string[];
  readonly texts: readonly string[];
}

/** The seeds: every example, every codegen case (error cases too) and the fuzz regressions. */
export function loadCorpus(root: string): Corpus {
  const files: string[] = [];
  const add = (dir: string, filter: (name: string) => string | undefined) => {
    if (!fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir).sort()) {
      const file = filter(name);
      if (file && fs.existsSync(file)) files.push(file);
    }
  };
  add(path.join(root, "examples"), (n) => (n.endsWith(".ts") ? path.join(root, "examples", n) : undefined));
  add(path.join(root, "codegen-tests"), (n) => path.join(root, "codegen-tests", n, "kernel.ts"));
  add(path.join(root, "codegen-tests", "errors"), (n) => path.join(root, "codegen-tests", "errors", n, "kernel.ts"));
  add(path.join(root, "tests", "fuzz", "regressions"), (n) => (n.endsWith(".ts") ? path.join(root, "tests", "fuzz", "regressions", n) : undefined));
  return { names: files.map((f) => path.relative(root, f)), texts: files.map((f) => fs.readFileSync(f, "utf8")) };
}

export interface Input {
  readonly index: number;
  readonly text: string;
  /** `mutate <seed file> [mutations]` or `generate <generator>`. */
  readonly origin: string;
}

/** Input `index` of campaign `seed`: three quarters mutations of a seed, one quarter generated programs. */
export function makeInput(seed: number, index: number, corpus: Corpus): Input {
  const rng = inputRng(seed, index);
  if (rng.chance(0.75)) {
    const which = rng.int(corpus.texts.length);
    const { text, mutations } = mutate(corpus.texts[which]!, rng, corpus.texts);
    return { index, text, origin: `mutate ${corpus.names[which]} [${mutations.join(", ")}]` };
  }
  const { name, text } = generateLarge(rng);
  return { index, text, origin: `generate ${name}` };
}

// ---------------------------------------------------------------------------------------------------------
// Judges: in this process (tests), or in a child process that can be killed (long campaigns)

interface Judge {
  judge(text: string, limitMs: number): Promise<OracleResult | "timeout">;
  close(): void;
}

class InProcessJudge implements Judge {
  private readonly oracle: Oracle;
  constructor(dir: string) {
    this.oracle = new Oracle(dir);
  }
  async judge(text: string): Promise<OracleResult> {
    return this.oracle.judge(text);
  }
  close(): void {}
}

/** The child's side: `node fuzz.mjs --child <dir>` answers `{ text }` messages with oracle results. */
export function runChild(dir: string): void {
  const oracle = new Oracle(dir);
  oracle.judge('import { kernel } from "tskernel";\nexport const k = kernel((out: Float32Array) => { out[0] = 1; });\n');
  process.on("message", (message: { id: number; text: string }) => {
    const result = oracle.judge(message.text);
    process.send!({ id: message.id, result });
  });
  process.send!({ ready: true });
}

class ChildJudge implements Judge {
  private child?: ChildProcess;
  private ready?: Promise<void>;
  private nextId = 0;

  constructor(
    private readonly script: string,
    private readonly dir: string,
  ) {}

  private start(): void {
    const child = fork(this.script, ["--child", this.dir], { stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "advanced" });
    child.stderr?.resume();
    this.child = child;
    this.ready = new Promise((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (code) => reject(new Error(`the fuzz child exited (${code}) before it was ready`)));
    });
  }

  async judge(text: string, limitMs: number): Promise<OracleResult | "timeout"> {
    if (!this.child) this.start();
    await this.ready;
    const child = this.child!;
    const id = this.nextId++;
    return new Promise((resolve) => {
      const done = (value: OracleResult | "timeout") => {
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(value);
      };
      const onMessage = (message: { id?: number; result?: OracleResult }) => {
        if (message.id === id) done(message.result!);
      };
      // A child that dies on an input (out of memory, a native crash) is a failure of that input.
      const onExit = (code: number | null, signal: string | null) => {
        this.child = undefined;
        done({ verdict: "failure", reason: `the compiler process died (exit ${code}, signal ${signal})`, codes: [], ms: 0 });
      };
      const timer = setTimeout(() => {
        this.kill();
        done("timeout");
      }, limitMs);
      child.on("message", onMessage);
      child.once("exit", onExit);
      child.send({ id, text });
    });
  }

  private kill(): void {
    const child = this.child;
    this.child = undefined;
    child?.removeAllListeners("exit");
    child?.kill("SIGKILL");
  }

  close(): void {
    this.kill();
  }
}

// ---------------------------------------------------------------------------------------------------------
// The campaign

export interface CampaignOptions {
  readonly seed: number;
  /** Stop after this many inputs … */
  readonly count?: number;
  /** … or after this many seconds, whichever comes first. */
  readonly seconds?: number;
  /** Only these input indices (to replay failures). */
  readonly only?: readonly number[];
  readonly root: string;
  /** Where failures are written (default: a temporary folder). */
  readonly outDir?: string;
  /** Fraction of accepted inputs whose CUDA goes to nvcc (default 0.05). */
  readonly nvccRate?: number;
  /** Fraction of accepted inputs whose WGSL Dawn validates (default 1). */
  readonly dawnRate?: number;
  /** Fraction of inputs also run through `node bin/tskernel.js build` (needs dist/; default 0). */
  readonly cliRate?: number;
  /** The bundled fuzzer to fork as the judge; without it, inputs are judged in this process. */
  readonly childScript?: string;
  readonly log?: (line: string) => void;
}

export interface Failure {
  readonly index: number;
  readonly origin: string;
  readonly reason: string;
  readonly file?: string;
}

export interface CampaignSummary {
  readonly seed: number;
  readonly inputs: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly failures: readonly Failure[];
  readonly mutated: number;
  readonly generated: number;
  /** Inputs per diagnostic code (each input counted once per code). */
  readonly codes: Readonly<Record<string, number>>;
  readonly byGenerator: Readonly<Record<string, { inputs: number; accepted: number }>>;
  /** `seconds`: nvcc's time in all (it runs beside the fuzzing). */
  readonly nvcc: { readonly compiled: number; readonly rejected: number; readonly available: boolean; readonly seconds: number };
  /** `warned`: accepted shaders on which Tint printed a warning (not a rejection). */
  readonly dawn: { readonly validated: number; readonly rejected: number; readonly warned: number };
  readonly cli: { readonly runs: number; readonly bad: number };
  /** Inputs that timed out once (under load) but finished within the limit when run again alone. */
  readonly retriedSlow: number;
  readonly slowestMs: number;
  readonly slowestOrigin: string;
  readonly seconds: number;
  readonly date: string;
  readonly machine: { readonly cpus: number; readonly cpuModel?: string; readonly node: string; readonly host: string };
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignSummary> {
  const log = options.log ?? (() => {});
  const corpus = loadCorpus(options.root);
  const outDir = options.outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `tskernel-fuzz-${options.seed}-`));
  fs.mkdirSync(outDir, { recursive: true });
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-fuzz-work-"));
  const judge: Judge = options.childScript ? new ChildJudge(options.childScript, workDir) : new InProcessJudge(workDir);
  const nvccRate = options.nvccRate ?? 0.05;
  const dawnRate = options.dawnRate ?? 1;
  const cliRate = options.cliRate ?? 0;
  const haveNvcc = nvccRate > 0 && nvccAvailable();
  const started = performance.now();
  const deadline = options.seconds === undefined ? Infinity : started + options.seconds * 1000;
  const limit = options.only ? options.only.length : options.count ?? Infinity;

  let accepted = 0;
  let rejected = 0;
  let mutated = 0;
  let generated = 0;
  let retriedSlow = 0;
  let slowestMs = 0;
  let slowestOrigin = "";
  const codes: Record<string, number> = {};
  const byGenerator: Record<string, { inputs: number; accepted: number }> = {};
  const failures: Failure[] = [];
  const nvcc = { compiled: 0, rejected: 0, available: haveNvcc, seconds: 0 };
  const dawn = { validated: 0, rejected: 0, warned: 0 };
  const cli = { runs: 0, bad: 0 };
  // nvcc runs beside the fuzzing, one compile at a time (the machine is shared).
  let nvccQueue: Promise<void> = Promise.resolve();

  const fail = (input: Input, reason: string) => {
    const file = path.join(outDir, `input-${input.index}.ts`);
    fs.writeFileSync(file, input.text);
    fs.writeFileSync(path.join(outDir, `input-${input.index}.txt`), `seed ${options.seed} index ${input.index}\n${input.origin}\n${reason}\n`);
    failures.push({ index: input.index, origin: input.origin, reason, file });
    log(`FAIL #${input.index} (${input.origin}): ${reason.slice(0, 400)}`);
  };

  try {
    for (let n = 0; n < limit && performance.now() < deadline; n++) {
      const index = options.only ? options.only[n]! : n;
      const input = makeInput(options.seed, index, corpus);
      const generator = input.origin.startsWith("generate") ? input.origin.split(" ")[1]! : "mutation";
      if (generator === "mutation") mutated++;
      else generated++;
      const stats = (byGenerator[generator] ??= { inputs: 0, accepted: 0 });
      stats.inputs++;

      let result = await judge.judge(input.text, timeLimitMs * 1.5);
      if (result === "timeout") {
        // Alone and with a generous limit, so that a machine busy with other work does not fail an input.
        result = await judge.judge(input.text, timeLimitMs * 6);
        if (result === "timeout") {
          fail(input, `hang: no result within ${(timeLimitMs * 6) / 1000} s`);
          continue;
        }
        retriedSlow++;
      }
      if (result.ms > slowestMs) {
        slowestMs = result.ms;
        slowestOrigin = input.origin;
      }
      for (const code of result.codes) codes[code] = (codes[code] ?? 0) + 1;
      if (result.verdict === "failure") {
        fail(input, result.reason);
        continue;
      }
      if (result.ms > timeLimitMs) {
        // Once more, in case the machine was busy: only an input slow twice is a failure.
        const again = await judge.judge(input.text, timeLimitMs * 6);
        if (again === "timeout" || again.ms > timeLimitMs) {
          fail(input, `slow: ${(result.ms / 1000).toFixed(1)} s, then ${again === "timeout" ? "no result" : `${(again.ms / 1000).toFixed(1)} s`} (limit ${timeLimitMs / 1000} s)`);
          continue;
        }
        retriedSlow++;
        result = again;
      }
      if (result.verdict === "accepted") {
        accepted++;
        stats.accepted++;
      } else {
        rejected++;
      }
      const outputs = result.outputs;
      const sample = inputRng(options.seed ^ 0x5eed, index);
      if (outputs?.wgsl !== undefined && sample.chance(dawnRate)) {
        const validation = await validateWgsl(outputs.wgsl, outputs.beyondDefaultLimits ? [] : [...outputs.wgslEntryPoints]);
        dawn.validated++;
        const errors = validation.messages.filter((m) => m.type === "error");
        // Warnings (Tint's "code is unreachable" after a `return`) do not reject a shader; they are counted.
        if (validation.messages.some((m) => m.type === "warning")) dawn.warned++;
        if (errors.length > 0) {
          dawn.rejected++;
          fail(input, `Dawn rejects the WGSL: ${validation.messages.map((m) => `${m.type} ${m.line}:${m.column} ${m.message}`).join("; ").slice(0, 1500)}`);
        }
      }
      if (outputs?.cuda !== undefined && haveNvcc && sample.chance(nvccRate)) {
        const source = outputs.cuda;
        nvccQueue = nvccQueue.then(async () => {
          const begun = performance.now();
          const compiled: CudaCompileResult = await compileCudaAsync(source, { name: `fuzz-${index}`, extraArgs: ["-w"] });
          nvcc.compiled++;
          nvcc.seconds += (performance.now() - begun) / 1000;
          if (!compiled.ok) {
            nvcc.rejected++;
            fail(input, `nvcc rejects the CUDA: ${compiled.errors.slice(0, 1500)}`);
          }
        });
      }
      if (cliRate > 0 && sample.chance(cliRate)) {
        cli.runs++;
        const problem = runCli(options.root, workDir, input.text, result.verdict === "accepted" ? "accepted" : "rejected");
        if (problem) {
          cli.bad++;
          fail(input, `bin/tskernel.js: ${problem}`);
        }
      }
      if ((n + 1) % 500 === 0) {
        log(`${n + 1} inputs, ${((performance.now() - started) / 1000).toFixed(0)} s: ${accepted} accepted, ${rejected} rejected, ${failures.length} failures, nvcc ${nvcc.compiled}, Dawn ${dawn.validated}`);
      }
    }
    await nvccQueue;
  } finally {
    judge.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  return {
    seed: options.seed,
    inputs: mutated + generated,
    accepted,
    rejected,
    failures,
    mutated,
    generated,
    codes,
    byGenerator,
    nvcc,
    dawn,
    cli,
    retriedSlow,
    slowestMs,
    slowestOrigin,
    seconds: (performance.now() - started) / 1000,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model?.trim(), node: process.version, host: os.hostname() },
  };
}

/**
 * Runs the input through the real command line (`bin/tskernel.js build`); returns what is wrong, if
 * anything: an exit status other than 0 or 1, a stack trace or TSK9001 on stderr, a verdict other than the
 * oracle's, or more than the time limit (plus Node's start-up).
 */
function runCli(root: string, workDir: string, text: string, verdict: "accepted" | "rejected"): string | undefined {
  const file = path.join(workDir, "cli-input.ts");
  fs.writeFileSync(file, text);
  const out = path.join(workDir, "cli-out");
  const run = spawnSync(process.execPath, [path.join(root, "bin", "tskernel.js"), "build", file, "--target", "cuda,wgsl,js", "--out", out], {
    encoding: "utf8",
    timeout: timeLimitMs + 5000,
    cwd: workDir,
  });
  fs.rmSync(out, { recursive: true, force: true });
  if (run.error) return `did not finish: ${run.error.message}`;
  if (run.status !== 0 && run.status !== 1) return `exit status ${run.status} (signal ${run.signal}): ${run.stderr.slice(0, 600)}`;
  if (/^\s+at .+:\d+:\d+\)?$/m.test(run.stderr)) return `a stack trace on stderr: ${run.stderr.slice(0, 600)}`;
  if (run.stderr.includes("TSK9001")) return `an internal error: ${run.stderr.slice(0, 600)}`;
  if ((run.status === 0) !== (verdict === "accepted")) return `exit status ${run.status}, but compileFiles ${verdict} the input: ${run.stderr.slice(0, 600)}`;
  return undefined;
}
