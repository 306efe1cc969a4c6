/**
 * Everything that needs the GPU machine, in one run (bench/gpu.sh starts it there). The ladder runs the
 * kernels that `tskernel build` wrote here; only the tuning step compiles (its candidates, in-process, so the
 * bundle carries the compiler). For each backend it can open — CUDA through the driver API and NVRTC, WebGPU
 * through Dawn on Vulkan — it:
 * - runs every seed matmul variant against the float64 reference at odd and round sizes;
 * - runs the non-matmul examples against their references, and compares the CUDA results with the CPU
 *   backend's on the same inputs (the differential check);
 * - runs the examples built on atomics and subgroup operations (histogram, one-pass sum, stream compaction,
 *   row softmax; subgroups of 32 lanes on both backends here) against their references at large sizes, and
 *   times them (effective bandwidth);
 * - times the seed kernels at n = 1024, 2048 and 4096 next to cuBLAS SGEMM (TF32 off, and on) from the
 *   same run (CUDA), and reports each as a percentage of cuBLAS FP32 (WebGPU rows too, against the CUDA
 *   part's cuBLAS at the same n);
 * - tunes the CUDA blocktiling rungs at n = 1024 and 4096 with a bounded number of candidates per rung
 *   (`tskernel tune matmul`), writes the report to $OUT/tune-matmul-cuda.json and the store to
 *   $OUT/tune-store, and runs the issue's shapes through matmul() with the fixed rule and with the tuned choice;
 * - measures the per-launch overhead (10 000 launches of a kernel that returns at once);
 * - runs a 4096² WebGPU matmul with ten launches in a row (the case that aborted Dawn before);
 * - joins the torch.mm comparison that bench/torch-matmul.py wrote before it (gpu.sh runs it first) to the
 *   results, as `torch.matmul`, with its table and chart (torch-matmul.svg).
 * Results go to $OUT/gpu-results.json and a text table to stdout. `--only kernels-plan` and `--only kernels`
 * run the memory-bound suite instead (gpu-kernels.ts); `--only launch` and `--only launch-fault` the launch
 * benchmark and the checks of asynchronous launches (gpu-launch.ts). Usage:
 *   node gpu-run.mjs --kernels <build dir> --out <dir> [--only cuda|webgpu|collectives|profile|tune-wide|launch|launch-fault] [--torch-matmul report.json] [--torch torch-launch.json]
 *   node gpu-run.mjs --kernels <wgsl build dir> --cubin-kernels <cubin build dir> --out <dir> --only kernels-plan|kernels
 *     [--torch torch.json] [--tune-seconds S] [--tune-cases a,b] [--cases a,b (the suite's cases to plan and bench; default all)]
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { createCudaDevice, type CudaDevice } from "../runtime/cuda/cuda-device.ts";
import { createWebGpuDevice } from "../runtime/webgpu/dawn.ts";
import { runDemo, formatDemoTable, type DemoRow } from "../cli/demo/run-demo.ts";
import { loadKernelLibrary } from "../runtime/load-library.ts";
import { compareToReference, referenceGemmAt } from "../runtime/reference.ts";
import type { Device } from "../runtime/device.ts";
import { seedVariants, unsupportedSize } from "../cli/demo/variants.ts";
import { benchChartSvg, benchMatmul, formatBenchTable, referenceTimes } from "../cli/bench/matmul.ts";
import { chooseMatmul, matmulLaunch, matmulRungs } from "../runtime/matmul/matmul.ts";
import { formatConstants } from "../runtime/matmul/candidates.ts";
import { TuningStore } from "../runtime/matmul/tune-store.ts";
import { bestBuilds, formatTorchTable, torchChartSvg, type TorchReport } from "./torch-matmul-report.ts";
import { formatTuneTable, tuneMatmul } from "../runtime/matmul/tune.ts";
import { checkCollectiveExamples, gpuSizes } from "../cli/demo/collective-examples.ts";
import { runKernels, writeKernelsPlan } from "./gpu-kernels.ts";
import { runLaunch, runLaunchFault } from "./gpu-launch.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : fallback;
};
const only = option("--only", "all");
/** The matmul modes' kernels, loaded by main(); the suite's modes load their own (gpu-kernels.ts). */
let library: ReturnType<typeof loadKernelLibrary>;
const outDir = option("--out", process.env.OUT ?? ".");
const results: Record<string, unknown> = { date: new Date().toISOString(), host: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version } };
const log = (line = "") => console.log(line);
/** cuBLAS SGEMM FP32 times by n from the CUDA part of this run: the 100 % for every other row, WebGPU's too. */
/**
 * cuBLAS FP32 per n, the fastest of the run's measurements: its first timings at a size can be slow while
 * the GPU's clocks ramp up (22.9 against 31.0 TFLOP/s at n=1024 in run 8), and a slow reference would
 * flatter every percentage.
 */
