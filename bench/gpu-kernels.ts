/**
 * The memory-bound suite's part of the GPU run (bench/gpu-run.ts `--only kernels-plan` and `--only kernels`;
 * bench/gpu.sh runs both, with bench/torch-reference.py between them):
 * - the plan: every case at the shapes, built for CUDA from the nvcc cubins, for torch-reference.py;
 * - `tskernel bench kernels` on CUDA (the same cubins, so Node and PyTorch time the same binaries) and on
 *   WebGPU (Dawn on the GPU's Vulkan driver), each against the copy bandwidth of the same run, with PyTorch's
 *   figures joined from torch.json: JSON, chart and table;
 * - `tskernel tune kernels` on CUDA (NVRTC, in-process), within a time budget.
 */

import fs from "node:fs";
import path from "node:path";
import { createCudaDevice } from "../runtime/cuda/cuda-device.ts";
import { createWebGpuDevice } from "../runtime/webgpu/dawn.ts";
import type { WebGpuDevice } from "../runtime/webgpu/webgpu-device.ts";
import { loadKernelLibrary } from "../runtime/load-library.ts";
import type { Device } from "../runtime/device.ts";
import { benchKernels, type KernelBenchReport } from "../cli/kernels-bench/bench.ts";
import { resolveCases, shapeLabel, type KernelCase, type Shape } from "../cli/kernels-bench/cases.ts";
import { formatKernelTable, kernelChartSvg } from "../cli/kernels-bench/report.ts";
import { joinTorch, makePlan, readTorchResults, writePlan } from "../cli/kernels-bench/torch.ts";
import { formatTuneKernelsTable, tuneKernels } from "../cli/kernels-bench/tune.ts";

export interface KernelsRunOptions {
  /** `tskernel build --cubin` output (CUDA) and `--target wgsl` output (WebGPU). */
  readonly cubinDir: string;
  readonly wgslDir: string;
  readonly outDir: string;
  /** torch-reference.py's JSON, when it ran. */
  readonly torch?: string;
  /** Where examples/ and compiler/lang are for the tuner's in-process compiles. */
  readonly root?: string;
  /** Seconds the tuner may take in all; cases not reached are left out (and said so). */
  readonly tuneSeconds: number;
  /** Comma-separated case ids to tune, or "all". */
  readonly tuneCases?: string;
  /** Comma-separated case ids to bench, or "all" (the default). */
  readonly cases?: string;
  readonly log: (line: string) => void;
}

/** The suite's cases named in a comma-separated list (pinned builds too: resolveCases), or all of them for "all" or nothing. */
function selected(list: string | undefined): readonly KernelCase[] {
  const cases = resolveCases(list);
  if (typeof cases === "string") throw new Error(cases);
  return cases;
}

export function writeKernelsPlan(cubinDir: string, outDir: string, log: (line: string) => void, cases?: string): void {
  const file = path.join(outDir, "kernels-plan.json");
  const plan = makePlan(loadKernelLibrary(cubinDir), path.relative(outDir, cubinDir), { cases: selected(cases) });
  writePlan(file, plan);
  log(`plan: ${plan.cases.length} cases, ${plan.cases.reduce((n, c) => n + c.steps.length, 0)} launches -> ${file}`);
}

/** WebGPU buffers are bounded by the adapter's binding size: a 1-D shape above it is halved until it fits. */
function webgpuShapes(device: WebGpuDevice, log: (line: string) => void): (c: KernelCase) => readonly Shape[] {
  const maxElements = Math.floor(device.gpu.limits.maxStorageBufferBindingSize / 4);
  return (c) =>
    c.gpuShapes.map((shape) => {
      if (shape.length !== 1 || shape[0]! <= maxElements) return shape;
      let n = shape[0]!;
      while (n > maxElements) n /= 2;
      log(`webgpu: ${c.id} at n=${n} instead of ${shapeLabel(shape)} (maxStorageBufferBindingSize ${device.gpu.limits.maxStorageBufferBindingSize})`);
      return [n];
    });
}

