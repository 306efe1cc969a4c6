/**
 * The 32-bit semantics the folder (and later the JS backend) uses, checked against an independent
 * reference: BigInt arithmetic truncated to 32 bits for integers, and Math.fround of float64 for f32, on
 * fresh random inputs each run.
 */

import { describe, expect, it } from "vitest";
import { evalBinary, evalConvert, evalUnary } from "./semantics.ts";

function randomI32(): number {
  const r = Math.random();
  if (r < 0.1) return [-2147483648, 2147483647, -1, 0, 1][Math.floor(Math.random() * 5)]!;
  return (Math.random() * 2 ** 32) | 0;
}

const asI32 = (v: bigint) => Number(BigInt.asIntN(32, v));
const asU32 = (v: bigint) => Number(BigInt.asUintN(32, v));

describe("integer arithmetic wraps and truncates like C", () => {
  it("i32 add, sub, mul, div, rem, shifts on random operands", () => {
    for (let n = 0; n < 2000; n++) {
      const a = randomI32();
      const b = randomI32();
      const A = BigInt(a);
      const B = BigInt(b);
      expect(evalBinary("add", "i32", a, b)).toBe(asI32(A + B));
      expect(evalBinary("sub", "i32", a, b)).toBe(asI32(A - B));
      expect(evalBinary("mul", "i32", a, b)).toBe(asI32(A * B));
      if (b !== 0 && !(a === -2147483648 && b === -1)) {
        expect(evalBinary("div", "i32", a, b)).toBe(asI32(A / B)); // BigInt division truncates toward zero
        if (b !== -1) expect(evalBinary("rem", "i32", a, b)).toBe(asI32(A % B));
      }
      const s = Math.abs(b) % 32;
      expect(evalBinary("shl", "i32", a, s)).toBe(asI32(A << BigInt(s)));
      expect(evalBinary("shr", "i32", a, s)).toBe(asI32(A >> BigInt(s)));
    }
  });

  it("u32 arithmetic and logical shifts on random operands", () => {
    for (let n = 0; n < 2000; n++) {
      const a = randomI32() >>> 0;
      const b = randomI32() >>> 0;
      const A = BigInt(a);
      const B = BigInt(b);
      expect(evalBinary("add", "u32", a, b)).toBe(asU32(A + B));
      expect(evalBinary("mul", "u32", a, b)).toBe(asU32(A * B));
      expect(evalBinary("sub", "u32", a, b)).toBe(asU32(A - B));
      if (b !== 0) expect(evalBinary("div", "u32", a, b)).toBe(asU32(A / B));
      const s = b % 32;
      expect(evalBinary("shr", "u32", a, s)).toBe(asU32(A >> BigInt(s)));
      expect(evalBinary("lt", "u32", a, b)).toBe(a < b ? 1 : 0);
    }
  });

  it("leaves target-defined cases unfolded", () => {
    expect(evalBinary("div", "i32", 5, 0)).toBeUndefined();
    expect(evalBinary("rem", "u32", 5, 0)).toBeUndefined();
    expect(evalBinary("div", "i32", -2147483648, -1)).toBeUndefined();
  });

  it("negation and bitwise not wrap", () => {
    expect(evalUnary("neg", "i32", -2147483648)).toBe(-2147483648);
    expect(evalUnary("bitnot", "u32", 0)).toBe(4294967295);
    expect(evalUnary("not", "bool", 0)).toBe(1);
  });
});

describe("f32 arithmetic rounds each operation to single precision", () => {
  it("matches Math.fround of the float64 result on random operands", () => {
    for (let n = 0; n < 2000; n++) {
      const a = Math.fround((Math.random() - 0.5) * 10 ** (Math.random() * 10));
      const b = Math.fround((Math.random() - 0.5) * 10 ** (Math.random() * 10));
      expect(evalBinary("add", "f32", a, b)).toBe(Math.fround(a + b));
      expect(evalBinary("mul", "f32", a, b)).toBe(Math.fround(a * b));
      expect(evalBinary("div", "f32", a, b)).toBe(Math.fround(a / b));
    }
    // 0.1 + 0.2 in f32 is not the float64 0.30000000000000004.
    expect(evalBinary("add", "f32", Math.fround(0.1), Math.fround(0.2))).toBe(Math.fround(Math.fround(0.1) + Math.fround(0.2)));
  });
});

describe("conversions", () => {
  it("float to int truncates toward zero and saturates; NaN becomes 0", () => {
    expect(evalConvert("f32", "i32", -2.75)).toBe(-2);
    expect(evalConvert("f32", "i32", 3e9)).toBe(2147483647);
    expect(evalConvert("f32", "i32", -3e9)).toBe(-2147483648);
    expect(evalConvert("f32", "u32", -1.5)).toBe(0);
    expect(evalConvert("f32", "u32", 5e9)).toBe(4294967295);
    expect(evalConvert("f32", "i32", Number.NaN)).toBe(0);
  });

  it("int to int keeps the bits; int to float rounds to f32", () => {
    expect(evalConvert("u32", "i32", 4294967295)).toBe(-1);
    expect(evalConvert("i32", "u32", -1)).toBe(4294967295);
    expect(evalConvert("i32", "f32", 16777217)).toBe(16777216);
    expect(evalConvert("bool", "i32", 1)).toBe(1);
  });
});
