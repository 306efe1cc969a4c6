/**
 * scaledMatmul() (runtime/matmul/scaled-matmul.ts), the fp8 GEMM as torch._scaled_mm takes it, on the CPU backend:
 * both rungs (the tiled kernel by the rule, the wgmma kernel by `variant` through its exact emulation) on fresh
 * random e4m3 codes over the format's whole finite range, with scales, β = 0 over a C poisoned with NaN and β ≠ 0
 * over a random C, at whole-tile and partial-tile shapes: bit for bit against the documented order (ascending k,
 * one f32 rounding per addition, α·sum (+ β·C) rounded to bf16 once) and within bf16's normwise bound of a float64
 * product of the decoded inputs. And which rung chooseScaledMatmul takes on a (faked) sm_90 and sm_80 GPU and on
 * the CPU, the launch it builds, and the errors for wrong element types, bad shapes, scales, variants and WebGPU;
 * nvcc's acceptance of the tiled kernel's CUDA for the GPUs it serves (sm_80, sm_90), without spills.
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { float8Decode, float8Formats } from "../compiler/lang/float8.ts";
import { compileKernelLibrary, type Device, type DeviceBuffer, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { matmul } from "../runtime/matmul/matmul.ts";
import { matmulTolerance16 } from "../runtime/matmul/matmul16.ts";
import { chooseScaledMatmul, scaledMatmul, scaledMatmulLaunch, scaledMatmulRungs, type ScaledMatmulOptions, type ScaledMatmulVariantName } from "../runtime/matmul/scaled-matmul.ts";
import { casesRoot, repoRoot } from "./golden-cases.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";

const { exponentBits, mantissaBits, infinities } = float8Formats.e4m3;
const e4m3 = (code: number) => float8Decode(code, exponentBits, mantissaBits, infinities);
/** Fresh random e4m3 codes of finite values (both signs, every magnitude; no NaN code, 0x7f and 0xff). */
const randomCodes = (length: number) => Uint8Array.from({ length }, () => (Math.random() < 0.5 ? 0x80 : 0) | Math.floor(Math.random() * 0x7f));

let library: KernelLibrary | undefined;
const libraryOf = () => (library ??= compileKernelLibrary(scaledMatmulRungs.map((r) => path.join(repoRoot, r.file)), ["js"]));

interface Run {
  readonly shape: readonly [number, number, number];
  readonly scaleA: number;
  readonly scaleB: number;
  readonly beta: number;
  readonly variant?: ScaledMatmulVariantName;
}

/** Runs scaledMatmul on fresh inputs and checks C bit for bit against the documented order and against float64. */
async function check({ shape: [m, n, k], scaleA, scaleB, beta, variant }: Run): Promise<ScaledMatmulVariantName> {
  const device = new CpuDevice();
  const aCodes = randomCodes(m * k);
  const btCodes = randomCodes(n * k);
  // β = 0: C poisoned with NaN (0x7fff), which the kernels must not read; otherwise random old values.
  const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : Uint16Array.from({ length: m * n }, () => bf16Bits(Math.random() * 2e4 - 1e4));
  const C = device.createBuffer("bf16", cBits);
  const ran = await scaledMatmul(device, libraryOf(), device.createBuffer("e4m3", aCodes), device.createBuffer("e4m3", btCodes), C, { m, n, k, scaleA, scaleB, beta, variant });
  const got = (await device.read(C, { bits: true })) as Uint16Array;
  const a = Array.from(aCodes, e4m3);
  const bt = Array.from(btCodes, e4m3);
  // The kernels take alpha as an f32.
  const alpha32 = Math.fround(scaleA * scaleB);
  let errorSquared = 0;
  let normSquared = 0;
  const wrong: string[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let exact = 0;
      for (let p = 0; p < k; p++) {
        const product = a[i * k + p]! * bt[j * k + p]!;
        sum = Math.fround(sum + product);
        exact += product;
      }
      const old = bf16FromBits(cBits[i * n + j]!);
      const value = beta === 0 ? Math.fround(alpha32 * sum) : Math.fround(Math.fround(alpha32 * sum) + Math.fround(Math.fround(beta) * old));
      if (got[i * n + j] !== bf16Bits(value) && wrong.length < 8) wrong.push(`C[${i}][${j}]: 0x${got[i * n + j]!.toString(16)}, expected 0x${bf16Bits(value).toString(16)}`);
      const reference = scaleA * scaleB * exact + (beta === 0 ? 0 : beta * old);
      errorSquared += (bf16FromBits(got[i * n + j]!) - reference) ** 2;
      normSquared += reference ** 2;
    }
  }
  expect(wrong).toEqual([]);
  const normwise = Math.sqrt(errorSquared / normSquared);
  expect(Number.isFinite(normwise)).toBe(true);
  // The output's rounding to bf16 (2^-8) and the f32 accumulation (k·2^-23).
  expect(normwise).toBeLessThan(matmulTolerance16("bf16", k));
  return ran;
}

