/**
 * f16 and bf16 kernels (codegen-tests/half-precision, bf16-emulation) against a float64 reference that rounds after every
 * operation with the independent rounding of tests/half-reference.ts: fresh random encodings (every
 * magnitude, subnormals, both signs; no NaN or infinity in the inputs) and random scalars each run, outputs
 * poisoned first, the f16/bf16 outputs compared as their 16-bit encodings (so a NaN must be the canonical
 * 0x7fff, and an element the kernel did not write shows). On the CPU plain, checked and with worker threads;
 * the bf16-only kernel on WebGPU too (f16 needs `shader-f16`, which SwiftShader lacks: refused by name).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, LaunchError, type Device, type KernelHandle } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";
import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits } from "./half-reference.ts";

const file = path.join(casesRoot, "half-precision", "kernel.ts");
const bf16File = path.join(casesRoot, "bf16-emulation", "kernel.ts");

const rh = (x: number) => (Number.isNaN(x) ? Number.NaN : referenceF16(referenceF16Bits(x)!));
const rb = (x: number) => (Number.isNaN(x) ? Number.NaN : referenceBf16(referenceBf16Bits(x)!));
const f16Encoding = (x: number) => referenceF16Bits(x) ?? 0x7fff;
const bf16Encoding = (x: number) => referenceBf16Bits(x) ?? 0x7fff;
const saturate = (x: number, min: number, max: number) => (Number.isNaN(x) ? 0 : Math.min(Math.max(Math.trunc(x), min), max) + 0);
const i32 = (x: number) => saturate(x, -2147483648, 2147483647);
const u32 = (x: number) => saturate(x, 0, 4294967295);

/** A random finite encoding: uniform bits half of the time, else a value of magnitude 2^-4 … 2^4. */
function randomEncoding(decode: (bits: number) => number, encode: (x: number) => number | undefined): number {
  for (;;) {
    const bits = Math.random() < 0.5 ? Math.floor(Math.random() * 65536) : encode((Math.random() - 0.5) * 2 ** (Math.random() * 8 - 3))!;
    if (Number.isFinite(decode(bits)) && decode(bits) !== 0) return bits;
  }
}

function randomIn(lo: number, hi: number, round: (x: number) => number): number {
  return round(lo + Math.random() * (hi - lo));
}

