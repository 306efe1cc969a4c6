/**
 * The m16n8k16 warp shape with 16-bit inputs as data (ir/matrix.ts, issue 22 §1): its fragment layouts against
 * an independent transcription of the PTX ISA's element→lane mapping (and the A layout against the warpgroup
 * k16 A, which PTX defines the same per warp), the register packing, and the reference multiply-accumulate
 * against float64 with fresh random bf16 and f16 inputs: every product exact in f32, the sum within the bound
 * its documentation states; and the CUDA helper for the instruction, which ptxas must accept for sm_80 and sm_90.
 */

import { describe, expect, it } from "vitest";
import { fragmentElementPosition, fragmentLayouts, ldmatrixElements, mma16Helper, mmaHalfRegisters, mmaM16n8k16Layouts, mmaM16n8k16Reference } from "../compiler/index.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";
import { mma16ProbeSeed, mma16ProbeSource } from "../bench/mma16-probe.ts";
import fs from "node:fs";

/** PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type", written out per element. */
const ptx = {
  a: (g: number, q: number, i: number) => [g + (i % 4 >= 2 ? 8 : 0), 2 * q + (i & 1) + (i >= 4 ? 8 : 0)],
  b: (g: number, q: number, i: number) => [2 * q + (i & 1) + (i >= 2 ? 8 : 0), g],
  accumulator: (g: number, q: number, i: number) => [g + (i >= 2 ? 8 : 0), 2 * q + (i & 1)],
} as const;

const f32 = new Float32Array(1);
const bits = new Uint32Array(f32.buffer);
/** f32 → bf16 to nearest even, on the bits (finite inputs). */
function bf16(x: number): number {
  f32[0] = x;
  const b = bits[0]!;
  bits[0] = ((b + 0x7fff + ((b >> 16) & 1)) >>> 0) & 0xffff0000;
  return f32[0]!;
}
/** f32 → f16 to nearest even, computed on the value (normal range of the test's inputs). */
function f16(x: number): number {
  if (x === 0) return 0;
  const e = Math.floor(Math.log2(Math.abs(x)));
  const ulp = 2 ** (Math.max(e, -14) - 10);
  const scaled = x / ulp;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  const n = diff > 0.5 || (diff === 0.5 && floor % 2 !== 0) ? floor + 1 : floor;
  return n * ulp;
}

describe("mma m16n8k16 layouts", () => {
  for (const role of ["a", "b", "accumulator"] as const) {
    it(`${role}: PTX's mapping, each element of the ${role === "a" ? "16×16" : role === "b" ? "16×8" : "16×8"} matrix held once`, () => {
      const layout = mmaM16n8k16Layouts[role];
      expect(layout.lanes).toBe(32);
      expect(layout.perLane * 32).toBe(layout.rows * layout.cols);
      const seen = new Set<number>();
      for (let lane = 0; lane < 32; lane++) {
        for (let e = 0; e < layout.perLane; e++) {
          const [r, c] = fragmentElementPosition(layout, lane, e);
          expect([r, c]).toEqual(ptx[role](lane >> 2, lane & 3, e));
          seen.add(r * layout.cols + c);
        }
      }
      expect(seen.size).toBe(layout.rows * layout.cols);
    });
  }

  it("A is the warpgroup k16 A of one warp; registers pack element pairs low then high", () => {
    const warpgroup = fragmentLayouts.m64n64k16.a!;
    for (let lane = 0; lane < 32; lane++) {
      for (let e = 0; e < 8; e++) expect(fragmentElementPosition(mmaM16n8k16Layouts.a, lane, e)).toEqual(fragmentElementPosition(warpgroup, lane, e));
    }
    expect(mmaHalfRegisters(8)).toEqual([[0, 1], [2, 3], [4, 5], [6, 7]]);
    expect(mmaHalfRegisters(4)).toEqual([[0, 1], [2, 3]]);
  });
});

describe("ldmatrix as data", () => {
  it("x4 over a row-major 16×16 tile gives the A fragment; x2.trans over a row-major 16×8 tile, or x2 over its transpose, the B fragment", () => {
    // Row strides with padding, as shared tiles use them, so a confusion of rows and columns shows.
    const aStride = 24, bStride = 12, btStride = 20;
    for (let lane = 0; lane < 32; lane++) {
      const a = ldmatrixElements(4, false, lane, (j, r) => (8 * (j & 1) + r) * aStride + 8 * (j >> 1));
      const b = ldmatrixElements(2, true, lane, (j, r) => (8 * j + r) * bStride);
      const bt = ldmatrixElements(2, false, lane, (j, r) => r * btStride + 8 * j);
      for (let e = 0; e < 8; e++) {
        const [r, c] = fragmentElementPosition(mmaM16n8k16Layouts.a, lane, e);
        expect(a[e]).toBe(r * aStride + c);
      }
      for (let e = 0; e < 4; e++) {
        const [k, n] = fragmentElementPosition(mmaM16n8k16Layouts.b, lane, e);
        expect(b[e]).toBe(k * bStride + n);
        expect(bt[e]).toBe(n * btStride + k);
      }
    }
  });
});