const cublasFp32Ms = new Map<number, number>();
const noteCublasFp32 = (n: number, ms: number) => cublasFp32Ms.set(n, Math.min(ms, cublasFp32Ms.get(n) ?? Infinity));
const percentOfCublas = (n: number, ms: number) => (cublasFp32Ms.has(n) ? (100 * cublasFp32Ms.get(n)!) / ms : undefined);

function save(): void {
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, "gpu-results.json"), `${JSON.stringify(results, null, 2)}\n`);
}

function random(length: number): Float32Array {
  return Float32Array.from({ length }, () => Math.random() * 2 - 1);
}

async function section(name: string, body: () => Promise<unknown>): Promise<void> {
  log(`\n== ${name}`);
  const start = performance.now();
  try {
    results[name] = await body();
  } catch (error) {
    const message = error instanceof Error ? `${error.message}\n${error.stack}` : String(error);
    log(`FAILED: ${message}`);
    results[name] = { error: message };
  }
  log(`(${((performance.now() - start) / 1000).toFixed(1)} s)`);
  save();
}

async function ladder(device: Device, sizes: readonly number[], runs: number): Promise<DemoRow[]> {
  const rows: DemoRow[] = [];
  for (const size of sizes) {
    const { rows: sized } = await runDemo(device, { size, runs, library });
    log(formatDemoTable(sized));
    rows.push(...sized);
  }
  return rows;
}

/** reduceSum, transposeShared and the elementwise kernels, each against its reference. */
async function classics(device: Device): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const n = 1_000_003;
  const input = random(n);
  const partial = device.createBuffer(new Float32Array(120).fill(Number.NaN));
  await device.launch(library.get("reduceSum"), { grid: [120], args: [partial, device.createBuffer(input), n] });
  const total = ((await device.read(partial)) as Float32Array).reduce((a, b) => a + b, 0);
  const reference = input.reduce((a, b) => a + b, 0);
  out.reduceSum = { n, absError: Math.abs(total - reference), pass: Math.abs(total - reference) < 1e-5 * n };
  const rows = 1000;
  const cols = 1500;
  const matrix = random(rows * cols);
  const transposed = device.createBuffer(new Float32Array(rows * cols).fill(Number.NaN));
  await device.launch(library.get("transposeShared"), { grid: [Math.ceil(cols / 32), Math.ceil(rows / 32)], args: [transposed, device.createBuffer(matrix), rows, cols] });
  const t = (await device.read(transposed)) as Float32Array;
  let mismatches = 0;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) if (t[c * rows + r] !== matrix[r * cols + c]) mismatches++;
  out.transposeShared = { rows, cols, mismatches, pass: mismatches === 0 };
  const x = Float32Array.from({ length: 100_000 }, () => Math.random() * 12 - 6);
  const gelu = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
  const g = device.createBuffer(new Float32Array(x.length).fill(Number.NaN));
  await device.launch(library.get("gelu"), { grid: [Math.ceil(x.length / 256)], args: [g, device.createBuffer(x), x.length] });
  const report = compareToReference((await device.read(g)) as Float32Array, Float64Array.from(x, gelu), 1e-3);
  out.gelu = { ...report, pass: report.nonFinite === 0 && report.maxRelative < 1e-3 };
  log(JSON.stringify(out));
  return out;
}

