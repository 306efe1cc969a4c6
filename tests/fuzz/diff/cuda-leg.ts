/**
 * The CUDA leg of the differential fuzzer: random programs (generate.ts) on CUDA and on the CPU backend,
 * each against the reference, on the GPU machine (bench/fuzz-cuda.ts is its command line, bundled by
 * bench/gpu-prep.sh and run by `bash bench/gpu.sh --only fuzz-cuda`). The summary goes to
 * `<out>/fuzz-cuda.json` and each failing program, with its mismatches, to `<out>/fuzz-cuda-failures/`.
 * Where CUDA cannot be opened (no GPU, no driver) the leg is skipped: the summary says why, nothing fails.
 */

import fs from "node:fs";
import path from "node:path";
import { BackendUnavailable, type Device } from "../../../runtime/device.ts";
import { CpuDevice } from "../../../runtime/cpu/cpu-device.ts";
import { createCudaDevice } from "../../../runtime/cuda/cuda-device.ts";
import { createProject } from "../../../compiler/index.ts";
import { runDiffCampaign, type DeviceUnderTest, type DiffSummary } from "./harness.ts";

export interface CudaLegOptions {
  readonly out: string;
  readonly seed: number;
  readonly count: number;
  /** Stop starting programs after this many seconds. */
  readonly seconds?: number;
  /** Opens the device under test (CUDA; a test passes another to exercise the leg without a GPU). */
  readonly open?: () => Device;
  /** The target the opened device runs ("cuda"; "js" for the CPU standing in for it in tests). */
  readonly target?: "cuda" | "js";
  readonly log?: (line: string) => void;
}

export type CudaLegSummary = (DiffSummary & { readonly skipped?: undefined }) | { readonly skipped: string; readonly date: string };

export async function runCudaLeg(options: CudaLegOptions): Promise<CudaLegSummary> {
  const log = options.log ?? (() => {});
  fs.mkdirSync(options.out, { recursive: true });
  const write = (summary: CudaLegSummary) => fs.writeFileSync(path.join(options.out, "fuzz-cuda.json"), `${JSON.stringify(summary, null, 2)}\n`);
  let device: Device;
  try {
    // FMA contraction stays on, as users get it: the generator keeps every value that flows on exact.
    device = (options.open ?? (() => createCudaDevice()))();
  } catch (error) {
    if (!(error instanceof BackendUnavailable)) throw error;
    const summary = { skipped: error.message, date: new Date().toISOString() };
    log(`fuzz-cuda: skipped: ${error.message}`);
    write(summary);
    return summary;
  }
  log(`fuzz-cuda: ${device.name}; ${options.count} programs from seed ${options.seed}`);
  const devices: DeviceUnderTest[] = [
    { backend: "cpu", device: new CpuDevice(), target: "js" },
    { backend: "cuda", device, target: options.target ?? "cuda" },
  ];
  const summary = await runDiffCampaign({
    seed: options.seed,
    count: options.count,
    seconds: options.seconds,
    devices,
    outDir: path.join(options.out, "fuzz-cuda-failures"),
    project: createProject(),
    // f16 and f64 outputs too: CUDA and the CPU have both.
    wide: true,
    log,
  });
  write(summary);
  log(`fuzz-cuda: ${summary.programs} programs in ${summary.seconds.toFixed(0)} s, ${summary.compared} outputs compared, ${summary.failures.length} failing`);
  log(`fuzz-cuda: worst errors (ulp): ${JSON.stringify(summary.worstUlps)}`);
  return summary;
}
