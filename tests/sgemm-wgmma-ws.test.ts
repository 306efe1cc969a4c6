/**
 * The warp-specialized wgmma SGEMM (examples/sgemm-wgmma-ws.ts) on the CPU backend, where each warpgroup of a
 * block runs as a coroutine and the mbarriers and the tensor copies (copyTile) are emulated: against float64 within TF32's error bound and bit
 * for bit against the emulation docs/language.md defines (the multiply is sgemm-wgmma.ts's, so
 * tests/sgemm-wgmma.test.ts's bound and order hold), with α/β ≠ (1, 0) and with β = 0 over a C poisoned with
 * NaN, unchecked and in checked mode, on fresh random inputs each run; and that `matmul(…, { precision:
 * "tf32" })` takes it on sm_90 (making A's tensor map itself) and passes over it elsewhere.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseMatmul, compileKernelLibrary, createTensorMap, matmul, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";
import { emulateTf32Gemm, tf32WorstRatio } from "./tf32-gemm-reference.ts";

const file = path.join(repoRoot, "examples", "sgemm-wgmma-ws.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

async function run(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number) {
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? undefined : random(m * n);
  const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
  const bufferA = device.createBuffer(A);
  const mapA = createTensorMap(device, bufferA, { rows: m, cols: k, boxRows: 256, boxCols: 32 });
  await device.launch(kernel, { grid: [n / 128, m / 256], args: [m, n, k, alpha, bufferA, device.createBuffer(B), beta, C, mapA] });
  return { gemm: { m, n, k, A, B, alpha, beta, C0 }, got: (await device.read(C)) as Float32Array };
}

describe("sgemm-wgmma-ws.ts on the CPU backend", () => {
  const [kernel] = compileKernelLibrary([file], ["js"]).kernels;
  // Two block rows and columns; ten k-tiles, so the four stages are refilled and both parities are waited for.
  const shape: [number, number, number] = [512, 256, 320];

  it("is one specialization of 384 threads: a producer warpgroup and two consumers", () => {
    expect(kernel!.description.specialization).toEqual({ STAGES: 4, SWIZZLE: 8 });
  });

  it("is within the bound of float64 and bit-exact to the emulation (α = 0.75, β = −0.5)", async () => {
    const { gemm, got } = await run(new CpuDevice(), kernel!, shape, 0.75, -0.5);
    expect(tf32WorstRatio(gemm, got)).toBeLessThanOrEqual(1);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
  });

  it("with β = 0 ignores C (NaN before the launch), in checked mode", async () => {
    const { gemm, got } = await run(new CpuDevice({ checked: true }), kernel!, shape, 1.25, 0);
    expect(tf32WorstRatio(gemm, got)).toBeLessThanOrEqual(1);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
  });
});

describe("matmul(…, { precision: \"tf32\" }) and the warp-specialized rung", () => {
  const library = compileKernelLibrary(["sgemm-wgmma-ws.ts", "sgemm-wgmma.ts", "sgemm-tensorcore.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
  const shape = { m: 512, n: 256, k: 128, tuning: false as const, precision: "tf32" as const };
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits }) as unknown as Device;

  it("takes it first on an sm_90 GPU, where its tiles divide the shape, and passes over it elsewhere", () => {
    expect(chooseMatmul(cuda("sm_90"), library, shape).rung.name).toBe("sgemm-wgmma-ws");
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, k: 96 }).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cuda("sm_80"), library, shape).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(new CpuDevice(), library, shape).rung.name).toBe("sgemm-tensorcore");
  });

  it("\"tf32-rounded\" takes the same rungs, but passes over sgemm-wgmma, which leaves A to the tensor cores to truncate", () => {
    const rounded = { ...shape, precision: "tf32-rounded" as const };
    expect(chooseMatmul(cuda("sm_90"), library, rounded).rung.name).toBe("sgemm-wgmma-ws");
    const withoutWs = compileKernelLibrary(["sgemm-wgmma.ts", "sgemm-tensorcore.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
    expect(chooseMatmul(cuda("sm_90"), withoutWs, shape).rung.name).toBe("sgemm-wgmma");
    expect(chooseMatmul(cuda("sm_90"), withoutWs, rounded).rung.name).toBe("sgemm-tensorcore");
  });

  it("runs through matmul() by name on the CPU, which makes and frees A's tensor map (rounding A as it copies)", async () => {
    const [m, n, k] = [256, 128, 192];
    const device = new CpuDevice();
    const A = random(m * k);
    const B = random(k * n);
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const ran = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, tuning: false, variant: "sgemm-wgmma-ws" });
    expect(ran).toBe("sgemm-wgmma-ws");
    const got = (await device.read(C)) as Float32Array;
    // A's map rounds it as it copies (ties to even); B is rounded in the consumers' registers.
    expect(tf32WorstRatio({ m, n, k, A, B, alpha: 1, beta: 0, a: "even" }, got)).toBeLessThanOrEqual(1);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm({ m, n, k, A, B, alpha: 1, beta: 0, a: "even" })));
  });
});
