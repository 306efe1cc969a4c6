/** f32 literal spelling: the shortest decimal that reads back as the same f32 and that WGSL accepts. */

import { describe, expect, it } from "vitest";
import { f32Digits } from "./expr-printer.ts";

describe("f32Digits", () => {
  it("spells values with the fewest digits that read back as the same f32", () => {
    expect(f32Digits(Math.fround(0.1))).toBe("0.1");
    expect(f32Digits(1)).toBe("1.0");
    expect(f32Digits(-0)).toBe("-0.0");
    expect(f32Digits(Math.fround(1e-8))).toBe("1e-8");
  });

  it("never spells a finite f32 above the largest f32 (WGSL rejects 3.4028235e38 as not representable)", () => {
    const max = Math.fround(3.4028234663852886e38);
    for (const value of [max, -max, Math.fround(3.4028233e38), Math.fround(-3.40282e38)]) {
      const text = f32Digits(value);
      expect(Math.fround(Number(text)), text).toBe(value);
      expect(Math.abs(Number(text)), text).toBeLessThanOrEqual(max);
    }
  });
});
