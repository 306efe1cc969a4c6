/**
 * Discovery and compilation of the golden cases, shared by the golden tests and the tools that feed the
 * outputs to nvcc and Dawn. A case is a folder under codegen-tests/ with a `kernel.ts` (codegen cases) or
 * a folder under codegen-tests/examples/ named after an example (its input is examples/<name>.ts). Error
 * cases live under codegen-tests/errors/<case>/kernel.ts with the rendered diagnostics in expected.txt.
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compileFiles, createProject, renderDiagnostics, targetNames, type CompileResult, type TargetName } from "../compiler/index.ts";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const casesRoot = path.join(repoRoot, "codegen-tests");
export const updateGoldens = process.env.UPDATE_GOLDENS === "1";

/**
 * A case is compiled for every target. Kernels that use what a target lacks (WebGPU has no matrix operations
 * and no device-scope fence) declare the targets they are for, so a case whose kernels all skip a target
 * has no expected file for it: the compiler decides which, from the kernels' `targets` option.
 */
export interface CodegenCase {
  readonly name: string;
  readonly dir: string;
  readonly input: string;
}

export function codegenCases(): CodegenCase[] {
  const cases: CodegenCase[] = [];
  for (const entry of fs.readdirSync(casesRoot, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "errors" || entry.name === "examples") continue;
    const dir = path.join(casesRoot, entry.name);
    if (fs.existsSync(path.join(dir, "kernel.ts"))) cases.push({ name: entry.name, dir, input: path.join(dir, "kernel.ts") });
  }
  for (const file of fs.readdirSync(path.join(repoRoot, "examples"))) {
    if (!file.endsWith(".ts")) continue;
    const name = file.replace(/\.ts$/, "");
    cases.push({ name: `examples/${name}`, dir: path.join(casesRoot, "examples", name), input: path.join(repoRoot, "examples", file) });
  }
  // The kernel files of the example web apps (examples/<app>/src/*.kernel.ts), which the bundler plugin builds.
  for (const app of fs.readdirSync(path.join(repoRoot, "examples"), { withFileTypes: true })) {
    const src = path.join(repoRoot, "examples", app.name, "src");
    if (!app.isDirectory() || !fs.existsSync(src)) continue;
    for (const file of fs.readdirSync(src)) {
      if (!file.endsWith(".kernel.ts")) continue;
      const name = `examples/${app.name}/${file.replace(/\.kernel\.ts$/, "")}`;
      cases.push({ name, dir: path.join(casesRoot, name), input: path.join(src, file) });
    }
  }
  return cases.sort((a, b) => a.name.localeCompare(b.name));
}

export function errorCases(): CodegenCase[] {
  const root = path.join(casesRoot, "errors");
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, entry.name, "kernel.ts")))
    .map((entry) => ({ name: entry.name, dir: path.join(root, entry.name), input: path.join(root, entry.name, "kernel.ts") }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

let sharedProject: ReturnType<typeof createProject> | undefined;

/**
 * Compiles one case for its targets (default: all three) with paths relative to the repository root. A case
 * folder's `compile-options.json` sets options of the compilation: `{ "checked": true }` makes a checked build.
 */
export function compileCase(input: string, targets: readonly TargetName[] = targetNames): CompileResult {
  sharedProject ??= createProject();
  const optionsFile = path.join(path.dirname(input), "compile-options.json");
  const options = fs.existsSync(optionsFile) ? (JSON.parse(fs.readFileSync(optionsFile, "utf8")) as { checked?: boolean }) : {};
  const result = compileFiles([input], { targets, baseDir: repoRoot, project: sharedProject, ...(options.checked ? { checked: true } : {}) });
  // Each case is compiled on its own: drop it from the shared project so the next case does not see it.
  sharedProject.getSourceFile(input)?.forget();
  return result;
}

export function renderForGolden(result: CompileResult): string {
  return `${renderDiagnostics(result.diagnostics, {
    baseDir: repoRoot,
    readFile: (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined),
  })}\n`;
}

/** Compares `actual` with the golden file, or rewrites the golden when UPDATE_GOLDENS=1. */
export function checkGolden(file: string, actual: string): { ok: true } | { ok: false; expected: string | undefined } {
  if (updateGoldens) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, actual);
    return { ok: true };
  }
  const expected = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
  return expected === actual ? { ok: true } : { ok: false, expected };
}
