/**
 * The real compilers on every golden output: each expected.cu is compiled by nvcc for sm_90 (sm_90a where it uses wgmma; cubin, with
 * `-Xptxas -v`; registers and spills are recorded, and no matmul example, bf16 row kernel or blur-rgba8 may spill), and each expected.wgsl
 * is accepted by Dawn with no messages. Pipeline creation on Dawn's null adapter uses WebGPU's default
 * limits (256 invocations, 16 KiB of workgroup memory); an entry point may fail there only with the limit
 * the compiler already warned about (TSK3006/TSK3007). The register report goes to build/ptxas-report.json.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codegenCases, compileCase, repoRoot } from "./golden-cases.ts";
import { warpgroupMarker } from "../compiler/index.ts";
import { compileCudaMany, nvccAvailable, type CudaCompileResult } from "./tools/nvcc.ts";
import { closeDawn, validateWgsl } from "./tools/dawn.ts";

const cases = codegenCases().filter((c) => fs.existsSync(path.join(c.dir, "expected.cu")));

// The shared-memory check and the WGSL checks below read the compiler's facts for the same cases: each case is
// compiled once in this file, not once per use (about 8 s of the file's time on the 2-core CI machine).
const compiledCases = new Map<string, ReturnType<typeof compileCase>>();
function compiled(input: string): ReturnType<typeof compileCase> {
  if (!compiledCases.has(input)) compiledCases.set(input, compileCase(input));
  return compiledCases.get(input)!;
}

describe("what NVRTC lacks", () => {
  // The CUDA runtime compiles the .cu with NVRTC, whose front end has no offsetof, not even GCC's
  // __builtin_offsetof that nvcc takes: on the H100 every struct kernel failed to compile until the offset
  // asserts were left to nvcc (bench/results/2026-11-26-particles-gpu-h100-run1-log.txt). nvcc above cannot
  // see it, so each golden is read for it: such a line must sit inside `#ifndef __CUDACC_RTC__`.
  it.each(cases.map((c) => c.name))("%s uses __builtin_offsetof only where NVRTC skips it", (name) => {
    const dir = cases.find((c) => c.name === name)!.dir;
    const unguarded: string[] = [];
    for (const file of ["expected.cu", "expected.cuh"].filter((f) => fs.existsSync(path.join(dir, f)))) {
      const guards: boolean[] = [];
      fs.readFileSync(path.join(dir, file), "utf8").split("\n").forEach((line, index) => {
        if (/^#if/.test(line)) guards.push(line.trim() === "#ifndef __CUDACC_RTC__");
        else if (line.startsWith("#endif")) guards.pop();
        else if (line.includes("__builtin_") && !guards.includes(true)) unguarded.push(`${file}:${index + 1}: ${line.trim().slice(0, 80)}`);
      });
    }
    expect(unguarded).toEqual([]);
  });
});

describe.skipIf(!nvccAvailable())(`nvcc accepts every generated .cu${nvccAvailable() ? "" : " (skipped: nvcc not found)"}`, () => {
  let results: CudaCompileResult[] = [];
  it("compiles all of them for sm_90", async () => {
    // Files that use wgmma compile for sm_90a (where the instruction exists; for sm_90 it would be a trap).
    results = await compileCudaMany(
      cases.map((c) => {
        const source = fs.readFileSync(path.join(c.dir, "expected.cu"), "utf8");
        return { source, options: { name: c.name.replace(/\W/g, "_"), ...(source.includes(warpgroupMarker) ? { arch: "sm_90a" } : {}) } };
      }),
    );
    const failures = results.flatMap((result, i) => (result.ok ? [] : [`${cases[i]!.name}:\n${result.errors}`]));
    expect(failures).toEqual([]);
    const report = cases.map((c, i) => ({ case: c.name, functions: results[i]!.functions.filter((f) => f.entry) }));
    fs.mkdirSync(path.join(repoRoot, "build"), { recursive: true });
    fs.writeFileSync(path.join(repoRoot, "build", "ptxas-report.json"), `${JSON.stringify(report, null, 2)}\n`);
    for (const entry of report) {
      expect(entry.functions.length, `${entry.case} has kernels`).toBeGreaterThan(0);
    }
    // nvcc over every golden took 116 s of the default 120 on a 2-core machine alone (2026-11-23, with the
    // warp-specialized goldens): more time, so that a loaded machine does not fail it.
  }, 360_000);

  it("no matmul example spills registers", () => {
    expect(results.length).toBe(cases.length);
    cases.forEach((c, i) => {
      if (!/^examples\/(matmul|sgemm|hgemm-mma)/.test(c.name)) return;
      for (const fn of results[i]!.functions) {
        expect(fn.spillStoresBytes + fn.spillLoadsBytes, `${c.name} ${fn.name} spills`).toBe(0);
        expect(fn.registers, `${c.name} ${fn.name}`).toBeGreaterThan(0);
      }
    });
  });

  // tests/half-row-kernels.test.ts compiles the f16 builds of these files; their bf16 builds (and blur-rgba8) are
  // the goldens compiled above, so they are checked here rather than compiled a second time there.
  it("the bf16 row kernels and blur-rgba8 do not spill registers", () => {
    const names = ["layer-norm-bf16", "rms-norm-bf16", "softmax-bf16", "elementwise-bf16", "blur-rgba8"].map((name) => `examples/${name}`);
    expect(names.filter((name) => !cases.some((c) => c.name === name))).toEqual([]);
    cases.forEach((c, i) => {
      if (!names.includes(c.name)) return;
      expect(results[i]!.functions.filter((fn) => fn.entry).length, `${c.name} has kernels`).toBeGreaterThan(0);
      for (const fn of results[i]!.functions) {
        expect(fn.spillStoresBytes, `${c.name} ${fn.name}`).toBe(0);
        expect(fn.spillLoadsBytes, `${c.name} ${fn.name}`).toBe(0);
      }
    });
  });

  it("declares the shared memory the manifest reports", () => {
    cases.forEach((c, i) => {
      const result = compiled(c.input);
      result.files[0]!.specializations.forEach((spec, s) => {
        // A specialization whose kernel's `targets` leave out CUDA has no function here.
        if (!spec.targets.includes("cuda")) return;
        const fn = results[i]!.functions.find((f) => f.name === result.files[0]!.cuda!.functions[s]);
        expect(fn, `${c.name}: ptxas reports ${spec.entryName}`).toBeDefined();
        // Above 48 KB the arrays live in dynamic shared memory, which ptxas does not count: the launch asks for
        // exactly what the manifest reports (with the padding that aligns the arrays, and 1024 bytes more where
        // wgmma operands need aligning; issue 12).
        const dynamic = result.files[0]!.cuda!.dynamicSharedBytes[s]!;
        if (dynamic > 0) {
          expect(dynamic, `${c.name} ${spec.entryName} dynamic shared bytes`).toBe(spec.facts.sharedBytes);
          expect(fn!.sharedBytes, `${c.name} ${spec.entryName} static shared bytes`).toBe(0);
          return;
        }
        // Below, the arrays are static and ptxas places them itself, in its own order: it may pack them with less
        // padding than the declaration order needs (codegen-tests/shared-padding: 4112 against 4124), or add a
        // little of its own (the static scan-lookback-subgroups specializations: 8 bytes), never more than the
        // arrays' alignments add up to.
        const slack = [...spec.facts.sharedLayout.alignments.values()].reduce((a, b) => a + b, 0);
        expect(Math.abs(fn!.sharedBytes - spec.facts.sharedBytes), `${c.name} ${spec.entryName} static shared bytes: ptxas ${fn!.sharedBytes}, manifest ${spec.facts.sharedBytes}`).toBeLessThanOrEqual(slack);
      });
    });
  });
});

describe("Dawn accepts every generated .wgsl", () => {
  afterAll(async () => {
    await closeDawn();
  });

  for (const testCase of codegenCases().filter((c) => fs.existsSync(path.join(c.dir, "expected.wgsl")))) {
    it(testCase.name, async () => {
      const code = fs.readFileSync(path.join(testCase.dir, "expected.wgsl"), "utf8");
      const build = compiled(testCase.input);
      const file = build.files[0]!;
      const warned = new Set(
        build.diagnostics.filter((d) => d.code === "TSK3006" || d.code === "TSK3007").map((d) => /kernel '(\w+)'/.exec(d.message)?.[1]),
      );
      // One per specialization built for WGSL (undefined for those whose kernel's `targets` leave it out).
      const entries = file.wgsl!.entries.map((e) => e?.entryPoint);
      const result = await validateWgsl(code, entries.flatMap((e) => (e === undefined ? [] : [e])));
      const moduleMessages = result.messages.filter((m) => m.entryPoint === undefined);
      expect(moduleMessages, "shader compilation messages").toEqual([]);
      for (const message of result.messages.filter((m) => m.entryPoint !== undefined)) {
        const spec = file.specializations[entries.indexOf(message.entryPoint!)]!;
        expect(warned.has(spec.kernel.name), `${message.entryPoint}: ${message.message}`).toBe(true);
        expect(message.message).toMatch(/total number of workgroup invocations|workgroup_size\(|workgroup storage/i);
      }
    });
  }
});

describe("every generated .js parses as a module body", () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const code = fs.readFileSync(path.join(testCase.dir, "expected.js"), "utf8");
      // The module's only ES-module syntax is `export function`; without it the text is a script body.
      expect(() => new Function(code.replace(/^export function /gm, "function "))).not.toThrow();
      // Kernels with subgroup operations also take the checker (checked mode) and the subgroup size.
      expect(code).toMatch(/^export function \w+\(args, blockIdx, blockDim, gridDim(, chk, subgroupSize)?\) \{$/m);
    });
  }
});

describe.skipIf(!nvccAvailable())("the .cuh launch functions compile with their kernels", () => {
  // One case per kind of launch function: fixed block, dynamic shared memory above 48 KB, and a block chosen
  // at launch that must be whole warps (subgroup operations); one whose parameters are f16 and bf16; and one
  // whose parameters are structs and vectors, declared in both files (guarded, with their layouts asserted on
  // the host too), of f32 and of f16.
  it.each(["dynamic-shared", "shared-arrays", "subgroups", "half-precision", "structs", "vectors-half"])("%s: a host translation unit including the .cuh and the .cu builds for sm_90", (name) => {
    const dir = path.join(repoRoot, "codegen-tests", name);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cuh-"));
    const unit = path.join(out, "host.cu");
    fs.writeFileSync(unit, `#include "${path.join(dir, "expected.cuh")}"\n#include "${path.join(dir, "expected.cu")}"\nint main() { return 0; }\n`);
    const result = spawnSync("nvcc", ["-arch=sm_90", "-c", unit, "-o", path.join(out, "host.o")], { encoding: "utf8" });
    expect(result.stderr + result.stdout).not.toMatch(/error/);
    expect(result.status).toBe(0);
    expect(fs.statSync(path.join(out, "host.o")).size).toBeGreaterThan(0);
  });
});
