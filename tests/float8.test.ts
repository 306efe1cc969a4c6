/**
 * The 8-bit floats e4m3 and e5m2: the host encode/decode pair (compiler/lang/float8.ts) against a reference
 * written here by brute force (the nearest of the format's values, ties to the even code, saturating), over all
 * 256 codes, every rounding midpoint and its f32 neighbours, and random f32 values; the CPU backend's conversions
 * (a kernel storing and loading every one of those) and CUDA's helpers (compiled for the host by g++ from the
 * generated .cu) against the host pair; host buffers of both types; and codegen-tests/float8 on the CPU (plain,
 * checked, workers) against a reference computed with the host pair, outputs poisoned with NaN codes.
 */

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { float8Decode, float8Encode, float8Formats, type Float8Format } from "../compiler/lang/float8.ts";
import { compileFiles } from "../compiler/index.ts";
import { compileKernelLibrary, createDevice, type Device } from "../runtime/index.ts";
import { float8ConversionMismatches, maxCode, probeInputs, valuesOf } from "./float8-probes.ts";
import { casesRoot, repoRoot } from "./golden-cases.ts";

type Name = "e4m3" | "e5m2";
const names: readonly Name[] = ["e4m3", "e5m2"];
const encode = (name: Name, x: number) => float8Encode(x, float8Formats[name].exponentBits, float8Formats[name].mantissaBits, float8Formats[name].infinities);
const decode = (name: Name, c: number) => float8Decode(c, float8Formats[name].exponentBits, float8Formats[name].mantissaBits, float8Formats[name].infinities);

/** The reference encoding: nearest value (ties to the even code), saturating past the largest; NaN 0x7f. */
function referenceEncode(format: Float8Format, x: number): number {
  if (Number.isNaN(x)) return 0x7f;
  const values = valuesOf(format);
  const sign = x < 0 || Object.is(x, -0) ? 0x80 : 0;
  const m = Math.abs(x);
  // Saturation: past the largest value (where the distances below would lose their precision) it is the answer.
  if (m >= format.maxFinite) return sign | maxCode(format);
  let best = 0;
  for (let c = 1; c < values.length; c++) {
    const d = Math.abs(values[c]! - m) - Math.abs(values[best]! - m);
    if (d < 0 || (d === 0 && c % 2 === 0)) best = c;
  }
  return sign | best;
}

