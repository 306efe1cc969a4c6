/**
 * The TF32 SGEMM in clusters of two blocks on a persistent grid (examples/sgemm-wgmma-cluster.ts) on the CPU
 * backend, where the blocks of a cluster run together (js.ts's clusterRunner): each block's multicast copy fills
 * both blocks' stages, both blocks' consumers release each stage on both blocks' empty barriers, and each cluster
 * walks several tiles (grids of one cluster and of three for four units), so a wrong mask, a missing remote
 * arrival, a wrong rank, a stage not released at a tile's end or a wrong column permutation shows as wrong
 * results or a reported deadlock. Against float64 within
 * TF32's bound and bit for bit against the documented emulation (A truncated, B rounded), for α/β ≠ (1, 0) and
 * for β = 0 over C poisoned with NaN; with maps that round as they copy (what matmul() makes), A and B rounded to
 * nearest even, on inputs with ties planted; a grid that is not a multiple of the cluster is refused. Fresh random
 * inputs.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseMatmul, compileKernelLibrary, createTensorMap, matmul, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";
import { emulateTf32Gemm, tf32WorstRatio } from "./tf32-gemm-reference.ts";

const file = path.join(repoRoot, "examples", "sgemm-wgmma-cluster.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

/** Random values, one in seven a tie for TF32 (low 13 bits 0x1000: ties to even and ties away then differ). */
function randomWithTies(length: number): Float32Array {
  const values = random(length);
  const bits = new Uint32Array(values.buffer);
  for (let i = 0; i < length; i += 7) bits[i] = (bits[i]! & ~0x1fff) | 0x1000;
  return values;
}

async function run(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number, grid: [number, number] = [2, 1], roundToTf32 = false) {
  const A = roundToTf32 ? randomWithTies(m * k) : random(m * k);
  const B = roundToTf32 ? randomWithTies(k * n) : random(k * n);
  const C0 = beta === 0 ? undefined : random(m * n);
  const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
  const bufferA = device.createBuffer(A);
  const bufferB = device.createBuffer(B);
  const mapA = createTensorMap(device, bufferA, { rows: m, cols: k, boxRows: 128, boxCols: 32, roundToTf32 });
  const mapB = createTensorMap(device, bufferB, { rows: k, cols: n, boxRows: 32, boxCols: 32, roundToTf32 });
  await device.launch(kernel, { grid, args: [m, n, k, alpha, bufferA, bufferB, beta, C, mapA, mapB] });
  const rounding = roundToTf32 ? { a: "even" as const, bMapRounds: true } : {};
  return { gemm: { m, n, k, A, B, alpha, beta, C0, ...rounding }, got: (await device.read(C)) as Float32Array };
}

describe("sgemm-wgmma-cluster.ts on the CPU backend", () => {
  const kernel = compileKernelLibrary([file], ["js"]).get("sgemmWgmmaCluster");
  // Two clusters of two blocks along n, two block rows; ten k-tiles, so the stages wrap and both parities are waited for.
  const shape: [number, number, number] = [512, 512, 320];

  it("declares its cluster in the manifest", () => {
    expect(kernel.description.cluster).toEqual([2, 1, 1]);
  });

  it("is within the bound of float64 and bit-exact to the emulation (α = 0.75, β = −0.5)", async () => {
    const { gemm, got } = await run(new CpuDevice(), kernel, shape, 0.75, -0.5);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
    expect(tf32WorstRatio(gemm, got)).toBeLessThanOrEqual(1);
  });

  it("with β = 0 ignores C (NaN before the launch), on worker threads, three clusters for four units", async () => {
    const { gemm, got } = await run(new CpuDevice({ workers: 2 }), kernel, shape, 1.25, 0, [6, 1]);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
  });

  it("with maps that round as they copy: A and B rounded to nearest even (ties planted), bit-exact, within two rounded inputs' bound", async () => {
    const { gemm, got } = await run(new CpuDevice(), kernel, shape, 0.75, -0.5, [2, 1], true);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
    expect(tf32WorstRatio(gemm, got)).toBeLessThanOrEqual(1);
    // Ties away from zero on A would give other bits: the rounding is the copy's, not roundTf32's.
    expect(Array.from(got)).not.toEqual(Array.from(emulateTf32Gemm({ ...gemm, a: "rounded" })));
  });

  it("runs in checked mode (a checker a block, one barrier clock), bit-exact, with no reports", async () => {
    const { gemm, got } = await run(new CpuDevice({ checked: true }), kernel, [256, 512, 128], 0.5, 0);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
  });

  it("refuses a grid that is not a multiple of the cluster", async () => {
    await expect(run(new CpuDevice(), kernel, [256, 512, 64], 1, 0, [3, 1])).rejects.toThrow("it runs in clusters of [2, 1, 1] blocks, so its grid must be a multiple of that; [3, 1, 1] is not");
  });
});

describe("matmul(…, { precision: \"tf32\" }) and the clustered rung", () => {
  const library = compileKernelLibrary(["sgemm-wgmma-cluster.ts", "sgemm-wgmma-ws.ts", "sgemm-tensorcore.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
  const shape = { m: 512, n: 256, k: 128, tuning: false as const, precision: "tf32" as const };
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits }) as unknown as Device;

  it("takes it first on an sm_90 GPU where N is a multiple of 256, sgemm-wgmma-ws where it is only one of 128", () => {
    expect(chooseMatmul(cuda("sm_90"), library, shape).rung.name).toBe("sgemm-wgmma-cluster");
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, n: 384 }).rung.name).toBe("sgemm-wgmma-ws");
    expect(chooseMatmul(cuda("sm_80"), library, shape).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(new CpuDevice(), library, shape).rung.name).toBe("sgemm-tensorcore");
  });

  it("runs through matmul() by name on the CPU, which makes A's tensor map with half-height boxes and B's in 32×32 boxes, both rounding", async () => {
    const [m, n, k] = [256, 256, 192];
    const device = new CpuDevice();
    const A = random(m * k);
    const B = random(k * n);
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const ran = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, tuning: false, variant: "sgemm-wgmma-cluster" });
    expect(ran).toBe("sgemm-wgmma-cluster");
    const got = (await device.read(C)) as Float32Array;
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm({ m, n, k, A, B, alpha: 1, beta: 0, a: "even", bMapRounds: true })));
  });
});
