/**
 * Vector accesses of 16- and 8-bit elements that WGSL moves word by word (docs/language.md §9, "Narrower
 * elements"): arrays that narrower accesses share with 16-byte ones. x (bf16) is read by load8, load4 (two
 * components of a vec4 of words) and a single element; q (i8) by load16 and a single element; bytes (u8) by
 * load16, then stored by store4 (one word each) and a single element, so its words are atomic and
 * its untouched elements must survive; out (bf16) by store8 and store4 only (plain word stores). Checked against
 * a reference computed here, with fresh random inputs and poisoned outputs, on the CPU, on WebGPU and on the
 * CPU checked.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device, type KernelHandle } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { referenceBf16, referenceBf16Bits } from "./half-reference.ts";

const source = `import { kernel, threadIdx, blockIdx, load4, store4, load8, store8, load16, bf16, f32, u32, i32, type BFloat16Array, type ReadonlyBFloat16Array, type ReadonlyInt8Array } from "tskernel";

export const wordAccesses = kernel({ block: [32] }, (out: BFloat16Array, x: ReadonlyBFloat16Array, q: ReadonlyInt8Array, bytes: Uint8Array, n: i32) => {
  const i = (blockIdx.x * 32 + threadIdx.x) * 16;
  if (i >= n) return;
  const [a0, a1, a2, a3, a4, a5, a6, a7] = load8(x, i);
  const [b0, b1, b2, b3] = load4(x, i + 8);
  const c = x[i + 13];
  const [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15] = load16(q, i);
  const r = q[i + 3];
  const [u0, u1, u2, u3, u4, u5, u6, u7, u8, u9, u10, u11, u12, u13, u14, u15] = load16(bytes, i);
  store8(out, i, a7, a6, a5, a4, a3, a2, a1, a0);
  store4(out, i + 8, b3, -b2, b1 * bf16(2), c);
  store4(out, i + 12, bf16(p0 + r), bf16(p15 - p7), bf16(f32(p14)), bf16(p1 + p2 + p3 + p4 + p5 + p6 + p8 + p9 + p10 + p11 + p12 + p13));
  store4(bytes, i, u3, u2, u1, u0 + 1);
  store4(bytes, i + 8, u15, u14, u13, u12);
  store4(bytes, i + 12, u11, u10, u9, u8 * 3 + u4 + u7);
  bytes[i + 4] = u5 ^ u6 ^ u32(i32(p0));
});
`;

function compiled(target: "js" | "wgsl"): KernelHandle {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-words-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, source);
  return compileKernelLibrary([file], [target]).get("wordAccesses");
}

async function check(device: Device, kernel: KernelHandle): Promise<void> {
  const blocks = 3;
  const n = blocks * 32 * 16;
  // Normal bf16 values (WGSL may flush subnormals), both signs, small enough to double.
  const xBits = Uint16Array.from({ length: n }, () => referenceBf16Bits((Math.random() - 0.5) * 2 ** (Math.random() * 40 - 20))!);
  const q = Int8Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128);
  const bytesIn = Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
  const out = device.createBuffer("bf16", new Uint16Array(n).fill(0x7fd5));
  const bytes = device.createBuffer(bytesIn);
  await device.launch(kernel, { grid: [blocks], args: [out, device.createBuffer("bf16", xBits), device.createBuffer(q), bytes, n] });
  const gotOut = (await device.read(out, { bits: true })) as Uint16Array;
  const gotBytes = (await device.read(bytes)) as Uint8Array;
  const wrong: string[] = [];
  const bits = (v: number) => referenceBf16Bits(v)!;
  for (let i = 0; i < n; i += 16) {
    const a = (k: number) => referenceBf16(xBits[i + k]!);
    const p = (k: number) => q[i + k]!;
    const u = (k: number) => bytesIn[i + k]!;
    const wantOut = [7, 6, 5, 4, 3, 2, 1, 0].map((k) => bits(a(k)));
    wantOut.push(bits(a(11)), bits(-a(10)), bits(a(9) * 2), bits(a(13)));
    // Each sum is an integer below 2^8 in magnitude but the last (within 12·128), so exact in bf16 or rounded here.
    wantOut.push(bits(p(0) + p(3)), bits(p(15) - p(7)), bits(p(14)), bits([1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13].reduce((s, k) => s + p(k), 0)));
    wantOut.forEach((v, k) => gotOut[i + k] !== v && wrong.push(`out[${i + k}]: ${gotOut[i + k]}, expected ${v}`));
    const wantBytes = [u(3), u(2), u(1), u(0) + 1, u(5) ^ u(6) ^ (p(0) >>> 0), u(5), u(6), u(7), u(15), u(14), u(13), u(12), u(11), u(10), u(9), u(8) * 3 + u(4) + u(7)].map((v) => v & 0xff);
    wantBytes.forEach((v, k) => gotBytes[i + k] !== v && wrong.push(`bytes[${i + k}]: ${gotBytes[i + k]}, expected ${v}`));
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

describe("vector accesses moved as whole words", () => {
  for (const backend of ["cpu", "webgpu"] as const) {
    it(`on ${backend}`, async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      await check(device, compiled(backend === "cpu" ? "js" : "wgsl"));
    });
  }
  it("on the CPU checked", async () => {
    const device = await createDevice({ backend: "cpu", checked: true });
    await check(device, compiled("js"));
    device.dispose();
  });
});
