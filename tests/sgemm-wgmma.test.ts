/**
 * The warpgroup (wgmma) SGEMM (examples/sgemm-wgmma.ts) on the CPU backend, against float64 within TF32's error
 * bound and bit for bit against the emulation docs/language.md defines, for both specializations, with
 * α/β ≠ (1, 0) and with β = 0 over a C poisoned with NaN, unchecked and in checked mode; and which rung
 * `matmul(…, { precision: "tf32" })` takes: this one on an sm_90 CUDA GPU only.
 *
 * The kernel computes Cᵀ = Bᵀ·Aᵀ: B is the register operand (rounded to TF32, cvt.rna) and A the shared one
 * (truncated to TF32, as the tensor cores read it). The bound, element by element, with u = 2^-11 and ε = 2^-24:
 *   |C − Ĉ| ≤ |α|·(3u + 2u² + K·ε)·(|A|·|B|)ij·(1 + 2u) + 3ε·(|α·(A·B)ij| + |β·C0ij|)
 * (a rounded input errs by at most u, a truncated one by 2u, the products are exact, K roundings of the sum,
 * the epilogue's three roundings).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { roundTf32, truncateTf32, warpgroupMarker } from "../compiler/index.ts";
import { chooseMatmul, compileKernelLibrary, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { warpgroupModuleMarker } from "../runtime/cuda/cuda-device.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "sgemm-wgmma.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);
const stagesOf = (h: KernelHandle) => (h.description.specialization as Record<string, number>).STAGES!;

/** The emulation's result, computed here in the documented order: k ascending, one f32 rounding per addition. */
function emulate(m: number, n: number, k: number, A: Float32Array, B: Float32Array, alpha: number, beta: number, C0: Float32Array | undefined): Float32Array {
  const a = A.map(truncateTf32);
  const b = B.map(roundTf32);
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum = Math.fround(sum + b[p * n + j]! * a[i * k + p]!);
      out[i * n + j] = beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * C0![i * n + j]!));
    }
  }
  return out;
}

/** The largest |error| / bound over C (at most 1 passes) and the count of non-finite outputs. */
function check(m: number, n: number, k: number, A: Float32Array, B: Float32Array, alpha: number, beta: number, C0: Float32Array | undefined, got: Float32Array) {
  const u = 2 ** -11;
  const eps = 2 ** -24;
  let worstRatio = 0;
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
      const bound = Math.abs(alpha) * (3 * u + 2 * u * u + k * eps) * magnitude * (1 + 2 * u) + 3 * eps * (Math.abs(alpha * exact) + Math.abs(beta * c0));
      const value = got[i * n + j]!;
      if (!Number.isFinite(value)) nonFinite++;
      else worstRatio = Math.max(worstRatio, Math.abs(value - (alpha * exact + beta * c0)) / bound);
    }
  }
  return { worstRatio, nonFinite };
}

async function run(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number) {
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? undefined : random(m * n);
  const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
  await device.launch(kernel, { grid: [n / 128, m / 256], args: [m, n, k, alpha, device.createBuffer(A), device.createBuffer(B), beta, C] });
  return { A, B, C0, got: (await device.read(C)) as Float32Array };
}

describe("sgemm-wgmma.ts on the CPU backend", () => {
  const kernels = compileKernelLibrary([file], ["js"]).kernels;
  // Two block rows and columns, four k-tiles (two iterations of the pair loop).
  const shape: [number, number, number] = [512, 256, 128];

  it("has both specializations", () => {
    expect(kernels.map(stagesOf).sort()).toEqual([3, 4]);
  });

  it.each(kernels.map((h) => [stagesOf(h), h] as const))("STAGES = %i: within the bound of float64 and bit-exact to the emulation (α = 0.75, β = −0.5)", async (_, kernel) => {
    const [m, n, k] = shape;
    const { A, B, C0, got } = await run(new CpuDevice(), kernel, shape, 0.75, -0.5);
    const result = check(m, n, k, A, B, 0.75, -0.5, C0, got);
    expect(result.nonFinite).toBe(0);
    expect(result.worstRatio).toBeLessThanOrEqual(1);
    expect(Array.from(got)).toEqual(Array.from(emulate(m, n, k, A, B, 0.75, -0.5, C0)));
  });

  it.each(kernels.map((h) => [stagesOf(h), h] as const))("STAGES = %i with β = 0 ignores C (NaN before the launch), in checked mode", async (_, kernel) => {
    const [m, n, k] = shape;
    const { A, B, got } = await run(new CpuDevice({ checked: true }), kernel, shape, 1.25, 0);
    expect(check(m, n, k, A, B, 1.25, 0, undefined, got).nonFinite).toBe(0);
    expect(Array.from(got)).toEqual(Array.from(emulate(m, n, k, A, B, 1.25, 0, undefined)));
  });
});

describe("matmul(…, { precision: \"tf32\" }) and the wgmma rung", () => {
  const library = compileKernelLibrary([file, path.join(repoRoot, "examples", "sgemm-tensorcore.ts"), path.join(repoRoot, "examples", "sgemm-multistage.ts")], ["js"]);
  const shape = { m: 512, n: 256, k: 128, tuning: false as const, precision: "tf32" as const };
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits }) as unknown as Device;

  it("takes it on an sm_90 GPU, where its tiles divide the shape", () => {
    expect(chooseMatmul(cuda("sm_90"), library, shape).rung.name).toBe("sgemm-wgmma");
    // k = 96 is no multiple of its two k-tiles of 32: the warp rung takes it.
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, k: 96 }).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, precision: "fp32" }).rung.precision).toBeUndefined();
  });

  it("passes over it on other GPUs and on the CPU, which run it only when asked for by name", () => {
    expect(chooseMatmul(cuda("sm_80"), library, shape).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cuda("sm_100"), library, shape).rung.name).toBe("sgemm-tensorcore");
    const cpu = new CpuDevice();
    expect(chooseMatmul(cpu, library, shape).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cpu, library, { ...shape, variant: "sgemm-wgmma" }).rung.name).toBe("sgemm-wgmma");
  });

  it("the CUDA backend marks modules that use wgmma as the runtime expects", () => {
    expect(warpgroupMarker).toBe(warpgroupModuleMarker);
    const source = compileKernelLibrary([file], ["cuda"]).kernels[0]!.cuda!.source;
    expect(source).toContain(warpgroupMarker);
  });
});
