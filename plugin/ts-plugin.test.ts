/**
 * The editor plugin as an editor sees it: a project whose tsconfig.json names `tskernel/ts-plugin`, served by
 * a real `tsserver` process spoken to over its protocol (tests/tools/tsserver.ts). Kernel files are opened and
 * edited in memory (never saved), and their semantic diagnostics read back: tskernel's, with code, span,
 * notes and related spans, beside TypeScript's own, recompiling only the file edited (the server's log says
 * what was compiled), in the plugin's worker thread and in tsserver's; and the conversion of a diagnostic
 * placed in another file, on TypeScript's own source files. The package's tarball is tested the same way from
 * outside the repository in tests/package.test.ts. Needs dist/ (`npm run build`): the plugin loads the built
 * compiler.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../tests/golden-cases.ts";
import { TsServer, type ProtocolDiagnostic } from "../tests/tools/tsserver.ts";
import typescript from "typescript";
import { makeDiagnostic } from "../compiler/index.ts";
import { toTypeScriptDiagnostics } from "./editor-service.ts";
import { KernelFileDiagnostics } from "./kernel-diagnostics.ts";

const tsserverPath = path.join(repoRoot, "node_modules", "typescript", "lib", "tsserver.js");

const matmul = `import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulNaive = kernel({ block: [16, 16] }, (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, n: i32) => {
  const row = blockIdx.y * blockDim.y + threadIdx.y;
  const col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  let sum: f32 = 0;
  for (let k = 0; k < n; k++) {
    sum += A[row * n + k] * B[k * n + col] + k;
  }
  C[row * n + col] = sum;
});
`;

const divergent = `import { kernel, syncThreads, threadIdx, type i32 } from "tskernel";

export const reverse = kernel({ block: [64] }, (data: Float32Array, n: i32) => {
  const i = threadIdx.x;
  if (i >= n) return;
  syncThreads();
  data[i] = data[n - 1 - i];
});
`;

const wide = `import { blockIdx, blockDim, kernel, threadIdx } from "tskernel";

export const fill = kernel({ block: [512] }, (out: Float32Array) => {
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
});
`;

const notKernel = `export const count: number = "three";\n`;

/** The 1-based line and offset of the first occurrence of `needle` in `text`, as tsserver counts them. */
function where(text: string, needle: string, from = 0): { line: number; offset: number } {
  const index = text.indexOf(needle, from);
  if (index < 0) throw new Error(`'${needle}' is not in the text`);
  const before = text.slice(0, index);
  return { line: before.split("\n").length, offset: index - before.lastIndexOf("\n") };
}

/** Where the first occurrence of `needle` ends (on its line). */
function after(text: string, needle: string): { line: number; offset: number } {
  const { line, offset } = where(text, needle);
  return { line, offset: offset + needle.length };
}

const ours = (diagnostics: readonly ProtocolDiagnostic[]) => diagnostics.filter((d) => d.source === "tskernel");

describe("the editor plugin's compiler side", () => {
  it("compiles a file again only when its version changes, and says what is wrong with its configuration", () => {
    const kernels = new KernelFileDiagnostics({ targets: ["wgsl", "metal"] });
    expect(kernels.configProblems).toEqual(["unknown target 'metal'; targets are cuda, wgsl, js"]);
    expect(new KernelFileDiagnostics({ targets: "cuda" as unknown as string[], defines: [] as unknown as Record<string, string> }).configProblems).toEqual([
      '"targets" must be an array of target names (cuda, wgsl, js); checking cuda and wgsl',
      '"defines" must be an object of NAME: value; ignored',
    ]);
    const compiled: string[] = [];
    kernels.onCompiled = (file, version) => compiled.push(`${path.basename(file)}@${version}`);
    const file = path.join(os.tmpdir(), "tskernel-plugin-unsaved.ts");
    // Never written to disk: the text is the editor's.
    const first = kernels.diagnosticsOf(file, "1", matmul);
    expect(first.map((d) => d.code)).toEqual(["TSK2001"]);
    expect(kernels.diagnosticsOf(file, "1", matmul)).toBe(first);
    expect(kernels.diagnosticsOf(file, "2", matmul.replace(" + k;", ";"))).toEqual([]);
    // wgsl alone: the 512-thread block is over WebGPU's default limit, a warning.
    expect(kernels.diagnosticsOf(path.join(os.tmpdir(), "tskernel-plugin-wide.ts"), "1", wide).map((d) => `${d.severity} ${d.code}`)).toEqual(["warning TSK3007"]);
    expect(compiled).toEqual(["tskernel-plugin-unsaved.ts@1", "tskernel-plugin-unsaved.ts@2", "tskernel-plugin-wide.ts@1"]);
  });

  it("takes the defines of its configuration, as check --define does", () => {
    const sized = 'import { kernel, threadIdx, type Const } from "tskernel";\n\nexport const fill = kernel({ block: ["BLOCK"] }, (out: Float32Array, BLOCK: Const<i32> = 64) => {\n  out[threadIdx.x] = 1;\n});\n'.replace("type Const }", "type Const, type i32 }");
    const file = path.join(os.tmpdir(), "tskernel-plugin-sized.ts");
    expect(new KernelFileDiagnostics().diagnosticsOf(file, "1", sized)).toEqual([]);
    const defined = new KernelFileDiagnostics({ defines: { BLOCK: 512 } }).diagnosticsOf(file, "1", sized);
    expect(defined.map((d) => `${d.code} ${d.message}`)).toEqual(["TSK3007 kernel 'fill' has a block of 512 threads, more than WebGPU's default limit of 256; it runs only on adapters that allow more"]);
  });
});

