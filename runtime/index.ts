/**
 * The runtime's entry point: `createDevice` picks a backend (auto: cuda, then webgpu, then cpu), and the
 * library, reference and error-report helpers that every backend shares.
 */

import { CpuDevice } from "./cpu/cpu-device.ts";
import { BackendUnavailable, type BackendName, type Device, type DeviceOptions } from "./device.ts";

export * from "./device.ts";
export { compileKernelLibrary, KernelLibrary, CompileFailure, type KernelHandle } from "./kernels.ts";
export { LaunchError } from "./launch-check.ts";
export { KernelFault, type FaultKind } from "./cpu/checker.ts";
export { referenceGemm, compareToReference, type ErrorReport } from "./reference.ts";

const gpuPending: Partial<Record<BackendName, string>> = {
  cuda: "the CUDA backend (driver API and NVRTC through koffi) is not part of this build yet",
  webgpu: "the WebGPU backend (Dawn through the webgpu package) is not part of this build yet",
};

export async function createDevice(options: DeviceOptions = {}): Promise<Device> {
  const backend = options.backend ?? "auto";
  if (options.checked && backend !== "cpu" && backend !== "auto") {
    throw new BackendUnavailable(backend, "checked mode runs on the CPU backend only (use --backend cpu)");
  }
  if (backend === "cpu" || options.checked) return new CpuDevice({ checked: options.checked });
  if (backend !== "auto") throw new BackendUnavailable(backend, gpuPending[backend] ?? "unknown backend");
  // auto: the GPU backends first, in the order DESIGN.md gives, then the CPU, which is always there.
  return new CpuDevice();
}
