/**
 * A check of `matmul(…, { precision: "tf32" | "tf32-rounded" })` through the runtime on a CUDA GPU (run by the device
 * tool on the H100; not part of the test suite, which has no GPU), with the library built with cubins. On fresh
 * random inputs in [-1, 1] over a NaN-poisoned C, each shape must run the clustered rung where m and n are multiples
 * of 256 and k of 64, the warp-specialized one where n is only a multiple of 128, and an FP32 rung elsewhere, the
 * same for both precisions; where a TF32 rung ran, its normwise error against float64 (sampled rows) must be that
 * of two rounded inputs (below 3.3e-4: torch.mm's is 2.6e-4 on such inputs, A truncated gives 4.2e-4), which shows
 * that the runtime's tensor maps reach the driver as TFLOAT32 and the copies round. Beside it, the same rung launched
 * with plain f32 maps (A truncated by the tensor cores), whose error must be the larger. Prints JSON; exits 1 unless
 * every shape passes.
 *
 *   node tf32-check.mjs <kernels-cubin dir>
 */

import { chooseMatmul, createCudaDevice, loadKernelLibrary, matmul, matmulTolerance, type Device, type KernelLibrary } from "../runtime/index.ts";
import { matmulLaunch } from "../runtime/matmul/matmul.ts";
import { productElement, sampledNormwiseError } from "./sampled-error.ts";

/** Normwise relative error of C against float64 over a sample of rows (all columns), and its non-finite count. */
function errorOf(A: Float32Array, B: Float32Array, got: Float32Array, m: number, n: number, k: number) {
  return sampledNormwiseError(m, n, m >= 4096 ? 61 : 7, (i, j) => productElement(A, B, n, k, i, j), (i, j) => got[i * n + j]!);
}

/** The error of two inputs rounded to TF32 on these inputs lies near 2.6e-4; one truncated input's near 4.2e-4. */
const roundedBound = 3.3e-4;

async function run(device: Device, library: KernelLibrary, [m, n, k]: readonly [number, number, number]) {
  const A = Float32Array.from({ length: m * k }, () => Math.random() * 2 - 1);
  const B = Float32Array.from({ length: k * n }, () => Math.random() * 2 - 1);
  const bufferA = device.createBuffer(A);
  const bufferB = device.createBuffer(B);
  const out: Record<string, unknown> = { m, n, k };
  const poisoned = () => device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
  for (const precision of ["tf32", "tf32-rounded"] as const) {
    const C = poisoned();
    const rung = await matmul(device, library, bufferA, bufferB, C, { m, n, k, tuning: false, precision });
    out[precision] = { rung, ...errorOf(A, B, (await device.read(C)) as Float32Array, m, n, k) };
    device.free(C);
  }
  // The same rung with plain f32 maps: what the tensor cores make of A when its copy does not round it.
  const choice = chooseMatmul(device, library, { m, n, k, tuning: false, precision: "tf32" });
  if (choice.rung.tensorMapA) {
    const plain = { ...choice.rung, tensorMapA: { ...choice.rung.tensorMapA, roundToTf32: undefined }, ...(choice.rung.tensorMapB ? { tensorMapB: { ...choice.rung.tensorMapB, roundToTf32: undefined } } : {}) };
    const C = poisoned();
    const { grid, args, release } = matmulLaunch(device, { ...choice, rung: plain }, { m, n, k }, { A: bufferA, B: bufferB, C });
    await device.launch(choice.kernel, { grid, args });
    release();
    out.plainMaps = { rung: choice.rung.name, ...errorOf(A, B, (await device.read(C)) as Float32Array, m, n, k) };
    device.free(C);
  }
  device.free(bufferA);
  device.free(bufferB);
  const expected = m % 256 === 0 && k % 64 === 0 ? (n % 256 === 0 ? "sgemm-wgmma-cluster" : n % 128 === 0 ? "sgemm-wgmma-ws" : "an FP32 rung") : "an FP32 rung";
  const tf32 = out["tf32"] as { rung: string; error: number; nonFinite: number };
  const rounded = out["tf32-rounded"] as { rung: string; error: number; nonFinite: number };
  const plain = out.plainMaps as { error: number; nonFinite: number } | undefined;
  const tensorCores = expected !== "an FP32 rung";
  out.expected = expected;
  out.tolerance = matmulTolerance("tf32", k);
  out.pass =
    (tensorCores ? tf32.rung === expected : !tf32.rung.startsWith("sgemm-wgmma") && tf32.rung !== "sgemm-tensorcore") &&
    rounded.rung === tf32.rung &&
    tf32.nonFinite === 0 && rounded.nonFinite === 0 &&
    tf32.error <= (out.tolerance as number) && rounded.error <= (out.tolerance as number) &&
    (!tensorCores || (tf32.error < roundedBound && rounded.error < roundedBound && plain !== undefined && plain.nonFinite === 0 && plain.error > tf32.error));
  return out;
}

async function main(): Promise<void> {
  const dir = process.argv[2] ?? "kernels-cubin";
  const device = await createCudaDevice();
  const library = loadKernelLibrary(dir);
  const results: Record<string, unknown>[] = [];
  for (const shape of [[1024, 512, 256], [1024, 512, 256], [4096, 4096, 4096], [4096, 8192, 4096], [512, 1024, 2048], [768, 384, 512], [1000, 1000, 1000]] as const) results.push(await run(device, library, shape));
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), roundedBound, results }, null, 1));
  device.dispose();
  if (!results.every((r) => r.pass)) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
