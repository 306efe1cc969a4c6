/**
 * Tensor maps that round to TF32 as they copy (createTensorMap's `roundToTf32`, the driver's TFLOAT32 type): the
 * CPU's copyTile rounds each f32 of the box to nearest, ties to even, bit for bit as `roundTf32Even` does, on
 * crafted patterns (ties on both sides of even, the largest finite values, infinities, NaN, subnormals, signed
 * zeros) and fresh random ones; `roundTf32Even` reproduces what the H100's tensor memory accelerator wrote for the
 * same patterns (recorded from bench/results/2026-11-27-tma-tf32-rounding-h100.txt); maps without it copy the bits
 * unchanged; storeTile refuses a rounding map, and createTensorMap one over a buffer that does not hold f32.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { roundTf32, roundTf32Even } from "../compiler/index.ts";
import { compileKernelLibrary, createTensorMap, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";

const source = `import { arriveExpectBytes, copyTile, initBarrier, kernel, shared, storeTile, syncThreads, threadIdx, waitBarrier, waitTileStores, type ReadonlyFloat32Array, type ReadonlyUint32Array } from "tskernel";

// One 16×32 box of A into shared memory (128-byte swizzle), then the shared array out as it lies.
export const copyBox = kernel({ block: [128], targets: ["cuda", "js"] }, (A: ReadonlyFloat32Array, out: Float32Array, mapA: ReadonlyUint32Array) => {
  const tile = shared.f32(16 * 32);
  const full = shared.barriers(1);
  if (threadIdx.x === 0) initBarrier(full, 0, 1);
  syncThreads();
  if (threadIdx.x === 0) {
    arriveExpectBytes(full, 0, 16 * 32 * 4);
    copyTile(tile, 0, A, mapA, 0, 0, full, 0);
  }
  waitBarrier(full, 0, 0);
  for (let i = threadIdx.x; i < 16 * 32; i += 128) out[i] = tile[i];
});

// The box back out through a map (what storeTile refuses when the map rounds).
export const storeBox = kernel({ block: [128], targets: ["cuda", "js"] }, (C: Float32Array, mapC: ReadonlyUint32Array) => {
  const tile = shared.f32(16 * 32);
  for (let i = threadIdx.x; i < 16 * 32; i += 128) tile[i] = 1.0;
  syncThreads();
  if (threadIdx.x === 0) {
    storeTile(C, mapC, 0, 0, tile, 0);
    waitTileStores(0);
  }
});
`;

function kernels(): { copyBox: KernelHandle; storeBox: KernelHandle } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-tf32-map-"));
  fs.writeFileSync(path.join(dir, "box.ts"), source);
  const library = compileKernelLibrary([path.join(dir, "box.ts")], ["js"]);
  return { copyBox: library.get("copyBox"), storeBox: library.get("storeBox") };
}

const bitsOf = (values: Float32Array) => Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length));
const f32 = (bits: number) => new Float32Array(Uint32Array.of(bits).buffer)[0]!;
const bitsOfOne = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0]!;

/** Input bit patterns and what the H100 wrote for them through a TFLOAT32 map (NaNs: 0x7fffe000, a NaN). */
const measured: readonly (readonly [number, number])[] = [
  [0x3f800000, 0x3f800000], [0x3f801000, 0x3f800000], [0x3f803000, 0x3f804000], [0x3f800fff, 0x3f800000],
  [0x3f801001, 0x3f802000], [0xbf801000, 0xbf800000], [0xbf803000, 0xbf804000], [0x7f7fffff, 0x7f800000],
  [0x7f7ff000, 0x7f800000], [0x7f7fefff, 0x7f7fe000], [0x7f800000, 0x7f800000], [0xff800000, 0xff800000],
  [0x00000001, 0x00000000], [0x00001000, 0x00000000], [0x00003000, 0x00004000], [0x007fffff, 0x00800000],
  [0x00400000, 0x00400000], [0x80000001, 0x80000000], [0x807ff000, 0x80800000], [0x00000000, 0x00000000],
  [0x80000000, 0x80000000], [0x33801000, 0x33800000], [0x4b7ff000, 0x4b800000], [0x3fffffff, 0x40000000],
  [0x3ffff000, 0x40000000],
];
const measuredNaNs = [0x7fc00000, 0x7f800001, 0x7fbfffff];

