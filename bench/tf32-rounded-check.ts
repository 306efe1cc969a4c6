/**
 * A check of `matmul(…, { precision: "tf32-rounded" })` through the runtime on a CUDA GPU (run by the device tool
 * on the H100; not part of the test suite, which has no GPU), with the library built with cubins. On fresh random
 * inputs over a NaN-poisoned C, each shape must run the rung that rounds A once for the grid
 * (sgemm-wgmma-rounded: its scratch copy of A and its flags kept by the runtime, A's tensor map made over the
 * scratch) where M and N are multiples of 256, and an FP32 rung elsewhere; the rounded rung twice in a row on new
 * inputs (its flags must come back to 0) and after a larger and a smaller shape (the scratch grows, then is
 * reused). Each result is compared with float64 (normwise, sampled rows) within TF32's tolerance, and beside it
 * `precision: "tf32"` on the same inputs: the truncating rung (sgemm-wgmma-cluster, whose error should be the
 * larger), and the rounding rung where that is free (roundingIsFree: n ≥ 8192, m and k ≥ 4096). Prints JSON.
 *
 *   node tf32-rounded-check.mjs <kernels-cubin dir>
 */

import { createCudaDevice, loadKernelLibrary, matmul, matmulTolerance, type Device, type KernelLibrary } from "../runtime/index.ts";
import { roundingIsFree } from "../runtime/matmul/matmul.ts";

/** Normwise relative error of C against float64 over every `step`-th row (all columns), and its non-finite count. */
function errorOf(A: Float32Array, B: Float32Array, got: Float32Array, m: number, n: number, k: number): { error: number; nonFinite: number } {
  let num = 0;
  let den = 0;
  let nonFinite = 0;
  const step = m >= 4096 ? 61 : 7;
  for (let i = 0; i < m; i += step) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += A[i * k + p]! * B[p * n + j]!;
      const value = got[i * n + j]!;
      if (!Number.isFinite(value)) nonFinite++;
      num += (value - sum) ** 2;
      den += sum ** 2;
    }
  }
  return { error: Math.sqrt(num / den), nonFinite };
}

async function run(device: Device, library: KernelLibrary, [m, n, k]: readonly [number, number, number]) {
  const A = Float32Array.from({ length: m * k }, () => Math.random() * 2 - 1);
  const B = Float32Array.from({ length: k * n }, () => Math.random() * 2 - 1);
  const bufferA = device.createBuffer(A);
  const bufferB = device.createBuffer(B);
  const out: Record<string, unknown> = { m, n, k };
  for (const precision of ["tf32-rounded", "tf32"] as const) {
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const rung = await matmul(device, library, bufferA, bufferB, C, { m, n, k, tuning: false, precision });
    const { error, nonFinite } = errorOf(A, B, (await device.read(C)) as Float32Array, m, n, k);
    out[precision] = { rung, normwiseRelative: error, nonFinite };
    device.free(C);
  }
  device.free(bufferA);
  device.free(bufferB);
  const rounded = out["tf32-rounded"] as { rung: string; normwiseRelative: number; nonFinite: number };
  const truncated = out["tf32"] as { rung: string; normwiseRelative: number; nonFinite: number };
  const fits = m % 256 === 0 && n % 256 === 0 && k % 64 === 0;
  const expected = fits ? "sgemm-wgmma-rounded" : "an FP32 rung";
  // Where rounding is free (roundingIsFree), "tf32" takes the rounding rung too (the same bits as "tf32-rounded").
  out.tf32Expected = fits ? (roundingIsFree({ m, n, k }) ? "sgemm-wgmma-rounded" : "sgemm-wgmma-cluster") : "any";
  const tf32Ok = !fits || truncated.rung === out.tf32Expected;
  const rungOk = expected === "sgemm-wgmma-rounded" ? rounded.rung === expected : !rounded.rung.startsWith("sgemm-wgmma") && rounded.rung !== "sgemm-tensorcore";
  out.tolerance = matmulTolerance("tf32-rounded", k);
  out.pass = rungOk && tf32Ok && rounded.nonFinite === 0 && truncated.nonFinite === 0 && rounded.normwiseRelative <= (out.tolerance as number) && truncated.normwiseRelative <= (out.tolerance as number);
  return out;
}

async function main(): Promise<void> {
  const dir = process.argv[2] ?? "kernels-cubin";
  const device = await createCudaDevice();
  const library = loadKernelLibrary(dir);
  const results: unknown[] = [];
  for (const shape of [[1024, 512, 256], [1024, 512, 256], [4096, 4096, 4096], [4096, 8192, 4096], [512, 1024, 2048], [768, 384, 512]] as const) results.push(await run(device, library, shape));
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), results }, null, 1));
  device.dispose();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