describe("tskernel's diagnostics as TypeScript's", () => {
  it("keep span, code, label, notes and related places; one in another file goes to the start, pointing there", () => {
    const kernelFile = path.join(os.tmpdir(), "kernel.ts");
    const helperFile = path.join(os.tmpdir(), "helpers.ts");
    const kernelSource = typescript.createSourceFile(kernelFile, "0123456789\nabcdefghij\n", typescript.ScriptTarget.ES2022);
    const helperSource = typescript.createSourceFile(helperFile, "export function h() {}\n", typescript.ScriptTarget.ES2022);
    const here = makeDiagnostic("TSK3001", { file: kernelFile, start: 11, end: 14 }, ["syncThreads()"], { label: "the label", notes: ["first note"], related: [{ span: { file: helperFile, start: 7, end: 15 }, message: "over there" }] });
    const there = makeDiagnostic("TSK3011", { file: helperFile, start: 16, end: 17 }, [], {});
    const converted = toTypeScriptDiagnostics(typescript, [here, there], kernelSource, (file) => (file === helperFile ? helperSource : undefined));
    const flat = converted.map((d) => ({
      start: d.start,
      length: d.length,
      code: d.code,
      source: d.source,
      category: d.category,
      text: typescript.flattenDiagnosticMessageText(d.messageText, "\n"),
      related: d.relatedInformation!.map((r) => ({ file: r.file?.fileName, start: r.start, length: r.length, text: r.messageText })),
    }));
    expect(flat).toEqual([
      { start: 11, length: 3, code: 3001, source: "tskernel", category: typescript.DiagnosticCategory.Error, text: "TSK3001: syncThreads() is reached in non-uniform control flow\n  the label\n  note: first note", related: [{ file: helperFile, start: 7, length: 8, text: "over there" }] },
      { start: 0, length: 0, code: 3011, source: "tskernel", category: typescript.DiagnosticCategory.Error, text: "TSK3011: division by zero", related: [{ file: helperFile, start: 16, length: 1, text: "reported here" }] },
    ]);
  });
});

