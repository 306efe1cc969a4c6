/**
 * Subgroup operations run on every tested backend and, on the CPU, with subgroups of 4, 32 and 64 lanes, in
 * checked mode too: the construct kernel of codegen-tests/subgroups against results computed here (exactly
 * for integers, shuffles, ballots and min/max; against float64 with a tolerance for f32 sums and scans), with
 * fresh random inputs and poisoned outputs. The subgroup size each run had is read back from the kernel
 * (`subgroupSize`) and the lane numbering (`subgroupInvocationId`) must be the thread's linear index modulo it.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device, type KernelLibrary } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "subgroups", "kernel.ts");
const blocks = 3;
const threads = blocks * 64;

async function runSubgroupOps(device: Device, library: KernelLibrary): Promise<{ size: number }> {
  const x = Float32Array.from({ length: threads }, () => Math.random() * 2 - 1);
  const k = Int32Array.from({ length: threads }, () => Math.floor(Math.random() * 200) - 99);
  const rounds = 2 + Math.floor(Math.random() * 4);
  const floats = device.createBuffer(new Float32Array(threads * 8).fill(Number.NaN));
  const ints = device.createBuffer(new Int32Array(threads * 10).fill(-777777));
  const uints = device.createBuffer(new Uint32Array(threads * 6).fill(0xdeadbeef));
  await device.launch(library.get("subgroupOps"), { grid: [blocks], args: [floats, ints, uints, device.createBuffer(x), device.createBuffer(k), rounds] });
  const f = (await device.read(floats)) as Float32Array;
  const n = (await device.read(ints)) as Int32Array;
  const u = (await device.read(uints)) as Uint32Array;

  const size = n[9]!;
  expect([4, 8, 16, 32, 64, 128]).toContain(size);
  for (let t = 0; t < threads; t++) {
    const lane = t % size;
    const base = t - lane;
    const group = Array.from({ length: size }, (_, l) => base + l);
    const xs = group.map((g) => x[g]!);
    const ks = group.map((g) => k[g]!);
    const at = `thread ${t} (lane ${lane} of ${size})`;
    expect(n[t * 10 + 8], `${at}: subgroupInvocationId`).toBe(lane);
    expect(n[t * 10 + 9], `${at}: subgroupSize`).toBe(size);

    const sum = xs.reduce((a, b) => a + b, 0);
    expect(Math.abs(f[t * 8]! - sum), `${at}: subgroupAdd(f32)`).toBeLessThan(1e-5 * size);
    expect(f[t * 8 + 1], `${at}: subgroupMin(f32)`).toBe(Math.min(...xs));
    expect(f[t * 8 + 2], `${at}: subgroupMax(f32)`).toBe(Math.max(...xs));
    const inclusive = xs.slice(0, lane + 1).reduce((a, b) => a + b, 0);
    expect(Math.abs(f[t * 8 + 3]! - inclusive), `${at}: subgroupInclusiveAdd(f32)`).toBeLessThan(1e-5 * size);
    expect(Math.abs(f[t * 8 + 4]! - (inclusive - xs[lane]!)), `${at}: subgroupExclusiveAdd(f32)`).toBeLessThan(1e-5 * size);
    expect(f[t * 8 + 5], `${at}: subgroupBroadcast`).toBe(xs[1]);
    expect(f[t * 8 + 6], `${at}: subgroupShuffle`).toBe(xs[(lane + 1) % size]);
    expect(Math.abs(f[t * 8 + 7]! - sum), `${at}: a subgroupShuffleXor butterfly`).toBeLessThan(1e-5 * size);

    expect(n[t * 10], `${at}: subgroupAdd(i32)`).toBe(ks.reduce((a, b) => a + b, 0));
    expect(n[t * 10 + 1], `${at}: subgroupMin(i32)`).toBe(Math.min(...ks));
    expect(n[t * 10 + 2], `${at}: subgroupMax(i32) - subgroupMin(2·i32)`).toBe(Math.max(...ks) - 2 * Math.min(...ks));
    const inclusiveInt = ks.slice(0, lane + 1).reduce((a, b) => a + b, 0);
    expect(n[t * 10 + 3], `${at}: subgroupInclusiveAdd(i32)`).toBe(inclusiveInt);
    expect(n[t * 10 + 4], `${at}: subgroupExclusiveAdd(i32)`).toBe(inclusiveInt - ks[lane]!);
    expect(n[t * 10 + 5], `${at}: subgroupShuffleUp`).toBe(lane >= 1 ? ks[lane - 1] : -1);
    expect(n[t * 10 + 6], `${at}: subgroupShuffleDown`).toBe(lane + 2 < size ? ks[lane + 2] : -1);
    expect(n[t * 10 + 7], `${at}: subgroupShuffleXor`).toBe(ks[lane ^ 1]);

    // The ballot holds lanes 0 to 31: with more lanes, the others are not represented.
    let ballot = 0;
    for (let l = 0; l < Math.min(size, 32); l++) if (ks[l]! > 0) ballot |= 1 << l;
    expect(u[t * 6], `${at}: subgroupBallot`).toBe(ballot >>> 0);
    expect(u[t * 6 + 1], `${at}: subgroupAll`).toBe(ks.every((v) => v > -100) ? 1 : 0);
    expect(u[t * 6 + 2], `${at}: subgroupAny`).toBe(ks.some((v) => v > 90) ? 1 : 0);
    expect(u[t * 6 + 3], `${at}: subgroupAdd(u32)`).toBe(ks.reduce((a, b) => a + (b & 255), 0));
    expect(u[t * 6 + 4], `${at}: subgroupMax(u32) + subgroupBroadcast(u32)`).toBe(Math.max(...ks) + 100);
    // Σ over rounds r of the exclusive scan of r + lane.
    let acc = 0;
    for (let r = 0; r < rounds; r++) for (let l = 0; l < lane; l++) acc += r + l;
    expect(u[t * 6 + 5], `${at}: subgroupExclusiveAdd in a loop`).toBe(acc);
  }
  return { size };
}

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`subgroup operations on ${backend}${typeof device === "string" ? ` (skipped: ${device})` : ""}`, () => {
    const gpu = device as Device;
    it("every subgroup operation, with the device's subgroup size", async () => {
      const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
      const { size } = await runSubgroupOps(gpu, library);
      expect(size).toBe(gpu.limits.subgroupSize);
    });
  });
}

describe("subgroup operations on the CPU with other subgroup sizes", () => {
  const library = compileKernelLibrary([file], ["js"]);
  for (const [subgroupSize, checked] of [[4, false], [64, false], [4, true], [32, true]] as const) {
    it(`${subgroupSize} lanes${checked ? ", checked" : ""}`, async () => {
      const device = await createDevice({ backend: "cpu", subgroupSize, checked });
      const { size } = await runSubgroupOps(device, library);
      expect(size).toBe(subgroupSize);
    });
  }

  it("refuses blocks that are not whole subgroups, and sizes that are not powers of two up to 128", async () => {
    const device = await createDevice({ backend: "cpu", subgroupSize: 128 });
    const buffer = device.createBuffer("f32", threads * 10);
    await expect(
      device.launch(library.get("subgroupOps"), { grid: [1], args: [buffer, device.createBuffer("i32", threads * 10), device.createBuffer("u32", threads * 6), buffer, device.createBuffer("i32", threads), 1] }),
    ).rejects.toThrow("cannot launch 'subgroupOps': it uses subgroup operations, so its block must be a whole number of subgroups (128 threads on this device); [64, 1, 1] is 64 threads");
    for (const size of [0, 3, 256, 2.5]) {
      await expect(createDevice({ backend: "cpu", subgroupSize: size })).rejects.toThrow(`subgroupSize must be a power of two from 1 to 128, got ${size}`);
    }
  });

  it("with 32 lanes, f32 subgroupAdd adds in CUDA's order: the same bits as a shuffleXor butterfly from 16 down", async () => {
    const device = await createDevice({ backend: "cpu", subgroupSize: 32 });
    const x = Float32Array.from({ length: threads }, () => (Math.random() * 2 - 1) * 10 ** Math.floor(Math.random() * 6));
    const floats = device.createBuffer(new Float32Array(threads * 8).fill(Number.NaN));
    const ints = device.createBuffer("i32", threads * 10);
    const uints = device.createBuffer("u32", threads * 6);
    const k = device.createBuffer(new Int32Array(threads).fill(1));
    await device.launch(library.get("subgroupOps"), { grid: [blocks], args: [floats, ints, uints, device.createBuffer(x), k, 1] });
    const f = (await device.read(floats)) as Float32Array;
    for (let t = 0; t < threads; t++) expect(f[t * 8], `thread ${t}`).toBe(f[t * 8 + 7]);
  });
});