/** The atomics and subgroup examples at large sizes, checked, then timed: one line each. */
async function collectiveExamples(device: Device): Promise<unknown> {
  // WGSL bounds exp's error by 3 + 2|x| ulp, against CUDA's expf's 2: the softmax gets more room there.
  const checks = await checkCollectiveExamples(device, library, gpuSizes, { time: true, softmaxTolerance: device.backend === "cuda" ? 1e-5 : 1e-4 });
  for (const check of checks) {
    const speed = check.ms !== undefined ? `${check.ms.toFixed(3).padStart(9)} ms ${check.gbPerSecond!.toFixed(1).padStart(7)} GB/s` : "";
    log(`${device.backend} ${check.example.padEnd(16)} ${check.size.padEnd(18)} ${check.pass ? "pass" : "FAIL"} ${speed}  ${JSON.stringify(check.detail)}`);
  }
  return { subgroupSize: device.limits.subgroupSize, checks };
}

/** The CUDA results of every seed variant equal the CPU backend's within f32 reordering error. */
async function differential(gpu: Device, n: number): Promise<Record<string, unknown>> {
  const cpu = new CpuDevice();
  const A = random(n * n);
  const B = random(n * n);
  const out: Record<string, unknown> = {};
  for (const variant of seedVariants) {
    const N = variant.multipleOf ? Math.ceil(n / variant.multipleOf) * variant.multipleOf : n;
    if (N !== n) continue;
    const results: Float32Array[] = [];
    for (const device of [cpu, gpu]) {
      const kernel = library.firstFitting(variant.kernel, variant.specializations, device.limits)!;
      const a = device.createBuffer(A);
      const b = device.createBuffer(B);
      // NaN everywhere: with beta = 0 the sgemm rungs must not read C, and every rung must write every element.
      const c = device.createBuffer(new Float32Array(n * n).fill(Number.NaN));
      const constants = kernel.description.specialization as Record<string, number>;
      const launch = variant.launch(n, { A: a, B: b, C: c, device }, 1, 0, constants);
      await device.launch(kernel, launch);
      launch.release?.();
      results.push((await device.read(c)) as Float32Array);
    }
    const report = compareToReference(results[1]!, results[0]!);
    out[variant.id] = { normwiseRelative: report.normwiseRelative, pass: report.nonFinite === 0 && report.normwiseRelative < n * 2 ** -23 };
  }
  log(JSON.stringify(out));
  return out;
}

/** Seed kernels next to cuBLAS at large sizes, timed with CUDA events on the same buffers. */
async function versusCublas(device: CudaDevice, sizes: readonly number[]): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const n of sizes) {
    const A = device.createBuffer(random(n * n));
    const B = device.createBuffer(random(n * n));
    const C = device.createBuffer("f32", n * n);
    const flops = 2 * n ** 3;
    const entry = (name: string, ms: number, extra: Record<string, unknown> = {}) => ({ n, name, ms, tflops: flops / (ms * 1e9), ...extra });
    const fp32 = device.timeEnqueued(device.cublasSgemm(n, n, n, 1, A, B, 0, C, false), { warmup: 3, runs: 20 });
    const tf32 = device.timeEnqueued(device.cublasSgemm(n, n, n, 1, A, B, 0, C, true), { warmup: 3, runs: 20 });
    noteCublasFp32(n, fp32.medianMs);
    const base = [entry("cuBLAS SGEMM (FP32)", fp32.medianMs), entry("cuBLAS SGEMM (TF32)", tf32.medianMs)];
    rows.push(...base);
    for (const variant of seedVariants) {
      if (unsupportedSize(variant, n)) continue;
      if (variant.id === "kahan" && n > 2048) continue; // minutes at 4096 and says nothing new
      const kernel = library.get(variant.kernel, variant.specializations?.[0]);
      const constants = kernel.description.specialization as Record<string, number>;
      const launch = variant.launch(n, { A, B, C, device }, 1, 0, constants);
      const timing = await device.time(kernel, launch, { warmup: 1, runs: n >= 4096 ? 3 : 5 });
      launch.release?.();
      rows.push(entry(variant.id, timing.medianMs, { percentOfCublasFp32: (100 * fp32.medianMs) / timing.medianMs, registers: device.compiled(kernel).registers }));
    }
    for (const row of rows.filter((r) => (r as { n: number }).n === n)) {
      const r = row as { name: string; ms: number; tflops: number; percentOfCublasFp32?: number };
      log(`n=${n}  ${r.name.padEnd(22)} ${r.ms.toFixed(3).padStart(10)} ms  ${r.tflops.toFixed(2).padStart(7)} TFLOP/s${r.percentOfCublasFp32 !== undefined ? `  ${r.percentOfCublasFp32.toFixed(1).padStart(6)} % of cuBLAS FP32` : ""}`);
    }
    for (const buffer of [A, B, C]) device.free(buffer);
  }
  return rows;
}

