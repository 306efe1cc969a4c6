/**
 * The PyTorch module (`tskernel build --target torch`, compiler/backends/torch-module.ts) and its runtime
 * (runtime/torch/tskernel_torch.py): the module of codegen-tests/torch-ops is golden (expected.py beside its
 * kernel.ts; UPDATE_GOLDENS=1 regenerates), every generated module and the runtime are byte-compiled by this
 * machine's python3, and the Python tests run both modules against stand-ins for PyTorch and the CUDA driver
 * (runtime/torch/test_tskernel_torch.py: CI's Debian PyTorch is too old for custom_op). The command line's
 * options, and the `.cuh` grid functions compiled with nvcc and checked against the formulas, are here too.
 * The runs on a GPU with PyTorch are examples/torch-app's (bench/results/*-torch-ops-*.json).
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { torchModules, torchPrebuiltKernels, writeBuild } from "../cli/build.ts";
import { runCli } from "../cli/main.ts";
import { applyFormulaOp, buildManifest, cFormula, compileFiles, foldFormula, parseFormula, pythonFormula, type Diagnostic, type Manifest, type ManifestFormula } from "../compiler/index.ts";
import { checkGolden, repoRoot } from "./golden-cases.ts";
import { nvccAvailable } from "./tools/nvcc.ts";

const python = spawnSync("python3", ["--version"]).status === 0;

/** The manifest a `--cubin --ptx --arch sm_90` build of these files would write (nvcc is not run). */
function manifestOf(files: readonly string[]): { manifest: Manifest; stems: Map<string, string> } {
  const result = compileFiles(files, { targets: ["cuda"], baseDir: repoRoot });
  expect(result.ok, JSON.stringify(result.diagnostics.map((d) => d.message))).toBe(true);
  const stems = new Map<string, string>();
  const names = new Map(
    result.files.map((file) => {
      const stem = path.basename(file.displayPath, ".ts");
      stems.set(file.displayPath, stem);
      return [file, { cu: `${stem}.cu`, cuh: `${stem}.cuh`, cubin: { file: `${stem}.sm_90.cubin`, arch: "sm_90" }, ptx: { file: `${stem}.sm_90.ptx`, arch: "sm_90" } }] as const;
    }),
  );
  return { manifest: buildManifest(result.files, names, "tskernel test"), stems };
}

const caseDir = path.join(repoRoot, "codegen-tests", "torch-ops");
const appKernels = path.join(repoRoot, "examples", "torch-app", "kernels.ts");

