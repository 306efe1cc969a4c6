/**
 * A check of the warp-specialized TF32 rungs through the runtime on a CUDA GPU (run by the device tool on the
 * H100; not part of the test suite, which has no GPU): `matmul(…, { precision: "tf32" })` with the library
 * built with cubins, on fresh random inputs over a NaN-poisoned C, must pick sgemm-wgmma-cluster where N is a
 * multiple of 256 (launched in clusters of two blocks through cuLaunchKernel) and sgemm-wgmma-ws where it is
 * only one of 128, make A's tensor map through the driver (createTensorMap: cuTensorMapEncodeTiled through
 * koffi, half-height boxes for the clusters) and agree with a float64 product within TF32's tolerance; the same
 * through the cubin-free path (NVRTC) is not needed for this. Prints JSON.
 *
 *   node tensor-map-check.mjs <kernels-cubin dir>
 */

import { createCudaDevice, loadKernelLibrary, matmul, matmulTolerance } from "../runtime/index.ts";
import { productElement, sampledNormwiseError } from "./sampled-error.ts";

async function main(): Promise<void> {
  const dir = process.argv[2] ?? "kernels-cubin";
  const device = await createCudaDevice();
  const library = loadKernelLibrary(dir);
  const results: unknown[] = [];
  const expected = (n: number) => (n % 256 === 0 ? "sgemm-wgmma-cluster" : "sgemm-wgmma-ws");
  for (const [m, n, k] of [[1024, 512, 256], [512, 1024, 2048], [768, 384, 512], [4096, 4096, 4096]] as const) {
    const A = Float32Array.from({ length: m * k }, () => Math.random() * 2 - 1);
    const B = Float32Array.from({ length: k * n }, () => Math.random() * 2 - 1);
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const rung = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, tuning: false, precision: "tf32" });
    const got = (await device.read(C)) as Float32Array;
    // Normwise relative error against float64 over a sample of rows (all columns).
    const { error, nonFinite } = sampledNormwiseError(m, n, m >= 4096 ? 61 : 7, (i, j) => productElement(A, B, n, k, i, j), (i, j) => got[i * n + j]!);
    results.push({ m, n, k, rung, normwiseRelative: error, tolerance: matmulTolerance("tf32", k), nonFinite, pass: rung === expected(n) && nonFinite === 0 && error <= matmulTolerance("tf32", k) });
  }
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), results }, null, 1));
  device.dispose();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
