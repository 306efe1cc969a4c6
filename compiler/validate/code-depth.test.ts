/**
 * The WGSL code-depth limit (TSK3030) against Dawn itself: for each construct that nests, the deepest kernel
 * the validator lets through is accepted by Dawn (so the limit is safe), one level more is TSK3030 for the
 * wgsl target only, and helpers are measured from their own top.
 */

import { afterAll, describe, expect, it } from "vitest";
import { compileSource, header } from "../../tests/compile-source.ts";
import { createProject } from "../frontend/program.ts";
import { closeDawn, validateWgsl } from "../../tests/tools/dawn.ts";

const kernel = (body: string) =>
  `${header}import { type bool } from "tskernel";\nfunction h(v: f32): f32 { return v * 0.5; }\n` +
  `export const k = kernel({ block: [64] }, (out: Float32Array, a: ReadonlyFloat32Array, x: f32, n: i32, c: bool) => {\n  const i = blockIdx.x * blockDim.x + threadIdx.x;\n${body}\n});\n`;
const r = (s: string, n: number) => s.repeat(n);

const constructs: Record<string, (d: number) => string> = {
  ifs: (d) => kernel(`  ${r("if (c) { ", d)}out[i] = x;${r(" }", d)}`),
  loops: (d) => kernel(`  let s: f32 = 0;\n  ${Array.from({ length: d }, (_, j) => `for (let j${j} = 0; j${j} < n; j${j}++) { `).join("")}s += 1;${r(" }", d)}\n  out[i] = s;`),
  blocks: (d) => kernel(`${r("{ ", d)}out[i] = x;${r(" }", d)}`),
  elseIfs: (d) => kernel(`  if (n === 0) { out[i] = 0; }${Array.from({ length: d }, (_, j) => ` else if (n === ${j + 1}) { out[i] = ${j}.5; }`).join("")}`),
  calls: (d) => kernel(`  out[i] = ${r("Math.abs(", d)}x${r(")", d)};`),
  negations: (d) => kernel(`  out[i] = ${r("- ", d)}x;`),
  conversions: (d) => kernel(`  out[i] = ${r("f32(i32(", d)}x${r("))", d)};`),
  indices: (d) => kernel(`  out[i] = ${r("a[i32(", d)}x${r(")]", d)};`),
  selects: (d) => kernel(`  out[i] = ${r("c ? x : ", d)}x;`),
  shifts: (d) => kernel(`  out[i] = f32(n${r(" << n", d)});`),
};

afterAll(() => closeDawn());
const project = createProject();

describe("the WGSL code-depth limit", () => {
  for (const [name, make] of Object.entries(constructs)) {
    it(`${name}: the deepest kernel the validator passes is accepted by Dawn, one more level is TSK3030`, async () => {
      // The largest d that compiles for wgsl without TSK3030.
      let lo = 20;
      let hi = 140;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (compileSource(make(mid), { targets: ["wgsl"], project }).ok) lo = mid;
        else hi = mid - 1;
      }
      const deepest = compileSource(make(lo), { targets: ["wgsl"] });
      expect(deepest.rendered).toBe("");
      const validation = await validateWgsl(deepest.files[0]!.wgsl!.source, []);
      expect(validation.messages.filter((m) => m.type === "error")).toEqual([]);
      const deeper = compileSource(make(lo + 1), { targets: ["wgsl"] });
      expect(deeper.diagnostics.map((d) => d.code)).toEqual(["TSK3030"]);
      // The limit is WebGPU's: CUDA and the CPU take the same kernel.
      expect(compileSource(make(lo + 1), { targets: ["cuda", "js"] }).ok).toBe(true);
    });
  }

  it("measures a helper from its own top, and reports a helper that is too deep", () => {
    const deepHelper = `${header}function deep(v: f32): f32 {\n  return ${r("Math.abs(", 130)}v${r(")", 130)};\n}\nexport const k = kernel({ block: [64] }, (out: Float32Array, x: f32) => {\n  out[threadIdx.x] = deep(x);\n});\n`;
    const result = compileSource(deepHelper, { targets: ["wgsl"] });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK3030"]);
    expect(result.rendered).toMatch(/kernel\.ts:3:/);
    // Called through a helper, the same 100 levels fit: the kernel's own depth does not add.
    const split = `${header}function inner(v: f32): f32 {\n  return ${r("Math.abs(", 100)}v${r(")", 100)};\n}\nexport const k = kernel({ block: [64] }, (out: Float32Array, x: f32) => {\n  out[threadIdx.x] = ${r("Math.abs(", 100)}inner(x)${r(")", 100)};\n});\n`;
    expect(compileSource(split, { targets: ["wgsl"] }).rendered).toBe("");
  });
});
