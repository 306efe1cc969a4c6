/**
 * The stream-k SGEMM (examples/sgemm-streamk.ts) on the CPU backend against a float64 reference: grids whose
 * last tiles are shared out along k among streamBlocks blocks (runs that end inside a tile, runs that span
 * two, a tile split three ways, streamBlocks that divide the tiles and so share nothing), α/β ≠ (1, 0), and
 * β = 0 over a C poisoned with NaN; after every launch the scratch buffers must be zero again, since the next
 * launch counts on it. The checked mode runs it too (races, unwaited copies), and matmul() runs it by name,
 * twice on the same scratch. CUDA runs it in the H100 benchmarks (bench/torch-matmul.py, which also checks the
 * scratch); WebGPU does not build it (threadFence(), TSK3050).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, compareToReference, matmul, referenceGemm, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { matmulRungs } from "../runtime/matmul/matmul.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "sgemm-streamk.ts");
const library = compileKernelLibrary([file], ["js"]);
const kernel = library.kernels.find((h) => h.description.name === "sgemmStreamK")!;
const c = kernel.description.specialization as Record<string, number>;
const rung = matmulRungs.find((r) => r.name === "sgemm-streamk")!;
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

/** tilesM × tilesN tiles of k-steps `steps`, shared by `streamBlocks`; checks C and that the scratch is zero again. */
async function check(device: Device, h: KernelHandle, tilesM: number, tilesN: number, steps: number, streamBlocks: number, alpha: number, beta: number): Promise<void> {
  const [m, n, k] = [tilesM * c.BM!, tilesN * c.BN!, steps * c.BK!];
  const label = `${m}×${n}×${k}, ${streamBlocks} stream blocks, β = ${beta}`;
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? new Float32Array(m * n).fill(Number.NaN) : random(m * n);
  const C = device.createBuffer(C0);
  const partials = device.createBuffer(new Float32Array(streamBlocks * c.BM! * c.BN!));
  const arrivals = device.createBuffer(new Int32Array(streamBlocks));
  const grid = rung.grid(m, n, c, streamBlocks);
  await device.launch(h, { grid, args: [m, n, k, alpha, device.createBuffer(A), device.createBuffer(B), beta, C, partials, arrivals, streamBlocks] });
  const report = compareToReference((await device.read(C)) as Float32Array, referenceGemm(m, n, k, A, B, alpha, beta, beta === 0 ? new Float32Array(m * n) : C0));
  expect(report.nonFinite, label).toBe(0);
  expect(report.normwiseRelative, label).toBeLessThan(k * 2 ** -23);
  expect(Array.from((await device.read(partials)) as Float32Array).every((x) => x === 0), `${label}: partials left zero`).toBe(true);
  expect(Array.from((await device.read(arrivals)) as Int32Array).every((x) => x === 0), `${label}: arrivals left zero`).toBe(true);
}

describe("sgemm-streamk.ts on the CPU backend", () => {
  const device = new CpuDevice();

  it("computes the grid: whole tiles, then streamBlocks more blocks when tiles are left over", () => {
    expect(rung.grid(4 * c.BM!, 2 * c.BN!, c, 3)).toEqual([6 + 3, 1]); // 8 tiles: 6 whole, 2 shared by 3
    expect(rung.grid(4 * c.BM!, 2 * c.BN!, c, 4)).toEqual([8, 1]); // 4 divides 8: nothing shared
    expect(rung.grid(4096, 4096, c, 132)).toEqual([396 + 132, 1]); // the H100 at 4096³: 3 whole waves
  });

  // (tiles M, tiles N, k-steps, streamBlocks): runs inside one tile, across two, a tile split three ways.
  const cases = [
    [2, 2, 5, 3],
    [1, 3, 7, 2],
    [2, 1, 3, 4],
    [1, 1, 4, 1],
    [3, 1, 2, 3],
    [2, 2, 6, 4],
  ] as const;
  it.each(cases)("%i×%i tiles of %i steps over %i stream blocks match float64 with α = 0.75, β = −0.5", async (tm, tn, steps, sb) => {
    await check(device, kernel, tm, tn, steps, sb, 0.75, -0.5);
  });

  it.each(cases)("%i×%i tiles of %i steps over %i stream blocks, β = 0: C is not read (NaN before)", async (tm, tn, steps, sb) => {
    await check(device, kernel, tm, tn, steps, sb, 1.25, 0);
  });

  it("runs in the checked mode: no race, no unwaited copy, no out-of-bounds access", async () => {
    await check(new CpuDevice({ checked: true }), kernel, 1, 2, 3, 3, 1, 0.5);
  });

  it("runs through matmul() by name, twice on the same scratch", async () => {
    const [m, n, k] = [2 * c.BM!, 2 * c.BN!, 3 * c.BK!];
    for (let run = 0; run < 2; run++) {
      const A = random(m * k);
      const B = random(k * n);
      const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
      expect(await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, variant: "sgemm-streamk", tuning: false })).toBe("sgemm-streamk");
      const report = compareToReference((await device.read(C)) as Float32Array, referenceGemm(m, n, k, A, B, 1, 0, new Float32Array(m * n)));
      expect(report.nonFinite).toBe(0);
      expect(report.normwiseRelative).toBeLessThan(k * 2 ** -23);
    }
  });
});
