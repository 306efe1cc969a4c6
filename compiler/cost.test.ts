/**
 * The static cost estimate on the examples, each figure worked out by hand from the kernel's source: the
 * naive matmul moves 8 bytes per 2 flops of its k loop (1/4 flop per byte), the tiled one 8 bytes per
 * 2·TILE flops (TILE/4), the tree of the reduction runs log2(BLOCK) times, a helper's work counts where
 * it is called, a select costs its larger side, and an mma is 2·16·8·8 flops shared by a warp.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { estimateCost, formatPolynomial, intensity } from "./cost.ts";
import { LineMap, type Span } from "./diagnostics/span.ts";
import { compileFiles, type SpecializedKernel } from "./driver.ts";
import { packageRoot } from "./frontend/program.ts";

/** Every specialization of a file by entry name, with its estimate, loops named `L<line>`. */
function estimates(file: string) {
  const result = compileFiles([file], { targets: ["cuda"], emit: false });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const lines = new LineMap(fs.readFileSync(file, "utf8"));
  const loopName = (span: Span) => `L${lines.lineCol(span.start).line}`;
  return new Map(result.files[0]!.specializations.map((s: SpecializedKernel) => [s.entryName, estimateCost(s.kernel, loopName)]));
}

const example = (name: string) => path.join(packageRoot(), "examples", name);

/** The line of the first occurrence of `needle` in a file. */
function lineOf(file: string, needle: string): number {
  const text = fs.readFileSync(file, "utf8");
  return text.slice(0, text.indexOf(needle)).split("\n").length;
}