describe("the host encode/decode pair (compiler/lang/float8.ts)", () => {
  it("decodes the codes the OCP formats define", () => {
    expect([0x00, 0x01, 0x07, 0x08, 0x38, 0x7e, 0xfe, 0x80].map((c) => decode("e4m3", c))).toEqual([0, 2 ** -9, 7 * 2 ** -9, 2 ** -6, 1, 448, -448, -0]);
    expect(decode("e4m3", 0x7f)).toBeNaN();
    expect(decode("e4m3", 0xff)).toBeNaN();
    expect([0x00, 0x01, 0x04, 0x3c, 0x7b, 0x7c, 0xfc, 0xfb].map((c) => decode("e5m2", c))).toEqual([0, 2 ** -16, 2 ** -14, 1, 57344, Infinity, -Infinity, -57344]);
    for (const c of [0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff]) expect(decode("e5m2", c)).toBeNaN();
  });

  it.each(names)("%s: all 256 codes decode to the definition's values and encode back", (name) => {
    const format = float8Formats[name];
    const values = valuesOf(format);
    for (let c = 0; c < 256; c++) {
      const m = c & 0x7f;
      const v = decode(name, c);
      if (m > maxCode(format)) {
        // NaN codes (and e5m2's infinities, which a store never gives: it saturates).
        if (name === "e5m2" && m === 0x7c) expect(v).toBe(c & 0x80 ? -Infinity : Infinity);
        else expect(v).toBeNaN();
        expect(encode(name, v)).toBe(Number.isNaN(v) ? 0x7f : (c & 0x80) | 0x7b);
        continue;
      }
      expect(v).toBe(c & 0x80 ? -values[m]! : values[m]!);
      expect(encode(name, v)).toBe(c);
    }
  });

  it.each(names)("%s: ties to even at every midpoint, the nearest value elsewhere, saturation past the largest", (name) => {
    const format = float8Formats[name];
    const inputs = probeInputs(format, 20000);
    const wrong: string[] = [];
    for (const x of inputs) {
      const want = referenceEncode(format, x);
      const got = encode(name, x);
      if (got !== want) wrong.push(`${x}: 0x${got.toString(16)}, expected 0x${want.toString(16)}`);
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    // The midpoint between the two largest values goes to the even code; beyond it everything saturates.
    const values = valuesOf(format);
    const top = values.length - 1;
    expect(encode(name, (values[top - 1]! + values[top]!) / 2)).toBe(top % 2 === 0 ? top : top - 1);
    expect([format.maxFinite + 1, 1e6, Infinity].map((x) => encode(name, x))).toEqual([top, top, top]);
    expect(encode(name, -Infinity)).toBe(0x80 | top);
  });
});

/** The CPU backend's stores and loads of every probe and code (tests/kernels/float8-convert.ts). */
describe("the CPU backend's conversions", () => {
  const library = compileKernelLibrary([path.join(repoRoot, "tests", "kernels", "float8-convert.ts")], ["js"]);
  it("store every probe and load every code as the host pair does", async () => {
    const device = await createDevice({ backend: "cpu" });
    try {
      const wrong = await float8ConversionMismatches(device, library.get("float8Convert"));
      expect(wrong.slice(0, 10)).toEqual([]);
    } finally {
      device.dispose();
    }
  });
});

describe("CUDA's conversion helpers, compiled for the host", () => {
  it("agree with the host pair on every code and every probe", () => {
    const result = compileFiles([path.join(repoRoot, "tests", "kernels", "float8-convert.ts")], { targets: ["cuda"] });
    expect(result.ok).toBe(true);
    const source = result.files[0]!.cuda!.source;
    const start = source.indexOf("__device__ __forceinline__ float tsk_e4m3_to_f32");
    const end = source.indexOf('extern "C"');
    expect(start).toBeGreaterThan(0);
    // The helpers as they are printed, with the CUDA intrinsics they use defined for the host.
    const program = [
      "#include <cmath>",
      "#include <cstdio>",
      "#include <cstring>",
      "#define __device__",
      "#define __forceinline__ inline",
      "static float __uint_as_float(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }",
      "static unsigned int __float_as_uint(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }",
      source.slice(start, source.lastIndexOf("#line", end)),
      "int main() {",
      "  for (unsigned int c = 0; c < 256; c++) std::printf(\"%08x %08x\\n\", __float_as_uint(tsk_e4m3_to_f32(c)), __float_as_uint(tsk_e5m2_to_f32(c)));",
      "  unsigned int bits;",
      "  while (std::scanf(\"%x\", &bits) == 1) { float f = __uint_as_float(bits); std::printf(\"%02x %02x\\n\", tsk_f32_to_e4m3(f), tsk_f32_to_e5m2(f)); }",
      "  return 0;",
      "}",
    ].join("\n");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-float8-"));
    fs.writeFileSync(path.join(dir, "helpers.cpp"), program);
    execFileSync("g++", ["-O1", "-o", path.join(dir, "helpers"), path.join(dir, "helpers.cpp")], { stdio: "pipe" });
    const x = Float32Array.from([...probeInputs(float8Formats.e4m3, 5000), ...probeInputs(float8Formats.e5m2, 5000)]);
    const input = Array.from(new Uint32Array(x.buffer), (b) => b.toString(16)).join("\n");
    const lines = execFileSync(path.join(dir, "helpers"), { input, encoding: "utf8", maxBuffer: 1 << 26 }).trim().split("\n");
    const asFloat = (hex: string) => new Float32Array(Uint32Array.of(parseInt(hex, 16)).buffer)[0]!;
    const wrong: string[] = [];
    for (let c = 0; c < 256; c++) {
      const [a, b] = lines[c]!.split(" ") as [string, string];
      if (!Object.is(asFloat(a), Math.fround(decode("e4m3", c))) && !(Number.isNaN(asFloat(a)) && Number.isNaN(decode("e4m3", c)))) wrong.push(`tsk_e4m3_to_f32(0x${c.toString(16)}) = ${asFloat(a)}`);
      if (!Object.is(asFloat(b), Math.fround(decode("e5m2", c))) && !(Number.isNaN(asFloat(b)) && Number.isNaN(decode("e5m2", c)))) wrong.push(`tsk_e5m2_to_f32(0x${c.toString(16)}) = ${asFloat(b)}`);
    }
    x.forEach((value, i) => {
      const [a, b] = lines[256 + i]!.split(" ").map((hex) => parseInt(hex, 16)) as [number, number];
      if (a !== encode("e4m3", value)) wrong.push(`tsk_f32_to_e4m3(${value}) = 0x${a.toString(16)}, expected 0x${encode("e4m3", value).toString(16)}`);
      if (b !== encode("e5m2", value)) wrong.push(`tsk_f32_to_e5m2(${value}) = 0x${b.toString(16)}, expected 0x${encode("e5m2", value).toString(16)}`);
    });
    expect(lines.length).toBe(256 + x.length);
    expect(wrong.slice(0, 10)).toEqual([]);
  });
});

describe("host buffers of 8-bit floats", () => {
  it("round numbers as a store does, read back values or codes, and take codes as they are", async () => {
    const device = await createDevice({ backend: "cpu" });
    try {
      const values = [0.3, -1000, 17.5, NaN, 2 ** -12, -0];
      for (const name of names) {
        const buffer = device.createBuffer(name, values);
        const codes = (await device.read(buffer, { bits: true })) as Uint8Array;
        expect(codes.constructor.name).toBe("Uint8Array");
        expect([...codes]).toEqual(values.map((v) => encode(name, v)));
        const read = (await device.read(buffer)) as Float32Array;
        expect(read.constructor.name).toBe("Float32Array");
        expect([...read]).toEqual(values.map((v) => Math.fround(decode(name, encode(name, v)))));
        const raw = device.createBuffer(name, Uint8Array.of(0x38, 0xff, 0x01));
        expect([...((await device.read(raw, { bits: true })) as Uint8Array)]).toEqual([0x38, 0xff, 0x01]);
      }
    } finally {
      device.dispose();
    }
  });
});

describe("codegen-tests/float8 on the CPU", () => {
  const library = compileKernelLibrary([path.join(casesRoot, "float8", "kernel.ts")], ["js"]);
  async function check(device: Device): Promise<void> {
    const n = 200;
    const scale = 3.75;
    // Values across both formats' ranges, some past their largest finite values, and a few NaNs.
    const x = Float32Array.from({ length: n }, (_, i) => (i % 37 === 5 ? NaN : (Math.random() - 0.5) * 2 ** (Math.random() * 36 - 18)));
    const codes = Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256));
    // A NaN code that no store gives (stores give the canonical 0x7f).
    const poison = () => new Uint8Array(n).fill(0xff);
    const outE4 = device.createBuffer("e4m3", poison());
    const outE5 = device.createBuffer("e5m2", poison());
    const packed = device.createBuffer("e4m3", poison());
    const outF = device.createBuffer(new Float32Array(n * 3).fill(NaN));
    await device.launch(library.get("quantize"), {
      grid: [Math.ceil(n / 64)],
      args: [outE4, outE5, packed, outF, device.createBuffer(x), device.createBuffer("e4m3", codes), scale, n],
    });
    const e4 = (v: number) => encode("e4m3", Math.fround(v));
    const e5 = (v: number) => encode("e5m2", Math.fround(v));
    const d4 = (c: number) => decode("e4m3", c);
    const d5 = (c: number) => decode("e5m2", c);
    const got = {
      e4: (await device.read(outE4, { bits: true })) as Uint8Array,
      e5: (await device.read(outE5, { bits: true })) as Uint8Array,
      packed: (await device.read(packed, { bits: true })) as Uint8Array,
      f: (await device.read(outF)) as Float32Array,
    };
    const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
    const wrong: string[] = [];
    for (let i = 0; i < n; i++) {
      const t = i % 64;
      const partner = i - t + 63 - t;
      const staged = partner < n ? e5(x[partner]! * 2) : e5(0);
      const wantE5 = e5(d5(e5(x[i]!)) + d5(staged));
      const last0 = e4(x[i]! * scale);
      const want = { e4: e4(x[i]!), e5: wantE5, f0: Math.fround(d4(codes[i]!) * 0.5), f1: d4(e4(d4(last0) - 1)) };
      if (got.e4[i] !== want.e4) wrong.push(`outE4[${i}] (x ${x[i]}): 0x${got.e4[i]!.toString(16)}, expected 0x${want.e4.toString(16)}`);
      if (got.e5[i] !== want.e5) wrong.push(`outE5[${i}]: 0x${got.e5[i]!.toString(16)}, expected 0x${want.e5.toString(16)}`);
      if (!same(got.f[i * 3]!, want.f0)) wrong.push(`outF[${i * 3}]: ${got.f[i * 3]}, expected ${want.f0}`);
      if (!same(got.f[i * 3 + 1]!, want.f1)) wrong.push(`outF[${i * 3 + 1}]: ${got.f[i * 3 + 1]}, expected ${want.f1}`);
      // Sixteen codes summed in order in f32 where i starts a whole group of 16, else 0.
      let sum = 0;
      if (i % 16 === 0 && i + 16 <= n) {
        sum = d4(codes[i]!);
        for (let k = 1; k < 16; k++) sum = Math.fround(sum + d4(codes[i + k]!));
      }
      if (!same(got.f[i * 3 + 2]!, sum)) wrong.push(`outF[${i * 3 + 2}]: ${got.f[i * 3 + 2]}, expected ${sum}`);
      const group = i - (i % 16);
      const wantPacked = group + 16 <= n && i % 16 < 4 ? e4([d4(codes[group + 1]!), d4(codes[group + 2]!), d4(codes[group + 3]!), -d4(codes[group]!)][i % 16]!) : 0xff;
      if (got.packed[i] !== wantPacked) wrong.push(`packed[${i}]: 0x${got.packed[i]!.toString(16)}, expected 0x${wantPacked.toString(16)}`);
    }
    expect(wrong.slice(0, 12)).toEqual([]);
  }
  it.each([{}, { checked: true }, { workers: 2 }])("loads decode, stores round and saturate (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    try {
      await check(device);
    } finally {
      device.dispose();
    }
  });
});
