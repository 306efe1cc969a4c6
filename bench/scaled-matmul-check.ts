/**
 * A check of scaledMatmul() (runtime/matmul/scaled-matmul.ts) through the runtime on a CUDA GPU (run by the device
 * tool on the H100; the test suite has no GPU): the library built with cubins, fresh random e4m3 codes over the
 * format's finite range, scales, C poisoned with NaN (β = 0) or random (β ≠ 0), against a float64 product of the
 * decoded inputs within bf16's bound; the rung the rule picks (fp8gemm-wgmma-ws where n % 8 = 0 and k % 16 = 0,
 * partial tiles included; fp8gemm-tiled otherwise) and the tiled rung by name. Prints JSON; exits 1 on a failure.
 *
 *   node scaled-matmul-check.mjs <kernels-cubin dir>
 */

import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { float8Decode, float8Formats } from "../compiler/lang/float8.ts";
import { createCudaDevice, loadKernelLibrary } from "../runtime/index.ts";
import { matmulTolerance16 } from "../runtime/matmul/matmul16.ts";
import { scaledMatmul, type ScaledMatmulVariantName } from "../runtime/matmul/scaled-matmul.ts";
import { sampledNormwiseError } from "./sampled-error.ts";

const { exponentBits, mantissaBits, infinities } = float8Formats.e4m3;
const e4m3 = (code: number) => float8Decode(code, exponentBits, mantissaBits, infinities);
const randomCodes = (length: number) => Uint8Array.from({ length }, () => (Math.random() < 0.5 ? 0x80 : 0) | Math.floor(Math.random() * 0x7f));

async function main(): Promise<void> {
  const device = await createCudaDevice();
  const library = loadKernelLibrary(process.argv[2] ?? "kernels-cubin");
  const cases: { m: number; n: number; k: number; beta: number; variant?: ScaledMatmulVariantName; expected: string }[] = [
    { m: 1024, n: 512, k: 256, beta: 0, expected: "fp8gemm-wgmma-ws" },
    { m: 1000, n: 1000, k: 1008, beta: 0.5, expected: "fp8gemm-wgmma-ws" },
    { m: 2048, n: 2048, k: 2048, beta: 0, expected: "fp8gemm-wgmma-ws" },
    { m: 500, n: 300, k: 200, beta: 0, expected: "fp8gemm-tiled" },
    { m: 384, n: 512, k: 256, beta: -0.25, variant: "fp8gemm-tiled", expected: "fp8gemm-tiled" },
  ];
  const results: unknown[] = [];
  for (const { m, n, k, beta, variant, expected } of cases) {
    const aCodes = randomCodes(m * k);
    const btCodes = randomCodes(n * k);
    const old = Float64Array.from({ length: m * n }, () => (beta === 0 ? NaN : Math.random() * 2e4 - 1e4));
    const C = device.createBuffer("bf16", Uint16Array.from(old, (x) => (Number.isNaN(x) ? 0x7fff : bf16Bits(x))));
    const scaleA = 0.01 + Math.random();
    const scaleB = 0.01 + Math.random();
    const ran = await scaledMatmul(device, library, device.createBuffer("e4m3", aCodes), device.createBuffer("e4m3", btCodes), C, { m, n, k, scaleA, scaleB, beta, variant });
    const got = (await device.read(C, { bits: true })) as Uint16Array;
    const a = Float64Array.from(aCodes, e4m3);
    const bt = Float64Array.from(btCodes, e4m3);
    // Normwise relative error over sampled rows (every column), against float64; Bᵀ is n×k, so A·B's element (i, j)
    // is row i of A against row j of Bᵀ.
    const rowDot = (i: number, j: number) => {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += a[i * k + p]! * bt[j * k + p]!;
      return sum;
    };
    const { error, nonFinite } = sampledNormwiseError(
      m,
      n,
      m > 1024 ? 13 : 1,
      (i, j) => scaleA * scaleB * rowDot(i, j) + (beta === 0 ? 0 : beta * bf16FromBits(bf16Bits(old[i * n + j]!))),
      (i, j) => bf16FromBits(got[i * n + j]!),
    );
    const bound = matmulTolerance16("bf16", k);
    results.push({ m, n, k, beta, variant: variant ?? null, ran, normwiseRelative: error, bound, nonFinite, pass: ran === expected && nonFinite === 0 && error <= bound });
  }
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), results }, null, 1));
  device.dispose();
  process.exit(results.every((r) => (r as { pass: boolean }).pass) ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