/** A device with just what the choice reads: a CUDA GPU of an architecture, with the CPU's limits. */
const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits, multiprocessors: 132 }) as unknown as Device;

/** Awaits a call that must fail, and checks the error's class and whole message. */
async function expectError(call: () => Promise<unknown> | unknown, type: ErrorConstructor, message: string): Promise<void> {
  let caught: unknown;
  try {
    await call();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(type);
  expect((caught as Error).message).toBe(message);
}

describe("scaledMatmul() on the CPU", () => {
  it("takes the tiled rung by the rule: 256×256×128, scales 0.0125 and 3, β = 0 over a NaN-poisoned C", async () => {
    expect(await check({ shape: [256, 256, 128], scaleA: 0.0125, scaleB: 3, beta: 0 })).toBe("fp8gemm-tiled");
  }, 120_000);

  it("tiled, partial tiles and odd sizes (70×45×33), β = −0.5 over a random C", async () => {
    expect(await check({ shape: [70, 45, 33], scaleA: 0.75, scaleB: 1, beta: -0.5 })).toBe("fp8gemm-tiled");
  }, 120_000);

  it("runs the wgmma rung's emulation by variant: 256×256×128, β = 0 over a NaN-poisoned C", async () => {
    expect(await check({ shape: [256, 256, 128], scaleA: 2, scaleB: 0.125, beta: 0, variant: "fp8gemm-wgmma-ws" })).toBe("fp8gemm-wgmma-ws");
  }, 120_000);

  it("wgmma by variant with partial tiles and a partial k-step (200×264×144), β = 0.25 over a random C", async () => {
    expect(await check({ shape: [200, 264, 144], scaleA: 0.5, scaleB: 0.5, beta: 0.25, variant: "fp8gemm-wgmma-ws" })).toBe("fp8gemm-wgmma-ws");
  }, 120_000);
});

describe("chooseScaledMatmul and scaledMatmulLaunch", () => {
  const big: ScaledMatmulOptions = { m: 4096, n: 4096, k: 4096 };

  it("take the wgmma rung on sm_90 where n % 8 = 0 and k % 16 = 0, the tiled kernel elsewhere and on the CPU", () => {
    expect(chooseScaledMatmul(cuda("sm_90"), libraryOf(), big).rung.name).toBe("fp8gemm-wgmma-ws");
    expect(chooseScaledMatmul(cuda("sm_90"), libraryOf(), { m: 1000, n: 1000, k: 1008 }).rung.name).toBe("fp8gemm-wgmma-ws");
    expect(chooseScaledMatmul(cuda("sm_90"), libraryOf(), { ...big, n: 1020 }).rung.name).toBe("fp8gemm-tiled");
    expect(chooseScaledMatmul(cuda("sm_90"), libraryOf(), { ...big, k: 1000 }).rung.name).toBe("fp8gemm-tiled");
    expect(chooseScaledMatmul(cuda("sm_80"), libraryOf(), big).rung.name).toBe("fp8gemm-tiled");
    expect(chooseScaledMatmul(new CpuDevice(), libraryOf(), big).rung.name).toBe("fp8gemm-tiled");
    expect(chooseScaledMatmul(new CpuDevice(), libraryOf(), { ...big, variant: "fp8gemm-wgmma-ws" }).rung.name).toBe("fp8gemm-wgmma-ws");
  });

  it("build the tiled grid and the wgmma rung's persistent grid with its three tensor maps, freed by release", async () => {
    const device = new CpuDevice();
    const [m, n, k] = [200, 264, 144];
    const A = device.createBuffer("e4m3", new Uint8Array(m * k));
    const Bt = device.createBuffer("e4m3", new Uint8Array(n * k));
    const C = device.createBuffer("bf16", new Uint16Array(m * n));
    const tiled = scaledMatmulLaunch(device, chooseScaledMatmul(device, libraryOf(), { m, n, k }), { m, n, k }, { A, Bt, C }, 0.5, 0);
    expect(tiled.grid).toEqual([17, 13]);
    expect(tiled.args).toEqual([m, n, k, 0.5, A, Bt, 0, C]);
    const wgmma = scaledMatmulLaunch(device, chooseScaledMatmul(device, libraryOf(), { m, n, k, variant: "fp8gemm-wgmma-ws" }), { m, n, k }, { A, Bt, C }, 0.5, 1);
    // The CPU reports one multiprocessor: one block walks the 2 × 2 tiles.
    expect(wgmma.grid).toEqual([1, 1]);
    expect(wgmma.args.slice(0, 8)).toEqual([m, n, k, 0.5, A, Bt, 1, C]);
    // The CPU's maps hold (tag, rows, cols, boxRows, boxCols, element bytes): A m×k, Bᵀ n×k (not B's k×n), C m×n.
    const maps = wgmma.args.slice(8) as DeviceBuffer[];
    const contents = await Promise.all(maps.map(async (map) => Array.from((await device.read(map)) as Uint32Array).slice(1, 6)));
    expect(contents).toEqual([
      [m, k, 128, 128, 1],
      [n, k, 256, 128, 1],
      [m, n, 64, 64, 2],
    ]);
    wgmma.release();
    for (const map of maps) await expectError(() => device.read(map), Error, "tskernel: the buffer was freed (device.free); allocate a new one");
  });

  it("refuse what cannot run: WebGPU, wgmma on another GPU or with an unfit shape, an unknown variant, a library without the kernels", async () => {
    const webgpu = { backend: "webgpu", limits: new CpuDevice().limits } as unknown as Device;
    await expectError(() => chooseScaledMatmul(webgpu, libraryOf(), big), Error, "tskernel: scaledMatmul: WebGPU cannot run it: WGSL has no 8-bit floats (TSK3120), so e4m3 kernels are built for CUDA and the CPU only");
    await expectError(() => chooseScaledMatmul(cuda("sm_80"), libraryOf(), { ...big, variant: "fp8gemm-wgmma-ws" }), Error, "tskernel: scaledMatmul: fp8gemm-wgmma-ws needs an sm_90 GPU (wgmma, the tensor memory accelerator); this one is sm_80");
    await expectError(() => chooseScaledMatmul(cuda("sm_90"), libraryOf(), { ...big, n: 1020, variant: "fp8gemm-wgmma-ws" }), RangeError, "tskernel: scaledMatmul: fp8gemm-wgmma-ws needs m, n, k to be multiples of 1, 8, 16 (its tensor maps' rows are whole 16-byte units); got 4096, 1020, 4096");
    await expectError(() => chooseScaledMatmul(new CpuDevice(), libraryOf(), { ...big, variant: "fp8gemm-mma" as ScaledMatmulVariantName }), RangeError, "tskernel: scaledMatmul: unknown variant 'fp8gemm-mma'; the rungs are fp8gemm-wgmma-ws, fp8gemm-tiled");
    const wgmmaOnly = compileKernelLibrary([path.join(repoRoot, "examples", "fp8gemm-wgmma-ws.ts")], ["js"]);
    await expectError(() => chooseScaledMatmul(new CpuDevice(), wgmmaOnly, big), Error, "tskernel: scaledMatmul: the library holds no fp8 GEMM kernel for this device and shape (compile examples/fp8gemm-wgmma-ws.ts and examples/fp8gemm-tiled.ts)");
    await expectError(() => chooseScaledMatmul(new CpuDevice(), wgmmaOnly, { ...big, variant: "fp8gemm-tiled" }), Error, "tskernel: scaledMatmul: the library holds no build of fp8gemmTiled that fits this device (compile examples/fp8gemm-tiled.ts)");
  }, 120_000);
});

describe("scaledMatmul()'s operand checks", () => {
  const device = new CpuDevice();
  const [m, n, k] = [32, 24, 16];
  const A = device.createBuffer("e4m3", new Uint8Array(m * k));
  const Bt = device.createBuffer("e4m3", new Uint8Array(n * k));
  const C = device.createBuffer("bf16", new Uint16Array(m * n));
  const shape = { m, n, k };

  it("refuse operands of other element types than e4m3, e4m3 and bf16", async () => {
    await expectError(() => scaledMatmul(device, libraryOf(), device.createBuffer("bf16", new Uint16Array(m * k)), Bt, C, shape), TypeError, "tskernel: scaledMatmul: A holds bf16; it must be e4m3 (A and Bt e4m3, torch's float8_e4m3fn; C bf16)");
    await expectError(() => scaledMatmul(device, libraryOf(), A, device.createBuffer("e5m2", new Uint8Array(n * k)), C, shape), TypeError, "tskernel: scaledMatmul: Bt holds e5m2; it must be e4m3 (A and Bt e4m3, torch's float8_e4m3fn; C bf16)");
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, device.createBuffer(new Float32Array(m * n)), shape), TypeError, "tskernel: scaledMatmul: C holds f32; it must be bf16 (A and Bt e4m3, torch's float8_e4m3fn; C bf16)");
  });

  it("matmul() sends fp8 operands here, since its B is k×n and ours Bᵀ", async () => {
    await expectError(() => matmul(device, libraryOf(), A, Bt, C, { m, n, k, tuning: false }), TypeError, "tskernel: matmul: A holds e4m3; matmul multiplies f32, bf16 and f16 (for e4m3 use scaledMatmul, which takes B as Bᵀ, n×k)");
  });

  it("refuse shapes the buffers do not hold, non-positive or fractional sizes, and scales that are not finite", async () => {
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, C, { m, n: n + 1, k }), RangeError, `tskernel: scaledMatmul: Bt has ${n * k} elements, the shape needs ${(n + 1) * k} (${n + 1}×${k})`);
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, C, { m: m + 1, n, k }), RangeError, `tskernel: scaledMatmul: A has ${m * k} elements, the shape needs ${(m + 1) * k} (${m + 1}×${k})`);
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, C, { m, n, k: 0 }), RangeError, `tskernel: scaledMatmul: m, n and k must be positive integers, found ${m}, ${n}, 0`);
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, C, { m, n: 2.5, k }), RangeError, `tskernel: scaledMatmul: m, n and k must be positive integers, found ${m}, 2.5, ${k}`);
    await expectError(() => scaledMatmul(device, libraryOf(), A, Bt, C, { ...shape, scaleB: Number.NaN }), RangeError, "tskernel: scaledMatmul: scaleB must be a finite number, found NaN");
  });

  it("refuse WebGPU before looking for its package kernels", async () => {
    const webgpu = { backend: "webgpu", limits: device.limits } as unknown as Device;
    await expectError(() => scaledMatmul(webgpu, A, Bt, C, shape), Error, "tskernel: scaledMatmul: WebGPU cannot run it: WGSL has no 8-bit floats (TSK3120), so e4m3 kernels are built for CUDA and the CPU only");
  });
});

describe.skipIf(!nvccAvailable())("fp8gemm-tiled on CUDA", () => {
  it("nvcc compiles it for sm_80 and sm_90 without spills", () => {
    const source = fs.readFileSync(path.join(casesRoot, "examples", "fp8gemm-tiled", "expected.cu"), "utf8");
    for (const arch of ["sm_80", "sm_90"]) {
      const result = compileCuda(source, { arch, name: `fp8gemm_tiled_${arch}` });
      expect(result.errors, arch).toBe("");
      const entry = result.functions.find((f) => f.entry);
      expect(entry?.name, arch).toBe("fp8gemmTiled_TILE_16");
      expect(entry?.spillStoresBytes, arch).toBe(0);
      expect(entry?.registers, arch).toBeGreaterThan(0);
    }
  }, 120_000);
});