/** The element of a 16×32 f32 box at (row, col) in copyTile's 128-byte swizzle. */
const swizzled = (row: number, col: number) => {
  const e = 32 * row + col;
  return e ^ (((e / 32) & 7) * 4);
};

async function copied(values: Float32Array, roundToTf32: boolean): Promise<Float32Array> {
  const device = new CpuDevice();
  const A = device.createBuffer(values);
  const out = device.createBuffer(new Float32Array(16 * 32).fill(Number.NaN));
  const map = createTensorMap(device, A, { rows: 16, cols: 32, boxRows: 16, boxCols: 32, roundToTf32 });
  await device.launch(kernels().copyBox, { grid: [1], args: [A, out, map] });
  const lying = (await device.read(out)) as Float32Array;
  return Float32Array.from({ length: 16 * 32 }, (_, i) => lying[swizzled(Math.floor(i / 32), i % 32)]!);
}

describe("tensor maps that round to TF32 as they copy", () => {
  it("roundTf32Even gives what the H100's copy wrote for each measured pattern", () => {
    for (const [input, output] of measured) expect([input, bitsOfOne(roundTf32Even(f32(input)))]).toEqual([input, output]);
    for (const input of measuredNaNs) expect(roundTf32Even(f32(input))).toBeNaN();
    // Ties differ from roundTf32's (ties away from zero): the two roundings are not the same function.
    expect(bitsOfOne(roundTf32(f32(0x3f801000)))).toBe(0x3f802000);
  });

  it("the CPU's copyTile rounds each element as roundTf32Even does, crafted and random patterns, and copies bits unchanged without it", async () => {
    const patterns = new Uint32Array(16 * 32);
    measured.forEach(([input], i) => (patterns[i] = input));
    for (let i = measured.length; i < patterns.length; i++) patterns[i] = (Math.random() * 2 ** 32) >>> 0;
    // Ties planted among the random ones, kept parts odd and even.
    for (let i = measured.length; i < patterns.length; i += 5) patterns[i] = (patterns[i]! & ~0x1fff) | 0x1000;
    const values = new Float32Array(patterns.buffer);
    const rounded = await copied(values, true);
    const expected = values.map(roundTf32Even);
    rounded.forEach((x, i) => {
      if (Number.isNaN(expected[i]!)) expect(x).toBeNaN();
      else expect([i, bitsOfOne(x)]).toEqual([i, bitsOfOne(expected[i]!)]);
    });
    const plain = await copied(values, false);
    plain.forEach((x, i) => {
      if (Number.isNaN(values[i]!)) expect(x).toBeNaN();
      else expect([i, bitsOfOne(x)]).toEqual([i, patterns[i]]);
    });
    // The random patterns were not all TF32 already: the rounding changed some of them.
    expect(bitsOf(rounded).filter((b, i) => !Number.isNaN(values[i]!) && b !== patterns[i]).length).toBeGreaterThan(100);
  });

  it("storeTile refuses a rounding map, and createTensorMap a rounding map over a buffer that does not hold f32", async () => {
    const device = new CpuDevice();
    const C = device.createBuffer(new Float32Array(16 * 32));
    const mapC = createTensorMap(device, C, { rows: 16, cols: 32, boxRows: 16, boxCols: 32, roundToTf32: true });
    const store = async () => {
      await device.launch(kernels().storeBox, { grid: [1], args: [C, mapC] });
      await device.read(C);
    };
    await expect(store()).rejects.toThrow("storeTile() takes a tensor map without roundToTf32");
    const half = device.createBuffer("bf16", new Float32Array(16 * 64));
    expect(() => createTensorMap(device, half, { rows: 16, cols: 64, boxRows: 16, boxCols: 64, roundToTf32: true })).toThrow("roundToTf32 rounds f32 elements, but the source is a buffer of bf16");
  });
});
