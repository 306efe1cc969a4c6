/**
 * A check of `matmul(…, { dtype: "bf16" | "f16" })` through the runtime on a CUDA GPU (run by the device tool on the
 * H100; not part of the test suite, which has no GPU), with a library of CUDA C that the runtime compiles with NVRTC,
 * as a user's process does. On fresh random 16-bit inputs, each shape must run the warpgroup rung where n and k are
 * multiples of 8 (hgemm-wgmma-ws, or hgemm-wgmma-small where its large tiles number fewer than three quarters of
 * the multiprocessors) and the warp-level rung for any shape elsewhere (hgemm-mma-guarded,
 * examples/hgemm-mma-guarded.ts): odd lengths in every dimension, rows of whole 16-byte units with partial tiles, a
 * tiny product. β = 0 over a NaN-poisoned C (which must not be read) and α/β ≠ (1, 0) over a random C. Each result
 * is compared with float64 of the same 16-bit inputs, normwise over sampled rows, within matmulTolerance16. Prints
 * JSON.
 *
 *   node hgemm-any-check.mjs <kernels dir>
 */

import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";
import { createCudaDevice, loadKernelLibrary, matmul, matmulTolerance16, type Device, type KernelLibrary } from "../runtime/index.ts";
import { productElement, sampledNormwiseError } from "./sampled-error.ts";

async function run(device: Device, library: KernelLibrary, dtype: "bf16" | "f16", [m, n, k]: readonly [number, number, number], alpha: number, beta: number) {
  const [encode, decode] = dtype === "bf16" ? [bf16Bits, bf16FromBits] : [f16Bits, f16FromBits];
  const random = (length: number) => Uint16Array.from({ length }, () => encode(Math.random() * 2 - 1));
  const aBits = random(m * k);
  const bBits = random(k * n);
  const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : random(m * n);
  const C = device.createBuffer(dtype, cBits);
  const rung = await matmul(device, library, device.createBuffer(dtype, aBits), device.createBuffer(dtype, bBits), C, { m, n, k, alpha, beta, dtype, tuning: false });
  const got = (await device.read(C, { bits: true })) as Uint16Array;
  const a = Array.from(aBits, decode);
  const b = Array.from(bBits, decode);
  const { error, nonFinite } = sampledNormwiseError(
    m,
    n,
    m >= 2048 ? 31 : 1,
    (i, j) => alpha * productElement(a, b, n, k, i, j) + (beta === 0 ? 0 : beta * decode(cBits[i * n + j]!)),
    (i, j) => decode(got[i * n + j]!),
  );
  // The large tiles where they occupy at least three quarters of the multiprocessors, else the small ones (matmul16.ts).
  const multiprocessors = (device as Device & { readonly multiprocessors?: number }).multiprocessors ?? 1;
  const large = 4 * Math.ceil(m / 128) * Math.ceil(n / 256) >= 3 * multiprocessors;
  const expected = n % 8 === 0 && k % 8 === 0 ? (large ? "hgemm-wgmma-ws" : "hgemm-wgmma-small") : "hgemm-mma-guarded";
  const tolerance = matmulTolerance16(dtype, k);
  const rungOk = rung === (dtype === "bf16" ? expected : `${expected}-f16`);
  return { dtype, m, n, k, alpha, beta, rung, normwiseRelative: error, nonFinite, tolerance, pass: rungOk && nonFinite === 0 && error <= tolerance };
}

async function main(): Promise<void> {
  const dir = process.argv[2] ?? "kernels";
  const device = await createCudaDevice();
  const library = loadKernelLibrary(dir);
  const results: unknown[] = [];
  const shapes: readonly (readonly [number, number, number])[] = [[1023, 1021, 1019], [4095, 4095, 4095], [37, 29, 41], [200, 264, 72], [1000, 1000, 1000], [2048, 1000, 1001], [512, 512, 512], [2048, 2048, 2048]];
  for (const dtype of ["bf16", "f16"] as const) {
    for (const [index, shape] of shapes.entries()) {
      const [alpha, beta] = index % 2 === 0 ? [1, 0] : [0.75, -0.5];
      results.push(await run(device, library, dtype, shape, alpha, beta));
    }
  }
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), pass: results.every((r) => (r as { pass: boolean }).pass), results }, null, 1));
  device.dispose();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