/** Seed variants at large sizes on any backend, timed by the device (events or timestamp queries). */
async function largeSizes(device: Device, sizes: readonly number[], only?: readonly string[]): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const n of sizes) {
    const A = device.createBuffer(random(n * n));
    const B = device.createBuffer(random(n * n));
    const C = device.createBuffer("f32", n * n);
    for (const variant of seedVariants) {
      if (only && !only.includes(variant.id)) continue;
      if (unsupportedSize(variant, n)) continue;
      if (variant.id === "kahan" || variant.id === "tiled-2x2" || variant.id === "sgemm-naive") continue; // slow rungs, nothing new
      const kernel = library.firstFitting(variant.kernel, variant.specializations, device.limits);
      if (!kernel) continue;
      const constants = kernel.description.specialization as Record<string, number>;
      const launch = variant.launch(n, { A, B, C, device }, 1, 0, constants);
      const timing = await device.time(kernel, launch, { warmup: 1, runs: 5 });
      launch.release?.();
      const tflops = (2 * n ** 3) / (timing.medianMs * 1e9);
      const percent = percentOfCublas(n, timing.medianMs);
      log(`${device.backend} n=${n}  ${variant.id.padEnd(18)} ${timing.medianMs.toFixed(3).padStart(9)} ms  ${tflops.toFixed(2).padStart(6)} TFLOP/s${percent !== undefined ? `  ${percent.toFixed(1).padStart(6)} % of cuBLAS FP32 (CUDA part)` : ""}`);
      rows.push({ n, variant: variant.id, specialization: constants, ms: timing.medianMs, tflops, method: timing.method, ...(percent !== undefined ? { percentOfCublasFp32: percent } : {}) });
    }
  }
  return rows;
}

async function launchOverhead(device: CudaDevice): Promise<Record<string, number>> {
  const kernel = library.get("gelu");
  const out = device.createBuffer("f32", 1);
  const input = device.createBuffer("f32", 1);
  // n = 0: every thread returns at once, so the time is the launch path itself.
  const launch = { grid: [1] as [number], args: [out, input, 0] };
  for (let i = 0; i < 100; i++) device.enqueue(kernel, launch);
  await device.synchronize();
  const count = 10_000;
  const start = performance.now();
  for (let i = 0; i < count; i++) device.enqueue(kernel, launch);
  await device.synchronize();
  const totalMs = performance.now() - start;
  const result = { launches: count, totalMs, microsecondsPerLaunch: (totalMs * 1000) / count };
  log(`launch overhead: ${result.microsecondsPerLaunch.toFixed(2)} µs per launch (${count} launches, argument checks and packing included)`);
  return result;
}

/**
 * `--only profile`: one launch each of what matmul() runs at 4096³ and at 1000³ (fixed rule) and of cuBLAS
 * FP32 at 4096³, nothing else, for Nsight Compute (gpu.sh runs this under ncu when the machine has it).
 */
async function profileLaunches(): Promise<void> {
  const device = createCudaDevice();
  for (const [m, n, k] of [[4096, 4096, 4096], [1000, 1000, 1000]] as const) {
    const A = device.createBuffer(random(m * k));
    const B = device.createBuffer(random(k * n));
    const C = device.createBuffer("f32", m * n);
    const choice = chooseMatmul(device, library, { m, n, k, tuning: false });
    const { rung, kernel, constants } = choice;
    const launch = matmulLaunch(device, choice, { m, n, k }, { A, B, C });
    await device.launch(kernel, launch);
    await device.synchronize();
    launch.release();
    log(`profiled ${m}×${n}×${k}: ${rung.name} ${formatConstants(constants)}`);
    if (m === 4096) {
      device.cublasSgemm(m, n, k, 1, A, B, 0, C, false)();
      await device.synchronize();
      log(`profiled ${m}×${n}×${k}: cuBLAS SGEMM (FP32)`);
    }
    for (const buffer of [A, B, C]) device.free(buffer);
  }
}

