/**
 * The host's 16-bit floats (float16.ts) against an independent reference (tests/half-reference.ts): all 65 536
 * encodings of f16 and of bf16 decoded, and encoded back (NaNs to the canonical 0x7fff); rounding at every
 * midpoint between adjacent values and at the f32s beside it, with both signs, overflow and subnormals
 * included; and fresh random doubles, rounded once.
 */

import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits, f16Bits, f16FromBits, roundToBf16, roundToF16 } from "./float16.ts";
import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits, roundingInputs } from "../../tests/half-reference.ts";

const formats = [
  { name: "f16", decode: f16FromBits, encode: f16Bits, round: roundToF16, reference: referenceF16, referenceBits: referenceF16Bits },
  { name: "bf16", decode: bf16FromBits, encode: bf16Bits, round: roundToBf16, reference: referenceBf16, referenceBits: referenceBf16Bits },
] as const;

const hex = (v: number) => `0x${v.toString(16)}`;

for (const format of formats) {
  describe(`${format.name} on the host`, () => {
    it("decodes every one of the 65 536 encodings as the reference does", () => {
      const wrong: string[] = [];
      for (let bits = 0; bits < 65536; bits++) {
        const got = format.decode(bits);
        const want = format.reference(bits);
        if (!(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)))) wrong.push(`${hex(bits)}: ${got}, expected ${want}`);
      }
      expect(wrong.slice(0, 10)).toEqual([]);
    });

    it("encodes every value back to its encoding, and every NaN as 0x7fff", () => {
      const wrong: string[] = [];
      let nans = 0;
      for (let bits = 0; bits < 65536; bits++) {
        const value = format.reference(bits);
        const want = Number.isNaN(value) ? 0x7fff : bits;
        if (Number.isNaN(value)) nans++;
        if (format.encode(value) !== want) wrong.push(`${hex(bits)}: ${hex(format.encode(value))}`);
      }
      expect(wrong.slice(0, 10)).toEqual([]);
      expect(nans).toBe(format.name === "f16" ? 2046 : 254);
    });

    it("rounds to nearest, ties to even, at every midpoint and the f32s beside it", () => {
      const inputs = roundingInputs(format.name);
      expect(inputs.length).toBeGreaterThan(250000);
      const wrong: string[] = [];
      for (const x of inputs) {
        const want = format.referenceBits(x)!;
        const got = format.encode(x);
        if (got !== want) wrong.push(`${x}: ${hex(got)}, expected ${hex(want)}`);
        if (!Object.is(format.round(x), format.reference(want))) wrong.push(`round(${x}): ${format.round(x)}`);
      }
      expect(wrong.slice(0, 10)).toEqual([]);
    });

    it("rounds fresh random doubles of every magnitude once, from their exact value", () => {
      const wrong: string[] = [];
      for (let i = 0; i < 20000; i++) {
        // Magnitudes from far below the subnormals to far above the largest finite value.
        const x = (Math.random() < 0.5 ? -1 : 1) * Math.random() * 2 ** Math.floor(Math.random() * 300 - 150);
        const want = format.referenceBits(x)!;
        if (format.encode(x) !== want) wrong.push(`${x}: ${hex(format.encode(x))}, expected ${hex(want)}`);
      }
      expect(wrong.slice(0, 10)).toEqual([]);
    });
  });
}
