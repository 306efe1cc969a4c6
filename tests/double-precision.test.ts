/**
 * f64 kernels (codegen-tests/double-precision) on the CPU against a reference computed here: double
 * arithmetic as JavaScript's, conversions to f16 and bf16 rounded once from the double (the independent
 * rounding of tests/half-reference.ts), to integers truncated and saturated. Fresh random inputs of every
 * magnitude each run; outputs poisoned. WebGPU refuses f64 (TSK3120, an error golden); the kernel says so
 * in its `targets`.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice } from "../runtime/index.ts";
import { casesRoot } from "./golden-cases.ts";
import { referenceBf16Bits, referenceF16Bits } from "./half-reference.ts";

const file = path.join(casesRoot, "double-precision", "kernel.ts");
const saturate = (x: number, min: number, max: number) => (Number.isNaN(x) ? 0 : Math.min(Math.max(Math.trunc(x), min), max) + 0);
const i32 = (x: number) => saturate(x, -2147483648, 2147483647);

describe("f64 kernels on the CPU", () => {
  const kernel = compileKernelLibrary([file], ["js"]).get("doubles");
  it.each([{}, { checked: true }])("against the reference (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    const n = 257;
    const x = Float64Array.from({ length: n }, () => (Math.random() - 0.5) * 2 ** Math.floor(Math.random() * 80 - 40));
    const k = (Math.random() + 0.5) * 1e-3;
    const out = device.createBuffer(new Float64Array(n * 3).fill(Number.NaN));
    const outF = device.createBuffer(new Float32Array(n).fill(Number.NaN));
    const outH = device.createBuffer("f16", new Uint16Array(n).fill(0x7d55));
    const outB = device.createBuffer("bf16", new Uint16Array(n * 2).fill(0x7fd5));
    const outI = device.createBuffer(new Int32Array(n).fill(0x7abcdef0));
    await device.launch(kernel, { grid: [Math.ceil(n / 64)], args: [out, outF, outH, outB, outI, device.createBuffer(x), n, k] });
    const got = (await device.read(out)) as Float64Array;
    const gotF = (await device.read(outF)) as Float32Array;
    const gotH = (await device.read(outH, { bits: true })) as Uint16Array;
    const gotB = (await device.read(outB, { bits: true })) as Uint16Array;
    const gotI = (await device.read(outI)) as Int32Array;
    const wrong: string[] = [];
    for (let i = 0; i < n; i++) {
      const d = x[i]!;
      const want = [d * k + 1e-300, Math.sqrt(Math.abs(d)) / 3, i32(d) + i * 0.1];
      want.forEach((v, j) => !Object.is(got[i * 3 + j], v) && wrong.push(`out[${i * 3 + j}] (d=${d}): ${got[i * 3 + j]}, expected ${v}`));
      if (!Object.is(gotF[i], Math.fround(d))) wrong.push(`outF[${i}]: ${gotF[i]}`);
      if (gotH[i] !== referenceF16Bits(d)) wrong.push(`outH[${i}] (d=${d}): ${gotH[i]}, expected ${referenceF16Bits(d)}`);
      if (gotB[i * 2] !== referenceBf16Bits(d)) wrong.push(`outB[${i * 2}] (d=${d}): ${gotB[i * 2]}, expected ${referenceBf16Bits(d)}`);
      if (gotB[i * 2 + 1] !== referenceBf16Bits(i32(d * 1e6))) wrong.push(`outB[${i * 2 + 1}] (d=${d}): ${gotB[i * 2 + 1]}`);
      if (gotI[i] !== i32(d * 1e9)) wrong.push(`outI[${i}]: ${gotI[i]}, expected ${i32(d * 1e9)}`);
    }
    expect(wrong.slice(0, 12)).toEqual([]);
    device.dispose();
  });
});
