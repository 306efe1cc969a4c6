/**
 * The probes of the 8-bit float conversions, shared by tests/float8.test.ts (the CPU backend) and
 * bench/float8-gpu-check.ts (the CUDA backend on a GPU): the formats' values from their definition, f32 inputs
 * that decide every rounding (each value, each midpoint, their f32 neighbours, both signs, the specials, random
 * magnitudes), and a run of tests/kernels/float8-convert.ts over them and over every code, compared with the host
 * encode/decode pair (compiler/lang/float8.ts).
 */

import { float8Decode, float8Encode, float8Formats, type Float8Format } from "../compiler/lang/float8.ts";
import type { Device, KernelHandle } from "../runtime/index.ts";

type Name = "e4m3" | "e5m2";
const encode = (name: Name, x: number) => float8Encode(x, float8Formats[name].exponentBits, float8Formats[name].mantissaBits, float8Formats[name].infinities);
const decode = (name: Name, c: number) => float8Decode(c, float8Formats[name].exponentBits, float8Formats[name].mantissaBits, float8Formats[name].infinities);

/** The largest finite code of a format; codes 0 … maxCode are the non-negative finite values in increasing order. */
export const maxCode = (format: Float8Format) => (format.infinities ? 0x7b : 0x7e);

/** The format's non-negative finite values, by code, computed from the definition (not from float8Decode). */
export function valuesOf(format: Float8Format): number[] {
  const bias = 2 ** (format.exponentBits - 1) - 1;
  return Array.from({ length: maxCode(format) + 1 }, (_, c) => {
    const e = c >> format.mantissaBits;
    const f = c % 2 ** format.mantissaBits;
    return e === 0 ? f * 2 ** (1 - bias - format.mantissaBits) : (1 + f / 2 ** format.mantissaBits) * 2 ** (e - bias);
  });
}

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);
const nextUp = (x: number) => {
  f32[0] = x;
  f32Bits[0] = x >= 0 ? f32Bits[0]! + 1 : f32Bits[0]! - 1;
  return f32[0]!;
};
const nextDown = (x: number) => {
  f32[0] = x;
  f32Bits[0] = x > 0 ? f32Bits[0]! - 1 : x === 0 ? 0x80000001 : f32Bits[0]! + 1;
  return f32[0]!;
};

/** f32 inputs that decide every rounding: each value, each midpoint and their f32 neighbours, both signs, the specials, random ones. */
export function probeInputs(format: Float8Format, randomCount: number): Float32Array {
  const values = valuesOf(format);
  const out: number[] = [0, -0, Infinity, -Infinity, NaN, 3.4028234663852886e38, 1e-45, 2 ** -126, 1e10];
  const edges = [...values, format.maxFinite * 1.0625, format.maxFinite * 1.125, format.maxFinite * 2];
  for (let c = 0; c < edges.length; c++) {
    const v = edges[c]!;
    out.push(v, nextUp(v), nextDown(v));
    if (c + 1 < edges.length) {
      const mid = (v + edges[c + 1]!) / 2;
      out.push(mid, nextUp(mid), nextDown(mid));
    }
  }
  for (let i = 0; i < randomCount; i++) {
    // Magnitudes from far below the smallest subnormal to past the largest value.
    out.push((Math.random() < 0.5 ? -1 : 1) * 2 ** (Math.random() * 44 - 26) * (1 + Math.random()));
  }
  return Float32Array.from([...out, ...out.map((v) => -v)]);
}

/**
 * Runs the conversion kernel (tests/kernels/float8-convert.ts, `handle`) on `device` over every probe of both
 * formats and every code, outputs poisoned first, and returns what differs from the host pair (empty: none).
 */
export async function float8ConversionMismatches(device: Device, handle: KernelHandle, randomCount = 5000): Promise<string[]> {
  const x = Float32Array.from([...probeInputs(float8Formats.e4m3, randomCount), ...probeInputs(float8Formats.e5m2, randomCount)]);
  const n = x.length;
  const codes = Uint8Array.from({ length: n }, (_, i) => i & 255);
  const e4 = device.createBuffer("e4m3", new Uint8Array(n).fill(0x7f));
  const e5 = device.createBuffer("e5m2", new Uint8Array(n).fill(0x7f));
  const back4 = device.createBuffer(new Float32Array(n).fill(NaN));
  const back5 = device.createBuffer(new Float32Array(n).fill(NaN));
  await device.launch(handle, {
    grid: [Math.ceil(n / 64)],
    args: [e4, e5, back4, back5, device.createBuffer(x), device.createBuffer("e4m3", codes), device.createBuffer("e5m2", codes), n],
  });
  const got4 = (await device.read(e4, { bits: true })) as Uint8Array;
  const got5 = (await device.read(e5, { bits: true })) as Uint8Array;
  const values4 = (await device.read(back4)) as Float32Array;
  const values5 = (await device.read(back5)) as Float32Array;
  const wrong: string[] = [];
  for (let i = 0; i < n; i++) {
    if (got4[i] !== encode("e4m3", x[i]!)) wrong.push(`e4m3 store of ${x[i]}: 0x${got4[i]!.toString(16)}, expected 0x${encode("e4m3", x[i]!).toString(16)}`);
    if (got5[i] !== encode("e5m2", x[i]!)) wrong.push(`e5m2 store of ${x[i]}: 0x${got5[i]!.toString(16)}, expected 0x${encode("e5m2", x[i]!).toString(16)}`);
    if (!Object.is(values4[i], Math.fround(decode("e4m3", codes[i]!)))) wrong.push(`e4m3 load of 0x${codes[i]!.toString(16)}: ${values4[i]}`);
    if (!Object.is(values5[i], Math.fround(decode("e5m2", codes[i]!)))) wrong.push(`e5m2 load of 0x${codes[i]!.toString(16)}: ${values5[i]}`);
  }
  return wrong;
}
