/**
 * The tensor-core SGEMM (examples/sgemm-tensorcore.ts) against float64, within TF32's error bound, on every
 * tested backend that has matrix operations (the CPU here; WebGPU has none, TSK3048), every specialization
 * that fits, with α/β ≠ (1, 0) and β = 0 over a C poisoned with NaN. On the CPU the result must also equal,
 * bit for bit, the emulation docs/language.md defines: inputs rounded to TF32 (cvt.rna), each product added
 * to the f32 accumulator in increasing k, then α·acc + β·C in f32.
 *
 * The bound, element by element, with u = 2^-11 (TF32's unit roundoff) and ε = 2^-24 (f32's):
 *   |C − Ĉ| ≤ |α|·(2u + u² + K·ε)·(|A|·|B|)ij + 3ε·(|α·(A·B)ij| + |β·C0ij|) + ε·|α|·(|A|·|B|)ij·(2u)
 * (each input rounded once, the products exact, K roundings of the sum, and the epilogue's three roundings).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { roundTf32 } from "../compiler/index.ts";
import { chooseMatmul, compileKernelLibrary, matmul, matmulTolerance, compareToReference, referenceGemm, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { kernelFits } from "../runtime/launch-check.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "sgemm-tensorcore.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);
const constantsOf = (h: KernelHandle) => h.description.specialization as Record<string, number>;
const label = (h: KernelHandle) => `${Object.entries(constantsOf(h)).map(([k, v]) => `${k}=${v}`).join(" ")}`;

export interface Tf32Check {
  /** The largest |error| / bound over C: at most 1 passes. */
  readonly worstRatio: number;
  /** The largest error relative to (|A|·|B|)ij·|α| + |β·C0ij|, for the record. */
  readonly maxRelative: number;
  readonly nonFinite: number;
}

/** Every element of `got` against float64 with the bound above. */
export function checkTf32(m: number, n: number, k: number, A: Float32Array, B: Float32Array, alpha: number, beta: number, C0: Float32Array | undefined, got: Float32Array): Tf32Check {
  const u = 2 ** -11;
  const eps = 2 ** -24;
  let worstRatio = 0;
  let maxRelative = 0;
  let nonFinite = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let exact = 0;
      let magnitude = 0;
      for (let p = 0; p < k; p++) {
        exact += A[i * k + p]! * B[p * n + j]!;
        magnitude += Math.abs(A[i * k + p]! * B[p * n + j]!);
      }
      const c0 = C0 ? C0[i * n + j]! : 0;
      const expected = alpha * exact + beta * c0;
      const bound = Math.abs(alpha) * (2 * u + u * u + k * eps) * magnitude * (1 + 2 * u) + 3 * eps * (Math.abs(alpha * exact) + Math.abs(beta * c0));
      const value = got[i * n + j]!;
      if (!Number.isFinite(value)) {
        nonFinite++;
        continue;
      }
      const error = Math.abs(value - expected);
      worstRatio = Math.max(worstRatio, error / bound);
      maxRelative = Math.max(maxRelative, error / (Math.abs(alpha) * magnitude + Math.abs(beta * c0)));
    }
  }
  return { worstRatio, maxRelative, nonFinite };
}

/** The CPU emulation's result, computed here independently in the documented order. */
function emulate(m: number, n: number, k: number, A: Float32Array, B: Float32Array, alpha: number, beta: number, C0: Float32Array | undefined): Float32Array {
  const out = new Float32Array(m * n);
  const a = A.map(roundTf32);
  const b = B.map(roundTf32);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum = Math.fround(sum + a[i * k + p]! * b[p * n + j]!);
      out[i * n + j] = beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * C0![i * n + j]!));
    }
  }
  return out;
}

async function run(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number) {
  const c = constantsOf(kernel);
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? undefined : random(m * n);
  const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
  await device.launch(kernel, { grid: [n / c.BN!, m / c.BM!], args: [m, n, k, alpha, device.createBuffer(A), device.createBuffer(B), beta, C] });
  const got = (await device.read(C)) as Float32Array;
  return { A, B, C0, got };
}

const shapeFor = (h: KernelHandle): [number, number, number] => {
  const c = constantsOf(h);
  return [c.BM! * 2, c.BN!, c.BK! * 3];
};

