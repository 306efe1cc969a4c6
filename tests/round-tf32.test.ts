/**
 * roundTf32 (docs/language.md §25, "B in shared memory") as a kernel function on every tested backend: against
 * tskernel/compiler's roundTf32 (cvt.rna.tf32.f32's rounding: to nearest, ties away from zero, the low 13 bits
 * cleared) on fresh random finite values, exact ties and the values just beside them, ±0, ±infinity, ±max (which
 * rounds to infinity) and subnormals; outputs poisoned with NaN first. The CPU also keeps NaN a NaN; WGSL's NaN
 * is the implementation's, so it is not asked there. The CUDA build prints cvt.rna.tf32.f32.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { roundTf32 } from "../compiler/index.ts";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { compileSource } from "./compile-source.ts";
import { deviceFor, testedBackends } from "./backends.ts";

const source = `import { kernel, roundTf32, threadIdx, blockIdx, type i32 } from "tskernel";
export const rounded = kernel({ block: [64] }, (out: Float32Array, x: Readonly<Float32Array>, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) {
    out[i] = roundTf32(x[i]);
  }
});
`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-round-tf32-"));
const file = path.join(dir, "kernel.ts");
fs.writeFileSync(file, source);

/** Random finite bit patterns of every exponent, then the cases rounding gets wrong first. */
function inputs(n: number, keepSubnormals: boolean): Float32Array {
  const bits = new Uint32Array(n);
  // A tie (low 13 bits 0x1000) of each sign, one below and one above it, ±0, ±∞, ±max, the smallest subnormal.
  const special = [0x3f801000, 0xbf801000, 0x3f800fff, 0x3f801001, 0x40ffe000 | 0x1000, 0, 0x80000000, 0x7f800000, 0xff800000, 0x7f7fffff, 0xff7fffff, 0x00000001, 0x00001fff];
  for (let i = 0; i < n; i++) {
    let w = i < special.length ? special[i]! : Math.floor(Math.random() * 2 ** 32) >>> 0;
    while ((w & 0x7f800000) === 0x7f800000 && i >= special.length) w = Math.floor(Math.random() * 2 ** 32) >>> 0;
    if (!keepSubnormals && (w & 0x7f800000) === 0) w = (w & 0x807fffff) | 0x00800000;
    bits[i] = w;
  }
  return new Float32Array(bits.buffer);
}

async function check(device: Device, target: "js" | "wgsl", withNaN: boolean): Promise<void> {
  const n = 1000;
  // WebGPU may flush subnormals (WGSL lets it): they are asked on the CPU only.
  const x = inputs(n, target === "js");
  if (withNaN) x[n - 1] = Number.NaN;
  const out = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  await device.launch(compileKernelLibrary([file], [target]).get("rounded"), { grid: [Math.ceil(n / 64)], args: [out, device.createBuffer(x), n] });
  const got = (await device.read(out)) as Float32Array;
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    const expected = roundTf32(x[i]!);
    if (Number.isNaN(expected) ? !Number.isNaN(got[i]!) : !Object.is(got[i], expected)) wrong.push(`${x[i]} → ${got[i]}, expected ${expected}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
  // The ties went away from zero and the largest finite value past TF32's largest, to infinity.
  expect(Array.from(got.slice(0, 2))).toEqual([Math.fround(1 + 2 ** -10), -Math.fround(1 + 2 ** -10)]);
  expect(got[9]).toBe(Infinity);
}

for (const backend of testedBackends) {
  describe(`roundTf32 on ${backend}`, () => {
    it("rounds as cvt.rna.tf32.f32 does, on random values, ties and the special values", async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      await check(device, backend === "cpu" ? "js" : "wgsl", backend === "cpu");
    });
  });
}

describe("roundTf32 in CUDA and the compile-time rules", () => {
  it("prints cvt.rna.tf32.f32 through the helper", () => {
    const result = compileSource(source, { targets: ["cuda"] });
    expect(result.rendered).toBe("");
    const cuda = result.files[0]!.cuda!.source;
    expect(cuda).toContain('asm("cvt.rna.tf32.f32 %0, %1;"');
    expect(cuda).toMatch(/out\[[^\]]+\] = tsk_tf32\(x\[/);
  });

  it("takes one f32 (TSK2008 otherwise)", () => {
    const bad = source.replace("roundTf32(x[i])", "roundTf32(x[i], 1)");
    expect(compileSource(bad, { targets: ["js"] }).rendered).toContain("error[TSK2008]: roundTf32() expects 1 argument(s)");
  });
});