describe("the generated PyTorch module", () => {
  it("of codegen-tests/torch-ops equals expected.py", () => {
    // The case's kernel file is kernel.ts; its module is named after the case, as a build of a file named so would be.
    const { manifest } = manifestOf([path.join(caseDir, "kernel.ts")]);
    const [module, runtime] = torchModules(manifest, new Map([["codegen-tests/torch-ops/kernel.ts", "torch-ops"]]));
    expect(module!.file).toBe("torch_ops.py");
    expect(runtime!.file).toBe("tskernel_torch.py");
    const golden = checkGolden(path.join(caseDir, "expected.py"), module!.text);
    if (!golden.ok) expect(module!.text, "codegen-tests/torch-ops/expected.py differs (UPDATE_GOLDENS=1 regenerates)").toBe(golden.expected);
  });

  it("makes one operator of a kernel built for several element types, and reports the kernels whose builds it cannot choose by dtype", () => {
    // The dispatching operator's behaviour (by dtype, the outputs' types, the error, the backward) is tested in
    // Python on codegen-tests/torch-ops's `shift`; here, what the generator refuses: builds that take the same
    // input types (no input tensor tells them apart: TSK4016), and a backward kernel without a build of the
    // forward's types (TSK4017). Each is left out of the module, which keeps the other operators.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-torch-dtype-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(
      file,
      `import { blockDim, blockIdx, cast, f32, kernel, threadIdx, type BufferOf, type i32, type ReadonlyBufferOf } from "tskernel";
export const fill = kernel(
  { block: [64], specializations: [{ T: "f32" }, { T: "bf16" }], tensors: { out: "output [n]" }, grid: ["cdiv(n, 64)"] },
  <T extends "f32" | "bf16">(out: BufferOf<T>, n: i32, value: f32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cast<T>(value);
  },
);
export const twice = kernel(
  { block: [64], specializations: [{ T: "f32" }, { T: "bf16" }], tensors: { out: "output [n]", input: "[n]" }, grid: ["cdiv(n, 64)"], backward: "twiceBackward" },
  <T extends "f32" | "bf16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cast<T>(2 * f32(input[i]));
  },
);
export const twiceBackward = kernel(
  { block: [64], specializations: [{ T: "f32" }], tensors: { gradInput: "output [n]", gradOut: "[n]" }, grid: ["cdiv(n, 64)"] },
  <T extends "f32" | "bf16">(gradInput: BufferOf<T>, gradOut: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) gradInput[i] = cast<T>(2 * f32(gradOut[i]));
  },
);
export const half = kernel(
  { block: [64], specializations: [{ T: "bf16" }, { T: "f32" }], tensors: { out: "output [n]", input: "[n]" }, grid: ["cdiv(n, 64)"] },
  <T extends "f32" | "bf16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = cast<T>(0.5 * f32(input[i]));
  },
);
`,
    );
    const result = compileFiles([file], { targets: ["cuda"], baseDir: dir });
    expect(result.ok, JSON.stringify(result.diagnostics.map((d) => d.message))).toBe(true);
    const names = new Map(result.files.map((f) => [f, { cu: "kernel.cu", cuh: "kernel.cuh", ptx: { file: "kernel.sm_90.ptx", arch: "sm_90" } }] as const));
    const manifest = buildManifest(result.files, names, "tskernel test");
    const diagnostics: Diagnostic[] = [];
    const [module] = torchModules(manifest, new Map([["kernel.ts", "kernel"]]), diagnostics);
    expect(diagnostics.map((d) => [d.code, d.severity, d.message])).toEqual([
      [
        "TSK4016",
        "error",
        "the PyTorch operator of 'fill' cannot choose its builds by dtype: fill_T_f32 and fill_T_bf16 take the same input tensor types (no input tensors) and differ only in the type of 'out', so the dtypes of a call cannot choose between them",
      ],
      [
        "TSK4017",
        "error",
        "the PyTorch operator of 'twice' has a build for input: bf16, and its backward kernel 'twiceBackward' has none for the same types (gradOut: bf16): add that specialization to 'twiceBackward'",
      ],
    ]);
    expect(module!.text).toContain('__all__ = ["twice_backward", "half"]');
    // half's builds, in the order of its specializations, under one operator.
    expect(module!.text).toMatch(/_kernel_half = _rt\.Dispatch\([\s\S]*"half_T_bf16"[\s\S]*"half_T_f32"/);
    // The build fails with the diagnostics rather than write a module whose builds would go unused.
    const out = path.join(dir, "build");
    const errors: string[] = [];
    const io = { stdout: () => {}, stderr: (text: string) => void errors.push(text) };
    expect(writeBuild(result, out, io, ["cuda"], { torch: true })).toBe(1);
    expect(fs.existsSync(path.join(out, "kernel.py"))).toBe(false);
    expect(errors.join("")).toMatch(/TSK4016[\s\S]*TSK4017[\s\S]*torch: no Python module was written/);
  });

  it("names modules after their files, uniquely, and skips files that declare no launch", () => {
    const { manifest, stems } = manifestOf([appKernels, path.join(repoRoot, "examples", "elementwise.ts"), path.join(caseDir, "kernel.ts")]);
    stems.set("codegen-tests/torch-ops/kernel.ts", "kernels");
    const modules = torchModules(manifest, stems);
    expect(modules.map((m) => m.file)).toEqual(["kernels.py", "kernels_2.py", "tskernel_torch.py"]);
    expect(modules[0]!.text).toMatch(/^# Generated by tskernel from examples\/torch-app\/kernels\.ts\./);
    expect(modules[1]!.text).toContain('@torch.library.custom_op("tskernel_kernels_2::scale", mutates_args=())');
  });

  it("writes the runtime alone for a build of the kernels it launches itself (matmul's 16-bit rungs, attention), and nothing for others", () => {
    const tiled = manifestOf([path.join(repoRoot, "examples", "hgemm-tiled.ts")]);
    expect(torchModules(tiled.manifest, tiled.stems).map((m) => m.file)).toEqual(["tskernel_torch.py"]);
    const plain = manifestOf([path.join(repoRoot, "examples", "elementwise.ts")]);
    expect(torchModules(plain.manifest, plain.stems)).toEqual([]);
    // The list names the kernels the runtime looks up in the manifest, and only those.
    const runtime = fs.readFileSync(path.join(repoRoot, "runtime", "torch", "tskernel_torch.py"), "utf8");
    const looked = new Set([...runtime.matchAll(/"((?:hgemm|flashAttention)[A-Za-z0-9]*)"/g)].map((m) => m[1]!));
    expect([...looked].sort()).toEqual([...torchPrebuiltKernels].sort());
  });

  it.skipIf(!python)("compiles with python3, and passes the Python tests against stand-ins for PyTorch and the driver", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-torch-"));
    const { manifest, stems } = manifestOf([appKernels]);
    const files = torchModules(manifest, stems).map((m) => {
      fs.writeFileSync(path.join(dir, m.file), m.text);
      return path.join(dir, m.file);
    });
    // The manifest of the kernels the runtime launches itself (matmul's 16-bit rungs, attention), which its
    // tests read instead of their own copy of the entries.
    const prebuiltManifest = path.join(dir, "prebuilt", "manifest.json");
    fs.mkdirSync(path.dirname(prebuiltManifest));
    const prebuiltFiles = ["hgemm-wgmma-ws.ts", "hgemm-wgmma-small.ts", "hgemm-mma-guarded.ts", "hgemm-tiled.ts", "flash-attention-fold.ts", "flash-attention-backward.ts"].map((f) => path.join(repoRoot, "examples", f));
    fs.writeFileSync(prebuiltManifest, JSON.stringify(manifestOf(prebuiltFiles).manifest));
    // Python's byte code goes to the temporary folder, not beside the sources in the repository.
    const env = { ...process.env, PYTHONPYCACHEPREFIX: path.join(dir, "pycache") };
    const compiled = spawnSync("python3", ["-m", "py_compile", ...files, path.join(caseDir, "expected.py"), path.join(repoRoot, "runtime", "torch", "tskernel_torch.py"), path.join(repoRoot, "runtime", "torch", "test_operators_real_torch.py")], { encoding: "utf8", env });
    expect(compiled.status, compiled.stderr).toBe(0);
    const run = spawnSync("python3", ["-m", "unittest", "-v", "runtime/torch/test_tskernel_torch.py"], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...env, TSKERNEL_TORCH_MODULES: path.join(dir, "kernels.py"), TSKERNEL_TORCH_PREBUILT: prebuiltManifest },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/\nOK\n/);
    // Nothing skipped: the examples' module was found and tested too.
    expect(run.stderr).not.toMatch(/skipped/);
    expect(run.stderr).toMatch(/test_layer_norm_gradients \(.*TorchAppModule/);
    expect(run.stderr).toMatch(/test_attention_gradients_through_the_backward_kernels \(.*PrebuiltOps/);
    // And against the tests' own copy of the prebuilt entries (what a run without a build reads), so that the copy
    // cannot drift from the kernel files unnoticed: it had, by one attention build, until 2026-11-27.
    const fixture = spawnSync("python3", ["-m", "unittest", "runtime/torch/test_tskernel_torch.py"], { cwd: repoRoot, encoding: "utf8", env });
    expect(fixture.status, fixture.stderr).toBe(0);
  });
});

describe("formulas", () => {
  it("parse with C's precedence and fold with its truncating division", () => {
    const parsed = (text: string) => {
      const result = parseFormula(text);
      if ("error" in result) throw new Error(result.error);
      return result.formula;
    };
    expect(parsed("cdiv(rows, ROWS) * 2 + -n % 4")).toEqual(["+", ["*", ["cdiv", "rows", "ROWS"], 2], ["%", ["neg", "n"], 4]]);
    expect(parsed("a - b - c")).toEqual(["-", ["-", "a", "b"], "c"]);
    expect(parsed("cols <= 4 * THREADS")).toEqual(["<=", "cols", ["*", 4, "THREADS"]]);
    expect(parsed("G == 1 || M % 4 == 0 && !F")).toEqual(["||", ["==", "G", 1], ["&&", ["==", ["%", "M", 4], 0], ["!", "F"]]]);
    for (const [text, error] of [
      ["cdiv(n)", "cdiv takes 2 arguments, found 1"],
      ["n +", "it ends too early"],
      ["(n", "a parenthesis is not closed"],
      ["n < 2 < 3", "'<' is not expected there"],
      ["sqrt(n)", "'sqrt' is not a function (the functions are cdiv, min and max)"],
      ["n ? 1 : 2", "'?' is not expected there"],
    ] as const) {
      expect(parseFormula(text), text).toEqual({ error });
    }
    const value = (f: ManifestFormula, env: Record<string, number>) => foldFormula(f, env);
    expect(value(parsed("-7 / 2"), {})).toBe(-3);
    expect(value(parsed("-7 % 2"), {})).toBe(-1);
    expect(value(parsed("cdiv(n, 256)"), { n: 257 })).toBe(2);
    expect(value(parsed("min(n, 4) + max(n, 4)"), { n: 9 })).toBe(13);
    expect(value(parsed("cdiv(rows, ROWS)"), { ROWS: 1 })).toBe("rows");
    expect(applyFormulaOp("/", [1, 0])).toBeUndefined();
    expect(value(parsed("G == 1 || M % 4 == 0 && !F"), { G: 0, M: 8, F: 0 })).toBe(1);
    expect(value(parsed("G == 1 || M % 4 == 0 && !F"), { G: 0, M: 8, F: 1 })).toBe(0);
    expect(pythonFormula(parsed("G == 1 || M % BM == 0 && !F"), { BM: 64 })).toBe('s["G"] == 1 or _rt.mod(s["M"], 64) == 0 and (not s["F"])');
    expect(pythonFormula(parsed("G == 1 || M % BM == 0"), { G: 1, BM: 64 })).toBe("1");
    expect(pythonFormula(parsed("G == 1 || M % BM == 0"), { G: 0, BM: 64 })).toBe('_rt.mod(s["M"], 64) == 0');
    expect(pythonFormula(parsed("F && M"), { F: true })).toBe('s["M"] != 0');
    expect(cFormula(parsed("(a + b) * c - (d - e) < cdiv(n, 4)"), {})).toBe("(a + b) * c - (d - e) < ((n) + (4) - 1) / (4)");
  });
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe("tskernel build --target torch", () => {
  it("needs --cubin or --ptx (TSK4013), and --ptx needs the cuda target (TSK4014)", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-torch-"));
    const bare = await cli("build", appKernels, "--target", "torch", "--out", out);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toBe("error[TSK4013]: --target torch needs --cubin or --ptx: the Python module loads the kernels from one of them\n\n1 error, 0 warnings\n");
    const ptx = await cli("build", appKernels, "--target", "wgsl", "--ptx", "--out", out);
    expect(ptx.stderr).toBe("error[TSK4014]: --ptx needs --target cuda\n\n1 error, 0 warnings\n");
    expect(fs.readdirSync(out)).toEqual([]);
  });

  it.skipIf(!nvccAvailable())(`writes the module, its runtime and the PTX, and the .cuh grid functions agree with the formulas${nvccAvailable() ? "" : " (skipped: no nvcc)"}`, async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-torch-"));
    const result = await cli("build", appKernels, "--target", "torch", "--ptx", "--out", out);
    expect(result.stderr).not.toMatch(/error/);
    expect(result.code).toBe(0);
    expect(fs.readdirSync(out).sort()).toEqual(["kernels.cu", "kernels.cuh", "kernels.py", "kernels.sm_90.ptx", "manifest.json", "tskernel_torch.py"]);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, "manifest.json"), "utf8")) as Manifest;
    const layerNorm = manifest.kernels.find((k) => k.name === "layerNorm")!;
    expect(layerNorm.outputs.cuda!.ptx).toEqual({ file: "kernels.sm_90.ptx", arch: "sm_90" });
    expect(layerNorm.signature!.grid).toEqual(["rows", 1, 1]);
    expect(fs.readFileSync(path.join(out, "kernels.sm_90.ptx"), "utf8")).toMatch(/\.target sm_90\b[\s\S]*\.entry layerNormBackward_THREADS_256_ITEMS_4_ROWS_PER_BLOCK_16/);
    expect(fs.readFileSync(path.join(out, "tskernel_torch.py"), "utf8")).toBe(fs.readFileSync(path.join(repoRoot, "runtime", "torch", "tskernel_torch.py"), "utf8"));

    // A host program evaluates the .cuh grid and requirement functions for a few sizes; each must equal the
    // manifest's formula evaluated here.
    const sizes = [1, 5, 255, 256, 257, 4096, 100000];
    const program = [
      `#include "${path.join(out, "kernels.cuh")}"`,
      "#include <cstdio>",
      "int main() {",
      `  int sizes[] = {${sizes.join(", ")}};`,
      `  for (int s : sizes) {`,
      `    dim3 g = grid_geluBackward_T_f32(s); dim3 b = grid_layerNormBackward_THREADS_64_ITEMS_1_ROWS_PER_BLOCK_16(s);`,
      `    printf("%u %u %d %d\\n", g.x, b.x, (int)accepts_layerNorm_THREADS_64_ITEMS_1(s), (int)accepts_layerNorm_THREADS_256_ITEMS_4(s));`,
      "  }",
      "}",
    ].join("\n");
    fs.writeFileSync(path.join(out, "grids.cu"), program);
    const built = spawnSync(process.env.NVCC ?? "nvcc", ["-o", path.join(out, "grids"), path.join(out, "grids.cu"), path.join(out, "kernels.cu")], { encoding: "utf8", timeout: 300_000 });
    expect(built.status, built.stderr).toBe(0);
    const printed = spawnSync(path.join(out, "grids"), { encoding: "utf8" }).stdout.trim().split("\n");
    const evaluate = (kernel: string, formula: ManifestFormula, s: number) => {
      const spec = manifest.kernels.find((k) => k.entryName === kernel)!;
      return foldFormula(formula, { ...spec.specialization, n: s, rows: s, cols: s });
    };
    const expected = sizes.map((s) => {
      const gelu = evaluate("geluBackward_T_f32", manifest.kernels.find((k) => k.name === "geluBackward")!.signature!.grid[0], s);
      const back = evaluate("layerNormBackward_THREADS_64_ITEMS_1_ROWS_PER_BLOCK_16", manifest.kernels.find((k) => k.name === "layerNormBackward")!.signature!.grid[0], s);
      const accepts = (entry: string) => (layerNorm.signature!.requires.every((r) => evaluate(entry, r.formula, s) !== 0) ? 1 : 0);
      return `${gelu} ${back} ${accepts("layerNorm_THREADS_64_ITEMS_1")} ${accepts("layerNorm_THREADS_256_ITEMS_4")}`;
    });
    expect(printed).toEqual(expected);
    // Independently of the formulas: the counts of blocks a launch needs, and the rows each specialization holds.
    expect(printed.map((line) => line.split(" ").map(Number))).toEqual(sizes.map((s) => [Math.ceil(s / 256), Math.ceil(s / 16), s % 4 === 0 && s <= 256 ? 1 : 0, s % 4 === 0 && s <= 4096 ? 1 : 0]));
  });
});
