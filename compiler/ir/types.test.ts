/**
 * The type tables' facts that every pass relies on: WGSL's storage layout for vectors and structs (the
 * spec's own worked example), interned vectors, the value type of narrow integers, and rounding to each
 * float format (checked against Math.fround for f32 and against known binary16 and bfloat16 values).
 */

import { describe, expect, it } from "vitest";
import { roundToFormat, wrap } from "./semantics.ts";
import { arrayStride, layoutOf, scalars, structLayout, targetScalars, valueTypeOf, vectorType, vectorTypes, type FieldType, type StructType } from "./types.ts";

const span = { file: "test.ts", start: 0, end: 0 };
const struct = (name: string, fields: [string, FieldType][]): StructType => ({ kind: "struct", name, fields: fields.map(([field, type]) => ({ name: field, type, span })), span });

describe("memory layout", () => {
  it("lays vectors out as WGSL does: vec3 as long as three components, aligned as four", () => {
    expect(layoutOf(vectorType("f32", 2))).toEqual({ size: 8, align: 8 });
    expect(layoutOf(vectorType("f32", 3))).toEqual({ size: 12, align: 16 });
    expect(layoutOf(vectorType("u32", 4))).toEqual({ size: 16, align: 16 });
    expect(layoutOf(vectorType("f16", 3))).toEqual({ size: 6, align: 8 });
    expect(arrayStride(vectorType("f32", 3))).toBe(16);
    expect(arrayStride("u8")).toBe(1);
    expect(arrayStride("bf16")).toBe(2);
    expect(arrayStride("f64")).toBe(8);
  });

  it("reproduces the WGSL specification's struct example (offsets, alignment, size)", () => {
    // WGSL §13.4 (memory layout), structures A and B, without B's array member.
    const a = struct("A", [["u", "f32"], ["v", "f32"], ["w", vectorType("f32", 2)], ["x", "f32"]]);
    expect(structLayout(a)).toEqual({ size: 24, align: 8, offsets: [0, 4, 8, 16] });
    const b = struct("B", [["a", vectorType("f32", 2)], ["b", vectorType("f32", 3)], ["c", "f32"], ["d", "f32"], ["e", a], ["f", vectorType("f32", 3)], ["h", "i32"]]);
    expect(structLayout(b)).toEqual({ size: 80, align: 16, offsets: [0, 16, 28, 32, 40, 64, 76] });
    // The uniform address space aligns a struct member to 16, and the member after it starts roundUp(16, 24) = 32 bytes on.
    expect(structLayout(b, "uniform").offsets[4]).toBe(48);
    expect(structLayout(b, "uniform").offsets[5]).toBe(80);
    // A struct of one f32 followed by a scalar: 16 bytes apart in a uniform, 4 in storage.
    const c = struct("C", [["inner", struct("Inner", [["a", "f32"]])], ["x", "f32"]]);
    expect(structLayout(c).offsets).toEqual([0, 4]);
    expect(structLayout(c, "uniform")).toEqual({ size: 32, align: 16, offsets: [0, 16] });
    expect(arrayStride(a)).toBe(24);
  });
});

describe("type tables", () => {
  it("interns vectors: one object per type", () => {
    expect(vectorType("f32", 3)).toBe(vectorTypes.get("vec3f"));
    expect(vectorType("bool", 4).name).toBe("vec4b");
    expect(vectorTypes.size).toBe(15);
  });

  it("loads narrow integers as i32 or u32, by their sign", () => {
    expect(valueTypeOf("i8")).toBe("i32");
    expect(valueTypeOf("u16")).toBe("u32");
    expect(valueTypeOf("bf16")).toBe("bf16");
  });

  it("has a cell for every scalar on every target, with storage where the value's spelling is not an element's", () => {
    for (const [target, row] of Object.entries(targetScalars)) {
      expect(Object.keys(row).sort(), target).toEqual(Object.keys(scalars).sort());
    }
    expect(targetScalars.wgsl.f64.support.level).toBe("refused");
    expect(targetScalars.wgsl.bf16.storage).toBe("u32");
    expect(targetScalars.cuda.u8.storage).toBe("unsigned char");
  });
});

describe("rounding to a float format", () => {
  it("is Math.fround for f32, normals, subnormals and overflow alike", () => {
    const f32 = scalars.f32.float!;
    let seed = 12345;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let i = 0; i < 20000; i++) {
      const exponent = Math.floor(random() * 300) - 160;
      const value = (random() < 0.5 ? -1 : 1) * (1 + random()) * 2 ** exponent;
      expect(roundToFormat(value, f32)).toBe(Math.fround(value));
    }
    // Ties between two f32s go to the even one.
    const tie = 1 + 2 ** -24;
    expect(roundToFormat(tie, f32)).toBe(Math.fround(tie));
    expect(roundToFormat(3.4028235677973366e38, f32)).toBe(Infinity);
  });

  it("gives the binary16 values of known inputs", () => {
    expect(wrap("f16", 1 / 3)).toBe(0.333251953125);
    expect(wrap("f16", 65504)).toBe(65504);
    expect(wrap("f16", 65519)).toBe(65504);
    expect(wrap("f16", 65520)).toBe(Infinity); // the tie with 65536 goes to the even significand, which overflows
    expect(wrap("f16", 2 ** -24)).toBe(2 ** -24); // the smallest subnormal
    expect(wrap("f16", 2 ** -25)).toBe(0); // a tie with zero rounds to zero
    expect(wrap("f16", 3 * 2 ** -26)).toBe(2 ** -24);
    expect(wrap("f16", -2049)).toBe(-2048); // a tie: 2048 has the even significand
    expect(wrap("f16", 2051)).toBe(2052);
    expect(Number.isNaN(wrap("f16", Number.NaN))).toBe(true);
  });

  it("gives the bfloat16 values of known inputs", () => {
    expect(wrap("bf16", 1 / 3)).toBe(0.333984375);
    expect(wrap("bf16", 257)).toBe(256); // a tie: 256 has the even significand
    expect(wrap("bf16", 259)).toBe(260);
    expect(wrap("bf16", 3.39e38)).toBe(3.3895313892515355e38);
    expect(wrap("bf16", 3.4e38)).toBe(Infinity); // finite as an f32, but past the last bf16 by more than half a step
    expect(wrap("bf16", 3.40e38 * 1.001)).toBe(Infinity);
    expect(wrap("bf16", 2 ** -133)).toBe(2 ** -133); // the smallest subnormal
  });
});
