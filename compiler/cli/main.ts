/**
 * The `tskernel` command line (a contract: scripts and tests depend on it; see docs/cli.md). `check`
 * prints diagnostics and exits 1 on any error; `build` also writes the generated files and a manifest.
 * Diagnostics go to stderr through the one renderer; a crash inside the compiler is reported as an internal
 * error (TSK9001) with a request to file it, never as a bare stack trace.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { compileFiles, type CompileResult, type FileOutput } from "../driver.ts";
import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { renderDiagnostics } from "../diagnostics/render.ts";
import { buildManifest } from "../manifest.ts";
import { targetNames, type TargetName } from "../backends/targets.ts";
import { packageRoot } from "../frontend/program.ts";

function version(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(packageRoot(), "package.json"), "utf8")).version as string;
  } catch {
    return "0.0.0";
  }
}

interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

function report(diagnostics: readonly Diagnostic[], io: Io): void {
  if (diagnostics.length === 0) return;
  io.stderr(`${renderDiagnostics(diagnostics, { readFile: (file) => safeRead(file) })}\n`);
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const warnings = diagnostics.length - errors;
  io.stderr(`\n${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}\n`);
}

function safeRead(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function parseTargets(value: string): { targets: TargetName[]; errors: Diagnostic[] } {
  const targets: TargetName[] = [];
  const errors: Diagnostic[] = [];
  for (const name of value.split(",").map((t) => t.trim()).filter(Boolean)) {
    if ((targetNames as readonly string[]).includes(name)) targets.push(name as TargetName);
    else errors.push(makeDiagnostic("TSK4002", undefined, [name, targetNames.join(", ")]));
  }
  if (targets.length === 0 && errors.length === 0) errors.push(makeDiagnostic("TSK4006", undefined, [targetNames.join(", ")]));
  return { targets, errors };
}

function parseDefines(values: readonly string[]): { defines: Map<string, string>; errors: Diagnostic[] } {
  const defines = new Map<string, string>();
  const errors: Diagnostic[] = [];
  for (const text of values) {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(text);
    if (match) defines.set(match[1]!, match[2]!);
    else errors.push(makeDiagnostic("TSK4003", undefined, [text]));
  }
  return { defines, errors };
}

/** File stems for the outputs, unique within one build even when two sources share a base name. */
function outputStems(files: readonly FileOutput[]): Map<FileOutput, string> {
  const used = new Set<string>();
  const stems = new Map<FileOutput, string>();
  for (const file of files) {
    const base = path.basename(file.displayPath).replace(/\.[cm]?ts$/, "");
    let stem = base;
    for (let n = 2; used.has(stem); n++) stem = `${base}-${n}`;
    used.add(stem);
    stems.set(file, stem);
  }
  return stems;
}

/** Compiles a generated .cu to a cubin with nvcc; returns a diagnostic on failure. */
function buildCubin(cuFile: string, cubinFile: string, arch: string): Diagnostic | undefined {
  const nvcc = process.env.NVCC ?? "nvcc";
  const run = spawnSync(nvcc, [`-arch=${arch}`, "-cubin", "-lineinfo", "-O3", "-o", cubinFile, cuFile], { encoding: "utf8", timeout: 300_000 });
  if (run.error) return makeDiagnostic("TSK4007", undefined, [`${nvcc}: ${run.error.message}`]);
  if (run.status !== 0) return makeDiagnostic("TSK4008", undefined, [path.basename(cuFile), `${run.stderr}${run.stdout}`.trim()]);
  return undefined;
}

