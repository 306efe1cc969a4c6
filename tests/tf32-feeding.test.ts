/**
 * bench/tf32-feeding.ts, the TF32 feeding measurement, on the CPU backend (each warpgroup a coroutine, mbarriers
 * and tensor copies emulated), so that every variant bench/tf32-prep.sh sends to the GPU is known to finish and
 * to compute what it claims before device time is spent on it: ROUND 0 (A truncated by the tensor cores), 1
 * (rounded in shared memory, LAG 1 and 2) and 2 (rounded in the producer's registers) bit for bit against the
 * documented emulation, with a grid smaller than the tile count (blocks walk several tiles; the stage ring and its
 * parities carry across them), α/β ≠ (1, 0), and β = 0 over C poisoned with NaN in checked mode; within TF32's
 * bound of float64. A lag past STAGES − 2 is the deadlock the emulation names; FEED = 2 finishes (with a
 * wrong product, as documented). Fresh random inputs each run.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createTensorMap, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";
import { emulateTf32Gemm, tf32WorstRatio, type Tf32Gemm } from "./tf32-gemm-reference.ts";

const file = path.join(repoRoot, "bench", "tf32-feeding.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);
const build = (defines: Record<string, string>) => compileKernelLibrary([file], ["js"], { defines: new Map(Object.entries(defines)) }).get("tf32Feeding");
// Two tile rows and two tile columns; six k-tiles a tile, so the four stages wrap within a tile and across tiles.
const [m, n, k] = [512, 256, 192];

async function run(kernel: KernelHandle, blocks: number, alpha: number, beta: number, checked = false) {
  const device = new CpuDevice({ checked });
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? undefined : random(m * n);
  const C = device.createBuffer(C0 ? C0.slice() : new Float32Array(m * n).fill(Number.NaN));
  const bufferA = device.createBuffer(A);
  const mapA = createTensorMap(device, bufferA, { rows: m, cols: k, boxRows: 256, boxCols: 32 });
  await device.launch(kernel, { grid: [blocks], args: [m, n, k, alpha, bufferA, device.createBuffer(B), beta, C, mapA] });
  return { gemm: { m, n, k, A, B, alpha, beta, C0 } as Tf32Gemm, got: (await device.read(C)) as Float32Array };
}

describe("bench/tf32-feeding.ts on the CPU backend", () => {
  it.each([
    { ROUND: "0", LAG: "2" },
    { ROUND: "1", LAG: "1" },
    { ROUND: "1", LAG: "2" },
    { ROUND: "2", LAG: "2" },
  ])("%j: bit-exact to the emulation and within TF32's bound (α = 0.75, β = −0.5, three blocks for four tiles)", async (defines) => {
    const { gemm, got } = await run(build(defines), 3, 0.75, -0.5);
    const rounded = { ...gemm, a: defines.ROUND !== "0" ? ("rounded" as const) : ("truncated" as const) };
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm(rounded)));
    expect(tf32WorstRatio(rounded, got)).toBeLessThanOrEqual(1);
  });

  it("ROUND = 2 with β = 0 ignores C (NaN before the launch), one block for all tiles, in checked mode", async () => {
    const { gemm, got } = await run(build({ ROUND: "2" }), 1, 1.25, 0, true);
    expect(Array.from(got)).toEqual(Array.from(emulateTf32Gemm({ ...gemm, a: "rounded" })));
  });

  it("a rounding lag of STAGES − 1 deadlocks, and the emulation says where each warpgroup waits", async () => {
    await expect(run(build({ ROUND: "1", LAG: "3" }), 2, 1, 0)).rejects.toThrow(/deadlock in 'tf32Feeding_ROUND_1_LAG_3[^']*': no warpgroup can move \(warpgroup 0 waits at/);
  });

  it("FEED = 2 (timing only) finishes, and its product is not C's", async () => {
    const { gemm, got } = await run(build({ FEED: "2" }), 2, 1, 0);
    expect(got.every(Number.isFinite)).toBe(true);
    expect(tf32WorstRatio(gemm, got)).toBeGreaterThan(1);
  });
});
