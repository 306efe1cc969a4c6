/**
 * The single-pass scan (examples/scan-lookback.ts) on the CPU backend, where worker threads run blocks at the
 * same time on shared buffers, so that blocks really wait on each other's flags: every output checked exactly
 * against float64 on whole numbers (whose sums f32 holds exactly, so any lost, doubled or misplaced tile
 * offset shows however the look-back went), with fresh random inputs and poisoned outputs, flags and scratch,
 * and run several times in a row on the same buffers (clearScanState between). Also the path past the look-back
 * windows (ROUNDS = 0: one tile at a time), and a WGSL build skipping it (its `targets`: WebGPU has no
 * device-scope fence). The float case with its tolerance is the memory-bound suite's (memory-bound-examples.test.ts).
 */

import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileFiles } from "../compiler/index.ts";
import { compileKernelLibrary, type Device, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "scan-lookback.ts");

function library(defines?: Record<string, number>): KernelLibrary {
  return compileKernelLibrary([file], ["js"], { defines: new Map(Object.entries(defines ?? {}).map(([name, value]) => [name, String(value)])) });
}

/** Scans `x` with the kernel's specialization `constants`, `repeats` times on the same buffers; returns each output. */
async function scan(device: Device, lib: KernelLibrary, constants: Record<string, number>, x: Float32Array, repeats: number): Promise<Float32Array[]> {
  const kernel = lib.get("scanLookback", constants);
  const { BLOCK, ITEMS } = kernel.description.specialization as { BLOCK: number; ITEMS: number };
  const tiles = Math.ceil(x.length / (4 * BLOCK * ITEMS));
  const input = device.createBuffer(x);
  const aggregates = device.createBuffer(new Float32Array(tiles).fill(Number.NaN));
  const prefixes = device.createBuffer(new Float32Array(tiles).fill(Number.NaN));
  const flags = device.createBuffer(new Uint32Array(tiles).fill(0xdeadbeef));
  const counter = device.createBuffer(new Uint32Array(1).fill(0xdeadbeef));
  const results: Float32Array[] = [];
  for (let r = 0; r < repeats; r++) {
    const out = device.createBuffer(new Float32Array(x.length).fill(Number.NaN));
    await device.launch(lib.get("clearScanState"), { grid: [Math.ceil(tiles / 256)], args: [flags, counter, tiles] });
    await device.launch(kernel, { grid: [tiles], args: [out, input, aggregates, prefixes, flags, counter, x.length] });
    results.push((await device.read(out)) as Float32Array);
    // Every tile published its inclusive prefix, and the counter handed out each tile once.
    expect(Array.from((await device.read(flags)) as Uint32Array).every((f) => f === 2)).toBe(true);
    expect(((await device.read(counter)) as Uint32Array)[0]).toBe(tiles);
  }
  return results;
}

/** Random whole numbers in [0, 16): every partial sum of up to 2^20 of them is exact in f32. */
const wholeNumbers = (n: number) => Float32Array.from({ length: n }, () => Math.floor(Math.random() * 16));

function expectExactScan(x: Float32Array, out: Float32Array, where: string): void {
  let running = 0;
  let wrong = -1;
  for (let i = 0; i < x.length && wrong < 0; i++) {
    if (out[i] !== running) wrong = i;
    running += x[i]!;
  }
  expect(wrong, `${where}: first wrong element (−1: none); there ${wrong >= 0 ? out[wrong] : ""}`).toBe(-1);
}

const devices: CpuDevice[] = [];
afterAll(() => {
  for (const device of devices) device.dispose();
});

describe("single-pass scan on the CPU, exact on whole numbers", () => {
  const lib = library();
  const settings: [string, () => CpuDevice][] = [
    ["one thread", () => new CpuDevice()],
    ["2 worker threads", () => new CpuDevice({ workers: 2 })],
    ["4 worker threads", () => new CpuDevice({ workers: 4 })],
  ];
  for (const [name, make] of settings) {
    it(`${name}: 64 × 2 (391 tiles, the last partial) and 256 × 8 (25 tiles), three runs each`, async () => {
      const device = make();
      devices.push(device);
      for (const constants of [{ BLOCK: 64, ITEMS: 2 }, { BLOCK: 256, ITEMS: 8 }]) {
        const x = wholeNumbers(4 * 50_001);
        const outs = await scan(device, lib, constants, x, 3);
        outs.forEach((out, r) => expectExactScan(x, out, `${name}, ${JSON.stringify(constants)}, run ${r + 1}`));
      }
    }, 60_000);
  }

  it("past the windows, one tile at a time (ROUNDS = 0), on 4 worker threads and checked", async () => {
    const serial = library({ BLOCK: 64, ITEMS: 2, ROUNDS: 0 });
    for (const device of [new CpuDevice({ workers: 4 }), new CpuDevice({ checked: true })]) {
      devices.push(device);
      const x = wholeNumbers(4 * 20_001);
      const [out] = await scan(device, serial, { ROUNDS: 0 }, x, 1);
      expectExactScan(x, out!, `ROUNDS 0 on ${device.name}`);
    }
  }, 60_000);

  it("a single element and a single partial tile", async () => {
    const device = new CpuDevice({ workers: 2 });
    devices.push(device);
    for (const n of [4, 12]) {
      const x = wholeNumbers(n);
      const [out] = await scan(device, lib, {}, x, 1);
      expectExactScan(x, out!, `n = ${n}`);
    }
  });
});

describe("single-pass scan on WebGPU", () => {
  it("is skipped by a WGSL build, as its targets option declares (threadFence() has no WGSL equivalent, TSK3050)", () => {
    const result = compileFiles([file], { targets: ["wgsl", "js"] });
    expect(result.diagnostics).toEqual([]);
    const [out] = result.files;
    // clearScanState runs anywhere; scanLookback declares cuda and js, so WGSL skips each of its specializations.
    const specs = out!.specializations;
    expect(specs.filter((s) => s.kernel.name === "scanLookback").length).toBeGreaterThan(0);
    for (const spec of specs) expect(spec.targets, spec.entryName).toEqual(spec.kernel.name === "clearScanState" ? ["wgsl", "js"] : ["js"]);
    expect(out!.wgsl!.entries.map((e) => e?.entryPoint)).toEqual(specs.map((s) => (s.kernel.name === "clearScanState" ? "clearScanState" : undefined)));
    expect(out!.wgsl!.source).not.toContain("scanLookback");
    expect(out!.js!.functions.every((f) => f !== undefined)).toBe(true);
  });
});
