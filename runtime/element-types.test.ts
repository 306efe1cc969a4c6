/**
 * Buffers of every element type on every tested device (element-types.ts): made from numbers (rounded to
 * f16/bf16 as the kernels round, converted as typed arrays convert), from raw 16-bit encodings, from typed
 * arrays alone; read back as numbers (f16/bf16 as a Float32Array, exactly) or as encodings; written with
 * numbers and encodings; odd lengths of 8- and 16-bit elements (WebGPU rounds buffers up to whole words).
 * Fresh random values each run, against the independent reference of tests/half-reference.ts.
 */

import { describe, expect, it } from "vitest";
import { deviceFor, testedBackends } from "../tests/backends.ts";
import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits } from "../tests/half-reference.ts";

const halves = [
  { type: "f16" as const, bits: referenceF16Bits, value: referenceF16 },
  { type: "bf16" as const, bits: referenceBf16Bits, value: referenceBf16 },
];

for (const backend of testedBackends) {
  describe(`buffers of every element type on ${backend}`, () => {
    for (const half of halves) {
      it(`${half.type}: numbers rounded as kernels round, read back exactly, encodings in and out`, async (context) => {
        const device = await deviceFor(backend);
        if (typeof device === "string") return context.skip(device);
        const n = 1001;
        const values = Float32Array.from({ length: n }, () => (Math.random() - 0.5) * 2 ** Math.floor(Math.random() * 40 - 20));
        values[0] = Number.NaN;
        const buffer = device.createBuffer(half.type, values);
        expect(buffer.elementType).toBe(half.type);
        expect(buffer.length).toBe(n);
        const read = await device.read(buffer);
        const bits = await device.read(buffer, { bits: true });
        expect(read).toBeInstanceOf(Float32Array);
        expect(bits).toBeInstanceOf(Uint16Array);
        const wrong: string[] = [];
        for (let i = 0; i < n; i++) {
          const want = half.bits(values[i]!) ?? 0x7fff;
          if (bits[i] !== want) wrong.push(`bits[${i}] of ${values[i]}: ${bits[i]}, expected ${want}`);
          const wantValue = half.value(want);
          if (!(Object.is(read[i], wantValue) || (Number.isNaN(read[i]!) && Number.isNaN(wantValue)))) wrong.push(`read[${i}]: ${read[i]}, expected ${wantValue}`);
        }
        expect(wrong.slice(0, 5)).toEqual([]);
        // Raw encodings in: a Uint16Array is taken as the bits themselves (a PyTorch tensor's bytes).
        const raw = Uint16Array.from({ length: n }, () => Math.floor(Math.random() * 65536));
        const fromBits = device.createBuffer(half.type, raw);
        expect([...((await device.read(fromBits, { bits: true })) as Uint16Array)]).toEqual([...raw]);
        // Writes take numbers (rounded) and encodings.
        await device.write(fromBits, [...values]);
        expect([...((await device.read(fromBits, { bits: true })) as Uint16Array)]).toEqual([...bits]);
        await device.write(fromBits, raw);
        expect([...((await device.read(fromBits, { bits: true })) as Uint16Array)]).toEqual([...raw]);
        await expect(device.write(fromBits, new Float32Array(n + 1))).rejects.toThrow(`write of ${n + 1} f32 elements into a buffer of ${n} ${half.type}`);
      });
    }

    it("f64 and the narrow integers: typed arrays and numbers in, the same typed arrays out, odd lengths", async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      const cases = [
        { type: "i8" as const, make: (n: number) => Int8Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128) },
        { type: "u8" as const, make: (n: number) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256)) },
        { type: "i16" as const, make: (n: number) => Int16Array.from({ length: n }, () => Math.floor(Math.random() * 65536) - 32768) },
        { type: "u16" as const, make: (n: number) => Uint16Array.from({ length: n }, () => Math.floor(Math.random() * 65536)) },
      ];
      for (const { type, make } of cases) {
        for (const n of [1, 3, 5, 7, 1000]) {
          const data = make(n);
          const buffer = device.createBuffer(data);
          expect(buffer.elementType).toBe(type);
          const read = await device.read(buffer);
          expect(read.constructor).toBe(data.constructor);
          expect([...read]).toEqual([...data]);
          // Numbers convert as the typed array converts them (the low bits of an integer).
          const numbers = Array.from({ length: n }, () => Math.floor(Math.random() * 2 ** 20) - 2 ** 19);
          await device.write(buffer, numbers);
          expect([...(await device.read(buffer))]).toEqual([...(data.constructor as Int8ArrayConstructor).from(numbers)]);
        }
      }
      if (backend !== "webgpu") {
        const doubles = Float64Array.from({ length: 77 }, () => Math.random() * 1e300);
        const buffer = device.createBuffer("f64", doubles);
        const read = await device.read(buffer);
        expect(read).toBeInstanceOf(Float64Array);
        expect([...read]).toEqual([...doubles]);
      }
    });
  });
}