async function checkHalves(device: Device, kernel: KernelHandle): Promise<void> {
  const n = 200;
  const xhBits = Uint16Array.from({ length: n }, () => randomEncoding(referenceF16, referenceF16Bits));
  const xbBits = Uint16Array.from({ length: n }, () => randomEncoding(referenceBf16, referenceBf16Bits));
  const xf = Float32Array.from({ length: n }, () => Math.fround((Math.random() - 0.5) * 20));
  const scale = randomIn(0.5, 3, rh);
  const shift = randomIn(0.5, 4, rb);
  // Poison: a NaN encoding no operation gives (its payload is not the canonical one), and NaN or a marker.
  const outH = device.createBuffer("f16", new Uint16Array(n * 6).fill(0x7d55));
  const outB = device.createBuffer("bf16", new Uint16Array(n * 5).fill(0x7fd5));
  const outF = device.createBuffer(new Float32Array(n * 4).fill(Number.NaN));
  const outI = device.createBuffer(new Int32Array(n * 3).fill(0x7abcdef0));
  await device.launch(kernel, {
    grid: [Math.ceil(n / 64)],
    args: [outH, outB, outF, outI, device.createBuffer("f16", xhBits), device.createBuffer("bf16", xbBits), device.createBuffer(xf), n, scale, shift],
  });
  const gotH = (await device.read(outH, { bits: true })) as Uint16Array;
  const gotB = (await device.read(outB, { bits: true })) as Uint16Array;
  const gotF = (await device.read(outF)) as Float32Array;
  const gotI = (await device.read(outI)) as Int32Array;
  // The values read back widen exactly: the same numbers as the encodings stand for.
  const valuesB = (await device.read(outB)) as Float32Array;
  expect(valuesB instanceof Float32Array).toBe(true);

  const xb = (j: number) => (j < n ? referenceBf16(xbBits[j]!) : 0);
  const tile = (block: number, t: number) => rb(xb(block * 64 + t) * shift);
  const wrong: string[] = [];
  const hex = (v: number) => `0x${v.toString(16)}`;
  const sameF = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  for (let i = 0; i < n; i++) {
    const a = referenceF16(xhBits[i]!);
    const b = xb(i);
    const x = xf[i]!;
    const block = Math.floor(i / 64);
    const t = i % 64;
    let acc = 0;
    for (let k = 0; k < 3; k++) acc = rh(acc + rh(a * 0.5));
    acc = rh(acc + 1);
    const wantH = [rh(rh(a * scale) + 1), rh(a / rh(scale - 0.25)), rh(Math.fround(Math.sqrt(Math.abs(a)))), rh(b), acc, rh(rh(x) + a)];
    const wantB = [rb(rb(b * b) + rb(x)), rb(a), rb(rb(b * 2.5) - rb(b / 2.5)), rb(tile(block, 63 - t) + b), rb(rb(Math.max(b, rb(i))) / shift)];
    const wantF = [Math.fround(a * x), b, a < 0 ? b : -a, tile(block, t)];
    const wantI = [i32(a), i32(rb(b * 1000)), u32(b) | 0];
    wantH.forEach((v, k) => gotH[i * 6 + k] !== f16Encoding(v) && wrong.push(`outH[${i * 6 + k}] (a=${a}, b=${b}, x=${x}): ${hex(gotH[i * 6 + k]!)}, expected ${hex(f16Encoding(v))} (${v})`));
    wantB.forEach((v, k) => gotB[i * 5 + k] !== bf16Encoding(v) && wrong.push(`outB[${i * 5 + k}] (a=${a}, b=${b}, x=${x}): ${hex(gotB[i * 5 + k]!)}, expected ${hex(bf16Encoding(v))} (${v})`));
    wantB.forEach((v, k) => !sameF(valuesB[i * 5 + k]!, v) && wrong.push(`outB[${i * 5 + k}] read as ${valuesB[i * 5 + k]}, expected ${v}`));
    wantF.forEach((v, k) => !sameF(gotF[i * 4 + k]!, v) && wrong.push(`outF[${i * 4 + k}]: ${gotF[i * 4 + k]}, expected ${v}`));
    wantI.forEach((v, k) => gotI[i * 3 + k] !== v && wrong.push(`outI[${i * 3 + k}]: ${gotI[i * 3 + k]}, expected ${v}`));
  }
  expect(wrong.slice(0, 12)).toEqual([]);
}

