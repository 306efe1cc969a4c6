/**
 * The CPU backend's half runtime (js-float16.ts), the text its modules carry, evaluated and checked against
 * the independent reference (tests/half-reference.ts): decoding all 65 536 encodings of each type; rounding
 * f32 inputs at every midpoint and beside it (the per-operation path, which takes numbers through their f32);
 * rounding doubles once (`roundBinary`, for conversions from f64 and integers); and the claim the fast path
 * rests on, that rounding the double result of + − × of two random values of the type gives the correctly
 * rounded result (those doubles are exact, so the reference rounds the exact value).
 */

import { describe, expect, it } from "vitest";
import { halfRuntime } from "./js-float16.ts";
import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits, roundingInputs } from "../../tests/half-reference.ts";

type Fn = (x: number) => number;
const runtime = new Function(`${halfRuntime.join("\n")}\nreturn { f16Encode, f16Decode, f16Round, bf16Round, bf16Encode, bf16Decode, roundBinary };`)() as {
  f16Encode: Fn; f16Decode: Fn; f16Round: Fn; bf16Round: Fn; bf16Encode: Fn; bf16Decode: Fn;
  roundBinary: (x: number, mantissa: number, minExponent: number, max: number) => number;
};

const hex = (v: number) => `0x${v.toString(16)}`;
const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

const formats = [
  { name: "f16" as const, decode: runtime.f16Decode, round: runtime.f16Round, encode: runtime.f16Encode, reference: referenceF16, referenceBits: referenceF16Bits, once: (x: number) => runtime.roundBinary(x, 10, -14, 65504) },
  { name: "bf16" as const, decode: runtime.bf16Decode, round: runtime.bf16Round, encode: (x: number) => runtime.bf16Encode(runtime.bf16Round(x)), reference: referenceBf16, referenceBits: referenceBf16Bits, once: (x: number) => runtime.roundBinary(x, 7, -126, 3.3895313892515355e38) },
];

for (const format of formats) {
  describe(`the CPU backend's ${format.name}`, () => {
    it("decodes all 65 536 encodings", () => {
      const wrong: string[] = [];
      for (let bits = 0; bits < 65536; bits++) if (!same(format.decode(bits), format.reference(bits))) wrong.push(hex(bits));
      expect(wrong.slice(0, 10)).toEqual([]);
    });

    it("rounds f32 inputs at every midpoint and beside it, and encodes NaN as 0x7fff", () => {
      const wrong: string[] = [];
      for (const x of roundingInputs(format.name)) {
        if (Math.fround(x) !== x) continue;
        const want = format.referenceBits(x)!;
        if (format.encode(x) !== want) wrong.push(`encode ${x}: ${hex(format.encode(x))}, expected ${hex(want)}`);
        if (!Object.is(format.round(x), format.reference(want))) wrong.push(`round ${x}: ${format.round(x)}`);
      }
      expect(format.encode(Number.NaN)).toBe(0x7fff);
      expect(format.round(Number.NaN)).toBeNaN();
      expect(wrong.slice(0, 10)).toEqual([]);
    });

    it("rounds doubles once (conversions from f64 and integers), at midpoints and on fresh random values", () => {
      const inputs = [...roundingInputs(format.name)];
      for (let i = 0; i < 20000; i++) inputs.push((Math.random() < 0.5 ? -1 : 1) * Math.random() * 2 ** Math.floor(Math.random() * 300 - 150));
      // Integers near ties that an f32 would round first (2^24 + 2^15 + 1 is a tie only after rounding to f32).
      for (let i = 0; i < 2000; i++) inputs.push(Math.floor(Math.random() * 2 ** 32) - 2 ** 31, 16809985, -16809985);
      const wrong: string[] = [];
      for (const x of inputs) {
        const want = format.reference(format.referenceBits(x)!);
        if (!Object.is(format.once(x), want)) wrong.push(`${x}: ${format.once(x)}, expected ${want}`);
      }
      expect(wrong.slice(0, 10)).toEqual([]);
    });

    it("gives the correctly rounded + − × of fresh random values through the f32 path", () => {
      const bits = () => {
        for (;;) {
          const b = Math.floor(Math.random() * 65536);
          if (!Number.isNaN(format.reference(b))) return b;
        }
      };
      const wrong: string[] = [];
      for (let i = 0; i < 50000; i++) {
        const a = format.reference(bits());
        const b = format.reference(bits());
        // Exact in a double: both have at most 11 significant bits, and their exponents are close enough.
        for (const [op, exact] of [["+", a + b], ["-", a - b], ["*", a * b]] as const) {
          const want = format.referenceBits(exact);
          const got = format.round(exact);
          if (want === undefined ? !Number.isNaN(got) : !Object.is(got, format.reference(want))) wrong.push(`${a} ${op} ${b}: ${got}`);
        }
      }
      expect(wrong.slice(0, 10)).toEqual([]);
    });
  });
}
