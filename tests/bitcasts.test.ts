/**
 * bitcastU32 and bitcastF32 (docs/language.md §5) on every tested backend, and on the CPU checked and with
 * worker threads: the construct kernel of codegen-tests/bitcasts against bits computed here through a
 * Float32Array/Uint32Array view, on fresh random bit patterns (every exponent, both signs, subnormals) and
 * the special values, with every output poisoned first. NaN inputs are checked as NaNs, not as one pattern
 * (their payload is the target's).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "bitcasts", "kernel.ts");

const isNanBits = (w: number) => (w & 0x7f800000) === 0x7f800000 && (w & 0x007fffff) !== 0;
const randomBits = () => Math.floor(Math.random() * 2 ** 32) >>> 0;

/** Random patterns that are not NaNs, then the special ones: ±0, ±∞, the smallest and largest subnormals, ±max. */
function patterns(n: number, keepSubnormals: boolean): Uint32Array {
  const special = [0, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x3f800000];
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let w = i < special.length ? special[i]! : randomBits();
    while (isNanBits(w) || (!keepSubnormals && (w & 0x7f800000) === 0 && (w & 0x007fffff) !== 0)) w = randomBits();
    out[i] = w;
  }
  return out;
}

async function check(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  const n = 1000;
  // x: every kind of value, then three NaNs (the canonical ones of JavaScript and CUDA, and a negative one).
  const xBits = patterns(n, true);
  xBits.set([0x7fc00000, 0x7fffffff, 0xffc00001], n - 3);
  const x = new Float32Array(xBits.buffer);
  // w: no subnormals, since the kernel multiplies bitcastF32(w) by 1 (a target may flush subnormal arithmetic).
  const w = patterns(n, false);
  const bits = device.createBuffer(new Uint32Array(n).fill(0xdeadbeef));
  const values = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  const negated = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  const exponents = device.createBuffer(new Uint32Array(n).fill(0xdeadbeef));
  await device.launch(kernel, { grid: [Math.ceil(n / 64)], args: [bits, values, negated, exponents, device.createBuffer(x), device.createBuffer(w), n] });
  const gotBits = (await device.read(bits)) as Uint32Array;
  const gotValues = new Uint32Array(((await device.read(values)) as Float32Array).slice().buffer);
  const gotNegated = new Uint32Array(((await device.read(negated)) as Float32Array).slice().buffer);
  const gotExponents = (await device.read(exponents)) as Uint32Array;
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    const xb = xBits[i]!;
    const hex = (v: number) => `0x${(v >>> 0).toString(16)}`;
    if (isNanBits(xb)) {
      if (!isNanBits(gotBits[i]!)) wrong.push(`bits[${i}] of NaN ${hex(xb)}: ${hex(gotBits[i]!)}`);
      if (!isNanBits(gotNegated[i]!)) wrong.push(`negated[${i}] of NaN ${hex(xb)}: ${hex(gotNegated[i]!)}`);
    } else {
      if (gotBits[i] !== xb) wrong.push(`bits[${i}]: ${hex(gotBits[i]!)}, expected ${hex(xb)}`);
      if (gotNegated[i] !== (xb ^ 0x80000000) >>> 0) wrong.push(`negated[${i}]: ${hex(gotNegated[i]!)} for ${hex(xb)}`);
    }
    if (gotExponents[i] !== (xb >>> 23) % 256) wrong.push(`exponents[${i}]: ${gotExponents[i]} for ${hex(xb)}`);
    if (gotValues[i] !== w[i]) wrong.push(`values[${i}]: ${hex(gotValues[i]!)}, expected ${hex(w[i]!)}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

for (const backend of testedBackends) {
  describe(`bit casts on ${backend}`, () => {
    it("f32 bits to u32 and back, on random patterns and the special values", async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      const target = backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
      await check(device, compileKernelLibrary([file], [target]).get("bitcasts"));
    });
  });
}

describe("bit casts on the CPU with worker threads and checked", () => {
  it.each([{ workers: 2 }, { checked: true }])("%j", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    await check(device, compileKernelLibrary([file], ["js"]).get("bitcasts"));
  });
});