export async function runKernels(options: KernelsRunOptions): Promise<Record<string, unknown>> {
  const { log } = options;
  const torch = options.torch && fs.existsSync(options.torch) ? readTorchResults(options.torch) : undefined;
  if (options.torch && !torch) log(`no PyTorch results at ${options.torch}: the CUDA rows go without them`);
  const reports: KernelBenchReport[] = [];
  const results: Record<string, unknown> = {};
  const save = () => {
    fs.writeFileSync(path.join(options.outDir, "kernels-bench.json"), `${JSON.stringify({ date: new Date().toISOString(), reports, ...results }, null, 2)}\n`);
  };
  const bench = async (device: Device, library: ReturnType<typeof loadKernelLibrary>, shapes?: (c: KernelCase) => readonly Shape[]) => {
    log(`\n== bench kernels on ${device.backend}: ${device.name}`);
    const start = performance.now();
    let report = await benchKernels(device, { library, cases: selected(options.cases), shapes, onProgress: (line) => log(`  ${line}`) });
    if (torch && device.backend === "cuda") report = joinTorch(report, torch);
    reports.push(report);
    log(`(${((performance.now() - start) / 1000).toFixed(1)} s)`);
    save();
  };

  // TSK_BENCH_BACKENDS (default "cuda,webgpu"): which backends `bench kernels` runs on. A call that only needs
  // Dawn's rows skips CUDA's: each large case spends seconds on the host making and checking its data.
  const backends = (process.env.TSK_BENCH_BACKENDS ?? "cuda,webgpu").split(",");
  const cuda = createCudaDevice();
  log(`CUDA: ${cuda.name} (${cuda.arch}), ${cuda.multiprocessors} SMs, L2 ${(cuda.l2Bytes / 2 ** 20).toFixed(0)} MiB, driver ${cuda.driverVersion}`);
  const cubins = loadKernelLibrary(options.cubinDir);
  if (backends.includes("cuda")) {
    await bench(cuda, cubins);
    log(`CUDA modules loaded from nvcc cubins: ${cuda.prebuiltLoads}`);
  }

  if (backends.includes("webgpu")) {
    try {
      const webgpu = await createWebGpuDevice();
      log(`WebGPU: ${webgpu.name}; maxStorageBufferBindingSize ${webgpu.gpu.limits.maxStorageBufferBindingSize}, maxBufferSize ${webgpu.gpu.limits.maxBufferSize}`);
      await bench(webgpu, loadKernelLibrary(options.wgslDir), webgpuShapes(webgpu, log));
    } catch (error) {
      log(`WebGPU FAILED: ${(error as Error).message}`);
      results.webgpuError = (error as Error).message;
    }
  }
  log(`\n${formatKernelTable(reports)}`);
  fs.writeFileSync(path.join(options.outDir, "kernels-bench.svg"), kernelChartSvg(reports, `tskernel memory-bound kernels, ${cuda.name}, CUDA and WebGPU, ${new Date().toISOString().slice(0, 10)}`));
  save();

  // The tuner last, within its time budget: one case at a time, so what finished is kept.
  if (options.tuneSeconds > 0) {
    log(`\n== tune kernels on cuda (NVRTC), ${options.tuneSeconds} s at most`);
    const deadline = performance.now() + options.tuneSeconds * 1000;
    const tuned: Awaited<ReturnType<typeof tuneKernels>>[] = [];
    for (const kernelCase of selected(options.tuneCases)) {
      if (performance.now() > deadline) {
        log(`tune: out of time before ${kernelCase.id}`);
        continue;
      }
      tuned.push(await tuneKernels(cuda, { library: cubins, cases: [kernelCase], root: options.root, runs: 10, onProgress: (line) => log(`  ${line}`) }));
      const merged = { backend: "cuda", device: cuda.name, date: new Date().toISOString(), candidates: tuned.flatMap((t) => t.candidates), best: tuned.flatMap((t) => t.best) };
      fs.writeFileSync(path.join(options.outDir, "kernels-tune-cuda.json"), `${JSON.stringify(merged, null, 2)}\n`);
      results.tune = merged.best;
    }
    log(formatTuneKernelsTable({ backend: "cuda", device: cuda.name, date: "", candidates: [], best: tuned.flatMap((t) => t.best) }));
    save();
  }
  return results;
}
