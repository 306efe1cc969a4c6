/**
 * The runtime's entry point in Node (`tskernel/runtime`): `createDevice` picks a backend (auto: cuda, then
 * webgpu, then cpu), the devices themselves, and the library, reference and error-report helpers that every
 * backend shares. The browser's entry, with no Node and no compiler, is webgpu/browser.ts (`tskernel/webgpu`).
 */

import { CpuDevice } from "./cpu/cpu-device.ts";
import { createWebGpuDevice } from "./webgpu/dawn.ts";
import { createCudaDevice } from "./cuda/cuda-device.ts";
import { BackendUnavailable, type BackendName, type Device, type DeviceOptions } from "./device.ts";

export * from "./device.ts";
export { CpuDevice } from "./cpu/cpu-device.ts";
export { createWebGpuDevice, type WebGpuDeviceOptions } from "./webgpu/dawn.ts";
export { WebGpuDevice, type WebGpuLaunchOptions } from "./webgpu/webgpu-device.ts";
export { createCudaDevice, CudaDevice, type CudaCompileOptions } from "./cuda/cuda-device.ts";
export { compileKernelLibrary, CompileFailure } from "./kernels.ts";
export { KernelLibrary, libraryFromManifest, filesToRead, type BuildFiles, type OutputTarget } from "./library.ts";
export { loadKernelLibrary } from "./load-library.ts";
export { LaunchError, kernelFits } from "./launch-check.ts";
export { declaredLaunch, evaluateFormula, type DeclaredLaunch, type DeclaredTensor } from "./declared-launch.ts";
export { LaunchFailure, type LaunchRef } from "./launch-ledger.ts";
export type { Manifest, ManifestKernel, ManifestLayout, ManifestParam } from "../compiler/lang/manifest.ts";
export { flattenValue, packColumns, packStructs, packValue, unpackColumns, unpackStructs, type LayoutValue } from "./layouts.ts";
export { KernelFault, type FaultKind } from "./kernel-fault.ts";
export { CheckFailures } from "./checked-build.ts";
export { createTensorMap, type TensorMapShape } from "./tensor-map.ts";
export { attention, attentionBackward, type AttentionBackwardTensors, type AttentionOptions, type AttentionShape } from "./attention.ts";
export { packageKernelLibrary, packageKernels, packageKernelsFrom, packageKernelFiles, packageKernelsDir, type PackageKernelOrigin } from "./package-kernels.ts";
export { referenceGemm, compareToReference, type ErrorReport } from "./reference.ts";
export { matmul, chooseMatmul, matmulRungs, matmulTolerance, matmulTolerance16, type MatmulChoice, type MatmulDtype, type MatmulOptions, type MatmulPrecision, type MatmulVariantName, type Rung, type RungSearch } from "./matmul/matmul.ts";
export { scaledMatmul, chooseScaledMatmul, scaledMatmulLaunch, scaledMatmulRungs, type ScaledMatmulChoice, type ScaledMatmulOptions, type ScaledMatmulVariantName, type ScaledRung } from "./matmul/scaled-matmul.ts";
export { tuneMatmul, formatTuneTable, type TuneOptions, type TuneReport } from "./matmul/tune.ts";
export { TuningStore, defaultTuningStore, shapeClass, type TunedEntry } from "./matmul/tune-store.ts";

/** Why `auto` passed over each GPU backend, for a caller that wants to say so. */
export const autoSkipped: { backend: BackendName; reason: string }[] = [];

export async function createDevice(options: DeviceOptions = {}): Promise<Device> {
  const backend = options.backend ?? "auto";
  // Checked GPU devices run checked builds only (compileKernelLibrary(…, { checked: true }), tskernel build
  // --checked); `auto` with checked keeps to the CPU's checked mode, which needs no other build.
  if (backend === "cpu" || (options.checked && backend === "auto")) return new CpuDevice({ checked: options.checked, workers: options.workers, subgroupSize: options.subgroupSize, timeLimitMs: options.timeLimitMs });
  if (backend === "cuda") return createCudaDevice({ checked: options.checked });
  if (backend === "webgpu") return createWebGpuDevice({ checked: options.checked });
  // auto: the GPU backends first, in the order DESIGN.md gives, then the CPU, which is always there.
  autoSkipped.length = 0;
  try {
    return createCudaDevice();
  } catch (error) {
    if (!(error instanceof BackendUnavailable)) throw error;
    autoSkipped.push({ backend: "cuda", reason: error.reason });
  }
  try {
    const device = await createWebGpuDevice({ swiftShaderFallback: false });
    return device;
  } catch (error) {
    if (!(error instanceof BackendUnavailable)) throw error;
    autoSkipped.push({ backend: "webgpu", reason: error.reason });
  }
  return new CpuDevice({ workers: options.workers, subgroupSize: options.subgroupSize, timeLimitMs: options.timeLimitMs });
}
