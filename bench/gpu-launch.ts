/**
 * The launch-throughput part of the GPU run (bench/gpu-run.ts `--only launch`; bench/gpu.sh `--only launch`
 * runs bench/torch-launch.py first): on CUDA and on WebGPU (Dawn on the GPU's Vulkan driver), the semantic
 * checks of asynchronous launches (tests/launch-semantics.ts: order, reads and writes after launches, frees
 * while in use, replayed sequences with updates, streams and events) and then `tskernel bench launch` as the
 * CLI runs it, with PyTorch's per-op figures joined to the CUDA report; JSON, chart and text in the output
 * folder. `--only launch-fault` (run in a process of its own, as a CUDA fault leaves the context unusable)
 * launches a kernel that writes far outside its buffer and checks that the next synchronize raises a
 * LaunchFailure naming that launch.
 */

import fs from "node:fs";
import path from "node:path";
import { benchLaunch, formatLaunchReport, launchChartSvg, type LaunchBenchReport, type TorchLaunchResult } from "../cli/bench/launch.ts";
import { createCudaDevice } from "../runtime/cuda/cuda-device.ts";
import type { Device } from "../runtime/device.ts";
import { LaunchFailure } from "../runtime/launch-ledger.ts";
import { loadKernelLibrary } from "../runtime/load-library.ts";
import { createWebGpuDevice } from "../runtime/webgpu/dawn.ts";
import { checkLaunchSemantics } from "../tests/launch-semantics.ts";

export interface LaunchRunOptions {
  /** A `tskernel build` of the benchmark's examples for cuda, wgsl and js. */
  readonly kernelsDir: string;
  readonly outDir: string;
  /** bench/torch-launch.py's JSON, when it ran. */
  readonly torch?: string;
  readonly log: (line: string) => void;
}

export async function runLaunch(options: LaunchRunOptions): Promise<void> {
  const { log, outDir } = options;
  const library = loadKernelLibrary(options.kernelsDir);
  let torch: TorchLaunchResult | undefined;
  if (options.torch && fs.existsSync(options.torch)) torch = JSON.parse(fs.readFileSync(options.torch, "utf8")) as TorchLaunchResult;
  else log(`no PyTorch figures (${options.torch ?? "none given"})`);
  const reports: LaunchBenchReport[] = [];
  const semantics: Record<string, unknown> = {};
  const open: [string, () => Promise<Device>][] = [
    ["cuda", async () => createCudaDevice()],
    ["webgpu", () => createWebGpuDevice()],
  ];
  for (const [backend, create] of open) {
    let device: Device;
    try {
      device = await create();
    } catch (error) {
      log(`${backend}: unavailable: ${(error as Error).message}`);
      continue;
    }
    log(`== ${backend}: ${device.name}`);
    try {
      const results = await checkLaunchSemantics(device, { saxpy: library.get("saxpy"), gelu: library.get("gelu") });
      for (const result of results) log(`  semantics: ${result.check}: ${result.launches} launches, max error ${result.maxError.toExponential(2)}`);
      semantics[backend] = { pass: true, results };
    } catch (error) {
      log(`  semantics FAILED: ${(error as Error).stack}`);
      semantics[backend] = { pass: false, error: (error as Error).message };
    }
    try {
      const report = await benchLaunch(device, { library, scale: "gpu", onProgress: (m) => log(`  ${m}`) });
      reports.push(report);
      log(formatLaunchReport(report, backend === "cuda" ? torch : undefined));
    } catch (error) {
      log(`  bench launch FAILED: ${(error as Error).stack}`);
    }
    device.dispose();
    fs.writeFileSync(path.join(outDir, "launch.json"), `${JSON.stringify({ date: new Date().toISOString(), semantics, reports, ...(torch ? { torch } : {}) }, null, 2)}\n`);
  }
  const gpu = reports.find((r) => r.backend === "cuda")?.device ?? reports[0]?.device ?? "GPU";
  const backends = reports.map((r) => (r.backend === "webgpu" ? "WebGPU (Dawn)" : "CUDA")).join(" and ");
  fs.writeFileSync(path.join(outDir, "launch.svg"), launchChartSvg(reports, `tskernel launch throughput, ${gpu}: ${backends}, ${new Date().toISOString().slice(0, 10)}`, torch));
}

/** A launch that faults (saxpy over 2^28 elements of 1024-element buffers), then the checks on what synchronize raises. */
export async function runLaunchFault(options: LaunchRunOptions): Promise<void> {
  const { log } = options;
  const library = loadKernelLibrary(options.kernelsDir);
  const device = createCudaDevice();
  const saxpy = library.get("saxpy");
  const x = device.createBuffer(new Float32Array(1024).fill(1));
  const y = device.createBuffer(new Float32Array(1024).fill(1));
  await device.launch(saxpy, { grid: [4], args: [1024, 1, x, y] });
  await device.synchronize();
  // Launch #2 alone in flight: its writes run 1 GiB past y.
  await device.launch(saxpy, { grid: [2 ** 20], args: [2 ** 28, 1, x, y] });
  const error = await device.synchronize().then(
    () => undefined,
    (e: unknown) => e,
  );
  const result = {
    raised: error instanceof LaunchFailure,
    message: error instanceof Error ? error.message : String(error),
    launch: error instanceof LaunchFailure ? error.launch : undefined,
    kernel: error instanceof LaunchFailure ? error.kernel : undefined,
  };
  log(`launch fault: ${JSON.stringify(result)}`);
  const pass = result.raised && result.launch === 2 && result.kernel === "saxpy" && /CUDA_ERROR_ILLEGAL_ADDRESS/.test(result.message);
  log(`launch fault check: ${pass ? "pass" : "FAIL"}`);
  fs.writeFileSync(path.join(options.outDir, "launch-fault.json"), `${JSON.stringify({ ...result, pass }, null, 2)}\n`);
}