describe.each([
  ["in its worker thread", true],
  ["in tsserver's thread", false],
])("tskernel/ts-plugin in tsserver, compiling %s", (_where, worker) => {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-ts-plugin-"));
  const file = (name: string) => path.join(project, "src", name);
  const log = path.join(project, "tsserver.log");
  let server: TsServer;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(repoRoot, "dist", "plugin", "ts-plugin.cjs"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
    // The project as a user has it: tskernel in node_modules (here this checkout), the plugin in tsconfig.json.
    fs.mkdirSync(path.join(project, "node_modules"));
    fs.symlinkSync(repoRoot, path.join(project, "node_modules", "tskernel"), "dir");
    fs.writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "app", private: true, type: "module" })}\n`);
    const compilerOptions = { strict: true, target: "es2022", module: "nodenext", noEmit: true, plugins: [{ name: "tskernel/ts-plugin", worker }] };
    fs.writeFileSync(path.join(project, "tsconfig.json"), `${JSON.stringify({ compilerOptions, include: ["src"] }, null, 2)}\n`);
    fs.mkdirSync(path.join(project, "src"));
    // On disk the kernels are correct; the editor's buffers are what have the errors.
    for (const name of ["matmul.ts", "reverse.ts", "fill.ts", "count.ts"]) fs.writeFileSync(file(name), "export {};\n");
    // tsserver looks for tsconfig plugins beside its own node_modules, and in the probe locations.
    server = new TsServer(tsserverPath, ["--pluginProbeLocations", project, "--logVerbosity", "normal", "--logFile", log], project);
    server.open(file("matmul.ts"), matmul, project);
    // The plugin loads the compiler in the background, then asks for the open files to be checked again.
    await server.nextEvent("projectsUpdatedInBackground", 0);
    for (const [name, text] of [["reverse.ts", divergent], ["fill.ts", wide], ["count.ts", notKernel]] as const) server.open(file(name), text, project);
  }, 120_000);

  afterAll(async () => {
    await server.close();
  });

  it("shows a kernel's type error with its code, span and note", async () => {
    const diagnostics = ours(await server.semanticDiagnostics(file("matmul.ts")));
    expect(diagnostics).toEqual([
      {
        start: where(matmul, "A[row * n + k]"),
        end: after(matmul, "A[row * n + k] * B[k * n + col] + k"),
        text: "TSK2001: operator '+' needs operands of one type, found f32 and i32\n  note: tskernel never converts implicitly: write f32(…), i32(…) or u32(…)",
        code: 2001,
        category: "error",
        source: "tskernel",
        relatedInformation: [],
      },
    ]);
  });

  it("shows a divergent barrier with its label and the related place where threads return", async () => {
    const [barrier, ...others] = ours(await server.semanticDiagnostics(file("reverse.ts")));
    expect(others).toEqual([]);
    expect(barrier!.code).toBe(3001);
    expect(barrier!.start).toEqual(where(divergent, "syncThreads();"));
    expect(barrier!.text.split("\n")[0]).toBe("TSK3001: syncThreads() is reached in non-uniform control flow");
    expect(barrier!.text).toContain("\n  not every thread of the block may reach this barrier\n");
    expect(barrier!.relatedInformation).toEqual([
      {
        span: { start: where(divergent, "return;"), end: after(divergent, "return;"), file: file("reverse.ts") },
        message: "some threads may return here, so later barriers are not reached by all",
        category: "message",
        code: 0,
      },
    ]);
  });

  it("shows warnings as warnings, and leaves files that are not kernels to TypeScript", async () => {
    expect(ours(await server.semanticDiagnostics(file("fill.ts"))).map((d) => `${d.category} ${d.code}`)).toEqual(["warning 3007"]);
    const count = await server.semanticDiagnostics(file("count.ts"));
    expect(count.map((d) => `${d.source ?? "ts"} ${d.code}`)).toEqual(["ts 2322"]);
  });

  it("follows edits: an error fixed goes, a new one comes, and only the edited file is compiled again", async () => {
    const compiledBefore = compiledFiles(log);
    // Fix the error: delete " + k" (never saved).
    const plusK = where(matmul, " + k;");
    server.edit(file("matmul.ts"), plusK, { line: plusK.line, offset: plusK.offset + " + k".length }, "");
    expect(ours(await server.semanticDiagnostics(file("matmul.ts")))).toEqual([]);
    expect(ours(await server.semanticDiagnostics(file("reverse.ts"))).map((d) => d.code)).toEqual([3001]);
    // A new error on another line: shifting by 40 is out of range.
    const store = where(matmul, "C[row * n + col] = sum;");
    server.edit(file("matmul.ts"), store, store, "const shifted: i32 = n << 40;\n  ");
    const shifted = ours(await server.semanticDiagnostics(file("matmul.ts")));
    expect(shifted.map((d) => `${d.code} ${d.start.line}`)).toEqual([`3010 ${store.line}`]);
    expect(shifted[0]!.text.split("\n")[0]).toBe("TSK3010: shift by 40: the amount must be from 0 to 31");
    const compiled = compiledFiles(log).slice(compiledBefore.length);
    expect(compiled.map((f) => path.basename(f))).toEqual(["matmul.ts", "matmul.ts"]);
    // Where the compiles ran: the log says so for tsserver's thread.
    const logText = fs.readFileSync(log, "utf8");
    expect(logText.includes("in tsserver's thread")).toBe(!worker);
    expect(logText).not.toContain("no compile worker");
  });
});

/** The files the plugin compiled, in order, from tsserver's log. */
function compiledFiles(log: string): string[] {
  return [...fs.readFileSync(log, "utf8").matchAll(/tskernel: compiled (\S+) \(version/g)].map((m) => m[1]!);
}
