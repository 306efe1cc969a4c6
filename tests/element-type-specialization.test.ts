/**
 * One kernel for several element types (codegen-tests/element-type-specialization): each specialization names
 * the element type T (f32, bf16, u8) and is built with its own entry name; every build runs on the CPU and on
 * WebGPU against a float64 reference that rounds as the type does, on fresh random inputs with poisoned outputs.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device, type KernelHandle } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";
import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits } from "./half-reference.ts";

const file = path.join(casesRoot, "element-type-specialization", "kernel.ts");

/** Each element type: how a value rounds to it, and random inputs of it. */
const types = {
  f32: { round: Math.fround, input: () => Math.fround((Math.random() - 0.5) * 100) },
  bf16: { round: (x: number) => referenceBf16(referenceBf16Bits(x)!), input: () => referenceBf16(referenceBf16Bits((Math.random() - 0.5) * 100)!) },
  f16: { round: (x: number) => referenceF16(referenceF16Bits(x)!), input: () => referenceF16(referenceF16Bits((Math.random() - 0.5) * 100)!) },
  u8: { round: (x: number) => (Number.isNaN(x) ? 0 : Math.min(Math.max(Math.trunc(x), 0), 4294967295)), input: () => Math.floor(Math.random() * 256) },
} as const;

async function check(device: Device, kernel: KernelHandle, type: keyof typeof types): Promise<void> {
  const n = 333;
  const block = kernel.description.block![0];
  const { round, input } = types[type];
  const x = Array.from({ length: n }, input);
  const scale = Math.fround(0.25 + Math.random());
  const poison = type === "u8" ? 0xa5 : 1234.5;
  const out = device.createBuffer(type, new Array<number>(n).fill(poison));
  const sums = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  await device.launch(kernel, { grid: [Math.ceil(n / block)], args: [out, sums, device.createBuffer(type, x), n, scale] });
  const gotOut = await device.read(out);
  const gotSums = (await device.read(sums)) as Float32Array;
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    let acc = 0;
    for (let k = 0; k < 4; k++) acc = Math.fround(acc + Math.fround(v * scale));
    // cast<T>(acc) + v: for u8 the sum of two u32s, truncated to 8 bits by the store.
    const want = type === "u8" ? ((round(acc) + v) >>> 0) & 0xff : round(round(acc) + v);
    if (!Object.is(gotSums[i], acc)) wrong.push(`sums[${i}]: ${gotSums[i]}, expected ${acc}`);
    if (!Object.is(gotOut[i], want)) wrong.push(`out[${i}] (${type}, x=${v}): ${gotOut[i]}, expected ${want}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

describe("one kernel for several element types", () => {
  it("builds one entry per element type, named after it", () => {
    const library = compileKernelLibrary([file], ["js"]);
    const names = (["f32", "bf16", "u8"] as const).map((T) => library.get("scaleRows", { T }).description.entryName);
    expect(names).toEqual(["scaleRows_T_f32_BLOCK_64", "scaleRows_T_bf16_BLOCK_64", "scaleRows_T_u8_BLOCK_32"]);
    expect(library.get("scaleRows", { T: "bf16" }).description.params.map((p) => (p.kind === "buffer" ? p.elementType : p.kind))).toEqual(["bf16", "f32", "bf16", "scalar", "scalar", "const"]);
  });

  for (const backend of ["cpu", "webgpu"] as const) {
    for (const type of ["f32", "bf16", "u8"] as const) {
      it(`${type} on ${backend}`, async (context) => {
        const device = await deviceFor(backend);
        if (typeof device === "string") return context.skip(device);
        const kernel = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]).get("scaleRows", { T: type });
        await check(device, kernel, type);
      });
    }
  }
});
