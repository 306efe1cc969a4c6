/**
 * The warp-specialized fp8 GEMM (examples/fp8gemm-wgmma-ws.ts) on the CPU backend, where each warpgroup runs as a
 * coroutine and the mbarriers, tensor copies (of one-byte e4m3 codes) and stores are emulated: bit for bit against
 * the emulation docs/language.md defines (each product of two e4m3 values exact, k ascending with one f32 rounding
 * per addition, then α·sum (+ β·C) rounded to bf16 once) and within the normwise bound of a float64 product, on
 * fresh random e4m3 codes over the format's whole finite range, with a persistent grid of fewer blocks than tiles,
 * tile groups that do not divide the tile rows, partial tiles and k-steps, β = 0 over a C poisoned with NaN, and
 * checked mode. And nvcc's acceptance of its CUDA for sm_90a, without spills.
 */

import path from "node:path";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { float8Decode, float8Formats } from "../compiler/lang/float8.ts";
import { compileKernelLibrary, createTensorMap, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { casesRoot, repoRoot } from "./golden-cases.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";

const file = path.join(repoRoot, "examples", "fp8gemm-wgmma-ws.ts");
const { exponentBits, mantissaBits, infinities } = float8Formats.e4m3;
const e4m3 = (code: number) => float8Decode(code, exponentBits, mantissaBits, infinities);
/** Fresh random e4m3 codes of finite values (both signs, every magnitude; no NaN code). */
const randomCodes = (length: number) => Uint8Array.from({ length }, () => (Math.random() < 0.5 ? 0x80 : 0) | Math.floor(Math.random() * 0x7f));

let handle: KernelHandle | undefined;
function compiled(): KernelHandle {
  // Groups of 3 tile rows, which do not divide the tests' 2 (a partial group at the bottom).
  handle ??= compileKernelLibrary([file], ["js"], { defines: new Map([["GROUP", "3"]]) }).get("fp8gemmWgmmaWs");
  return handle;
}

async function run(checked: boolean, [m, n, k]: [number, number, number], blocks: number, alpha: number, beta: number): Promise<void> {
  const device = new CpuDevice({ checked });
  const aCodes = randomCodes(m * k);
  const btCodes = randomCodes(n * k);
  // β = 0: C poisoned with NaN (0x7fff), which the kernel must not read.
  const cBits = beta === 0 ? new Uint16Array(m * n).fill(0x7fff) : Uint16Array.from({ length: m * n }, () => bf16Bits(Math.random() * 2e4 - 1e4));
  const A = device.createBuffer("e4m3", aCodes);
  const Bt = device.createBuffer("e4m3", btCodes);
  const C = device.createBuffer("bf16", cBits);
  const mapA = createTensorMap(device, A, { rows: m, cols: k, boxRows: 128, boxCols: 128 });
  const mapB = createTensorMap(device, Bt, { rows: n, cols: k, boxRows: 256, boxCols: 128 });
  const mapC = createTensorMap(device, C, { rows: m, cols: n, boxRows: 64, boxCols: 64 });
  await device.launch(compiled(), { grid: [blocks], args: [m, n, k, alpha, A, Bt, beta, C, mapA, mapB, mapC] });
  const got = (await device.read(C, { bits: true })) as Uint16Array;
  const a = Array.from(aCodes, e4m3);
  const bt = Array.from(btCodes, e4m3);
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
      const value = beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * old));
      if (got[i * n + j] !== bf16Bits(value) && wrong.length < 8) wrong.push(`C[${i}][${j}]: 0x${got[i * n + j]!.toString(16)}, expected 0x${bf16Bits(value).toString(16)}`);
      const reference = alpha * exact + (beta === 0 ? 0 : beta * old);
      errorSquared += (bf16FromBits(got[i * n + j]!) - reference) ** 2;
      normSquared += reference ** 2;
    }
  }
  expect(wrong).toEqual([]);
  // The output's rounding to bf16 (2^-8) and the f32 accumulation (k·2^-23).
  expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan(2 ** -8 + k * 2 ** -23);
}

describe("fp8gemm-wgmma-ws on the CPU backend", () => {
  it("β = 0 over a NaN-poisoned C: 2 × 2 tiles on 3 persistent blocks, groups of 3 tile rows, two stages of k", async () => {
    await run(false, [256, 512, 256], 3, 0.25, 0);
  });

  it("partial tiles and k-step (200 × 264 × 144), α = 0.75, β = −0.5: C's old boxes come in by copyTile (checked mode)", async () => {
    await run(true, [200, 264, 144], 2, 0.75, -0.5);
  });
});

describe.skipIf(!nvccAvailable())("fp8gemm-wgmma-ws on CUDA", () => {
  it("nvcc compiles it for sm_90a without spills, its wgmmas m64n256k32 e4m3·e4m3", () => {
    const source = fs.readFileSync(path.join(casesRoot, "examples", "fp8gemm-wgmma-ws", "expected.cu"), "utf8");
    expect(source).toContain("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {");
    const result = compileCuda(source, { arch: "sm_90a", name: "fp8gemm_wgmma_ws" });
    expect(result.errors).toBe("");
    const entry = result.functions.find((f) => f.entry);
    expect(entry?.name).toBe("fp8gemmWgmmaWs_STAGES_3_GROUP_8");
    expect(entry?.spillStoresBytes).toBe(0);
    expect(entry?.registers).toBeGreaterThan(0);
  }, 120_000);
});