function writeBuild(result: CompileResult, outDir: string, io: Io, cubinArch?: string): number {
  try {
    fs.mkdirSync(outDir, { recursive: true });
  } catch (error) {
    report([makeDiagnostic("TSK4001", undefined, [outDir, (error as NodeJS.ErrnoException).code === "EEXIST" ? "it exists and is not a directory" : (error as Error).message])], io);
    return 1;
  }
  const stems = outputStems(result.files);
  const written = new Map<FileOutput, { cu?: string; cuh?: string; wgsl?: string; wgslMap?: string; js?: string; cubin?: { file: string; arch: string } }>();
  let fileCount = 0;
  for (const file of result.files) {
    const stem = stems.get(file)!;
    const names: { cu?: string; cuh?: string; wgsl?: string; wgslMap?: string; js?: string; cubin?: { file: string; arch: string } } = {};
    // A file without kernels (it only got a TSK4004 warning) has nothing to write.
    if (file.specializations.length === 0) continue;
    if (file.cuda) {
      names.cu = `${stem}.cu`;
      names.cuh = `${stem}.cuh`;
      fs.writeFileSync(path.join(outDir, names.cu), file.cuda.source);
      fs.writeFileSync(path.join(outDir, names.cuh), file.cuda.header);
      fileCount += 2;
      if (cubinArch) {
        const cubin = `${stem}.${cubinArch}.cubin`;
        io.stderr(`nvcc: ${names.cu} → ${cubin}\n`);
        const failure = buildCubin(path.join(outDir, names.cu), path.join(outDir, cubin), cubinArch);
        if (failure) {
          report([failure], io);
          return 1;
        }
        names.cubin = { file: cubin, arch: cubinArch };
        fileCount += 1;
      }
    }
    if (file.wgsl) {
      names.wgsl = `${stem}.wgsl`;
      fs.writeFileSync(path.join(outDir, names.wgsl), file.wgsl.source);
      // Where each WGSL line came from in the TypeScript, so a runtime can locate shader errors.
      names.wgslMap = `${stem}.wgsl.map.json`;
      fs.writeFileSync(path.join(outDir, names.wgslMap), `${JSON.stringify(file.wgsl.lineSources.map((s) => s ?? null))}\n`);
      fileCount += 2;
    }
    if (file.js) {
      names.js = `${stem}.js`;
      fs.writeFileSync(path.join(outDir, names.js), file.js.source);
      fileCount += 1;
    }
    written.set(file, names);
  }
  const manifest = buildManifest(result.files, written, `tskernel ${version()}`);
  fs.writeFileSync(path.join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  io.stdout(`wrote ${fileCount} files and manifest.json (${manifest.kernels.length} kernel specializations) to ${outDir}\n`);
  return 0;
}

export function makeProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command();
  program
    .name("tskernel")
    .description("Compile GPU kernels written in restricted TypeScript to CUDA C, WGSL and JavaScript, and run them.")
    .version(version())
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        "  $ tskernel check examples/*.ts",
        "  $ tskernel build examples/*.ts --target cuda,wgsl,js --out build/kernels",
        "  $ tskernel demo --backend cpu",
        "  $ tskernel bench matmul --backend cuda --chart ladder.svg",
        "  $ tskernel tune matmul --backend cuda --sizes 1024,4096",
        "",
        "The kernel language: docs/language.md; commands and manifest: docs/cli.md; runtime: docs/runtime.md.",
        "",
      ].join("\n"),
    );

  program
    .command("check")
    .description("Report diagnostics for kernel files; exit status 1 if there is any error.")
    .argument("<files...>", "TypeScript files that declare kernels")
    .option("--target <list>", "targets whose limits to check, comma-separated", "cuda,wgsl")
    .option("--define <NAME=VALUE>", "value of a compile-time constant (repeatable)", collect, [])
    .addHelpText("after", "\nExample:\n  $ tskernel check examples/*.ts\n")
    .action((files: string[], opts: { target: string; define: string[] }) => {
      const { targets, errors: targetErrors } = parseTargets(opts.target);
      const { defines, errors: defineErrors } = parseDefines(opts.define);
      if (targetErrors.length + defineErrors.length > 0) {
        report([...targetErrors, ...defineErrors], io);
        return setExit(1);
      }
      const result = compileFiles(files, { targets, defines });
      report(result.diagnostics, io);
      if (result.ok) io.stdout(`ok: ${countKernels(result)} kernel specializations in ${files.length} file(s)\n`);
      setExit(result.ok ? 0 : 1);
    });

  program
    .command("build")
    .description("Compile kernel files and write the generated code and manifest.json to a directory.")
    .argument("<files...>", "TypeScript files that declare kernels")
    .requiredOption("--out <dir>", "output directory (created if missing)")
    .option("--target <list>", `targets to generate, comma-separated (${targetNames.join(", ")})`, "cuda,wgsl")
    .option("--define <NAME=VALUE>", "value of a compile-time constant in every kernel that has it (repeatable)", collect, [])
    .addOption(new Option("--no-line-directives", "leave #line directives out of CUDA output"))
    .option("--cubin", "also compile each .cu to a cubin with nvcc, so the CUDA runtime needs no NVRTC")
    .option("--arch <sm>", "GPU architecture for --cubin", "sm_90")
    .addHelpText(
      "after",
      [
        "",
        "Writes <name>.cu and <name>.cuh (cuda), <name>.wgsl (wgsl) and <name>.js (js, the CPU backend) per input",
        "file, and manifest.json listing",
        "every kernel specialization with its parameters, block shape, shared memory and outputs.",
        "",
        "Examples:",
        "  $ tskernel build examples/*.ts --target cuda,wgsl --out build/kernels",
        "  $ tskernel build examples/matmul-cuda-samples.ts --target cuda --define BLOCK_SIZE=32 --out build",
        "  $ tskernel build examples/*.ts --target cuda --cubin --arch sm_90 --out build/kernels",
        "",
      ].join("\n"),
    )
    .action((files: string[], opts: { out: string; target: string; define: string[]; lineDirectives: boolean; cubin?: boolean; arch: string }) => {
      const { targets, errors: targetErrors } = parseTargets(opts.target);
      const { defines, errors: defineErrors } = parseDefines(opts.define);
      if (opts.cubin && !targets.includes("cuda")) targetErrors.push(makeDiagnostic("TSK4009", undefined));
      if (targetErrors.length + defineErrors.length > 0) {
        report([...targetErrors, ...defineErrors], io);
        return setExit(1);
      }
      const result = compileFiles(files, { targets, defines, lineDirectives: opts.lineDirectives });
      report(result.diagnostics, io);
      if (!result.ok) {
        io.stderr("nothing was written\n");
        return setExit(1);
      }
      setExit(writeBuild(result, opts.out, io, opts.cubin ? opts.arch : undefined));
    });

  program
    .command("demo")
    .description("Run every seed matmul variant on one backend, check each against a float64 reference, print a table.")
    .addOption(new Option("--backend <name>", "backend to run on").choices(["auto", "cpu", "webgpu", "cuda"]).default("auto"))
    .option("--size <n>", "matrix size n (n×n times n×n)", parseSize, 256)
    .option("--runs <r>", "timed launches per variant (median reported)", parseSize, 1)
    .option("--checked", "run on the CPU in checked mode: out-of-bounds accesses, unwritten shared reads, shared races, divergent barriers")
    .option("--workers <n>", "CPU: worker threads that share each launch's blocks (default 1; not with --checked)", parseSize, 1)
    .addHelpText(
      "after",
      [
        "",
        "Each variant gets fresh random inputs in [-1, 1]; outputs are poisoned with NaN first. A variant passes when",
        "its normwise relative error is at most n·2^-23. Sizes a kernel cannot take are padded as its article does,",
        "or the variant is skipped with the reason. Exit status 1 if any variant fails.",
        "",
        "Examples:",
        "  $ tskernel demo --backend cpu",
        "  $ tskernel demo --backend cpu --size 100",
        "  $ tskernel demo --backend cpu --workers 4",
        "",
      ].join("\n"),
    )
    .action(async (opts: { backend: "auto" | "cpu" | "webgpu" | "cuda"; size: number; runs: number; checked?: boolean; workers: number }) => {
      const { createDevice, BackendUnavailable } = await import("../../runtime/index.ts");
      const { runDemo, formatDemoTable } = await import("../../runtime/demo/run-demo.ts");
      const { compileSeedLibrary, targetOf } = await import("../../runtime/demo/seed-library.ts");
      let device;
      try {
        device = await createDevice({ backend: opts.backend, checked: opts.checked, workers: opts.workers });
      } catch (error) {
        if (error instanceof BackendUnavailable) {
          io.stderr(`${error.message}\n`);
          return setExit(1);
        }
        throw error;
      }
      io.stderr(`device: ${device.name}\n`);
      io.stderr(`  compiling the seed examples for ${targetOf(device.backend)}\n`);
      const library = compileSeedLibrary(device.backend);
      const { rows, ok } = await runDemo(device, { size: opts.size, runs: opts.runs, library, onProgress: (m) => io.stderr(`  ${m}\n`) });
      io.stdout(`${formatDemoTable(rows)}\n`);
      const count = (status: string) => rows.filter((r) => r.status === status).length;
      io.stdout(`${count("pass")} passed, ${count("FAIL")} failed, ${count("skipped")} skipped\n`);
      setExit(ok ? 0 : 1);
    });

  const bench = program
    .command("bench")
    .description("Benchmarks (see bench/README.md).")
    .addHelpText("after", "\nExample:\n  $ tskernel bench matmul --backend cpu --sizes 128,256\n");
  bench
    .command("matmul")
    .description("Time every rung of the matmul ladder at several sizes, with cuBLAS as the reference on CUDA.")
    .option("--backend <list>", "backend to run on (auto, cpu, webgpu, cuda), or several, comma-separated (cuda,webgpu)", parseBackends, ["auto"])
    .option("--sizes <list>", "comma-separated matrix sizes (default: 128,256 on the CPU, 1024,2048,4096 on a GPU)", parseSizes)
    .option("--runs <r>", "timed launches per variant and size, spread over three input sets", parseSize, 6)
    .option("--json <file>", "write the rows as JSON")
    .option("--chart <file.svg>", "write a bar chart of GFLOP/s as SVG")
    .option("--workers <n>", "CPU: worker threads that share each launch's blocks (default 1)", parseSize, 1)
    .addHelpText(
      "after",
      [
        "",
        "With several backends, CUDA runs first, and the WebGPU rows get percentages of cuBLAS FP32 from the",
        "CUDA part of the same run; alone, WebGPU rows are absolute.",
        "",
        "Examples:",
        "  $ tskernel bench matmul --backend cpu --sizes 128,256 --chart ladder.svg",
        "  $ tskernel bench matmul --backend cuda --json bench.json",
        "  $ tskernel bench matmul --backend cuda,webgpu --sizes 2048,4096",
        "",
      ].join("\n"),
    )
    .action(async (opts: { backend: ("auto" | "cpu" | "webgpu" | "cuda")[]; sizes?: number[]; runs: number; json?: string; chart?: string; workers: number }) => {
      const { createDevice, BackendUnavailable } = await import("../../runtime/index.ts");
      const { benchMatmul, formatBenchTable, benchChartSvg, referenceTimes } = await import("../../runtime/matmul/bench.ts");
      const { compileSeedLibrary } = await import("../../runtime/demo/seed-library.ts");
      type BenchRow = import("../../runtime/matmul/bench.ts").BenchRow;
      type CudaDevice = import("../../runtime/cuda/cuda-device.ts").CudaDevice;
      // CUDA first, so that its cuBLAS times exist when the WebGPU rows are measured.
      const backends = [...opts.backend].sort((a, b) => Number(b === "cuda") - Number(a === "cuda"));
      const rows: BenchRow[] = [];
      const devices: { backend: string; name: string }[] = [];
      for (const backend of backends) {
        let device;
        try {
          device = await createDevice({ backend, workers: opts.workers });
        } catch (error) {
          if (error instanceof BackendUnavailable) {
            io.stderr(`${error.message}\n`);
            return setExit(1);
          }
          throw error;
        }
        const sizes = opts.sizes ?? (device.backend === "cpu" ? [128, 256] : [1024, 2048, 4096]);
        io.stderr(`device: ${device.name}\n`);
        devices.push({ backend: device.backend, name: device.name });
        const references = device.backend === "cuda" ? [(device as CudaDevice).cublasReference(false), (device as CudaDevice).cublasReference(true)] : [];
        const cublas = referenceTimes(rows.filter((r) => r.backend === "cuda"));
        const externalReference = device.backend !== "cuda" && cublas.size > 0 ? { name: "cuBLAS SGEMM (FP32), CUDA part of this run", msByN: cublas } : undefined;
        rows.push(...(await benchMatmul(device, { sizes, runs: opts.runs, library: compileSeedLibrary(device.backend), references, externalReference, onProgress: (m) => io.stderr(`  ${m}\n`) })));
      }
      io.stdout(`${formatBenchTable(rows)}\n`);
      const names = devices.map((d) => (devices.length > 1 ? `${d.name} (${d.backend})` : d.name)).join(", ");
      const title = `tskernel matmul ladder, ${names}, ${new Date().toISOString().slice(0, 10)}`;
      if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ device: devices[0]!.name, backend: devices[0]!.backend, devices, date: new Date().toISOString(), rows }, null, 2)}\n`);
      if (opts.chart) fs.writeFileSync(opts.chart, benchChartSvg(rows, title));
      setExit(0);
    });

  const tune = program
    .command("tune")
    .description("Autotuners (see docs/runtime.md).")
    .addHelpText("after", "\nExample:\n  $ tskernel tune matmul --backend cpu --sizes 64,128\n");
  tune
    .command("matmul")
    .description("Search the matmul rungs' compile-time constants on a device and store the fastest verified choices, which matmul() then uses.")
    .addOption(new Option("--backend <name>", "backend to tune on").choices(["auto", "cpu", "webgpu", "cuda"]).default("auto"))
    .option("--sizes <list>", "comma-separated square sizes n (default: 64,128 on the CPU, 1024,4096 on a GPU)", parseSizes)
    .option("--runs <r>", "timed launches per candidate and size, at least (short kernels get more, up to 25 ms in all; median kept)", parseSize, 5)
    .option("--rungs <list>", "comma-separated rungs to tune (default: every tunable rung)")
    .option("--max-candidates <n>", "measure at most n candidates per rung, in search order", parseSize)
    .option("--store <dir>", "store directory (default: $TSKERNEL_TUNE_DIR, else $XDG_CACHE_HOME/tskernel/tune, else ~/.cache/tskernel/tune)")
    .option("--json <file>", "write the full report (every candidate, its verdict and time) as JSON")
    .addHelpText(
      "after",
      [
        "",
        "For each rung, every setting of its tile constants (BM, BN, BK, TM, TN; WM, WN, WNITER, THREADS for warp",
        "tiling; PAD for the vectorized rung) that the kernel's tile loads allow is a candidate; those the device cannot run (threads per block, shared memory, and on CUDA registers) are",
        "pruned before they are measured. At each size every candidate is checked against a float64 reference",
        "(random inputs, C poisoned first); a wrong one is reported and discarded. The verified results are stored",
        "per device (backend, name, driver), shape class and kernel source hash, and matmul() takes the fastest",
        "stored choice that fits the shape. Progress goes to stderr, the table to stdout.",
        "",
        "Examples:",
        "  $ tskernel tune matmul --backend cpu --sizes 64,128",
        "  $ tskernel tune matmul --backend cuda --sizes 1024,4096 --max-candidates 12 --json tune.json",
        "",
      ].join("\n"),
    )
    .action(async (opts: { backend: "auto" | "cpu" | "webgpu" | "cuda"; sizes?: number[]; runs: number; rungs?: string; maxCandidates?: number; store?: string; json?: string }) => {
      const { tuneCommand } = await import("../../runtime/matmul/tune-command.ts");
      const list = (text: string | undefined) => text?.split(",").map((s) => s.trim()).filter(Boolean);
      setExit(
        await tuneCommand(
          { backend: opts.backend, sizes: opts.sizes, runs: opts.runs, rungs: list(opts.rungs), maxCandidates: opts.maxCandidates, store: opts.store, json: opts.json },
          io,
        ),
      );
    });

  return program;
}

const backendNames = ["auto", "cpu", "webgpu", "cuda"] as const;

function parseBackends(value: string): (typeof backendNames)[number][] {
  const list = value.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = list.filter((name) => !(backendNames as readonly string[]).includes(name));
  if (list.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`expected ${backendNames.join(", ")}, or several of them comma-separated`);
  return [...new Set(list)] as (typeof backendNames)[number][];
}

function parseSizes(value: string): number[] {
  const sizes = value.split(",").map((s) => s.trim()).filter(Boolean);
  if (sizes.length === 0) throw new InvalidArgumentError("expected comma-separated positive integers");
  return sizes.map(parseSize);
}

function parseSize(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function countKernels(result: CompileResult): number {
  return result.files.reduce((sum, file) => sum + file.specializations.length, 0);
}

/** Runs the CLI; resolves to the exit status. */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  let exitCode = 0;
  const program = makeProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`${renderDiagnostics([makeDiagnostic("TSK9001", undefined, [message], { notes: ["this is a bug in tskernel; please report it with the input that caused it"] })], { readFile: () => undefined })}\n`);
    if (process.env.TSKERNEL_DEBUG && error instanceof Error) io.stderr(`${error.stack}\n`);
    return 70;
  }
  return exitCode;
}
