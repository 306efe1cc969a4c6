/**
 * The nesting limit: code up to it compiles, code past it is TSK1050 where it crosses (brackets before
 * parsing, other constructs in the parsed tree), constructs that overflow TypeScript's parser are TSK1051
 * inside the construct, and a project that met such a file compiles the next one normally.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileFiles } from "../driver.ts";
import { LineMap } from "../diagnostics/span.ts";
import { createProject } from "./program.ts";
import { maxNestingDepth } from "./nesting.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-nesting-"));

function kernelFile(name: string, expression: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    [
      'import { kernel, threadIdx, type f32 } from "tskernel";',
      "export const k = kernel({ block: [64] }, (out: Float32Array, x: f32) => {",
      `  out[threadIdx.x] = ${expression};`,
      "});",
      "",
    ].join("\n"),
  );
  return file;
}

const parens = (depth: number) => `${"(".repeat(depth)}x${")".repeat(depth)}`;

describe("the nesting limit", () => {
  it("compiles parentheses nested 200 deep on every target", () => {
    const result = compileFiles([kernelFile("parens-200.ts", parens(200))], { targets: ["cuda", "wgsl", "js"] });
    expect(result.diagnostics).toEqual([]);
    expect(result.files[0]!.wgsl!.source).toContain("out");
  });

  it("reports the bracket that opens level 257 as TSK1050, before TypeScript parses", () => {
    const file = kernelFile("parens-3000.ts", parens(3000));
    const result = compileFiles([file], { targets: ["cuda", "wgsl"] });
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK1050"]);
    const span = result.diagnostics[0]!.span!;
    const text = fs.readFileSync(file, "utf8");
    expect(text.slice(span.start, span.end)).toBe("(");
    // Brackets before it: `kernel(` and the body's `{` on line 2, then the parentheses of line 3.
    const column = new LineMap(text).lineCol(span.start).column;
    expect(column - "  out[threadIdx.x] = ".length).toBe(maxNestingDepth - 2 + 1);
  });

  it("reports a chain of operators past the limit in the parsed tree", () => {
    const file = kernelFile("neg-400.ts", `${"- ".repeat(400)}x`);
    const result = compileFiles([file], { targets: ["wgsl"] });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK1050"]);
    const text = fs.readFileSync(file, "utf8");
    const span = result.diagnostics[0]!.span!;
    expect(text.slice(span.start, span.end)).toMatch(/^(- )+x$/);
    expect(new LineMap(text).lineCol(span.start).line).toBe(3);
  });

  it("turns a construct that overflows TypeScript's parser into TSK1051 inside the construct", () => {
    const file = kernelFile("neg-20000.ts", `${"- ".repeat(20000)}x`);
    const result = compileFiles([file], { targets: ["wgsl"] });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["TSK1051"]);
    const text = fs.readFileSync(file, "utf8");
    const start = result.diagnostics[0]!.span!.start;
    const chain = text.indexOf("- ");
    expect(start).toBeGreaterThan(chain);
    expect(start).toBeLessThan(chain + 2 * 20000);
  });

  it("leaves a reused project able to compile the same path again", () => {
    const project = createProject();
    const file = path.join(dir, "reused.ts");
    fs.writeFileSync(file, fs.readFileSync(kernelFile("tmp.ts", parens(1000)), "utf8"));
    expect(compileFiles([file], { targets: ["js"], project }).diagnostics.map((d) => d.code)).toEqual(["TSK1050"]);
    expect(project.getSourceFile(file)).toBeUndefined();
    fs.writeFileSync(file, fs.readFileSync(kernelFile("tmp.ts", parens(3)), "utf8"));
    const result = compileFiles([file], { targets: ["js"], project });
    expect(result.diagnostics).toEqual([]);
    expect(result.files[0]!.js!.functions).toEqual(["k"]);
  });
});