/**
 * `--only tune-wide`: a wider search of the double-buffered warp-tiled rung at 4096³ than the full run's
 * (block tiles of 128 and 256, 40 candidates), to see whether larger tiles close the last few percent to
 * cuBLAS, whose FP32 kernel on the H100 uses 256×128 tiles.
 */
async function tuneWide(): Promise<void> {
  const device = createCudaDevice();
  const rung = matmulRungs.find((r) => r.name === "sgemm-warptiling-double-buffered")!;
  // Run 10 searched WM, WN from 32 and TM from 4 (nothing beyond 96.7 %); this space keeps the large warp
  // tiles of the defaults (64×64 and up, TM = 8) and adds BK = 32, which dynamic shared memory now allows.
  const space = { BM: [128, 256], BN: [128, 256], BK: [8, 16, 32], WM: [64, 128], WN: [64, 128], WNITER: [1, 2, 4], TM: [8], TN: [4, 8], THREADS: [128, 256] };
  const wide = { ...rung, search: { ...rung.search!, space } };
  await section("cuda.tuneWide", async () => {
    const A = device.createBuffer(random(4096 * 4096));
    const B = device.createBuffer(random(4096 * 4096));
    const C = device.createBuffer("f32", 4096 * 4096);
    const cublas = device.timeEnqueued(device.cublasSgemm(4096, 4096, 4096, 1, A, B, 0, C, false), { warmup: 5, runs: 20 });
    noteCublasFp32(4096, cublas.medianMs);
    for (const buffer of [A, B, C]) device.free(buffer);
    const report = await tuneMatmul(device, { sizes: [4096], runs: 10, table: [wide], rungs: [wide.name], maxCandidates: 40, onProgress: (line) => log(`  ${line}`) });
    log(formatTuneTable(report));
    for (const best of report.best) log(`tune-wide: n=${best.n} ${formatConstants(best.constants)} ${(best.gflops / 1000).toFixed(2)} TFLOP/s, ${percentOfCublas(best.n, best.ms)?.toFixed(1)} % of cuBLAS FP32 (${(2 * 4096 ** 3 / (cublas.medianMs * 1e9)).toFixed(2)} TFLOP/s)`);
    fs.writeFileSync(path.join(outDir, "tune-wide-cuda.json"), `${JSON.stringify(report, null, 2)}\n`);
    return { cublasMs: cublas.medianMs, best: report.best };
  });
}

/** The torch.mm comparison's report, when bench/torch-matmul.py wrote one: its summary joins the results. */
async function joinTorchMatmul(): Promise<void> {
  const file = option("--torch-matmul", "");
  if (!file || !fs.existsSync(file)) return;
  await section("torch.matmul", async () => {
    const report = JSON.parse(fs.readFileSync(file, "utf8")) as TorchReport;
    log(formatTorchTable(report));
    for (const line of bestBuilds(report)) log(line);
    fs.writeFileSync(path.join(outDir, "torch-matmul.svg"), torchChartSvg(report, `tskernel SGEMM against torch.mm, ${report.device}, ${report.date.slice(0, 10)}`));
    const { shapes, ...about } = report;
    return { ...about, file: path.basename(file), shapes: shapes.map(({ candidates, ...shape }) => ({ ...shape, candidates: candidates.length })) };
  });
}