describe("sgemm-tensorcore.ts on the CPU backend", () => {
  const device = new CpuDevice();
  const kernels = compileKernelLibrary([file], ["js"]).kernels.filter((h) => kernelFits(h.description, device.limits));

  it("has every specialization the file lists", () => {
    expect(kernels.length).toBe(8);
  });

  it.each(kernels.map((h) => [label(h), h] as const))("%s: within TF32's bound of float64 and bit-exact to the documented emulation (α = 0.75, β = −0.5)", async (_, kernel) => {
    const [m, n, k] = shapeFor(kernel);
    const { A, B, C0, got } = await run(device, kernel, [m, n, k], 0.75, -0.5);
    const check = checkTf32(m, n, k, A, B, 0.75, -0.5, C0, got);
    expect(check.nonFinite).toBe(0);
    expect(check.worstRatio).toBeLessThanOrEqual(1);
    expect(Array.from(got)).toEqual(Array.from(emulate(m, n, k, A, B, 0.75, -0.5, C0)));
  });

  it.each(kernels.map((h) => [label(h), h] as const))("%s with β = 0 ignores C (NaN before the launch)", async (_, kernel) => {
    const [m, n, k] = shapeFor(kernel);
    const { A, B, got } = await run(device, kernel, [m, n, k], 1.25, 0);
    const check = checkTf32(m, n, k, A, B, 1.25, 0, undefined, got);
    expect(check.nonFinite).toBe(0);
    expect(check.worstRatio).toBeLessThanOrEqual(1);
  });

  it("is TF32, not FP32: its error exceeds what f32 inputs would give", async () => {
    const kernel = kernels.find((h) => constantsOf(h).BM === 64)!;
    const [m, n, k] = shapeFor(kernel);
    const { A, B, got } = await run(device, kernel, [m, n, k], 1, 0);
    // Rounding inputs to 10 mantissa bits costs about 2^-11 relative per product; f32 inputs would give ~2^-24·k.
    expect(checkTf32(m, n, k, A, B, 1, 0, undefined, got).maxRelative).toBeGreaterThan(2 ** -16);
  });

  it("in checked mode: no race, no unwaited copy, no out-of-bounds access", async () => {
    const checked = new CpuDevice({ checked: true });
    const kernel = kernels.find((h) => constantsOf(h).BM === 64)!;
    const [m, n, k] = shapeFor(kernel);
    const { A, B, C0, got } = await run(checked, kernel, [m, n, k], 1, 0.5);
    expect(Array.from(got)).toEqual(Array.from(emulate(m, n, k, A, B, 1, 0.5, C0)));
  });
});

describe("matmul(…, { precision })", () => {
  const device = new CpuDevice();
  const library = compileKernelLibrary([file, path.join(repoRoot, "examples", "sgemm-multistage.ts")], ["js"]);

  it("stays FP32 by default and takes the tensor-core rung for precision: \"tf32\" where its tiles divide the shape", () => {
    const shape = { m: 128, n: 128, k: 64, tuning: false as const };
    expect(chooseMatmul(device, library, shape).rung.name).toBe("sgemm-multistage");
    expect(chooseMatmul(device, library, { ...shape, precision: "fp32" }).rung.name).toBe("sgemm-multistage");
    expect(chooseMatmul(device, library, { ...shape, precision: "tf32" }).rung.name).toBe("sgemm-tensorcore");
    // 100 is no multiple of any tensor-core tile: FP32 rungs take it.
    expect(chooseMatmul(device, library, { m: 100, n: 100, k: 100, tuning: false, precision: "tf32" }).rung.precision).toBeUndefined();
  });

  it("runs TF32 end to end within TF32's tolerance, and FP32 within FP32's", async () => {
    const [m, n, k] = [128, 64, 96];
    const A = random(m * k);
    const B = random(k * n);
    const expected = referenceGemm(m, n, k, A, B);
    for (const precision of ["tf32", "fp32"] as const) {
      const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
      const rung = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, precision, tuning: false });
      // (k = 96 is no multiple of the FP32 multistage tiles: its guarded build takes it.)
      expect(rung).toBe(precision === "tf32" ? "sgemm-tensorcore" : "sgemm-multistage-guarded");
      const report = compareToReference((await device.read(C)) as Float32Array, expected);
      expect(report.nonFinite).toBe(0);
      expect(report.normwiseRelative).toBeLessThan(matmulTolerance(precision, k));
      // TF32 loses bits FP32 keeps: its error is the larger by far.
      if (precision === "tf32") expect(report.normwiseRelative).toBeGreaterThan(matmulTolerance("fp32", k));
    }
  });
});
