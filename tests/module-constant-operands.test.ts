/**
 * Module-level constants beside u32, i32 and f32 operands run on every tested backend: the construct kernel
 * of codegen-tests/module-constant-operands against an integer (u32/i32 wrap-around) and float64 reference
 * computed here, on fresh random inputs with the boundary values the kernel's comparisons test, and
 * poisoned outputs. Also: a name that shadows a module-level constant is not typed like a literal.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { compileSource, header } from "./compile-source.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "module-constant-operands", "kernel.ts");
const n = 200;
const BIG = 3000000000;

function referenceU32(m: number): number {
  let a = (m + 2) >>> 0;
  a = (Math.imul(a, 2) - (m >>> 3)) >>> 0;
  a = (a + (((m & 0xff) ^ (m << 3)) >>> 0)) >>> 0;
  a = (a + (m === 2 ? 2 : m % 2)) >>> 0;
  a = (a + Math.min(m, BIG) + Math.max(2, m & 0xff)) >>> 0;
  a = (a ^ 0xff) >>> 0;
  a = (a - 2) >>> 0;
  if (m < BIG) a = (a + 2) >>> 0;
  return a;
}

function referenceI32(k: number): number {
  let b = (k - 5) | 0;
  b = (Math.imul(b, 2) - (k >> 3) + (k >>> 3)) | 0;
  b = (b + ((k | 0xff) & (k << 2))) | 0;
  b = (b + (k !== -5 ? Math.trunc(k / 2) : -5)) | 0;
  b = (b + Math.max(k, -5) - Math.min(-5, k, 2)) | 0;
  b = Math.imul(b, 2);
  b = (b + 5) | 0;
  if (k > -5 && k <= 2) b = (b + 255) | 0;
  return b;
}

/** In float64; the inputs are quarter-integers below 64, so every step is exact in f32 as well. */
function referenceF32(v: number): number {
  let c = v * 2 + 0.5;
  c -= v / 2;
  c += v < 2 ? -5 : v - 0.5;
  c += Math.min(v, 2) + Math.max(-5, v, 0.5);
  c *= 0.5;
  if (v >= -5) c += 255;
  return c;
}

function randomInputs(): { us: Uint32Array; is: Int32Array; fs: Float32Array } {
  const us = Uint32Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 32));
  const is = Int32Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 32) - 2 ** 31);
  const fs = Float32Array.from({ length: n }, () => Math.floor(Math.random() * 512) / 4 - 64);
  // The values where the kernel's comparisons with the constants turn, at random places.
  const edges = { us: [0, 1, 2, 3, 255, BIG - 1, BIG, 2 ** 32 - 1], is: [-5, -6, -4, 2, 3, 0, -(2 ** 31), 2 ** 31 - 1], fs: [2, 1.75, 2.25, -5, -5.25, 0.5, 0] };
  for (const [key, values] of Object.entries(edges)) {
    for (const value of values) ({ us, is, fs })[key as "us" | "is" | "fs"][Math.floor(Math.random() * n)] = value;
  }
  return { us, is, fs };
}

async function check(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  const { us, is, fs } = randomInputs();
  const outU = device.createBuffer(new Uint32Array(n + 8).fill(0xdeadbeef));
  const outI = device.createBuffer(new Int32Array(n + 8).fill(-0x21524111));
  const outF = device.createBuffer(new Float32Array(n + 8).fill(Number.NaN));
  const args = [n, device.createBuffer(us), device.createBuffer(is), device.createBuffer(fs), outU, outI, outF];
  await device.launch(kernel, { grid: [Math.ceil(n / 64)], args });
  const gotU = Array.from((await device.read(outU)) as Uint32Array);
  const gotI = Array.from((await device.read(outI)) as Int32Array);
  const gotF = Array.from((await device.read(outF)) as Float32Array);
  expect(gotU).toEqual([...Array.from(us, referenceU32), ...new Array(8).fill(0xdeadbeef)]);
  expect(gotI).toEqual([...Array.from(is, referenceI32), ...new Array(8).fill(-0x21524111)]);
  expect(gotF).toEqual([...Array.from(fs, referenceF32), ...new Array(8).fill(Number.NaN)]);
}

for (const backend of testedBackends) {
  describe(`module-level constants as operands on ${backend}`, () => {
    it("take the u32, i32 or f32 type of the operand beside them", async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      const target = backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
      await check(device, compileKernelLibrary([file], [target]).get("constantOperands"));
    });
  });
}

describe("a name that shadows a module-level constant", () => {
  // The u32 operand beside it must meet the shadowing f32, not the constant's literal.
  it.each([
    ["a kernel local", "export const k = kernel((out: Uint32Array, m: u32) => {\n  const TWO: f32 = 1.5;\n  out[0] = m + TWO;\n});\n"],
    ["a helper parameter", "function add(m: u32, TWO: f32): u32 {\n  return m + TWO;\n}\nexport const k = kernel((out: Uint32Array, m: u32) => {\n  out[0] = add(m, 1.5);\n});\n"],
  ])("%s keeps its own type", (_what, body) => {
    const result = compileSource(`${header}const TWO = 2;\n${body}`);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK2001"]);
    expect(result.rendered).toContain("u32 and f32");
  });

  it("while the constant itself takes the u32 type", () => {
    const result = compileSource(`${header}const TWO = 2;\nexport const k = kernel((out: Uint32Array, m: u32) => {\n  out[0] = m + TWO;\n});\n`);
    expect(result.diagnostics).toEqual([]);
    expect(result.files[0]!.cuda!.source).toContain("m + 2u");
  });
});
