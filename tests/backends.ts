/**
 * The backends the differential tests run on. Every example runs on each listed backend against the same
 * float64 reference; the WebGPU and CUDA backends join this list as they land.
 */

import { BackendUnavailable, createDevice, type BackendName, type Device } from "../runtime/index.ts";

/**
 * The CPU always; WebGPU where an adapter exists (SwiftShader from Debian's chromium package on CI, which
 * .ci/run installs). Set TSKERNEL_REQUIRE_WEBGPU=1 to make a missing adapter a failure instead of a skip.
 */
export const testedBackends: readonly BackendName[] = ["cpu", "webgpu"];

/**
 * TSKERNEL_CHECKED_GPU=1: the GPU devices are checked (they refuse kernels built without checks) and the
 * example tests build their kernels checked for them (`gpuBuild`), so that every example runs its checked build
 * and any report fails its test (docs/language.md, "Checked GPU builds": none of the examples reports anything).
 */
export const checkedGpu = process.env.TSKERNEL_CHECKED_GPU === "1";

/** The compile options of a test's kernels for a target: checked for the GPU targets under TSKERNEL_CHECKED_GPU. */
export function gpuBuild(target: "js" | "wgsl" | "cuda"): { checked?: true } {
  return checkedGpu && target !== "js" ? { checked: true } : {};
}

/**
 * Example files whose checked WGSL SwiftShader cannot compile in reasonable time (its JIT, not the checks: Dawn
 * on an NVIDIA GPU runs them, bench/gpu-checked.ts): sgemm-multistage.ts took it over 10 minutes and 17 GB;
 * sgemm-warptiling.ts's seven unrolled specializations (950 KB of checked WGSL) end in std::bad_alloc past 14.6 GB
 * after 5 minutes (measured 2026-11-26 before and after the checks were thinned: the same), which on a 23 GB
 * machine gets the test process killed.
 * (blur-rgba8.ts, whose checked WGSL once aborted its LLVM backend with thousands of per-byte checks, runs since
 * a vector access is checked once.) Under TSKERNEL_CHECKED_GPU=1 on SwiftShader their tests are skipped with
 * this reason.
 */
const swiftShaderCheckedLimits: Readonly<Record<string, string>> = {
  "sgemm-multistage.ts": "SwiftShader's JIT takes over 10 minutes and 17 GB on the checked build",
  "sgemm-warptiling.ts": "SwiftShader's JIT runs out of memory (std::bad_alloc past 14 GB) on the checked build",
};

/** Why a checked build of an example file cannot run on this device (SwiftShader's JIT limits), or undefined. */
export function checkedBuildUnrunnable(device: Device, file: string): string | undefined {
  if (!checkedGpu || device.backend !== "webgpu" || !/swiftshader/i.test(device.name)) return undefined;
  return swiftShaderCheckedLimits[file.split("/").pop()!];
}

const devices = new Map<BackendName, Promise<Device | string>>();

/** The shared device of a backend, or the reason it is unavailable. */
export function deviceFor(backend: BackendName): Promise<Device | string> {
  let device = devices.get(backend);
  if (!device) {
    device = createDevice({ backend, ...(checkedGpu && backend !== "cpu" ? { checked: true } : {}) }).catch((error: unknown) => {
      if (error instanceof BackendUnavailable && process.env.TSKERNEL_REQUIRE_WEBGPU !== "1") return error.reason;
      throw error;
    });
    devices.set(backend, device);
  }
  return device;
}
