/**
 * Every example kernel runs on every tested backend against a float64 reference, with fresh random inputs
 * each run, outputs poisoned with NaN before each launch, and sizes that are not multiples of the tiles
 * where the kernel supports them.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, compareToReference, type Device, type KernelLibrary } from "../runtime/index.ts";
import { runDemo } from "../cli/demo/run-demo.ts";
import { seedVariants } from "../cli/demo/variants.ts";
import { compileSeedLibrary } from "../cli/demo/seed-library.ts";

const seedLibraries = new Map<BackendName, KernelLibrary>();
function seedLibrary(backend: BackendName): KernelLibrary {
  if (!seedLibraries.has(backend)) seedLibraries.set(backend, compileSeedLibrary(backend, gpuBuild(backend === "cpu" ? "js" : "wgsl")));
  return seedLibraries.get(backend)!;
}
import { repoRoot } from "./golden-cases.ts";
import { checkedBuildUnrunnable, checkedGpu, deviceFor as sharedDevice, gpuBuild, testedBackends } from "./backends.ts";
import type { BackendName } from "../runtime/index.ts";

async function deviceFor(backend: BackendName): Promise<Device> {
  const device = await sharedDevice(backend);
  if (typeof device === "string") throw new Error(`unreachable: ${device}`);
  return device;
}

const unavailable = new Map<BackendName, string>();
for (const backend of testedBackends) {
  const device = await sharedDevice(backend);
  if (typeof device === "string") unavailable.set(backend, device);
}

function random(length: number, low = -1, high = 1): Float32Array {
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) data[i] = low + Math.random() * (high - low);
  return data;
}

const poison = (length: number) => new Float32Array(length).fill(Number.NaN);

function library(device: Device, file: string): KernelLibrary {
  const target = device.backend === "cpu" ? "js" : device.backend === "webgpu" ? "wgsl" : "cuda";
  return compileKernelLibrary([path.join(repoRoot, "examples", file)], [target], gpuBuild(target));
}

for (const backend of testedBackends) {
  describe.skipIf(unavailable.has(backend))(`examples on ${backend}${unavailable.has(backend) ? ` (skipped: ${unavailable.get(backend)})` : ""}`, () => {
    it.each([37, 64, 97])("every seed matmul variant at n = %i matches the float64 reference", async (n) => {
      const device = await deviceFor(backend);
      // Under TSKERNEL_CHECKED_GPU=1 on SwiftShader, the variants whose checked WGSL its JIT cannot compile are left out.
      const variants = seedVariants.filter((v) => !checkedBuildUnrunnable(device, v.file));
      const { rows } = await runDemo(device, { size: n, library: seedLibrary(backend), variants });
      expect(rows.length).toBe(variants.length);
      for (const row of rows) {
        // A variant may only be skipped for a block the device cannot run (1024 threads on SwiftShader).
        if (row.status === "skipped") {
          expect(row.note).toMatch(/^needs a block of \d+ threads; this device allows \d+$/);
          expect(device.limits.maxThreadsPerBlock).toBeLessThan(1024);
          continue;
        }
        expect(row.status, `${row.variant}: ${row.note ?? ""}`).toBe("pass");
        expect(row.errors!.nonFinite).toBe(0);
        expect(row.errors!.normwiseRelative).toBeLessThan(n * 2 ** -23);
      }
      // Checked builds of every seed variant take SwiftShader's JIT over 5 minutes at the first size.
    }, checkedGpu ? 900_000 : undefined);

    it("reduceSum: block partial sums of an odd-length input", async () => {
      const device = await deviceFor(backend);
      const kernel = library(device, "reduce-sum.ts").get("reduceSum");
      const n = 100_003;
      const input = random(n);
      const blocks = 37;
      const out = device.createBuffer(poison(blocks));
      await device.launch(kernel, { grid: [blocks], args: [out, device.createBuffer(input), n] });
      const partial = (await device.read(out)) as Float32Array;
      const total = partial.reduce((a, b) => a + b, 0);
      const reference = input.reduce((a, b) => a + b, 0);
      expect(partial.every(Number.isFinite)).toBe(true);
      expect(Math.abs(total - reference)).toBeLessThan(1e-5 * n);
    });

    it("transposeShared: a non-square matrix whose sides are not multiples of the tile", async () => {
      const device = await deviceFor(backend);
      const kernel = library(device, "transpose.ts").get("transposeShared");
      const rows = 45;
      const cols = 70;
      const input = random(rows * cols);
      const out = device.createBuffer(poison(rows * cols));
      await device.launch(kernel, { grid: [Math.ceil(cols / 32), Math.ceil(rows / 32)], args: [out, device.createBuffer(input), rows, cols] });
      const result = (await device.read(out)) as Float32Array;
      for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) expect(result[c * rows + r]).toBe(input[r * cols + c]);
    });

    it("elementwise kernels match their float64 formulas", async () => {
      const device = await deviceFor(backend);
      const lib = library(device, "elementwise.ts");
      const n = 1000;
      const x = random(n, -6, 6);
      const gelu = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
      const softplus = (v: number) => Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v)));
      // Both round `1 + small` in f32 (GELU's 1 + tanh cancels for negative x; softplus's 1 + e^-|x| drops
      // digits of e^-|x|), so small outputs lose digits: measured up to ~8e-5 (GELU) and ~2e-5 (softplus)
      // relative to max(|ref|, 1e-3).
      // WGSL only bounds exp/log/tanh errors loosely (SwiftShader's fast versions measured ~3e-4 on GELU).
      const loose = backend === "cpu" ? 1 : 5;
      for (const [name, formula, bound] of [["gelu", gelu, 2e-4 * loose], ["softplus", softplus, 1e-4 * loose]] as const) {
        const out = device.createBuffer(poison(n));
        await device.launch(lib.get(name), { grid: [Math.ceil(n / 256)], args: [out, device.createBuffer(x), n] });
        const report = compareToReference((await device.read(out)) as Float32Array, Float64Array.from(x, formula), 1e-3);
        expect(report.nonFinite, name).toBe(0);
        expect(report.maxRelative, name).toBeLessThan(bound);
      }
      const y0 = random(n);
      const y = device.createBuffer(y0);
      const a = 1.25;
      await device.launch(lib.get("saxpy"), { grid: [Math.ceil(n / 256)], args: [n, a, device.createBuffer(x), y] });
      // WGSL's fma need not be fused (SwiftShader rounds a·x first), so results that cancel to near zero are
      // compared with an absolute floor of 1: the error stays within a couple of f32 ulps of |a·x| ≤ 7.5.
      const report = compareToReference((await device.read(y)) as Float32Array, Float64Array.from(y0, (v, i) => a * x[i]! + v), 1);
      expect(report.maxRelative).toBeLessThan(1e-6);
    });
  });
}
