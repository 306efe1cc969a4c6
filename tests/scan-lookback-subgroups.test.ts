/**
 * The single-pass scan with one-word publication and subgroup look-back (examples/scan-lookback-subgroups.ts)
 * on the CPU backend: on worker threads, where blocks really wait on each other's words, with 32 and 4 lanes
 * (4: 32 subgroups per block and look-back windows of 4 tiles, so the look-back takes many rounds and the
 * one-at-a-time path), and checked. Every output is checked exactly against float64 on whole numbers (whose
 * sums f32 holds exactly, so any lost, doubled or misplaced tile offset shows), with fresh random inputs,
 * poisoned outputs and words, several runs on the same buffers. Also what a NaN in the data does: the scan
 * still finishes, and every output after it is NaN, also when the NaN's bits are the NOT_READY pattern.
 */

import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "scan-lookback-subgroups.ts");
const NOT_READY = 0xffffffff;

function library(defines?: Record<string, number>): KernelLibrary {
  return compileKernelLibrary([file], ["js"], { defines: new Map(Object.entries(defines ?? {}).map(([name, value]) => [name, String(value)])) });
}

/** Scans `x` with the specialization `constants`, `repeats` times on the same buffers; returns each output. */
async function scan(device: Device, lib: KernelLibrary, constants: Record<string, number>, x: Float32Array, repeats: number): Promise<Float32Array[]> {
  const kernel = lib.get("scanLookbackSubgroups", constants);
  const { BLOCK, ITEMS } = kernel.description.specialization as { BLOCK: number; ITEMS: number };
  const tiles = Math.ceil(x.length / (4 * BLOCK * ITEMS));
  const input = device.createBuffer(x);
  const aggregates = device.createBuffer(new Uint32Array(tiles).fill(0xdeadbeef));
  const prefixes = device.createBuffer(new Uint32Array(tiles).fill(0xdeadbeef));
  const counter = device.createBuffer(new Uint32Array(1).fill(0xdeadbeef));
  const results: Float32Array[] = [];
  for (let r = 0; r < repeats; r++) {
    const out = device.createBuffer(new Float32Array(x.length).fill(Number.NaN));
    await device.launch(lib.get("clearScanWords"), { grid: [Math.ceil(tiles / 256)], args: [aggregates, prefixes, counter, tiles] });
    await device.launch(kernel, { grid: [tiles], args: [out, input, aggregates, prefixes, counter, x.length] });
    results.push((await device.read(out)) as Float32Array);
    // Every tile published its inclusive prefix, every tile but the first its sum, and the counter handed
    // out each tile once.
    expect(Array.from((await device.read(prefixes)) as Uint32Array).filter((w) => w === NOT_READY).length).toBe(0);
    const sums = Array.from((await device.read(aggregates)) as Uint32Array);
    expect(sums[0]).toBe(NOT_READY);
    expect(sums.slice(1).filter((w) => w === NOT_READY).length).toBe(0);
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

describe("single-pass scan with subgroup look-back on the CPU, exact on whole numbers", () => {
  const lib = library();
  const settings: [string, () => CpuDevice][] = [
    ["one thread", () => new CpuDevice()],
    ["4 worker threads", () => new CpuDevice({ workers: 4 })],
    ["4 worker threads, 4 lanes", () => new CpuDevice({ workers: 4, subgroupSize: 4 })],
    ["2 worker threads, 128 lanes", () => new CpuDevice({ workers: 2, subgroupSize: 128 })],
  ];
  for (const [name, make] of settings) {
    it(`${name}: 128 × 2 (196 tiles, the last partial) and the default 256 × 12 (17 tiles), three runs each`, async () => {
      const device = make();
      devices.push(device);
      for (const constants of [{ BLOCK: 128, ITEMS: 2 }, {}] as Record<string, number>[]) {
        const x = wholeNumbers(4 * 50_001);
        const outs = await scan(device, lib, constants, x, 3);
        outs.forEach((out, r) => expectExactScan(x, out, `${name}, ${JSON.stringify(constants)}, run ${r + 1}`));
      }
    }, 60_000);
  }

  it("past the windows, one tile at a time (ROUNDS = 0), on 4 worker threads and checked with 4 lanes", async () => {
    const serial = library({ BLOCK: 128, ITEMS: 2, ROUNDS: 0 });
    for (const device of [new CpuDevice({ workers: 4 }), new CpuDevice({ checked: true, subgroupSize: 4 })]) {
      devices.push(device);
      const x = wholeNumbers(4 * 20_001);
      const [out] = await scan(device, serial, { ROUNDS: 0 }, x, 1);
      expectExactScan(x, out!, `ROUNDS 0 on ${device.name}`);
    }
  }, 60_000);

  it("checked, 32 lanes: 128 × 2 over 40 tiles", async () => {
    const device = new CpuDevice({ checked: true });
    devices.push(device);
    const x = wholeNumbers(4 * 128 * 2 * 39 + 12);
    const [out] = await scan(device, lib, { BLOCK: 128, ITEMS: 2 }, x, 1);
    expectExactScan(x, out!, "checked");
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

describe("a NaN in the data", () => {
  it.each([
    ["0x7fc00000 (the NaN JavaScript writes)", 0x7fc00000],
    ["0xffffffff (the NOT_READY pattern)", NOT_READY],
  ])("%s: the scan finishes, outputs up to it are exact, every later one is NaN", async (_, bits) => {
    const device = new CpuDevice({ workers: 4 });
    devices.push(device);
    const lib = library();
    const x = wholeNumbers(4 * 128 * 2 * 30);
    const at = 4 * 128 * 2 * 7 + 5 + Math.floor(Math.random() * 100);
    // Through a bit view, so that the pattern itself reaches the buffer.
    new Uint32Array(x.buffer)[at] = bits;
    const [out] = await scan(device, lib, { BLOCK: 128, ITEMS: 2 }, x, 1);
    expectExactScan(x.subarray(0, at + 1), out!.subarray(0, at + 1), "before the NaN");
    expect(Array.from(out!.subarray(at + 1)).every(Number.isNaN)).toBe(true);
  }, 60_000);
});
