/**
 * The TF32 SGEMM that rounds A once for the grid (examples/sgemm-wgmma-rounded.ts) on the CPU backend: the
 * producers claim half k-tiles with atomics, round them into the scratch copy Ar, count them done with release
 * adds and wait for each round's count with waitFlag before copying from Ar. Bit for bit against the documented emulation with
 * A rounded (not truncated), within float64's bound for two rounded inputs, Ar equal to roundTf32(A) everywhere
 * (every half k-tile rounded by someone, none twice wrongly), and every flag back to 0 after each launch so that a
 * second launch with other inputs is right too: on one thread, on worker threads (blocks that wait for flags that
 * blocks on the other thread set) and in checked mode; with rounds of 4 claims (K = 320 leaves the last partial) and
 * with the defaults through matmul().
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseMatmul, compileKernelLibrary, createTensorMap, matmul, type Device, type KernelHandle } from "../runtime/index.ts";
import { roundingFreeShape } from "../runtime/matmul/matmul.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { roundTf32 } from "../compiler/index.ts";
import { repoRoot } from "./golden-cases.ts";
import { emulateTf32Gemm, tf32WorstRatio } from "./tf32-gemm-reference.ts";

const file = path.join(repoRoot, "examples", "sgemm-wgmma-rounded.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

async function run(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number, grid: [number, number], launches = 1) {
  const Ar = device.createBuffer(new Float32Array(m * k).fill(Number.NaN));
  const flags = device.createBuffer(new Int32Array(2 * (m / 128) * (k / 32) + m / 128 + 1));
  const mapA = createTensorMap(device, Ar, { rows: m, cols: k, boxRows: 128, boxCols: 32 });
  const results = [];
  for (let launch = 0; launch < launches; launch++) {
    const A = random(m * k);
    const B = random(k * n);
    const C0 = beta === 0 ? undefined : random(m * n);
    const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
    const bufferB = device.createBuffer(B);
    const mapB = createTensorMap(device, bufferB, { rows: k, cols: n, boxRows: 32, boxCols: 32 });
    await device.launch(kernel, { grid, args: [m, n, k, alpha, device.createBuffer(A), bufferB, beta, C, mapA, mapB, Ar, flags] });
    results.push({
      gemm: { m, n, k, A, B, alpha, beta, C0, roundA: true },
      got: (await device.read(C)) as Float32Array,
      rounded: (await device.read(Ar)) as Float32Array,
      flags: (await device.read(flags)) as Int32Array,
    });
  }
  return results;
}

function expectRight({ gemm, got, rounded, flags }: Awaited<ReturnType<typeof run>>[number]) {
  expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(gemm)));
  expect(tf32WorstRatio(gemm, got)).toBeLessThanOrEqual(1);
  expect(Array.from(rounded)).toEqual(Array.from(gemm.A, roundTf32));
  expect(flags.every((flag) => flag === 0)).toBe(true);
}

describe("sgemm-wgmma-rounded.ts on the CPU backend", () => {
  // Rounds of 4 claims, 1 ahead, rounded 2 at a time: K = 320 (10 k-tiles) then takes three rounds, the last
  // partial, two claimed at a unit's start and the third a round ahead of its copies (the defaults' rounds of 16
  // would take one).
  const kernel = compileKernelLibrary([file], ["js"], { defines: new Map([["CLAIMS", "4"], ["LEAD", "1"], ["BATCH", "2"]]) }).get("sgemmWgmmaRounded");
  const shape: [number, number, number] = [512, 512, 320];

  it("rounds A once into Ar, matches the emulation with A rounded bit for bit, and leaves the flags at 0 (two launches)", async () => {
    const [first, second] = await run(new CpuDevice(), kernel, shape, 0.75, -0.5, [2, 1], 2);
    expectRight(first!);
    expectRight(second!);
    // Rounded, not truncated: the two emulations differ on these inputs.
    expect(Array.from(first!.got)).not.toEqual(Array.from(emulateTf32Gemm({ ...first!.gemm, roundA: false })));
  });

  it("on worker threads, three clusters sharing the rows' rounding, with β = 0 over C poisoned with NaN", async () => {
    const [result] = await run(new CpuDevice({ workers: 2 }), kernel, shape, 1.25, 0, [6, 1]);
    expectRight(result!);
  });

  it("runs in checked mode with no reports", async () => {
    const [result] = await run(new CpuDevice({ checked: true }), kernel, [256, 512, 128], 0.5, 0, [4, 1]);
    expectRight(result!);
  });
});

describe("matmul(…, { precision: \"tf32-rounded\" }) and the rounding rung", () => {
  const library = compileKernelLibrary(["sgemm-wgmma-rounded.ts", "sgemm-wgmma-cluster.ts", "sgemm-tensorcore.ts", "sgemm.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
  const shape = { m: 512, n: 256, k: 128, tuning: false as const };
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits }) as unknown as Device;

  it("takes it for tf32-rounded on sm_90, for tf32 only from n = 8192 on, and falls back on FP32 rungs elsewhere", () => {
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, precision: "tf32-rounded" }).rung.name).toBe("sgemm-wgmma-rounded");
    expect(chooseMatmul(cuda("sm_90"), library, { ...shape, precision: "tf32" }).rung.name).toBe("sgemm-wgmma-cluster");
    expect(chooseMatmul(cuda("sm_80"), library, { ...shape, precision: "tf32-rounded" }).rung.precision).toBeUndefined();
    // In roundingFreeShape's region "tf32" rounds A where the rung takes the shape and the device; below any of
    // its three bounds it truncates.
    const wide = { ...shape, ...roundingFreeShape };
    expect(chooseMatmul(cuda("sm_90"), library, { ...wide, precision: "tf32" }).rung.name).toBe("sgemm-wgmma-rounded");
    for (const smaller of [{ n: wide.n - 256 }, { m: wide.m - 256 }, { k: wide.k - 64 }]) {
      expect(chooseMatmul(cuda("sm_90"), library, { ...wide, ...smaller, precision: "tf32" }).rung.name).toBe("sgemm-wgmma-cluster");
    }
    expect(chooseMatmul(cuda("sm_90"), library, { ...wide, m: wide.m + 128, precision: "tf32" }).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cuda("sm_80"), library, { ...wide, precision: "tf32" }).rung.name).toBe("sgemm-tensorcore");
    expect(chooseMatmul(cuda("sm_90"), library, { ...wide, precision: "tf32", variant: "sgemm-wgmma-cluster" }).rung.name).toBe("sgemm-wgmma-cluster");
    expect(chooseMatmul(cuda("sm_90"), library, { ...wide, precision: "fp32" }).rung.precision).toBeUndefined();
    // A library without the rounding rung keeps the truncating one.
    const withoutRounding = compileKernelLibrary(["sgemm-wgmma-cluster.ts", "sgemm.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
    expect(chooseMatmul(cuda("sm_90"), withoutRounding, { ...wide, precision: "tf32" }).rung.name).toBe("sgemm-wgmma-cluster");
  });

  it("runs through matmul() by name on the CPU with the device's scratch (two shapes, the flags left at 0 between)", async () => {
    const device = new CpuDevice();
    for (const [m, n, k] of [[256, 256, 192], [512, 256, 128]] as const) {
      const A = random(m * k);
      const B = random(k * n);
      const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
      const ran = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, tuning: false, variant: "sgemm-wgmma-rounded" });
      expect(ran).toBe("sgemm-wgmma-rounded");
      const got = (await device.read(C)) as Float32Array;
      expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm({ m, n, k, A, B, alpha: 1, beta: 0, roundA: true })));
    }
  });
});
