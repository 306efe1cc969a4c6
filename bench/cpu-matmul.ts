/**
 * CPU backend benchmark (issue: CPU backend, "Speed"): the 16×16 tiled matmul example through the CPU
 * backend against a plain JavaScript triple loop over Float32Arrays, in the same process, same inputs,
 * n = 256 by default. Reports the median of several runs after a warm-up, GFLOP/s and the ratio; also the
 * time of `tskernel demo --backend cpu` at its default size, the checked mode's slowdown on the same
 * launch, and the speed-up from running blocks on worker threads (one per core) for the tiled kernel and for
 * the 2-D blocktiling SGEMM at 512. Writes JSON under bench/results/.
 * Run with `npm run bench:cpu` (builds first).
 */

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { packageRoot } from "../compiler/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { median } from "../runtime/device.ts";
import { compileKernelLibrary } from "../runtime/kernels.ts";
import { compareToReference, referenceGemm } from "../runtime/reference.ts";
import { timeAsync } from "./timing.ts";

const root = packageRoot();
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : fallback;
};
const n = Number(option("--size", "256"));
const runs = Number(option("--runs", "9"));

/** The baseline: the obvious i-k-j loop a JavaScript programmer would write, accumulating in f32 storage. */
function plainMatmul(C: Float32Array, A: Float32Array, B: Float32Array, size: number): void {
  C.fill(0);
  for (let i = 0; i < size; i++) {
    for (let k = 0; k < size; k++) {
      const a = A[i * size + k]!;
      for (let j = 0; j < size; j++) C[i * size + j]! += a * B[k * size + j]!;
    }
  }
}

function time(fn: () => void): number[] {
  fn();
  const out: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    fn();
    out.push(performance.now() - start);
  }
  return out;
}

const A = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
const B = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
const reference = referenceGemm(n, n, n, A, B);

const plainC = new Float32Array(n * n);
const plainMs = time(() => plainMatmul(plainC, A, B, n));
const plainError = compareToReference(plainC, reference).normwiseRelative;

const device = new CpuDevice();
const kernel = compileKernelLibrary([path.join(root, "examples", "matmul-tiled.ts")]).get("matmulTiled");
const a = device.createBuffer(A);
const b = device.createBuffer(B);
const c = device.createBuffer(new Float32Array(n * n).fill(Number.NaN));
const launch = { grid: [Math.ceil(n / 16), Math.ceil(n / 16)] as [number, number], args: [c, a, b, n, n, n] };
const tiledMs = time(() => device.run(kernel, launch));
const tiledError = compareToReference((await device.read(c)) as Float32Array, reference).normwiseRelative;

// The same launch in checked mode: every access and barrier checked.
const checkedDevice = new CpuDevice({ checked: true });
const checkedLaunch = { ...launch, args: [checkedDevice.createBuffer(new Float32Array(n * n)), checkedDevice.createBuffer(A), checkedDevice.createBuffer(B), n, n, n] };
const checkedMs = time(() => checkedDevice.run(kernel, checkedLaunch));

// Worker threads, one per core: the same tiled launch, and a larger SGEMM where each launch has more work.
const cores = os.availableParallelism();
const pooled = new CpuDevice({ workers: cores });
const pooledC = pooled.createBuffer(new Float32Array(n * n).fill(Number.NaN));
const pooledLaunch = { ...launch, args: [pooledC, pooled.createBuffer(A), pooled.createBuffer(B), n, n, n] };
// Each timed launch runs to its end (synchronize): launch() only enqueues.
const pooledMs = await timeAsync(() => pooled.launch(kernel, pooledLaunch).then(() => pooled.synchronize()), runs);
const pooledError = compareToReference((await pooled.read(pooledC)) as Float32Array, reference).normwiseRelative;
const big = 512;
const sgemm = compileKernelLibrary([path.join(root, "examples", "sgemm-blocktiling.ts")]).get("sgemm2DBlocktilingTransposedA");
const A2 = Float32Array.from({ length: big * big }, () => Math.random() * 2 - 1);
const B2 = Float32Array.from({ length: big * big }, () => Math.random() * 2 - 1);
const sgemmLaunch = (d: CpuDevice) => ({ grid: [big / 128, big / 128] as [number, number], args: [big, big, big, 1, d.createBuffer(A2), d.createBuffer(B2), 0, d.createBuffer("f32", big * big)] });
const oneThread = sgemmLaunch(device);
const sgemmOneMs = await timeAsync(() => device.launch(sgemm, oneThread).then(() => device.synchronize()), runs);
const manyThreads = sgemmLaunch(pooled);
const sgemmPooledMs = await timeAsync(() => pooled.launch(sgemm, manyThreads).then(() => pooled.synchronize()), runs);
const sgemmReference = referenceGemm(big, big, big, A2, B2);
const sgemmPooledError = compareToReference((await pooled.read(manyThreads.args[7] as never)) as Float32Array, sgemmReference).normwiseRelative;
pooled.dispose();

