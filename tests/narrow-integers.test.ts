/**
 * 8- and 16-bit integer buffers, shared and private arrays (codegen-tests/narrow-integers) against a reference
 * computed here with the language's rules: a load sign- or zero-extends to i32/u32, arithmetic wraps at 32
 * bits, a store keeps the low bits. Fresh random inputs over the whole range of each type; outputs poisoned.
 * On the CPU (plain, checked, workers) and on WebGPU, where the arrays live in u32 words (four i8 or two i16
 * per word: a single-element store is an atomic update of its word).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device, type KernelHandle } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "narrow-integers", "kernel.ts");

const wrap8 = (v: number) => (v << 24) >> 24;
const wrapU8 = (v: number) => v & 0xff;
const wrap16 = (v: number) => (v << 16) >> 16;
const wrapU16 = (v: number) => v & 0xffff;

async function checkNarrow(device: Device, kernel: KernelHandle): Promise<void> {
  const n = 300;
  const in8 = Int8Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128);
  const inU8 = Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
  const in16 = Int16Array.from({ length: n }, () => Math.floor(Math.random() * 65536) - 32768);
  const out8 = device.createBuffer(new Int8Array(n).fill(0x5a));
  const outU8 = device.createBuffer(new Uint8Array(n).fill(0xa5));
  const out16 = device.createBuffer(new Int16Array(n).fill(0x1234));
  const outU16 = device.createBuffer(new Uint16Array(n).fill(0xbeef));
  const outI = device.createBuffer(new Int32Array(n * 3).fill(0x7abcdef0));
  await device.launch(kernel, {
    grid: [Math.ceil(n / 64)],
    args: [out8, outU8, out16, outU16, outI, device.createBuffer(in8), device.createBuffer(inU8), device.createBuffer(in16), n],
  });
  const got8 = (await device.read(out8)) as Int8Array;
  const gotU8 = (await device.read(outU8)) as Uint8Array;
  const got16 = (await device.read(out16)) as Int16Array;
  const gotU16 = (await device.read(outU16)) as Uint16Array;
  const gotI = (await device.read(outI)) as Int32Array;
  expect([got8, gotU8, got16, gotU16].map((a) => a.constructor.name)).toEqual(["Int8Array", "Uint8Array", "Int16Array", "Uint16Array"]);
  const w = (j: number) => (j < n ? inU8[j]! : 0);
  const count = (j: number) => wrapU8(w(j) + 7);
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = in8[i]!;
    const t = i % 64;
    const block = i - t;
    const recent = [0, 1, 2, 3].map((k) => wrap8(Math.imul(v, k + 40)));
    const want = {
      out8: wrap8(v * 3),
      outU8: wrapU8(wrapU8(w(i) + 200) + count(block + 63 - t)),
      out16: wrap16(in16[i]! * 3 + v),
      outU16: wrapU16(((v >>> 0) - w(i)) >>> 0),
      outI: [recent[1]! + recent[3]!, count(block + t) - 300, ((w(i) >>> 3) | 0) ^ v],
    };
    if (got8[i] !== want.out8) wrong.push(`out8[${i}] (v=${v}): ${got8[i]}, expected ${want.out8}`);
    if (gotU8[i] !== want.outU8) wrong.push(`outU8[${i}]: ${gotU8[i]}, expected ${want.outU8}`);
    if (got16[i] !== want.out16) wrong.push(`out16[${i}]: ${got16[i]}, expected ${want.out16}`);
    if (gotU16[i] !== want.outU16) wrong.push(`outU16[${i}]: ${gotU16[i]}, expected ${want.outU16}`);
    want.outI.forEach((value, k) => gotI[i * 3 + k] !== value && wrong.push(`outI[${i * 3 + k}]: ${gotI[i * 3 + k]}, expected ${value}`));
  }
  expect(wrong.slice(0, 12)).toEqual([]);
}

describe("narrow integers on the CPU", () => {
  const library = compileKernelLibrary([file], ["js"]);
  it.each([{}, { checked: true }, { workers: 2 }])("load widened, store truncated (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    try {
      await checkNarrow(device, library.get("narrow"));
    } finally {
      device.dispose();
    }
  });
});

describe("narrow integers on WebGPU (in u32 words)", () => {
  it("load widened, store truncated, neighbours in a word written by different threads", async (context) => {
    const device = await deviceFor("webgpu");
    if (typeof device === "string") return context.skip(device);
    await checkNarrow(device, compileKernelLibrary([file], ["wgsl"]).get("narrow"));
  });
});