describe("the cost of a thread", () => {
  it("naive matmul: 8 bytes and 2 flops per step of its k loop, and the store of C", () => {
    const file = example("matmul-naive.ts");
    const loop = `L${lineOf(file, "for (let k = 0; k < n; k++)")}`;
    const cost = estimates(file).get("matmulNaive")!;
    expect(formatPolynomial(cost.globalBytes)).toBe(`8·${loop} + 4`);
    expect(formatPolynomial(cost.flops)).toBe(`2·${loop}`);
    expect(cost.loops.map((l) => l.name)).toEqual([loop]);
    expect(intensity(cost)).toBe(0.25);
  });

  it("tiled matmul: two loads per tile step against 2·TILE flops of its constant inner loop, TILE/4 flops per byte", () => {
    const file = example("matmul-tiled.ts");
    const loop = `L${lineOf(file, "for (let t = 0; t < k; t += TILE)")}`;
    const cost = estimates(file).get("matmulTiled_TILE_16")!;
    expect(formatPolynomial(cost.globalBytes)).toBe(`8·${loop} + 4`);
    expect(formatPolynomial(cost.flops)).toBe(`32·${loop}`);
    expect(intensity(cost)).toBe(16 / 4);
  });

  it("a reduction: a grid-stride loop of unknown length, then a tree of log2(256) = 8 halvings in shared memory", () => {
    const file = example("reduce-sum.ts");
    const loop = `L${lineOf(file, "for (let i = blockIdx.x * BLOCK + tid; i < n;")}`;
    const cost = estimates(file).get("reduceSum_BLOCK_256")!;
    expect(formatPolynomial(cost.globalBytes)).toBe(`4·${loop} + 4`);
    expect(formatPolynomial(cost.flops)).toBe(`${loop} + 8`);
    expect(intensity(cost)).toBe(0.25);
  });

  it("elementwise kernels: no loops; a helper's flops count at its call", () => {
    const cost = estimates(example("elementwise.ts"));
    const saxpy = cost.get("saxpy")!;
    // fma(a, x[i], y[i]) into y[i]: x and y read, y written.
    expect([formatPolynomial(saxpy.globalBytes), formatPolynomial(saxpy.flops)]).toEqual(["12", "2"]);
    expect(intensity(saxpy)).toBe(2 / 12);
    // max(x, 0) + log(1 + exp(-abs(x))): two additions, log and exp; max, abs and negation count none.
    const softplus = cost.get("softplus")!;
    expect([formatPolynomial(softplus.globalBytes), formatPolynomial(softplus.flops)]).toEqual(["8", "4"]);
  });

  it("takes the larger side of a branch or select, and multiplies nested run-time loops", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cost-")), "shapes.ts");
    fs.writeFileSync(
      file,
      [
        'import { kernel, threadIdx, type f32, type i32 } from "tskernel";',
        "export const k = kernel({ block: [64] }, (out: Float32Array, a: Float32Array, n: i32, m: i32) => {",
        "  let s: f32 = 0;",
        "  for (let i = 0; i < n; i++) {",
        "    for (let j = 0; j < m; j++) s += a[j] * a[i];",
        "    for (let j = 0; j < 8; j += 2) s += threadIdx.x < 3 ? a[j] * a[j] * a[j] : 1;",
        "  }",
        "  if (s > 0) out[threadIdx.x] = s; else { out[threadIdx.x] = a[0]; out[threadIdx.x + 1] = a[1] * s; }",
        "});",
        "",
      ].join("\n"),
    );
    const cost = estimates(file).get("k")!;
    // Inner run-time loop: 8 bytes, 2 flops per trip; the constant loop: 4 trips of the select's larger side
    // (three loads as written, 12 bytes; 2 flops) and the addition; the else branch (8 bytes read, 8 written,
    // 1 flop) is the larger.
    expect(formatPolynomial(cost.globalBytes)).toBe("8·L4·L5 + 48·L4 + 16");
    expect(formatPolynomial(cost.flops)).toBe("2·L4·L5 + 12·L4 + 1");
    expect(intensity(cost)).toBe(2 / 8);
  });

  it("matrix operations: a fragment's elements per lane, and an mma's 2·16·8·8 flops over the warp's 32 threads", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cost-")), "mma.ts");
    fs.writeFileSync(
      file,
      `import { fragment, kernel, loadFragment, mma, storeFragment, type ReadonlyFloat32Array } from "tskernel";
export const warpMma = kernel({ block: [64] }, (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, D: Float32Array) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 1);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
  for (let p = 0; p < 2; p++) {
    loadFragment(a[0], A, p * 128, 8);
    loadFragment(b[0], B, p * 64, 8);
    loadFragment(acc[0], D, p * 128, 8);
    mma(acc[0], a[0], b[0]);
    storeFragment(acc[0], D, p * 128, 8);
  }
});
`,
    );
    const cost = estimates(file).get("warpMma")!;
    // Per trip: A's 4 elements per lane, B's 2, the accumulator's 4 loaded and 4 stored: 14 × 4 bytes.
    expect(formatPolynomial(cost.globalBytes)).toBe(String(2 * 14 * 4));
    expect(formatPolynomial(cost.flops)).toBe(String((2 * (2 * 16 * 8 * 8)) / 32));
  });

  it("takes the ratio at the degree of the loops that move memory: a run-time loop of arithmetic alone is left out of it", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cost-")), "halve.ts");
    fs.writeFileSync(
      file,
      [
        'import { kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";',
        "export const halve = kernel({ block: [64] }, (out: Float32Array, a: ReadonlyFloat32Array, n: i32) => {",
        "  let s: f32 = a[threadIdx.x] * 2;",
        "  for (let i = 0; i < n; i++) s = s * 0.5;",
        "  out[threadIdx.x] = s + 1;",
        "});",
        "",
      ].join("\n"),
    );
    const cost = estimates(file).get("halve")!;
    expect([formatPolynomial(cost.globalBytes), formatPolynomial(cost.flops)]).toEqual(["8", "L4 + 2"]);
    // The bytes are constants: the ratio is of the constant terms, 2 flops per 8 bytes.
    expect(intensity(cost)).toBe(2 / 8);
  });

  it("vectors: a lane-wise operation is a flop per lane; an element moves its bytes, a part of one only the part's", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cost-")), "axpy3.ts");
    fs.writeFileSync(
      file,
      [
        'import { add, kernel, mul, threadIdx, vec3f, type f32 } from "tskernel";',
        "export const axpy3 = kernel({ block: [64] }, (out: vec3f[], x: readonly vec3f[], a: f32) => {",
        "  const i = threadIdx.x;",
        "  out[i] = add(mul(x[i], a), out[i]);",
        "  out[i].x = x[i].y;",
        "});",
        "",
      ].join("\n"),
    );
    const cost = estimates(file).get("axpy3")!;
    // x[i] and out[i] read and out[i] written, 12 bytes each; then a lane written and a lane read, 4 each.
    expect(formatPolynomial(cost.globalBytes)).toBe(String(3 * 12 + 2 * 4));
    // mul and add of vec3f: three lanes each.
    expect(formatPolynomial(cost.flops)).toBe("6");
  });
});