async function main(): Promise<void> {
  if (only === "kernels-plan") return writeKernelsPlan(option("--cubin-kernels", "kernels-cubin"), outDir, log, option("--cases", "all"));
  if (only === "kernels") {
    await runKernels({
      cubinDir: option("--cubin-kernels", "kernels-cubin"),
      wgslDir: option("--kernels", "kernels"),
      outDir,
      torch: option("--torch", path.join(outDir, "torch.json")),
      root: option("--root", process.cwd()),
      tuneSeconds: Number(option("--tune-seconds", "150")),
      tuneCases: option("--tune-cases", "all"),
      cases: option("--cases", "all"),
      log,
    });
    return;
  }
  if (only === "launch" || only === "launch-fault") {
    const run = only === "launch" ? runLaunch : runLaunchFault;
    return run({ kernelsDir: option("--kernels", "kernels"), outDir, torch: option("--torch", path.join(outDir, "torch-launch.json")), log });
  }
  library = loadKernelLibrary(option("--kernels", "kernels"));
  if (only === "profile") return profileLaunches();
  if (only === "tune-wide") return tuneWide();
  let cuda: CudaDevice | undefined;
  // `--only collectives`: the atomics and subgroup examples alone, on CUDA and then Dawn.
  const collectivesOnly = only === "collectives";
  if (only === "all" || only === "cuda" || collectivesOnly) await section("cuda.device", async () => {
    cuda = createCudaDevice();
    log(`CUDA device: ${cuda.name} (${cuda.arch}), driver ${cuda.driverVersion}`);
    return { name: cuda.name, arch: cuda.arch, driverVersion: cuda.driverVersion };
  });
  if (cuda && collectivesOnly) await section("cuda.collectiveExamples", () => collectiveExamples(cuda!));
  if (cuda && !collectivesOnly) {
    const device = cuda;
    await section("cuda.ladder", () => ladder(device, [37, 1000, 1024], 5));
    await section("cuda.classics", () => classics(device));
    await section("cuda.collectiveExamples", () => collectiveExamples(device));
    await section("cuda.differential", () => differential(device, 256));
    await section("cuda.launchOverhead", () => launchOverhead(device));
    await section("cuda.versusCublas", () => versusCublas(device, [1024, 2048, 4096]));
    await section("cuda.benchMatmul", async () => {
      // `tskernel bench matmul --backend cuda`, as the CLI runs it, with its JSON and SVG.
      const rows = await benchMatmul(device, { sizes: [1024, 2048, 4096], runs: 9, library, references: [device.cublasReference(false), device.cublasReference(true)] });
      for (const [n, ms] of referenceTimes(rows)) noteCublasFp32(n, ms);
      log(formatBenchTable(rows));
      fs.writeFileSync(path.join(outDir, "bench-matmul-cuda.svg"), benchChartSvg(rows, `tskernel matmul ladder, ${device.name} (CUDA), ${new Date().toISOString().slice(0, 10)}`));
      return rows;
    });
    const tuneStore = new TuningStore(path.join(outDir, "tune-store"), (message) => log(`warning: ${message}`));
    await section("cuda.tune", async () => {
      // `tskernel tune matmul --backend cuda --sizes 1024,4096 --max-candidates 8` over the fastest rungs: at
      // most 8 candidates per rung (40 NVRTC compiles), which keeps the step to a few minutes on an H100.
      const report = await tuneMatmul(device, {
        sizes: [1024, 4096],
        runs: 5,
        rungs: ["sgemm-multistage", "sgemm-warptiling-double-buffered", "sgemm-warptiling", "sgemm-multistage-guarded", "sgemm-warptiling-guarded"],
        maxCandidates: 8,
        store: tuneStore,
        onProgress: (line) => log(`  ${line}`),
      });
      log(formatTuneTable(report));
      fs.writeFileSync(path.join(outDir, "tune-matmul-cuda.json"), `${JSON.stringify(report, null, 2)}\n`);
      // The CUDA introduction's odd 1000³ takes only the guarded rung: search it further at that very size
      // (its results go to the same shape class as n = 1024, where matmul() looks them up).
      const odd = await tuneMatmul(device, { sizes: [1000], runs: 5, rungs: ["sgemm-multistage-guarded"], maxCandidates: 24, store: tuneStore, onProgress: (line) => log(`  ${line}`) });
      log(formatTuneTable(odd));
      fs.writeFileSync(path.join(outDir, "tune-matmul-cuda-1000.json"), `${JSON.stringify(odd, null, 2)}\n`);
      const summary = report.best
        .filter((b) => b.overall)
        .map((b) => {
          const percent = percentOfCublas(b.n, b.ms);
          return { n: b.n, rung: b.rung, constants: b.constants, tflops: b.gflops / 1000, defaultTflops: b.defaultGflops !== undefined ? b.defaultGflops / 1000 : undefined, percentOfCublasFp32: percent };
        });
      const count = (status: string) => report.candidates.filter((c) => c.status === status).length;
      for (const s of summary) {
        log(`tune: n=${s.n} fastest ${s.rung} ${formatConstants(s.constants)} ${s.tflops.toFixed(2)} TFLOP/s${s.percentOfCublasFp32 !== undefined ? ` (${s.percentOfCublasFp32.toFixed(1)} % of cuBLAS FP32)` : ""}${s.defaultTflops !== undefined ? `, its defaults ${s.defaultTflops.toFixed(2)}` : ""}`);
      }
      log(`tune: ${count("ok")} verified, ${count("wrong")} wrong, ${count("pruned")} pruned, ${count("failed")} failed; report tune-matmul-cuda.json, store ${report.storeFile ?? "(not written)"}`);
      return { summary, verified: count("ok"), wrong: count("wrong"), pruned: count("pruned"), failed: count("failed"), storeFile: report.storeFile, storeError: report.storeError };
    });
    await section("cuda.shapes", async () => {
      // The issue's other goal shapes, through matmul() (any m, n, k) next to cuBLAS on the same buffers: the
      // fixed rule's choice, and the tuned one from the step above where there is one.
      const out: unknown[] = [];
      for (const [m, n, k] of [[4096, 4096, 1024], [1000, 1000, 1000], [4096, 4096, 4096], [8192, 8192, 8192], [2048, 2048, 2048], [1023, 1021, 1019]] as const) {
        const Ah = random(m * k);
        const Bh = random(k * n);
        const A = device.createBuffer(Ah);
        const B = device.createBuffer(Bh);
        const C = device.createBuffer("f32", m * n);
        const flops = 2 * m * n * k;
        const cublas = device.timeEnqueued(device.cublasSgemm(m, n, k, 1, A, B, 0, C, false), { warmup: 3, runs: 10 });
        const fixed = chooseMatmul(device, library, { m, n, k, tuning: false });
        const tuned = chooseMatmul(device, library, { m, n, k, tuning: tuneStore });
        const choices = tuned.tuned ? [["fixed rule", fixed], ["tuned", tuned]] as const : [["fixed rule", fixed]] as const;
        for (const [how, choice] of choices) {
          const { rung, kernel, constants } = choice;
          const launch = matmulLaunch(device, choice, { m, n, k }, { A, B, C });
          await device.launch(kernel, launch);
          const result = (await device.read(C)) as Float32Array;
          const sample = Array.from({ length: 512 }, () => Math.floor(Math.random() * m * n));
          const expected = referenceGemmAt(n, k, Ah, Bh, sample);
          const error = compareToReference(Float32Array.from(sample, (i) => result[i]!), expected);
          const ours = await device.time(kernel, launch, { warmup: 1, runs: 10 });
          launch.release();
          const row = { m, n, k, how, rung: rung.name, constants, ms: ours.medianMs, tflops: flops / (ours.medianMs * 1e9), cublasMs: cublas.medianMs, cublasTflops: flops / (cublas.medianMs * 1e9), percentOfCublasFp32: (100 * cublas.medianMs) / ours.medianMs, normwiseErrorSampled: error.normwiseRelative, pass: error.nonFinite === 0 && error.normwiseRelative < k * 2 ** -23 };
          log(`${m}×${n}×${k} (${how}): ${rung.name} ${formatConstants(constants)} ${row.tflops.toFixed(2)} TFLOP/s, cuBLAS FP32 ${row.cublasTflops.toFixed(2)}: ${row.percentOfCublasFp32.toFixed(1)} % (sampled error ${error.normwiseRelative.toExponential(2)})`);
          out.push(row);
        }
        for (const buffer of [A, B, C]) device.free(buffer);
      }
      return out;
    });
    await section("cuda.nvrtcError", async () => {
      // A compile error in generated CUDA must point at the TypeScript: break one statement of a kernel's
      // source after its #line directive and check that NVRTC's message names the .ts file and that line.
      const kernel = library.get("matmulTiled");
      const source = kernel.cuda!.source;
      const directive = /#line (\d+) "([^"]+\.ts)"\n(\s*)(.*;)\n/.exec(source.slice(source.indexOf("__global__")));
      if (!directive) throw new Error("no #line directive before a statement in the generated CUDA");
      const [whole, line, file, indent, statement] = directive;
      const broken = source.replace(whole, `#line ${line} "${file}"\n${indent}undeclared_in_this_test = 1; ${statement}\n`);
      try {
        createCudaDevice().compiled({ ...kernel, cuda: { ...kernel.cuda!, source: broken } });
        throw new Error("NVRTC accepted a broken kernel");
      } catch (error) {
        const message = (error as Error).message;
        const pointsAtTs = message.includes(`${file}(${line})`);
        log(`NVRTC error ${pointsAtTs ? "names" : "does NOT name"} ${file}(${line}): ${message.split("\n").find((l) => l.includes("error")) ?? message}`);
        return { file, line: Number(line), pointsAtTs, message };
      }
    });
    await section("cuda.cubinPath", async () => {
      // Kernels built to cubins by nvcc at build time: loaded with cuModuleLoadData, no NVRTC involved.
      const prebuilt = loadKernelLibrary(option("--cubin-kernels", "kernels-cubin"));
      const fresh = createCudaDevice();
      const { rows, ok } = await runDemo(fresh, { size: 257, library: prebuilt });
      log(formatDemoTable(rows));
      log(`modules loaded from build-time cubins: ${fresh.prebuiltLoads}`);
      return { ok, prebuiltModules: fresh.prebuiltLoads, rows };
    });
  }
  let webgpu: Device | undefined;
  if (only === "all" || only === "webgpu" || collectivesOnly) await section("webgpu.device", async () => {
    webgpu = await createWebGpuDevice();
    log(`WebGPU adapter: ${webgpu.name}; limits ${JSON.stringify(webgpu.limits)}`);
    return { name: webgpu.name, limits: webgpu.limits };
  });
  if (webgpu && collectivesOnly) await section("webgpu.collectiveExamples", () => collectiveExamples(webgpu!));
  if (webgpu && !collectivesOnly) {
    const device = webgpu;
    await section("webgpu.ladder", () => ladder(device, [37, 1024], 5));
    await section("webgpu.classics", () => classics(device));
    await section("webgpu.collectiveExamples", () => collectiveExamples(device));
    await section("webgpu.versusCublas", () => largeSizes(device, [2048, 4096]));
    await section("webgpu.toggles", async () => {
      // Dawn's safety work, off by default: bounds clamping on every access (robustness) and zeroing of
      // workgroup memory at each dispatch. Each toggle gets its own device (toggles are per instance).
      const out: Record<string, unknown> = {};
      for (const [label, options] of [
        ["default", []],
        ["disable_robustness", ["enable-dawn-features=disable_robustness"]],
        ["disable_workgroup_init", ["enable-dawn-features=disable_workgroup_init"]],
        ["both", ["enable-dawn-features=disable_robustness,disable_workgroup_init"]],
      ] as const) {
        const toggled = await createWebGpuDevice({ dawnOptions: [...options] });
        out[label] = await largeSizes(toggled, [2048], ["tiled-16", "cuda-samples-32", "sgemm-shared", "sgemm-warptiling"]);
      }
      return out;
    });
    await section("webgpu.large", async () => {
      const n = 4096;
      const kernel = library.get("matmulTiled");
      const A = device.createBuffer(random(n * n));
      const B = device.createBuffer(random(n * n));
      const C = device.createBuffer("f32", n * n);
      const timing = await device.time(kernel, { grid: [n / 16, n / 16], args: [C, A, B, n, n, n] }, { warmup: 1, runs: 10 });
      const tflops = (2 * n ** 3) / (timing.medianMs * 1e9);
      log(`WebGPU tiled-16 at n=${n}: ${timing.medianMs.toFixed(2)} ms (${tflops.toFixed(2)} TFLOP/s), ten launches in a row, ${timing.method}`);
      return { n, ...timing, tflops };
    });
  }
  await joinTorchMatmul();
  save();
  log(`\nwrote ${path.join(outDir, "gpu-results.json")}`);
}

await main();
// Dawn and the driver may keep native threads alive; the results are written.
process.exit(0);

