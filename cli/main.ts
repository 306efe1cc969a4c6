/**
 * The `tskernel` command line (a contract: scripts and tests depend on it; see docs/cli.md). `check`
 * prints diagnostics and exits 1 on any error; `build` also writes the generated files and a manifest
 * (build.ts); both take files, directories and globs (inputs.ts). `demo`, `bench` and `tune` run the matmul
 * ladder, the memory-bound suite and the launch benchmark on the runtime. Diagnostics go to stderr through the
 * one renderer; a crash inside the compiler is reported as an internal error (TSK9001) with a request to file
 * it, never as a bare stack trace. This file loads only commander: each command imports what it needs when it
 * runs (the compiler for check and build, the runtime too for the others), so `--help` and `--version` start in
 * tens of milliseconds.
 */

import fs from "node:fs";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import type { Io } from "./io.ts";
import { openDevice } from "./open-device.ts";
import { tskernelVersion } from "./package-info.ts";
import { gpuArchitectures } from "./report/gpus.ts";

/**
 * The compiler's `targetNames`, written out so that help needs no compiler (tests/cli.test.ts checks that the
 * two agree).
 */
const targetList = "cuda, wgsl, js";

export function makeProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command();
  program
    .name("tskernel")
    .description("Compile GPU kernels written in restricted TypeScript to CUDA C, WGSL and JavaScript, and run them.")
    .version(tskernelVersion())
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError()
    .addHelpText(
      "after",
      [
        "",
        "check and build take files, directories (every TypeScript file under it that imports from",
        "\"tskernel\") and globs ('src/**/*.kernel.ts', quoted so that the shell leaves it alone).",
        "",
        "Examples:",
        "  $ tskernel check kernels/*.ts",
        "  $ tskernel build src/kernels --target cuda,wgsl,js --out build/kernels",
        "  $ tskernel build 'src/**/*.kernel.ts' --target wgsl --out public/kernels --watch",
        "  $ tskernel demo --backend cpu",
        "  $ tskernel bench matmul --backend cuda --chart ladder.svg",
        "  $ tskernel tune matmul --backend cuda --sizes 1024,4096",
        "  $ tskernel report examples/matmul-tiled.ts --gpu sm_90",
        "",
        "The kernel language: docs/language.md; commands and manifest: docs/cli.md; runtime: docs/runtime.md.",
        "",
      ].join("\n"),
    );

  program
    .command("check")
    .description("Report diagnostics for kernel files; write nothing; exit status 1 if there is any error.")
    .argument("<files...>", inputsHelp)
    .option("--target <list>", "targets whose limits to check, comma-separated", "cuda,wgsl")
    .option("--define <NAME=VALUE>", "value of a compile-time constant (repeatable)", collect, [])
    .addHelpText(
      "after",
      [
        "",
        "Runs the whole compiler in memory (TypeScript's checker, the frontend, specialization, validation, code",
        "generation) and prints its diagnostics with code frames.",
        "",
        "Examples:",
        "  $ tskernel check kernels/*.ts",
        "  $ tskernel check src/kernels",
        "  $ tskernel check 'src/**/*.kernel.ts' --target wgsl",
        "",
      ].join("\n"),
    )
    .action(async (args: string[], opts: { target: string; define: string[] }) => {
      const { checkCommand } = await import("./compile-command.ts");
      setExit(checkCommand(args, opts, io));
    });

  program
    .command("build")
    .description("Compile kernel files and write the generated code and manifest.json to a directory.")
    .argument("<files...>", inputsHelp)
    .requiredOption("--out <dir>", "output directory (created, with its parents, if missing)")
    .option("--target <list>", `targets to generate, comma-separated (${targetList}, torch)`, "cuda,wgsl")
    .option("--define <NAME=VALUE>", "value of a compile-time constant in every kernel that has it (repeatable)", collect, [])
    .addOption(new Option("--no-line-directives", "leave #line directives out of CUDA output"))
    .option("--cubin", "also compile each .cu to a cubin with nvcc, so the CUDA runtime needs no NVRTC")
    .option("--ptx", "also compile each .cu to PTX with nvcc, which the CUDA driver compiles for the GPU it runs on")
    .option("--arch <sm>", "GPU architecture for --cubin and --ptx", "sm_90")
    .option("--watch", "build, then build again whenever a kernel file changes, printing diagnostics, until Ctrl-C")
    .option("--checked", "a checked build: CUDA and WGSL code that checks every array access, integer division and shift at run time and reports failures with the TypeScript line")
    .addHelpText(
      "after",
      [
        "",
        "Writes <name>.cu and <name>.cuh (cuda), <name>.wgsl and <name>.wgsl.map.json (wgsl) and <name>.js (js, the",
        "CPU backend) per input file, and manifest.json listing every kernel specialization with its parameters,",
        "block shape, shared memory and outputs. All or nothing: with any error nothing is written. Nothing",
        "outside --out is written and nothing in it is deleted; files of the same names are overwritten.",
        "A kernel whose `targets` option leaves out a target is skipped for it; the summary names such kernels.",
        "",
        "Examples:",
        "  $ tskernel build kernels/*.ts --target cuda,wgsl --out build/kernels",
        "  $ tskernel build src/kernels --target wgsl,js --out build/kernels",
        "  $ tskernel build 'src/**/*.kernel.ts' --target wgsl --out public/kernels --watch",
        "  $ tskernel build examples/matmul-cuda-samples.ts --target cuda --define BLOCK_SIZE=32 --out build",
        "  $ tskernel build examples/*.ts --target cuda --cubin --arch sm_90 --out build/kernels",
        "  $ tskernel build examples/torch-app/kernels.ts --target torch --cubin --ptx --out build/torch",
        "  $ tskernel build kernels/*.ts --target cuda,wgsl --checked --out build/checked",
        "",
      ].join("\n"),
    )
    .action(async (args: string[], opts: { out: string; target: string; define: string[]; lineDirectives: boolean; cubin?: boolean; ptx?: boolean; arch: string; watch?: boolean; checked?: boolean }) => {
      const { buildCommand } = await import("./compile-command.ts");
      setExit(await buildCommand(args, opts, io));
    });

  program
    .command("report")
    .description("For each kernel specialization and target: registers, spills, shared memory, the largest block and occupancy (CUDA), the default limits it meets (WebGPU), and an estimate of a thread's global bytes and flops.")
    .argument("<files...>", inputsHelp)
    .option("--gpu <sm>", `the CUDA architecture ptxas compiles for and occupancy is computed on (${gpuNames.join(", ")})`, parseGpu, "sm_90")
    .option("--target <list>", "targets to report on, comma-separated", "cuda,wgsl")
    .option("--define <NAME=VALUE>", "value of a compile-time constant (repeatable)", collect, [])
    .option("--json", "print the report as JSON instead of tables")
    .addHelpText(
      "after",
      [
        "",
        "CUDA figures come from ptxas (nvcc -Xptxas -v, nvcc on PATH or in $NVCC); without nvcc, from the CUDA",
        "device the runtime finds (NVRTC, for its own GPU). The estimate counts, per thread, the global memory",
        "loads and stores and the f32 operations the source performs; L12 stands for the trip count of the loop",
        "at line 12 when it is known only at run time.",
        "",
        "Examples:",
        "  $ tskernel report examples/matmul-tiled.ts",
        "  $ tskernel report examples/sgemm-warptiling.ts --gpu sm_80 --target cuda",
        "  $ tskernel report src/kernels --json > report.json",
        "",
      ].join("\n"),
    )
    .action(async (args: string[], opts: { gpu: string; target: string; define: string[]; json?: boolean }) => {
      const { reportCommand } = await import("./report/command.ts");
      setExit(await reportCommand(args, opts, io));
    });

  program
    .command("demo")
    .description("Run every seed matmul variant on one backend, check each against a float64 reference, print a table.")
    .addOption(new Option("--backend <name>", "backend to run on").choices(["auto", "cpu", "webgpu", "cuda"]).default("auto"))
    .option("--size <n>", "matrix size n (n×n times n×n)", parseSize, 256)
    .option("--runs <r>", "timed launches per variant (median reported)", parseSize, 1)
    .option("--checked", "run on the CPU in checked mode: out-of-bounds accesses, unwritten shared reads, shared races, divergent barriers")
    .option("--workers <n>", "CPU: threads that share each launch's blocks, the calling one and n − 1 workers (default 1; not with --checked)", parseSize, 1)
    .option("--subgroup-size <n>", "CPU: lanes per subgroup for subgroup operations, a power of two from 1 to 128", parseSubgroupSize, 32)
    .option("--json <file>", "also write the rows as JSON, each variant with its full name and constants")
    .addHelpText(
      "after",
      [
        "",
        "Each variant gets fresh random inputs in [-1, 1]; outputs are poisoned with NaN first. A variant passes when",
        "its normwise relative error is at most n·2^-23. Sizes a kernel cannot take are padded as its article does,",
        "or the variant is skipped with the reason. Exit status 1 if any variant fails. On a terminal, long names and",
        "notes wrap to its width.",
        "",
        "Examples:",
        "  $ tskernel demo --backend cpu",
        "  $ tskernel demo --backend cpu --size 100",
        "  $ tskernel demo --backend cpu --workers 4",
        "",
      ].join("\n"),
    )
    .action(async (opts: { backend: "auto" | "cpu" | "webgpu" | "cuda"; size: number; runs: number; checked?: boolean; workers: number; subgroupSize: number; json?: string }) => {
      const { runDemo, formatDemoTable } = await import("./demo/run-demo.ts");
      const { compileSeedLibrary } = await import("./demo/seed-library.ts");
      const { targetFor } = await import("../runtime/matmul/candidates.ts");
      const device = await openDevice({ backend: opts.backend, checked: opts.checked, workers: opts.workers, subgroupSize: opts.subgroupSize }, io);
      if (!device) return setExit(1);
      io.stderr(`  compiling the seed examples for ${targetFor(device.backend)}\n`);
      const library = compileSeedLibrary(device.backend);
      const { rows, ok } = await runDemo(device, { size: opts.size, runs: opts.runs, library, onProgress: (m) => io.stderr(`  ${m}\n`) });
      io.stdout(`${formatDemoTable(rows, io.columns)}\n`);
      if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ date: new Date().toISOString(), device: device.name, backend: device.backend, size: opts.size, rows }, null, 2)}\n`);
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
    .description("Time every rung of the matmul ladder at several sizes (f32, TF32, bf16 and f16), with cuBLAS as the reference on CUDA.")
    .option("--backend <list>", "backend to run on (auto, cpu, webgpu, cuda), or several, comma-separated (cuda,webgpu)", parseBackends, ["auto"])
    .option("--sizes <list>", "comma-separated matrix sizes (default: 128,256 on the CPU, 1024,2048,4096 on a GPU)", parseSizes)
    .option("--runs <r>", "timed launches per variant and size, spread over three input sets", parseSize, 6)
    .option("--json <file>", "write the rows as JSON")
    .option("--chart <file.svg>", "write a bar chart of GFLOP/s as SVG")
    .option("--roofline <file.svg>", "write the rungs on the device's roofline as SVG (measures the device's copy bandwidth too)")
    .option("--workers <n>", "CPU: threads that share each launch's blocks, the calling one and n − 1 workers (default 1)", parseSize, 1)
    .option("--subgroup-size <n>", "CPU: lanes per subgroup for subgroup operations, a power of two from 1 to 128", parseSubgroupSize, 32)
    .addHelpText(
      "after",
      [
        "",
        "With several backends, CUDA runs first, and the WebGPU rows get percentages of cuBLAS FP32 from the",
        "CUDA part of the same run; alone, WebGPU rows are absolute.",
        "",
        "Examples:",
        "  $ tskernel bench matmul --backend cpu --sizes 128,256 --chart ladder.svg",
        "  $ tskernel bench matmul --backend cuda --json bench.json --roofline roofline.svg",
        "  $ tskernel bench matmul --backend cuda,webgpu --sizes 2048,4096",
        "",
      ].join("\n"),
    )
    .action(async (opts: { backend: ("auto" | "cpu" | "webgpu" | "cuda")[]; sizes?: number[]; runs: number; json?: string; chart?: string; roofline?: string; workers: number; subgroupSize: number }) => {
      const { benchMatmul, formatBenchTable, benchChartSvg, referenceTimes } = await import("./bench/matmul.ts");
      const { compileSeedLibrary } = await import("./demo/seed-library.ts");
      const roofline = opts.roofline ? await import("./bench/matmul-roofline.ts") : undefined;
      const roofs: import("./bench/roofline.ts").Roof[] = [];
      const rooflinePoints: import("./bench/roofline.ts").RooflinePoint[] = [];
      type BenchRow = import("./bench/matmul.ts").BenchRow;
      type CudaDevice = import("../runtime/cuda/cuda-device.ts").CudaDevice;
      // CUDA first, so that its cuBLAS times exist when the WebGPU rows are measured.
      const backends = [...opts.backend].sort((a, b) => Number(b === "cuda") - Number(a === "cuda"));
      const rows: BenchRow[] = [];
      const devices: { backend: string; name: string }[] = [];
      for (const backend of backends) {
        const device = await openDevice({ backend, workers: opts.workers, subgroupSize: opts.subgroupSize }, io);
        if (!device) return setExit(1);
        const sizes = opts.sizes ?? (device.backend === "cpu" ? [128, 256] : [1024, 2048, 4096]);
        devices.push({ backend: device.backend, name: device.name });
        // cuBLAS FP32 and TF32 for the f32 rungs, its GEMM in bf16 and f16 for the 16-bit ones.
        const cuda = device as CudaDevice;
        const references = device.backend === "cuda" ? [cuda.cublasReference(false), cuda.cublasReference(true), cuda.cublasReference16("bf16"), cuda.cublasReference16("f16")] : [];
        const cublas = referenceTimes(rows.filter((r) => r.backend === "cuda"));
        const externalReference = device.backend !== "cuda" && cublas.size > 0 ? { name: "cuBLAS SGEMM (FP32), CUDA part of this run", msByN: cublas } : undefined;
        const library = compileSeedLibrary(device.backend);
        const measured = await benchMatmul(device, { sizes, runs: opts.runs, library, references, externalReference, onProgress: (m) => io.stderr(`  ${m}\n`) });
        rows.push(...measured);
        if (roofline) {
          const { roof, points } = await roofline.matmulRoofline(device, library, measured, (m) => io.stderr(`  ${m}\n`));
          roofs.push(roof);
          rooflinePoints.push(...points);
        }
      }
      io.stdout(`${formatBenchTable(rows)}\n`);
      const names = devices.map((d) => (devices.length > 1 ? `${d.name} (${d.backend})` : d.name)).join(", ");
      const title = `tskernel matmul ladder, ${names}, ${new Date().toISOString().slice(0, 10)}`;
      if (opts.json) fs.writeFileSync(opts.json, `${JSON.stringify({ device: devices[0]!.name, backend: devices[0]!.backend, devices, date: new Date().toISOString(), rows }, null, 2)}\n`);
      if (opts.chart) fs.writeFileSync(opts.chart, benchChartSvg(rows, title));
      if (roofline && opts.roofline) fs.writeFileSync(opts.roofline, roofline.rooflineSvg(rooflinePoints, roofs, title.replace("matmul ladder", "matmul ladder on the roofline")));
      setExit(0);
    });

  bench
    .command("kernels")
    .description("Time the memory-bound suite (SAXPY, GELU, transpose, sum, softmax, layer norm, scan) against the copy bandwidth.")
    .option("--backend <list>", "backend to run on (auto, cpu, webgpu, cuda), or several, comma-separated (cuda,webgpu)", parseBackends, ["auto"])
    .option("--sizes <list>", "comma-separated shapes: N for the 1-D kernels, RxC for the 2-D ones (default: the issue's shapes on a GPU, small ones on the CPU)")
    .option("--kernels <list>", "comma-separated kernels to run (default: all)")
    .option("--runs <r>", "timed runs per kernel and shape (median reported; default 20 on a GPU, 5 on the CPU)", parseSize)
    .option("--json <file>", "write every row as JSON")
    .option("--chart <file.svg>", "write a bar chart of % of the copy bandwidth as SVG")
    .option("--roofline <file.svg>", "write the kernels on the device's roofline as SVG")
    .option("--torch <file>", "join PyTorch's figures from bench/torch-reference.py's JSON (CUDA rows)")
    .option("--workers <n>", "CPU: threads that share each launch's blocks, the calling one and n − 1 workers (default 1)", parseSize, 1)
    .addHelpText("after", "\nSee bench/README.md for the method.\n\nExamples:\n  $ tskernel bench kernels --backend cpu\n  $ tskernel bench kernels --backend cuda,webgpu --json kernels.json --chart kernels.svg\n  $ tskernel bench kernels --backend cpu --kernels softmax,layernorm --sizes 256x1024\n  $ tskernel bench kernels --backend cuda --roofline roofline.svg\n")
    .action(async (opts: { backend: ("auto" | "cpu" | "webgpu" | "cuda")[]; sizes?: string; kernels?: string; runs?: number; json?: string; chart?: string; roofline?: string; torch?: string; workers: number }) => {
      const { benchKernelsCommand } = await import("./kernels-bench/command.ts");
      setExit(await benchKernelsCommand({ ...opts, backends: opts.backend }, io));
    });

  bench
    .command("launch")
    .description("Time what a launch costs the host (a tiny kernel back to back, with a synchronize after each, replayed), and a ten-launch sequence of real kernels against the sum of their own times.")
    .option("--backend <list>", "backend to run on (auto, cpu, webgpu, cuda), or several, comma-separated (cuda,webgpu)", parseBackends, ["auto"])
    .addOption(new Option("--scale <scale>", "the sequence's shapes: gpu (a layer of 4096 × 1024, GEMMs of 1024³) or small (256 × 256, 128³); default gpu on a GPU, small on the CPU").choices(["gpu", "small"]))
    .option("--burst <n>", "launches of the tiny kernel per timed burst (default 1000)", parseSize)
    .option("--runs <r>", "timed runs of the sequence (median kept; default 5)", parseSize)
    .option("--json <file>", "write the reports as JSON")
    .option("--chart <file.svg>", "write a chart of host time per launch and of the sequence's overhead as SVG")
    .option("--torch <file>", "join PyTorch's per-op figures from bench/torch-launch.py's JSON (CUDA)")
    .option("--workers <n>", "CPU: threads that share each launch's blocks, the calling one and n − 1 workers (default 1)", parseSize, 1)
    .addHelpText("after", "\nSee bench/README.md and docs/runtime.md (launches are asynchronous).\n\nExamples:\n  $ tskernel bench launch --backend cpu\n  $ tskernel bench launch --backend cuda,webgpu --json launch.json --chart launch.svg\n")
    .action(async (opts: { backend: ("auto" | "cpu" | "webgpu" | "cuda")[]; scale?: "gpu" | "small"; burst?: number; runs?: number; json?: string; chart?: string; torch?: string; workers: number }) => {
      const { benchLaunchCommand } = await import("./bench/launch-command.ts");
      setExit(await benchLaunchCommand({ ...opts, backends: opts.backend }, io));
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
      const { tuneCommand } = await import("./tune-command.ts");
      const list = (text: string | undefined) => text?.split(",").map((s) => s.trim()).filter(Boolean);
      setExit(
        await tuneCommand(
          { backend: opts.backend, sizes: opts.sizes, runs: opts.runs, rungs: list(opts.rungs), maxCandidates: opts.maxCandidates, store: opts.store, json: opts.json },
          io,
        ),
      );
    });

  tune
    .command("kernels")
    .description("Search block sizes and items per thread of the memory-bound suite on a device; compare the fastest verified setting with each kernel's fixed choice.")
    .addOption(new Option("--backend <name>", "backend to tune on").choices(["auto", "cpu", "webgpu", "cuda"]).default("auto"))
    .option("--sizes <list>", "comma-separated shapes: N for the 1-D kernels, RxC for the 2-D ones (default: as bench kernels)")
    .option("--kernels <list>", "comma-separated kernels to tune (default: all)")
    .option("--runs <r>", "timed runs per candidate (median kept; default 10)", parseSize)
    .option("--json <file>", "write every candidate, its verdict and time as JSON")
    .addHelpText("after", "\nExample:\n  $ tskernel tune kernels --backend cuda --kernels saxpy,softmax\n")
    .action(async (opts: { backend: "auto" | "cpu" | "webgpu" | "cuda"; sizes?: string; kernels?: string; runs?: number; json?: string }) => {
      const { tuneKernelsCommand } = await import("./kernels-bench/command.ts");
      setExit(await tuneKernelsCommand(opts, io));
    });

  return program;
}

const inputsHelp = "kernel files, directories (their TypeScript files that import from \"tskernel\") or quoted globs";

/** `--subgroup-size`: what the CPU device accepts, checked here so that a mistake is a usage error. */
function parseSubgroupSize(value: string): number {
  const size = Number(value);
  if (!/^\d+$/.test(value) || size < 1 || size > 128 || (size & (size - 1)) !== 0) throw new InvalidArgumentError("expected a power of two from 1 to 128");
  return size;
}

const gpuNames = gpuArchitectures.map((gpu) => gpu.name);

function parseGpu(value: string): string {
  if (!gpuNames.includes(value.replace(/a$/, ""))) throw new InvalidArgumentError(`expected one of ${gpuNames.join(", ")}`);
  return value;
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
    const { makeDiagnostic, renderDiagnostics } = await import("../compiler/index.ts");
    io.stderr(`${renderDiagnostics([makeDiagnostic("TSK9001", undefined, [message], { notes: ["this is a bug in tskernel; please report it with the input that caused it"] })], { readFile: () => undefined })}\n`);
    if (process.env.TSKERNEL_DEBUG && error instanceof Error) io.stderr(`${error.stack}\n`);
    return 70;
  }
  return exitCode;
}
