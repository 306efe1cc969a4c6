/**
 * The driver's options that only tools use: `kernels` compiles a subset of a file's kernels, so that
 * `defines` meant for one kernel cannot break a sibling that shares a constant's name (the tuner's case).
 * And what a kernel's `targets` option does to a compilation: a target it leaves out neither checks nor
 * emits it (nor the helpers only it calls), and the outputs stay aligned with the specializations. And the
 * options of the editor plugin: the text of a file from the editor, diagnostics without code, without TypeScript's.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileFiles } from "./driver.ts";
import { packageRoot } from "./frontend/program.ts";

const blocktiling = path.join(packageRoot(), "examples", "sgemm-blocktiling.ts");
// Tile sizes that suit the 2-D kernels but give the 1-D kernel (block BM·BN/TM) 128·128/4 = 4096 threads.
const defines = new Map([["BM", "128"], ["BN", "128"], ["BK", "8"], ["TM", "4"], ["TN", "4"]]);

describe("compiling a subset of a file's kernels", () => {
  it("defines that break a sibling kernel fail the whole file", () => {
    const result = compileFiles([blocktiling], { targets: ["cuda"], defines, baseDir: packageRoot() });
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => d.code)).toContain("TSK3012");
    expect(result.diagnostics.find((d) => d.code === "TSK3012")?.message).toContain("sgemm1DBlocktiling");
  });

  it("`kernels` builds only the named kernel, with the defines", () => {
    const result = compileFiles([blocktiling], { targets: ["cuda"], defines, baseDir: packageRoot(), kernels: new Set(["sgemm2DBlocktiling"]) });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const specializations = result.files[0]!.specializations;
    expect(specializations.map((s) => s.entryName)).toEqual(["sgemm2DBlocktiling_BM_128_BN_128_BK_8_TM_4_TN_4"]);
    expect(specializations[0]!.facts.block).toEqual([1024, 1, 1]);
    expect(result.files[0]!.cuda!.source).toContain("sgemm2DBlocktiling_BM_128_BN_128_BK_8_TM_4_TN_4(");
    expect(result.files[0]!.cuda!.source).not.toContain("sgemm1DBlocktiling");
  });
});

describe("kernels that declare their targets", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-driver-")), "mixed.ts");
  fs.writeFileSync(
    file,
    `import { kernel, shared, threadIdx, type f32 } from "tskernel";

function shallow(x: f32): f32 {
  return x + 1;
}

function onlyCudaAndCpu(x: f32): f32 {
  return x * 3;
}

export const portable = kernel({ block: [64] }, (out: Float32Array) => {
  out[threadIdx.x] = shallow(2);
});

// 80 KB of shared memory: more than WebGPU allows (TSK3002), within CUDA's 227 KB.
export const large = kernel({ block: [64], targets: ["cuda", "js"] }, (out: Float32Array) => {
  const big = shared.f32(20480);
  big[threadIdx.x] = onlyCudaAndCpu(4);
  out[threadIdx.x] = big[threadIdx.x];
});
`,
  );

  it("checks and emits each kernel for its own targets only, with outputs aligned to the specializations", () => {
    const result = compileFiles([file], { targets: ["cuda", "wgsl", "js"] });
    expect(result.diagnostics).toEqual([]);
    const out = result.files[0]!;
    expect(out.specializations.map((s) => [s.entryName, s.targets])).toEqual([
      ["portable", ["cuda", "wgsl", "js"]],
      ["large", ["cuda", "js"]],
    ]);
    expect(out.wgsl!.entries.map((e) => e?.entryPoint)).toEqual(["portable", undefined]);
    expect(out.cuda!.functions).toEqual(["portable", "large"]);
    expect(out.js!.functions).toEqual(["portable", "large"]);
    // WGSL has neither the skipped kernel nor the helper only it calls; the other targets have both.
    expect(out.wgsl!.source).toMatch(/fn shallow\(/);
    expect(out.wgsl!.source).not.toMatch(/large|onlyCudaAndCpu/);
    expect(out.cuda!.source).toMatch(/onlyCudaAndCpu\(/);
    expect(out.js!.source).toMatch(/onlyCudaAndCpu\(/);
  });

  it("without the option the same kernel is TSK3002 on WebGPU", () => {
    const undeclared = path.join(path.dirname(file), "undeclared.ts");
    fs.writeFileSync(undeclared, fs.readFileSync(file, "utf8").replace(', targets: ["cuda", "js"]', ""));
    const result = compileFiles([undeclared], { targets: ["cuda", "wgsl", "js"] });
    expect(result.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual(["TSK3002 kernel 'large' uses 81920 bytes of shared memory; WebGPU allows at most 65536"]);
  });

  it("a compilation for none of a file's declared targets emits nothing for it", () => {
    const result = compileFiles([file], { targets: ["wgsl"] });
    expect(result.ok).toBe(true);
    const out = result.files[0]!;
    expect(out.specializations.map((s) => s.targets)).toEqual([["wgsl"], []]);
    expect(out.cuda).toBeUndefined();
    expect(out.js).toBeUndefined();
    expect(out.wgsl!.entries.map((e) => e?.entryPoint)).toEqual(["portable", undefined]);
  });
});

describe("the options an editor uses", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-driver-")), "edited.ts");
  const saved = 'import { kernel, threadIdx, type i32 } from "tskernel";\n\nexport const k = kernel({ block: [64] }, (out: Float32Array, n: i32) => {\n  if (threadIdx.x < n) out[threadIdx.x] = 1;\n});\n';
  fs.writeFileSync(file, saved);
  // The editor's buffer: a shift out of range (TSK3010) and a TypeScript error (a string where a number goes).
  const unsaved = `${saved.replace("out[threadIdx.x] = 1;", "out[threadIdx.x] = 1;\n  const shifted: i32 = n << 40;")}export const label: number = "x";\n`;

  it("readFile gives the text in place of the disk's", () => {
    expect(compileFiles([file], { targets: ["cuda"] }).diagnostics).toEqual([]);
    const edited = compileFiles([file], { targets: ["cuda"], readFile: (name) => (name === file ? unsaved : undefined) });
    expect(edited.diagnostics.map((d) => d.code).sort()).toEqual(["TSK1002", "TSK3010"]);
  });

  it("emit: false gives the same diagnostics and no code; typeScriptDiagnostics: false leaves out TSK1002", () => {
    const full = compileFiles([file], { targets: ["cuda", "wgsl"] });
    const diagnosticsOnly = compileFiles([file], { targets: ["cuda", "wgsl"], emit: false });
    expect(full.files[0]!.cuda).toBeDefined();
    expect(diagnosticsOnly.files[0]!.cuda).toBeUndefined();
    expect(diagnosticsOnly.files[0]!.wgsl).toBeUndefined();
    expect(diagnosticsOnly.diagnostics).toEqual(full.diagnostics);
    expect(diagnosticsOnly.files[0]!.specializations.map((s) => s.entryName)).toEqual(["k"]);
    const readFile = (name: string) => (name === file ? unsaved : undefined);
    const withoutTypeScript = compileFiles([file], { targets: ["cuda"], readFile, emit: false, typeScriptDiagnostics: false });
    expect(withoutTypeScript.diagnostics.map((d) => d.code)).toEqual(["TSK3010"]);
  });
});
