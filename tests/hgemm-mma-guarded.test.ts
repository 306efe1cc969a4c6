/**
 * The warp-level 16-bit GEMM for any shape (examples/hgemm-mma-guarded.ts: one kernel over T = bf16 | f16,
 * mma.sync m16n8k16, edges loaded element by element) on the CPU backend, on fresh random inputs each run: bit for
 * bit the emulation docs/language.md §25 defines (each product exact in f32, k ascending with one f32 rounding per
 * addition, then α·sum (+ β·C) rounded to T once) and within the normwise bound of a float64 product
 * (matmulTolerance16, tests/gemm16-reference.ts), for shapes with rows of every kind (odd lengths, whole 16-byte units, partial tiles in all
 * three dimensions), each tile size the file builds, α/β ≠ (1, 0), β = 0 over a C poisoned with NaN, and checked
 * mode. Then `matmul()`'s choice: this rung on CUDA GPUs from sm_80 where the warpgroup rung does not run, the tiled
 * kernel on older GPUs and the CPU; and `dtype<T>()`/`shared.of<T>()` outside their places.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, f16Bits } from "../compiler/lang/float16.ts";
import { chooseMatmul, compileKernelLibrary, matmul, matmulTolerance16, type Device, type KernelHandle, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import { gemm16Reference } from "./gemm16-reference.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "hgemm-mma-guarded.ts");
let library: KernelLibrary | undefined;
const libraryOf = () => (library ??= compileKernelLibrary([file, path.join(repoRoot, "examples", "hgemm-wgmma-ws.ts"), path.join(repoRoot, "examples", "hgemm-tiled.ts")], ["js"]));
const build = (type: "bf16" | "f16", BM: number, BN: number): KernelHandle =>
  libraryOf().kernels.find((h) => h.description.name === "hgemmMmaGuarded" && h.description.specialization.T === type && h.description.specialization.BM === BM && h.description.specialization.BN === BN)!;


const randomOf = (type: "bf16" | "f16") => (length: number) => Uint16Array.from({ length }, () => (type === "bf16" ? bf16Bits : f16Bits)(Math.random() * 2 - 1));

describe("hgemm-mma-guarded on the CPU backend", () => {
  it("builds both types in each of its four tile sizes", () => {
    const builds = libraryOf().kernels.filter((h) => h.description.name === "hgemmMmaGuarded");
    const s = (h: KernelHandle) => h.description.specialization;
    expect(builds.map((h) => `${s(h).T} ${s(h).BM}×${s(h).BN}`).sort()).toEqual(["bf16 128×256", "bf16 32×32", "bf16 64×128", "bf16 64×64", "f16 128×256", "f16 32×32", "f16 64×128", "f16 64×64"]);
  });

  for (const [type, shape, [BM, BN], alpha, beta, checked] of [
    // Odd rows everywhere (every piece element by element), partial tiles in m, n and k.
    ["bf16", [37, 29, 41], [32, 32], 1, 0, false],
    // Whole 16-byte rows (copyAsync8) with a partial tile column (48 of 64) and a partial last k-step (8 of 32).
    ["f16", [64, 48, 40], [64, 64], 0.5, 2, false],
    // n whole, k odd: B by copyAsync8, A element by element; checked mode (races between the stages, bounds).
    ["bf16", [40, 24, 27], [32, 32], 0.75, -0.5, true],
    // The 128×256 build of eight warps: 2 × 2 blocks, three of them partial.
    ["f16", [130, 264, 48], [128, 256], 1.5, 0.25, false],
    // The 64×128 build: odd k, a partial tile column.
    ["bf16", [70, 136, 45], [64, 128], 1, -1, false],
    // Three stages in checked mode: a copy still in flight two k-tiles ahead is not read early.
    ["f16", [64, 64, 130], [64, 64], 1, 0, true],
  ] as const) {
    it(`${type} ${shape.join("×")} in ${BM}×${BN} tiles, α = ${alpha}, β = ${beta}${checked ? ", checked" : ""}: the documented result bit for bit, within the bound`, async () => {
      const [m, n, k] = shape;
      const device = new CpuDevice({ checked });
      const random = randomOf(type);
      const aBits = random(m * k);
      const bBits = random(k * n);
      // β = 0: C poisoned with NaN (0x7fff in both types), which the kernel must not read.
      const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : random(m * n);
      const C = device.createBuffer(type, cBits);
      const kernel = build(type, BM, BN);
      await device.launch(kernel, { grid: [Math.ceil(n / BN), Math.ceil(m / BM)], args: [m, n, k, alpha, device.createBuffer(type, aBits), device.createBuffer(type, bBits), beta, C] });
      const expected = gemm16Reference(type, m, n, k, aBits, bBits, cBits, alpha, beta);
      expect(Array.from((await device.read(C, { bits: true })) as Uint16Array)).toEqual(Array.from(expected.bits));
      expect(expected.error).toBeLessThan(matmulTolerance16(type, k));
    });
  }
});

describe("matmul() and the warp-level 16-bit rung", () => {
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits, multiprocessors: 132 }) as unknown as Device;
  const shape = { m: 4096, n: 4096, k: 4096, tuning: false as const };

  it("takes it from sm_80 where the warpgroup rung does not run, in the requested type; the tiled kernel before sm_80 and on the CPU", () => {
    const choose = (device: Device, options: object) => {
      const choice = chooseMatmul(device, libraryOf(), { ...shape, ...options });
      return `${choice.rung.name} ${choice.constants.T ?? ""}`.trim();
    };
    expect(choose(cuda("sm_90"), { dtype: "bf16" })).toBe("hgemm-wgmma-ws");
    expect(choose(cuda("sm_90"), { k: 100, dtype: "bf16" })).toBe("hgemm-mma-guarded bf16");
    expect(choose(cuda("sm_90"), { m: 1023, n: 1021, k: 1019, dtype: "f16" })).toBe("hgemm-mma-guarded-f16 f16");
    expect(choose(cuda("sm_80"), { dtype: "f16" })).toBe("hgemm-mma-guarded-f16 f16");
    expect(choose(cuda("sm_89"), { dtype: "bf16" })).toBe("hgemm-mma-guarded bf16");
    expect(choose(cuda("sm_75"), { dtype: "bf16" })).toBe("hgemm-tiled");
    expect(choose(new CpuDevice(), { dtype: "f16" })).toBe("hgemm-tiled-f16");
    // The largest tiles that still make 128 blocks: 128×256 at 4096² (512 blocks), 64×128 at 1023×1021 (128),
    // 64×64 at 900×900 (64×128 would make 120).
    const tile = (m: number, n: number) => {
      const c = chooseMatmul(cuda("sm_80"), libraryOf(), { ...shape, m, n, k: 999, dtype: "bf16" }).constants;
      return `${c.BM}×${c.BN}`;
    };
    expect([tile(4096, 4096), tile(1023, 1021), tile(900, 900)]).toEqual(["128×256", "64×128", "64×64"]);
  });

  it("runs it by name on the CPU's emulation through matmul(), in f16 with α and β", async () => {
    const [m, n, k] = [45, 70, 33];
    const device = new CpuDevice();
    const random = randomOf("f16");
    const aBits = random(m * k);
    const bBits = random(k * n);
    const cBits = random(m * n);
    const C = device.createBuffer("f16", cBits);
    const ran = await matmul(device, libraryOf(), device.createBuffer("f16", aBits), device.createBuffer("f16", bBits), C, { m, n, k, alpha: 2, beta: -1, dtype: "f16", variant: "hgemm-mma-guarded-f16", tuning: false });
    expect(ran).toBe("hgemm-mma-guarded-f16");
    const expected = gemm16Reference("f16", m, n, k, aBits, bBits, cBits, 2, -1);
    expect(Array.from((await device.read(C, { bits: true })) as Uint16Array)).toEqual(Array.from(expected.bits));
  });
});

describe("dtype<T>() and shared.of<T>()", () => {
  it("dtype<T>() anywhere but a fragment declaration is an error at its place", () => {
    const result = compileSource(`
import { kernel, dtype, type BufferOf, type i32 } from "tskernel";
export const k = kernel({ specializations: [{ T: "bf16" }] }, <T extends "bf16" | "f16">(out: BufferOf<T>, n: i32) => {
  const name = dtype<T>();
});
`);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK1001"]);
    expect(result.rendered).toMatch(/error\[TSK1001\]: kernels do not support dtype<T>\(\) as a value\n\s+--> kernel\.ts:4:16/);
  });

  it("shared.of<T>() of a type that is not an element type is TSK1141", () => {
    const result = compileSource(`
import { kernel, shared, type BufferOf, type i32 } from "tskernel";
export const k = kernel({ specializations: [{ T: "bf16" }] }, <T extends "bf16" | "f16">(out: BufferOf<T>, n: i32) => {
  const tile = shared.of<"f128">(64);
  out[0] = tile[0];
});
`);
    expect(result.diagnostics.map((d) => d.code)).toContain("TSK1141");
  });
});
