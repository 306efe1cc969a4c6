/**
 * Regression tests for what the fuzzers found that an error golden or a codegen case cannot show (those live
 * in codegen-tests/: nesting-too-deep, nesting-too-deep-operators, import-specifier-not-string,
 * wgsl-code-too-deep, f32-extremes, loop-without-condition). Each names the failure it guards against.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import { testedBackends, deviceFor } from "../backends.ts";
import { compileSource, header } from "../compile-source.ts";
import { repoRoot } from "../golden-cases.ts";
import { closeDawn, validateWgsl } from "../tools/dawn.ts";
import { compileCuda, nvccAvailable } from "../tools/nvcc.ts";

describe("fuzz regressions", () => {
  afterAll(async () => {
    await closeDawn();
  });

  describe("parameter limits", () => {
    // Dawn rejected a generated kernel of 1103 buffers ("Binding number (1103) exceeds the
    // maxBindingsPerBindGroup limit (1000) - 1", robustness fuzzer, seed 20261123, input 1196); nvcc rejects
    // more than 32764 bytes of parameters ("Formal parameter space overflowed").
    const source = (buffers: number, scalars: string) =>
      `${header.replace("type Const", "type bool, type Const")}export const k = kernel({ block: [64] }, (${Array.from({ length: buffers }, (_, i) => `p${i}: Float32Array`).join(", ")}${scalars}) => {\n  p0[threadIdx.x] = 1;\n});\n`;
    const column = (text: string, name: string) => text.split("\n")[1]!.indexOf(`${name}:`) + 1;

    it("WebGPU: 1000 bindings (999 buffers and the scalars' uniform) pass Dawn; 1001 are TSK3033 at the first buffer past the limit", async () => {
      const fits = compileSource(source(999, ", n: i32"), { targets: ["wgsl"] });
      expect(fits.rendered).toBe("");
      const result = await validateWgsl(fits.files[0]!.wgsl!.source);
      expect(result.messages).toEqual([]);
      const text = source(1000, ", n: i32");
      const over = compileSource(text, { targets: ["wgsl"] });
      expect(over.diagnostics.map((d) => d.code)).toEqual(["TSK3033"]);
      expect(over.rendered).toContain("error[TSK3033]: kernel 'k' needs 1001 bindings for its parameters; WebGPU allows at most 1000");
      expect(over.rendered).toContain(`kernel.ts:2:${column(text, "p999")}`);
      // Without scalars there is no uniform: 1000 buffers fit.
      expect(compileSource(source(1000, ""), { targets: ["wgsl"] }).rendered).toBe("");
    });

    it("CUDA: 32764 bytes of parameters compile with nvcc; 32768 are TSK3034 at the first parameter past the limit", () => {
      const fits = compileSource(source(4095, ", n: i32"), { targets: ["cuda"] });
      expect(fits.rendered).toBe("");
      if (nvccAvailable()) expect(compileCuda(fits.files[0]!.cuda!.source).errors).toBe("");
      const text = source(4095, ", n: i32, m: i32");
      const over = compileSource(text, { targets: ["cuda"] });
      expect(over.diagnostics.map((d) => d.code)).toEqual(["TSK3034"]);
      expect(over.rendered).toContain("error[TSK3034]: kernel 'k' has 32768 bytes of parameters; CUDA allows at most 32764");
      expect(over.rendered).toContain(`kernel.ts:2:${column(text, "m")}`);
      // A bool takes one byte: it still fits after 32764 − 1 bytes.
      expect(compileSource(source(4094, ", a: i32, b: bool"), { targets: ["cuda"] }).rendered).toBe("");
    });
  });

  it("nested Math.sign no longer grows the CUDA source exponentially (its template repeated the argument three times)", () => {
    const source = `${header}export const k = kernel({ block: [64] }, (out: Float32Array, x: f32) => {\n  out[threadIdx.x] = ${"Math.sign(".repeat(40)}x${")".repeat(40)};\n});\n`;
    const result = compileSource(source, { targets: ["cuda"] });
    expect(result.rendered).toBe("");
    const cuda = result.files[0]!.cuda!.source;
    expect(cuda.length).toBeLessThan(5000);
    expect(cuda.match(/tsk_signf\(/g)?.length).toBe(40 + 1);
    if (nvccAvailable()) expect(compileCuda(cuda).errors).toBe("");
  });

  describe.each(testedBackends)("f32 → i32/u32 conversions follow docs/language.md §5 on %s", (backend) => {
    // WGSL's own conversion saturated to 2147483520 and 4294967040 (the largest f32 inside each range) and
    // turned NaN into -2147483648 on SwiftShader; found by the differential fuzzer.
    const special = [Number.NaN, -Number.NaN, Infinity, -Infinity, 3e9, -3e9, 2147483648, 2147483520, -2147483648, -2147483904, 4294967296, 4294967040, 5e9, 1e38, -1e38, -1.5, -0.5, -0, 0, 0.5, 1.5, 2.75, -2.75, 1e-45, 16777217];
    const truncate = (x: number, lo: number, hi: number) => (Number.isNaN(x) ? 0 : Math.min(Math.max(Math.trunc(x), lo), hi) + 0);
    it("truncates, saturates to the type's range and makes NaN 0", async () => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-conversions-"));
      const file = path.join(dir, "convert.ts");
      fs.writeFileSync(
        file,
        `import { i32, kernel, threadIdx, u32, type ReadonlyFloat32Array } from "tskernel";\n` +
          `export const convert = kernel({ block: [32] }, (outI: Int32Array, outU: Uint32Array, x: ReadonlyFloat32Array) => {\n` +
          `  const t = threadIdx.x;\n  outI[t] = i32(x[t]);\n  outU[t] = u32(x[t]);\n});\n`,
      );
      const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
      const input = new Float32Array(32).fill(0.25);
      input.set(special);
      const outI = device.createBuffer(new Int32Array(32).fill(-12345));
      const outU = device.createBuffer(new Uint32Array(32).fill(12345));
      await device.launch(library.get("convert"), { grid: [1], args: [outI, outU, device.createBuffer(input)] });
      const gotI = [...((await device.read(outI)) as Int32Array)];
      const gotU = [...((await device.read(outU)) as Uint32Array)];
      expect(gotI).toEqual([...input].map((x) => truncate(x, -2147483648, 2147483647)));
      expect(gotU).toEqual([...input].map((x) => truncate(x, 0, 4294967295)));
    });
  });

  describe.each(testedBackends)("comparisons as call arguments on %s", (backend) => {
    // Dawn rejected `h(v < w, k > s)` ("parsed as template list": WGSL reads `v<w, k>` as template
    // arguments); found by the differential fuzzer (seed 20261123, program 787). WGSL now prints a `<`
    // argument in parentheses (Spelling.lessThanArgumentsInParens).
    it("passes a < b and c > d to a helper, to Math.min and to a ternary", async () => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-template-list-"));
      const file = path.join(dir, "compare.ts");
      fs.writeFileSync(
        file,
        `import { kernel, threadIdx, type i32 } from "tskernel";\n` +
          `function pick(a: boolean, b: boolean, x: i32): i32 {\n  return a ? (b ? x : 2 * x) : b ? -x : 7;\n}\n` +
          `export const compare = kernel({ block: [64] }, (out: Int32Array, v: Int32Array, w: Int32Array, k: i32, s: i32) => {\n` +
          `  const t = threadIdx.x;\n  const a = v[t];\n  const b = w[t];\n` +
          `  out[t * 3] = pick(a < b, k > s, a);\n  out[t * 3 + 1] = Math.min(a < b ? a : b, k > s ? k : s);\n  out[t * 3 + 2] = pick(a < k, b > s, b);\n});\n`,
      );
      const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
      const random = () => Math.floor(Math.random() * 200) - 100;
      const v = Int32Array.from({ length: 64 }, random);
      const w = Int32Array.from({ length: 64 }, random);
      const [k, s] = [random(), random()];
      const out = device.createBuffer(new Int32Array(192).fill(-999999));
      await device.launch(library.get("compare"), { grid: [1], args: [out, device.createBuffer(v), device.createBuffer(w), k, s] });
      // `| 0`: an i32 has no -0, and -x of a zero drawn here would be -0, which toEqual tells from 0.
      const pick = (a: boolean, b: boolean, x: number) => (a ? (b ? x : 2 * x) : b ? -x : 7) | 0;
      const expected = [...v].flatMap((a, t) => {
        const b = w[t]!;
        return [pick(a < b, k > s, a), Math.min(a < b ? a : b, k > s ? k : s), pick(a < k, b > s, b)];
      });
      expect([...((await device.read(out)) as Int32Array)]).toEqual(expected);
    });
  });

  describe.each(testedBackends)("literal expressions that WGSL would evaluate early wrap at run time on %s", (backend) => {
    // Dawn rejected the shader ("'1673577648 << 2' cannot be represented as 'u32'"): WGSL evaluates
    // expressions of literals when the shader is created, and overflow there is an error; found by the
    // differential fuzzer. codegen-tests/wgsl-runtime-constants holds the kernel and its outputs.
    it("gives the wrapped integers of docs/language.md §6", async () => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return;
      const library = compileKernelLibrary([path.join(repoRoot, "codegen-tests", "wgsl-runtime-constants", "kernel.ts")], [backend === "cpu" ? "js" : "wgsl"]);
      const outI = device.createBuffer(new Int32Array(128).fill(7));
      const outU = device.createBuffer(new Uint32Array(64).fill(7));
      const outF = device.createBuffer(new Float32Array(192).fill(7));
      await device.launch(library.get("runtimeConstants"), { grid: [1], block: [64], args: [outI, outU, outF] });
      const ints = (await device.read(outI)) as Int32Array;
      expect([...((await device.read(outU)) as Uint32Array)]).toEqual(new Array(64).fill((1673577648 * 4) % 2 ** 32));
      expect([...ints.subarray(0, 64)]).toEqual(new Array(64).fill(-2147483648));
      expect([...ints.subarray(64)]).toEqual(new Array(64).fill(-64));
      // Infinities and NaN: exact on the CPU; WebGPU may assume finite values (docs §22).
      if (backend === "cpu") {
        const floats = (await device.read(outF)) as Float32Array;
        expect([floats[0], floats[64], floats[128]]).toEqual([Infinity, Number.NaN, Infinity]);
      }
    });
  });
});