async function checkBfloats(device: Device, kernel: KernelHandle, smallest = 0): Promise<void> {
  const n = 300;
  const xBits = Uint16Array.from({ length: n }, () => {
    for (;;) {
      const bits = randomEncoding(referenceBf16, referenceBf16Bits);
      if (Math.abs(referenceBf16(bits)) >= smallest) return bits;
    }
  });
  const ints = Int32Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 32) - 2 ** 31);
  const shift = randomIn(0.5, 4, rb);
  const out = device.createBuffer("bf16", new Uint16Array(n * 4).fill(0x7fd5));
  const outF = device.createBuffer(new Float32Array(n * 2).fill(Number.NaN));
  const intsBuffer = device.createBuffer(ints);
  await device.launch(kernel, { grid: [Math.ceil(n / 64)], args: [out, outF, device.createBuffer("bf16", xBits), intsBuffer, n, shift] });
  const got = (await device.read(out, { bits: true })) as Uint16Array;
  const gotF = (await device.read(outF)) as Float32Array;
  const gotI = (await device.read(intsBuffer)) as Int32Array;
  const x = (j: number) => (j < n ? referenceBf16(xBits[j]!) : 0);
  const wrong: string[] = [];
  const hex = (v: number) => `0x${v.toString(16)}`;
  for (let i = 0; i < n; i++) {
    const b = x(i);
    const j = i ^ 1;
    // tile[t & 1][t] = b * shift, tile[1 - (t & 1)][t] = -b: row 0 of element j holds one, row 1 the other.
    const neighbour = rb(rb(x(j) * shift) + -x(j));
    let acc = rb(b * shift);
    acc = rb(rb(acc - 1) + 1);
    const want = [rb(rb(rb(b * shift) - rb(b / shift)) + neighbour), rb(rb(ints[i]!) - rb((ints[i]! >>> 0) >>> 9)), rb(Math.min(Math.abs(b), 100) * 3), acc];
    want.forEach((v, k) => got[i * 4 + k] !== bf16Encoding(v) && wrong.push(`out[${i * 4 + k}] (b=${b}, shift=${shift}): ${hex(got[i * 4 + k]!)}, expected ${hex(bf16Encoding(v))} (${v})`));
    const wantF = [Math.fround(neighbour * 0.5), b > neighbour ? 1.5 : Math.fround(i32(rb(b * 64)))];
    wantF.forEach((v, k) => !Object.is(gotF[i * 2 + k], v) && wrong.push(`outF[${i * 2 + k}]: ${gotF[i * 2 + k]}, expected ${v}`));
    if (gotI[i] !== i32(neighbour)) wrong.push(`ints[${i}]: ${gotI[i]}, expected ${i32(neighbour)}`);
  }
  expect(wrong.slice(0, 12)).toEqual([]);
}

describe("bf16 kernels on every backend", () => {
  for (const backend of ["cpu", "webgpu"] as const) {
    it(`${backend}: against the reference (WebGPU: emulated in u32 words and f32 values)`, async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      // WGSL may flush f32 subnormals, and so bf16's, to zero in arithmetic (docs/language.md): there, normal inputs only.
      await checkBfloats(device, compileKernelLibrary([bf16File], [backend === "cpu" ? "js" : "wgsl"]).get("bfloats"), backend === "webgpu" ? 2 ** -100 : 0);
    });
  }
  it("on the CPU checked", async () => {
    const device = await createDevice({ backend: "cpu", checked: true });
    await checkBfloats(device, compileKernelLibrary([bf16File], ["js"]).get("bfloats"));
    device.dispose();
  });
});

describe("f16 and bf16 kernels on the CPU", () => {
  const library = compileKernelLibrary([file], ["js"]);
  it.each([{}, { checked: true }, { workers: 2 }])("against the float64 reference that rounds after every operation (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    try {
      await checkHalves(device, library.get("halves"));
    } finally {
      device.dispose();
    }
  });
});

describe("f16 on WebGPU without shader-f16", () => {
  it("is refused at launch, naming the feature", async (context) => {
    const device = await deviceFor("webgpu");
    if (typeof device === "string") return context.skip(device);
    const kernel = compileKernelLibrary([file], ["wgsl"]).get("halves");
    expect(kernel.description.outputs.wgsl?.features).toEqual(["shader-f16"]);
    if ((device as Device & { hasFeature?: (name: string) => boolean }).hasFeature?.("shader-f16")) return context.skip("this adapter has shader-f16");
    const n = 8;
    const launch = device.launch(kernel, {
      grid: [1],
      args: [device.createBuffer("f16", n * 6), device.createBuffer("bf16", n * 5), device.createBuffer("f32", n * 4), device.createBuffer("i32", n * 3), device.createBuffer("f16", n), device.createBuffer("bf16", n), device.createBuffer("f32", n), n, 1, 1],
    });
    await expect(launch).rejects.toThrow(LaunchError);
    await expect(launch).rejects.toThrow(/shader-f16/);
  });
});
