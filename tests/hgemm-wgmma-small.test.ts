/**
 * The small-tile warp-specialized 16-bit GEMM (examples/hgemm-wgmma-small.ts: 64×128 tiles, one consumer, one
 * kernel over T = bf16 | f16) on the CPU backend: bit for bit against the emulation docs/language.md defines
 * (tests/gemm16-reference.ts) and within matmulTolerance16 of a float64 product, fresh random inputs each run: a
 * persistent grid of fewer blocks than tiles with tile groups that do not divide the tile rows, partial tiles at
 * every edge (m, n and the last k-step), α/β ≠ (1, 0) with C's old boxes copied in, β = 0 over a C poisoned with
 * NaN, unchecked and in checked mode; and through matmul() by name with the three tensor maps and the grid it makes.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, f16Bits } from "../compiler/lang/float16.ts";
import { chooseMatmul, compileKernelLibrary, createTensorMap, matmul, matmulTolerance16, type Device, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { gemm16Reference } from "./gemm16-reference.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "hgemm-wgmma-small.ts");
let library: KernelLibrary | undefined;
// Groups of 3 tile rows, which do not divide the tests' tile rows (a partial group at the bottom).
const libraryOf = () => (library ??= compileKernelLibrary([file], ["js"], { defines: new Map([["GROUP", "3"]]) }));

function inputs(type: "bf16" | "f16", m: number, n: number, k: number, beta: number) {
  const encode = type === "bf16" ? bf16Bits : f16Bits;
  const random = (length: number) => Uint16Array.from({ length }, () => encode(Math.random() * 2 - 1));
  // β = 0: C poisoned with NaN, which the kernel must not read.
  return { aBits: random(m * k), bBits: random(k * n), cBits: beta === 0 ? new Uint16Array(m * n).fill(type === "bf16" ? 0x7fff : 0x7e00) : random(m * n) };
}

describe("hgemm-wgmma-small on the CPU backend", () => {
  for (const [type, [m, n, k], blocks, alpha, beta, checked] of [
    // 5 × 2 tiles (the last row of 8 rows, the last column of 8 of 128) on 3 persistent blocks; a last k-step of 8.
    ["bf16", [264, 136, 136], 3, 1, 0, false],
    ["f16", [128, 256, 192], 2, 0.75, -0.5, true],
  ] as const) {
    it(`${type} ${m}×${n}×${k} on ${blocks} blocks, α = ${alpha}, β = ${beta}${checked ? ", checked" : ""}: the documented result bit for bit, within the bound`, async () => {
      const device = new CpuDevice({ checked });
      const { aBits, bBits, cBits } = inputs(type, m, n, k, beta);
      const A = device.createBuffer(type, aBits);
      const B = device.createBuffer(type, bBits);
      const C = device.createBuffer(type, cBits);
      const box = { boxRows: 64, boxCols: 64 };
      const maps = [createTensorMap(device, A, { rows: m, cols: k, ...box }), createTensorMap(device, B, { rows: k, cols: n, ...box }), createTensorMap(device, C, { rows: m, cols: n, ...box })];
      const kernel = libraryOf().kernels.find((h) => h.description.name === "hgemmWgmmaSmall" && h.description.specialization?.T === type)!;
      await device.launch(kernel, { grid: [blocks], args: [m, n, k, alpha, A, B, beta, C, ...maps] });
      const expected = gemm16Reference(type, m, n, k, aBits, bBits, cBits, alpha, beta);
      expect(Array.from((await device.read(C, { bits: true })) as Uint16Array)).toEqual(Array.from(expected.bits));
      expect(expected.error).toBeLessThan(matmulTolerance16(type, k));
    });
  }

  it("runs through matmul() by name, which makes its tensor maps in 64×64 boxes and a persistent grid", async () => {
    const [m, n, k] = [192, 256, 128];
    const device = new CpuDevice();
    const { aBits, bBits, cBits } = inputs("f16", m, n, k, 0);
    const C = device.createBuffer("f16", cBits);
    const ran = await matmul(device, libraryOf(), device.createBuffer("f16", aBits), device.createBuffer("f16", bBits), C, { m, n, k, variant: "hgemm-wgmma-small-f16", tuning: false });
    expect(ran).toBe("hgemm-wgmma-small-f16");
    expect(Array.from((await device.read(C, { bits: true })) as Uint16Array)).toEqual(Array.from(gemm16Reference("f16", m, n, k, aBits, bBits, cBits, 1, 0).bits));
  });

  it("is what the fixed rule takes on sm_90 where the large tiles number fewer than three quarters of the multiprocessors", () => {
    const both = compileKernelLibrary([file, path.join(repoRoot, "examples", "hgemm-wgmma-ws.ts"), path.join(repoRoot, "examples", "hgemm-tiled.ts")], ["js"]);
    const cuda = (arch: string, multiprocessors = 132) => ({ backend: "cuda", arch, limits: new CpuDevice().limits, multiprocessors }) as unknown as Device;
    const rung = (device: Device, m: number, n: number, k: number, dtype: "bf16" | "f16" = "bf16") => chooseMatmul(device, both, { m, n, k, dtype, tuning: false }).rung.name;
    // 1000³: 8 × 4 large tiles; 14 × 7 = 98 below 99 (three quarters of 132), 99 × 1 not; 2048³: 128.
    expect([rung(cuda("sm_90"), 1000, 1000, 1000), rung(cuda("sm_90"), 1000, 1000, 1000, "f16")]).toEqual(["hgemm-wgmma-small", "hgemm-wgmma-small-f16"]);
    expect([rung(cuda("sm_90"), 14 * 128, 7 * 256, 64), rung(cuda("sm_90"), 99 * 128, 256, 64), rung(cuda("sm_90"), 2048, 2048, 2048)]).toEqual(["hgemm-wgmma-small", "hgemm-wgmma-ws", "hgemm-wgmma-ws"]);
    // A GPU of fewer multiprocessors: 32 tiles are more than three quarters of 40, so the large ones.
    expect(rung(cuda("sm_90", 40), 1000, 1000, 1000)).toBe("hgemm-wgmma-ws");
    // Rows that tensor maps cannot describe, other GPUs, the CPU: not this rung.
    expect([rung(cuda("sm_90"), 1000, 1020, 1001), rung(cuda("sm_80"), 1000, 1000, 1000), rung(new CpuDevice(), 1000, 1000, 1000)]).toEqual(["hgemm-tiled", "hgemm-tiled", "hgemm-tiled"]);
  });
});
