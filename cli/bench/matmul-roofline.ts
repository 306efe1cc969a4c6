/**
 * `bench matmul --roofline`: after a device's rungs are measured, the copy bandwidth of the same device (the
 * memory roof, measured as `bench kernels` measures it), the compute roof (the GPU's nominal FP32 peak where
 * roofline.ts knows it, else the fastest rung of the run) and each rung's point at its estimated intensity.
 */

import path from "node:path";
import { packageRoot } from "../../compiler/index.ts";
import type { Device } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import { benchVariants } from "../demo/variants.ts";
import { measureCopy } from "../kernels-bench/bench.ts";
import type { BenchRow } from "./matmul.ts";
import { IntensityEstimates, matmulPoints, nominalPeakGflops, type Roof, type RooflinePoint } from "./roofline.ts";

export { rooflineSvg } from "./roofline.ts";

const estimates = new IntensityEstimates();

export async function matmulRoofline(device: Device, library: KernelLibrary, rows: readonly BenchRow[], onProgress: (message: string) => void): Promise<{ roof: Roof; points: RooflinePoint[] }> {
  // The bench kernels suite's copy sizes: 2^24 elements on the CPU (64 MiB each way), 2^26 on a GPU.
  const elements = device.backend === "cpu" ? 2 ** 24 : 2 ** 26;
  onProgress(`roofline: the device-to-device copy of ${elements} elements`);
  const copy = await measureCopy(device, elements, device.backend === "cpu" ? 5 : 20);
  const variants = benchVariants(library, device.backend);
  const rungOf = (_backend: string, id: string) => {
    const variant = variants.find((v) => v.id === id);
    return variant ? { file: path.join(packageRoot(), variant.file), kernel: variant.kernel } : undefined;
  };
  onProgress("roofline: estimating each rung's flops per byte");
  const points = matmulPoints(rows, rungOf, estimates);
  const nominal = nominalPeakGflops(device.name);
  const fastest = Math.max(0, ...points.map((p) => p.gflops));
  const peak = nominal !== undefined ? { gflops: nominal, source: "nominal" as const } : fastest > 0 ? { gflops: fastest, source: "measured" as const } : undefined;
  return { roof: { backend: device.backend, device: device.name, bandwidth: copy.gbps, peak }, points };
}
