/**
 * Vector accesses of 16- and 8-bit elements (codegen-tests/vector-narrow: load8/store8 of bf16 on buffers and a
 * shared array, load16/store16 of u8, load4/store4 of i16 mixed with single-element stores) against a reference
 * computed here, with fresh random inputs and poisoned outputs, on the CPU (plain and checked) and on WebGPU,
 * where the bf16 and u8 arrays that only vector accesses reach are vec4<u32> words and the i16 one is split into
 * single elements in atomic words.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device, type KernelHandle } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";
import { referenceBf16, referenceBf16Bits } from "./half-reference.ts";

const file = path.join(casesRoot, "vector-narrow", "kernel.ts");
const rb = (x: number) => referenceBf16(referenceBf16Bits(x)!);
const wrap16 = (v: number) => (v << 16) >> 16;

async function check(device: Device, kernel: KernelHandle): Promise<void> {
  const blocks = 3;
  const n = blocks * 32 * 8;
  // Normal bf16 values (WGSL may flush subnormals), both signs.
  const x = Float32Array.from({ length: n }, () => (Math.random() - 0.5) * 2 ** (Math.random() * 40 - 20));
  const xBits = Uint16Array.from(x, (v) => referenceBf16Bits(v)!);
  const pixels = Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
  const shorts = Int16Array.from({ length: n }, () => Math.floor(Math.random() * 65536) - 32768);
  const scale = rb(0.5 + Math.random() * 3);
  const out = device.createBuffer("bf16", new Uint16Array(n).fill(0x7fd5));
  const bytes = device.createBuffer(new Uint8Array(n).fill(0xa5));
  const shortsBuffer = device.createBuffer(shorts);
  await device.launch(kernel, { grid: [blocks], args: [out, device.createBuffer("bf16", xBits), bytes, device.createBuffer(pixels), shortsBuffer, n, scale] });
  const gotOut = (await device.read(out, { bits: true })) as Uint16Array;
  const gotBytes = (await device.read(bytes)) as Uint8Array;
  const gotShorts = (await device.read(shortsBuffer)) as Int16Array;
  const wrong: string[] = [];
  for (let block = 0; block < blocks; block++) {
    for (let t = 0; t < 32; t++) {
      const i = (block * 32 + t) * 8;
      const s = (t + 1) & 31;
      const row = (k: number) => rb(referenceBf16(xBits[(block * 32 + s) * 8 + k]!) * scale);
      const want = [0, 1, 2, 3, 4, 5, 6].map(row);
      want.push(rb(row(7) + 1));
      want.forEach((v, k) => gotOut[i + k] !== referenceBf16Bits(v) && wrong.push(`out[${i + k}]: ${gotOut[i + k]}, expected ${referenceBf16Bits(v)} (${v})`));
      if (i % 16 === 0) {
        const p = [...pixels.subarray(i, i + 16)];
        const a = want[0]!;
        const truncated = Number.isNaN(a) ? 0 : Math.min(Math.max(Math.trunc(a), -2147483648), 2147483647);
        const wantBytes = [p.reduce((x, y) => x + y, 0), p[1]! * 2, p[2]! + 7, ...p.slice(3, 15), truncated >>> 0].map((v) => v & 0xff);
        wantBytes.forEach((v, k) => gotBytes[i + k] !== v && wrong.push(`bytes[${i + k}]: ${gotBytes[i + k]}, expected ${v}`));
      }
      const o = [...shorts.subarray(i, i + 8)];
      const wantShorts = [wrap16(o[0]! + 1), o[1]!, o[2]!, o[3]!, wrap16(o[0]! * 3), wrap16(o[1]! - 70000), o[2]!, o[3]!];
      wantShorts.forEach((v, k) => gotShorts[i + k] !== v && wrong.push(`shorts[${i + k}]: ${gotShorts[i + k]}, expected ${v}`));
    }
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

/** widenBytes: 8-byte vectors of i8 in, widened to bf16 and reversed as u8, against values computed here. */
async function checkWiden(device: Device, kernel: KernelHandle): Promise<void> {
  const blocks = 3;
  const n = blocks * 32 * 8 - 8; // the last thread returns: its outputs must stay poisoned
  const q = Int8Array.from({ length: blocks * 32 * 8 }, () => Math.floor(Math.random() * 256) - 128);
  const out = device.createBuffer("bf16", new Uint16Array(q.length).fill(0x7fd5));
  const reversed = device.createBuffer(new Uint8Array(q.length).fill(0xa5));
  await device.launch(kernel, { grid: [blocks], args: [out, reversed, device.createBuffer(q), n] });
  const gotOut = (await device.read(out, { bits: true })) as Uint16Array;
  const gotReversed = (await device.read(reversed)) as Uint8Array;
  const wrong: string[] = [];
  for (let i = 0; i < q.length; i++) {
    const k = i % 8;
    const base = i - k;
    const live = i < n;
    const wantOut = live ? referenceBf16Bits(k === 7 ? q[i]! * 0.5 : q[i]!)! : 0x7fd5;
    const wantReversed = live ? (k === 7 ? q[base]! + 300 : q[base + 7 - k]!) & 0xff : 0xa5;
    if (gotOut[i] !== wantOut) wrong.push(`out[${i}]: ${gotOut[i]}, expected ${wantOut}`);
    if (gotReversed[i] !== wantReversed) wrong.push(`reversed[${i}]: ${gotReversed[i]}, expected ${wantReversed}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

describe("vector accesses of 16- and 8-bit elements", () => {
  for (const backend of ["cpu", "webgpu"] as const) {
    it(`on ${backend}`, async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
      await check(device, library.get("packRows"));
      await checkWiden(device, library.get("widenBytes"));
    });
  }
  it("on the CPU checked (alignment, bounds, unwritten shared elements)", async () => {
    const device = await createDevice({ backend: "cpu", checked: true });
    const library = compileKernelLibrary([file], ["js"]);
    await check(device, library.get("packRows"));
    await checkWiden(device, library.get("widenBytes"));
    device.dispose();
  });
});