describe("mma m16n8k16 reference", () => {
  for (const [name, round] of [["bf16", bf16], ["f16", f16]] as const) {
    it(`${name}: exact products, in-order f32 sums within the documented bound of float64`, () => {
      for (let trial = 0; trial < 20; trial++) {
        const a = Array.from({ length: 256 }, () => round((Math.random() * 2 - 1) * 4));
        const b = Array.from({ length: 128 }, () => round((Math.random() * 2 - 1) * 4));
        const c = Array.from({ length: 128 }, () => Math.fround((Math.random() * 2 - 1) * 100));
        // Each product of two inputs is exact in f32, the premise of the reference's order.
        for (let i = 0; i < 256; i += 17) for (let j = 0; j < 128; j += 5) expect(Math.fround(a[i]! * b[j]!)).toBe(a[i]! * b[j]!);
        const d = mmaM16n8k16Reference(a, b, c);
        for (let r = 0; r < 16; r++) {
          for (let col = 0; col < 8; col++) {
            let exact = c[r * 8 + col]!;
            let magnitude = Math.abs(exact);
            let inOrder = Math.fround(exact);
            for (let k = 0; k < 16; k++) {
              const p = a[r * 16 + k]! * b[k * 8 + col]!;
              exact += p;
              magnitude += Math.abs(p);
              inOrder = Math.fround(inOrder + p);
            }
            expect(d[r * 8 + col]).toBe(inOrder);
            expect(Math.abs(d[r * 8 + col]! - exact)).toBeLessThanOrEqual(16 * 2 ** -24 * magnitude);
          }
        }
      }
    });
  }

  it("a wrong layout gives a different result (the test can fail)", () => {
    const a = Array.from({ length: 256 }, () => bf16(Math.random() * 2 - 1));
    const b = Array.from({ length: 128 }, () => bf16(Math.random() * 2 - 1));
    const c = Array.from({ length: 128 }, () => Math.random());
    const transposedA = Array.from({ length: 256 }, (_, i) => a[(i % 16) * 16 + Math.floor(i / 16)]!);
    expect(mmaM16n8k16Reference(transposedA, b, c)).not.toEqual(mmaM16n8k16Reference(a, b, c));
  });
});

describe.skipIf(!nvccAvailable())("mma m16n8k16 CUDA helper", () => {
  for (const element of ["bf16", "f16"] as const) {
    it(`${element}: ptxas accepts mma.sync m16n8k16 for sm_80 and sm_90`, () => {
      // One warp: each lane loads its packed registers, multiplies, stores its four accumulators.
      const source = [
        ...mma16Helper(element),
        `extern "C" __global__ void probe(const unsigned* a, const unsigned* b, float* d) {`,
        "  const int t = threadIdx.x;",
        "  float d0 = d[4 * t], d1 = d[4 * t + 1], d2 = d[4 * t + 2], d3 = d[4 * t + 3];",
        `  tsk_mma_m16n8k16_${element}(d0, d1, d2, d3, a[4 * t], a[4 * t + 1], a[4 * t + 2], a[4 * t + 3], b[2 * t], b[2 * t + 1]);`,
        "  d[4 * t] = d0; d[4 * t + 1] = d1; d[4 * t + 2] = d2; d[4 * t + 3] = d3;",
        "}",
      ].join("\n");
      for (const arch of ["sm_80", "sm_90"]) {
        const result = compileCuda(source, { arch, name: `mma16-${element}` });
        expect(result.errors).toBe("");
        expect(result.ok).toBe(true);
        expect(result.functions.some((f) => f.entry && f.name === "probe")).toBe(true);
      }
    });
  }

  it("bench/mma16-probe.cu, the GPU check, is its generator's output and compiles for sm_80", () => {
    const source = mma16ProbeSource(mma16ProbeSeed);
    expect(fs.readFileSync(new URL("../bench/mma16-probe.cu", import.meta.url), "utf8")).toBe(source);
    const result = compileCuda(source, { arch: "sm_80", name: "mma16-probe" });
    expect(result.errors).toBe("");
    expect(result.ok).toBe(true);
  });
});
