/**
 * The warp-specialized bf16 GEMM (examples/hgemm-wgmma-ws.ts) on the CPU backend, where each warpgroup of a
 * block runs as a coroutine and the mbarriers, the tensor copies and stores are emulated: bit for bit against
 * the emulation docs/language.md defines (each product of two bf16 exact, k ascending with one f32 rounding per
 * addition, then α·sum (+ β·C) rounded to bf16 once) and within the normwise bound of a float64 product, on
 * fresh random inputs each run, with a persistent grid of fewer blocks than tiles and tile groups that do not
 * divide the tile rows, α/β ≠ (1, 0), β = 0 over a C poisoned with NaN, unchecked and in checked mode.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, createTensorMap, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
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
