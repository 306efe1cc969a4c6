/**
 * The warp-specialized bf16 GEMM (examples/hgemm-wgmma-ws.ts) on the CPU backend, where each warpgroup of a
 * block runs as a coroutine and the mbarriers, the tensor copies and stores are emulated: bit for bit against
 * the emulation docs/language.md defines (each product of two bf16 exact, k ascending with one f32 rounding per
 * addition, then α·sum (+ β·C) rounded to bf16 once) and within the normwise bound of a float64 product, on
 * fresh random inputs each run, with a persistent grid of fewer blocks than tiles and tile groups that do not
 * divide the tile rows, α/β ≠ (1, 0), β = 0 over a C poisoned with NaN, unchecked and in checked mode. And
 * `matmul()` with 16-bit buffers (runtime/matmul/matmul16.ts): it takes this rung on sm_90 where the tiles divide
 * the shape (making the three tensor maps and a persistent grid itself) and the tiled kernel
 * (examples/hgemm-tiled.ts) elsewhere and for any shape, bf16 and f16, never an f32 rung; mixed types are errors.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits, f16Bits } from "../compiler/lang/float16.ts";
import { chooseMatmul, compileKernelLibrary, createTensorMap, matmul, matmulTolerance16, type Device, type KernelHandle, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { gemm16Reference } from "./gemm16-reference.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "hgemm-wgmma-ws.ts");
const randomBits = (length: number) => Uint16Array.from({ length }, () => bf16Bits(Math.random() * 2 - 1));

let handle: KernelHandle | undefined;
function compiled(): KernelHandle {
  // Groups of 3 tile rows, which do not divide the tests' 4 or 2 (a partial group at the bottom).
  handle ??= compileKernelLibrary([file], ["js"], { defines: new Map([["GROUP", "3"]]) }).get("hgemmWgmmaWs");
  return handle;
}

async function run(checked: boolean, [m, n, k]: [number, number, number], blocks: number, alpha: number, beta: number): Promise<void> {
  const device = new CpuDevice({ checked });
  const aBits = randomBits(m * k);
  const bBits = randomBits(k * n);
  // β = 0: C poisoned with NaN (0x7fff), which the kernel must not read.
  const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : randomBits(m * n);
  const A = device.createBuffer("bf16", aBits);
  const B = device.createBuffer("bf16", bBits);
  const C = device.createBuffer("bf16", cBits);
  const mapA = createTensorMap(device, A, { rows: m, cols: k, boxRows: 128, boxCols: 64 });
  const mapB = createTensorMap(device, B, { rows: k, cols: n, boxRows: 64, boxCols: 64 });
  const mapC = createTensorMap(device, C, { rows: m, cols: n, boxRows: 64, boxCols: 64 });
  await device.launch(compiled(), { grid: [blocks], args: [m, n, k, alpha, A, B, beta, C, mapA, mapB, mapC] });
  const got = (await device.read(C, { bits: true })) as Uint16Array;
  const a = Array.from(aBits, bf16FromBits);
  const b = Array.from(bBits, bf16FromBits);
  let errorSquared = 0;
  let normSquared = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let exact = 0;
      for (let p = 0; p < k; p++) {
        sum = Math.fround(sum + a[i * k + p]! * b[p * n + j]!);
        exact += a[i * k + p]! * b[p * n + j]!;
      }
      const old = bf16FromBits(cBits[i * n + j]!);
      const value = beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * old));
      expect(got[i * n + j], `C[${i}][${j}]`).toBe(bf16Bits(value));
      const reference = alpha * exact + (beta === 0 ? 0 : beta * old);
      errorSquared += (bf16FromBits(got[i * n + j]!) - reference) ** 2;
      normSquared += reference ** 2;
    }
  }
  // The output's rounding to bf16 (2^-8) and the f32 accumulation (k·2^-23): bench/hgemm-probe.py's bound.
  expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan(2 ** -8 + k * 2 ** -23);
}

describe("hgemm-wgmma-ws on the CPU backend", () => {
  it("β = 0 over a NaN-poisoned C: 4 × 2 tiles on 3 persistent blocks, groups of 3 tile rows", async () => {
    await run(false, [512, 512, 128], 3, 1, 0);
  });

  it("α = 0.75, β = −0.5: C's old boxes come in by copyTile, rounded once (checked mode)", async () => {
    await run(true, [256, 256, 192], 2, 0.75, -0.5);
  });
});


describe("matmul() in bf16 and f16", () => {
  let library: KernelLibrary | undefined;
  const libraryOf = () => (library ??= compileKernelLibrary([file, path.join(repoRoot, "examples", "hgemm-tiled.ts")], ["js"]));
  const cuda = (arch: string) => ({ backend: "cuda", arch, limits: new CpuDevice().limits, multiprocessors: 132 }) as unknown as Device;

  it("takes the tensor-core rung on sm_90 where n and k are whole 16-byte rows, the tiled kernel elsewhere, in the requested type only", () => {
    const shape = { m: 4096, n: 4096, k: 4096, tuning: false as const };
    expect(chooseMatmul(cuda("sm_90"), libraryOf(), { ...shape, dtype: "bf16" }).rung.name).toBe("hgemm-wgmma-ws");
    expect(chooseMatmul(cuda("sm_90"), libraryOf(), { ...shape, dtype: "f16" }).rung.name).toBe("hgemm-wgmma-ws-f16");
    expect(chooseMatmul(cuda("sm_90"), libraryOf(), { ...shape, m: 1000, n: 1000, k: 1000, dtype: "bf16" }).rung.name).toBe("hgemm-wgmma-ws");
    expect(chooseMatmul(cuda("sm_90"), libraryOf(), { ...shape, k: 100, dtype: "bf16" }).rung.name).toBe("hgemm-tiled");
    expect(chooseMatmul(cuda("sm_90"), libraryOf(), { ...shape, n: 1020, dtype: "f16" }).rung.name).toBe("hgemm-tiled-f16");
    expect(chooseMatmul(cuda("sm_80"), libraryOf(), { ...shape, dtype: "f16" }).rung.name).toBe("hgemm-tiled-f16");
    expect(chooseMatmul(new CpuDevice(), libraryOf(), { ...shape, dtype: "bf16" }).rung.name).toBe("hgemm-tiled");
    // f32 never gets a 16-bit rung (this library holds no f32 kernel at all).
    expect(() => chooseMatmul(cuda("sm_90"), libraryOf(), shape)).toThrow(/no matmul kernel/);
  });

  for (const [type, [m, n, k], variant, alpha, beta] of [
    ["bf16", [70, 45, 33], undefined, 1, 0],
    ["f16", [64, 96, 80], undefined, 0.5, 2],
    ["bf16", [256, 512, 128], "hgemm-wgmma-ws", 1.5, -0.25],
    ["f16", [128, 256, 64], "hgemm-wgmma-ws-f16", 1, 0],
    // Partial tiles: a last tile row of 72 rows, a tile column of 8 of 256, a last k-step of 8 of 64.
    ["bf16", [200, 264, 72], "hgemm-wgmma-ws", 0.75, 0.5],
  ] as const) {
    it(`${type} ${m}×${n}×${k}${variant ? ` by ${variant}` : ""}, α = ${alpha}, β = ${beta}: the documented result bit for bit, within the bound`, async () => {
      const device = new CpuDevice();
      const encode = type === "bf16" ? bf16Bits : f16Bits;
      const random = (length: number) => Uint16Array.from({ length }, () => encode(Math.random() * 2 - 1));
      const aBits = random(m * k);
      const bBits = random(k * n);
      const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : random(m * n);
      const C = device.createBuffer(type, cBits);
      const ran = await matmul(device, libraryOf(), device.createBuffer(type, aBits), device.createBuffer(type, bBits), C, { m, n, k, alpha, beta, variant, tuning: false });
      expect(ran).toBe(variant ?? (type === "bf16" ? "hgemm-tiled" : "hgemm-tiled-f16"));
      const expected = gemm16Reference(type, m, n, k, aBits, bBits, cBits, alpha, beta);
      expect(Array.from((await device.read(C, { bits: true })) as Uint16Array)).toEqual(Array.from(expected.bits));
      expect(expected.error).toBeLessThan(matmulTolerance16(type, k));
    });
  }

  it("refuses operands of different types, and TF32 for 16-bit inputs", async () => {
    const device = new CpuDevice();
    const A = device.createBuffer("bf16", 64 * 64);
    const B = device.createBuffer("f16", 64 * 64);
    const C = device.createBuffer("bf16", 64 * 64);
    await expect(matmul(device, libraryOf(), A, B, C, { m: 64, n: 64, k: 64, tuning: false })).rejects.toThrow("tskernel: matmul: B holds f16, but the product is in bf16 (A, B and C must all be bf16)");
    await expect(matmul(device, libraryOf(), A, A, C, { m: 64, n: 64, k: 64, tuning: false, precision: "tf32" })).rejects.toThrow('precision "tf32" is for f32 operands');
  });
});