const demoStart = performance.now();
execFileSync(process.execPath, [path.join(root, "bin", "tskernel.js"), "demo", "--backend", "cpu"], { stdio: "pipe" });
const demoMs = performance.now() - demoStart;

const gflops = (ms: number) => (2 * n ** 3) / (ms * 1e6);
const date = new Date().toISOString().slice(0, 10);
const cpus = os.cpus();
const result = {
  benchmark: "cpu-matmul",
  date,
  machine: { cpus: cpus.length, cpuModel: cpus[0]?.model?.trim(), memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
  size: n,
  runs,
  plainJsTripleLoop: { medianMs: median(plainMs), gflops: gflops(median(plainMs)), normwiseError: plainError },
  tiled16CpuBackend: { medianMs: median(tiledMs), gflops: gflops(median(tiledMs)), normwiseError: tiledError },
  tiled16CheckedMode: { medianMs: median(checkedMs), gflops: gflops(median(checkedMs)) },
  tiled16Workers: { workers: cores, medianMs: median(pooledMs), gflops: gflops(median(pooledMs)), normwiseError: pooledError, speedup: median(tiledMs) / median(pooledMs) },
  sgemm2DTransposedA512: {
    size: big,
    oneThread: { medianMs: median(sgemmOneMs), gflops: (2 * big ** 3) / (median(sgemmOneMs) * 1e6) },
    workers: { workers: cores, medianMs: median(sgemmPooledMs), gflops: (2 * big ** 3) / (median(sgemmPooledMs) * 1e6), normwiseError: sgemmPooledError },
    speedup: median(sgemmOneMs) / median(sgemmPooledMs),
  },
  ratioTiledToPlain: median(plainMs) / median(tiledMs),
  checkedSlowdown: median(checkedMs) / median(tiledMs),
  demoCpuDefaultSizeMs: demoMs,
  goals: { ratioTiledToPlain: 0.5, demoCpuDefaultSizeMs: 30000 },
};
console.log(`machine: ${result.machine.cpus} × ${result.machine.cpuModel}, node ${result.machine.node}; n = ${n}, median of ${runs}`);
console.log(`plain JS triple loop:     ${median(plainMs).toFixed(1)} ms  ${gflops(median(plainMs)).toFixed(3)} GFLOP/s`);
console.log(`tiled 16×16, CPU backend: ${median(tiledMs).toFixed(1)} ms  ${gflops(median(tiledMs)).toFixed(3)} GFLOP/s  (${result.ratioTiledToPlain.toFixed(2)}× the plain loop; goal ≥ 0.5×)`);
console.log(`tiled 16×16, checked mode: ${median(checkedMs).toFixed(1)} ms  (${result.checkedSlowdown.toFixed(1)}× slower than unchecked)`);
console.log(`tiled 16×16 on ${cores} worker threads: ${median(pooledMs).toFixed(1)} ms (${result.tiled16Workers.speedup.toFixed(2)}× one thread)`);
console.log(`2-D SGEMM (A transposed) at ${big}: ${median(sgemmOneMs).toFixed(1)} ms on one thread, ${median(sgemmPooledMs).toFixed(1)} ms on ${cores} worker threads (${result.sgemm2DTransposedA512.speedup.toFixed(2)}×; error ${sgemmPooledError.toExponential(1)})`);
console.log(`tskernel demo --backend cpu (default size, whole process): ${(demoMs / 1000).toFixed(1)} s (goal < 30 s)`);
const tag = `${cpus.length}x-${(cpus[0]?.model ?? "cpu").trim().split(/\s+/).slice(0, 2).join("-")}`.replace(/[^\w.-]/g, "_");
const outFile = path.join(root, "bench", "results", `${date}-cpu-matmul-${tag}.json`);
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
