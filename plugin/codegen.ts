/**
 * What the bundler plugin does to one kernel file, with no bundler in sight: compile it to WGSL through the
 * compiler's public entry, then print the ES module that replaces it in the bundle (the WGSL, each kernel's
 * manifest description, and a `compiledKernel` call per kernel from `tskernel/webgpu`, the only import), or
 * turn its diagnostics into bundler errors located at the user's TypeScript. It also names the files the
 * kernel's helpers come from, for the bundler to watch.
 */

import fs from "node:fs";
import path from "node:path";
import { buildManifest, compileFiles, createProject, languageModulePath, makeDiagnostic, renderDiagnostic, type Diagnostic, type FileOutput } from "../compiler/index.ts";

/** The module the generated code imports its runtime from: the browser entry of the package. */
export const runtimeModule = "tskernel/webgpu";

export interface KernelModuleOptions {
  /** Paths in diagnostics and in each kernel's `source` are relative to this directory (the app's root). */
  readonly root: string;
  /** Values of compile-time constants, as `tskernel build --define NAME=VALUE`. */
  readonly defines?: ReadonlyMap<string, string>;
  /** A compiler project kept across builds of the same app (recompiles after an edit are warm). */
  readonly project?: ReturnType<typeof createProject>;
}

/** A diagnostic as bundlers take it: Rollup's and Vite's `this.error` / `this.warn`, esbuild's messages. */
export interface BundlerMessage {
  readonly code: string;
  /** The header line, e.g. `error[TSK1008]: …`, then the notes (and the rest of the errors, if several). */
  readonly message: string;
  /** Everything the CLI would print for the first diagnostic: header, `--> file:line:column`, code frame, notes. */
  readonly rendered: string;
  /** The code frame of the first diagnostic alone (the lines under the `-->` line). */
  readonly frame?: string;
  /** 1-based line and column, as the diagnostics print them. */
  readonly loc?: { readonly file: string; readonly line: number; readonly column: number };
}

export type KernelModule =
  | { readonly ok: true; readonly code: string; readonly watchFiles: readonly string[]; readonly warnings: readonly BundlerMessage[] }
  | { readonly ok: false; readonly errors: readonly BundlerMessage[]; readonly warnings: readonly BundlerMessage[]; readonly watchFiles: readonly string[] };

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** The 1-based line and column (UTF-16 code units, as the diagnostics count them) of an offset in a file. */
function lineColumn(file: string, offset: number): { file: string; line: number; column: number } | undefined {
  const text = readText(file);
  if (text === undefined) return undefined;
  const before = text.slice(0, offset);
  return { file, line: before.split("\n").length, column: offset - before.lastIndexOf("\n") };
}

/** A compiler diagnostic as a bundler message, located at the user's TypeScript. */
export function bundlerMessage(diagnostic: Diagnostic, root: string, others: readonly Diagnostic[] = []): BundlerMessage {
  const render = (d: Diagnostic) => renderDiagnostic(d, { baseDir: root, readFile: readText });
  const rendered = render(diagnostic);
  const lines = rendered.split("\n");
  const header = lines[0]!;
  const notes = lines.filter((line) => /^\s*= note: /.test(line)).map((line) => line.trim());
  const frameLines = lines.slice(1).filter((line) => !/^\s*= note: /.test(line) && !/^\s*-->/.test(line));
  const more = others.length > 0 ? [`and ${others.length} more:`, ...others.map(render)].join("\n\n") : "";
  const message = [header, ...notes, more].filter(Boolean).join("\n");
  const loc = diagnostic.span ? lineColumn(diagnostic.span.file, diagnostic.span.start) : undefined;
  return { code: diagnostic.code, message, rendered: [rendered, more].filter(Boolean).join("\n\n"), frame: frameLines.length > 0 ? frameLines.join("\n") : undefined, loc };
}

/**
 * The user's TypeScript files a kernel file imports (its helpers and constants), transitively: a change to
 * any of them changes the kernel's code. The language's declarations and libraries are not among them.
 */
function importedFiles(project: ReturnType<typeof createProject>, file: string): string[] {
  const seen = new Set<string>();
  const language = path.resolve(languageModulePath());
  const visit = (sourceFile: ReturnType<typeof project.getSourceFile>) => {
    if (!sourceFile) return;
    for (const declaration of [...sourceFile.getImportDeclarations(), ...sourceFile.getExportDeclarations()]) {
      const target = declaration.getModuleSpecifierSourceFile();
      if (!target || target.isDeclarationFile() || target.isFromExternalLibrary() || target.isInNodeModules()) continue;
      const name = path.resolve(target.getFilePath());
      if (seen.has(name) || name === path.resolve(file) || name === language) continue;
      seen.add(name);
      visit(target);
    }
  };
  visit(project.getSourceFile(path.resolve(file)));
  return [...seen];
}

/** Compiles one kernel file to WGSL and prints the module that stands for it in the bundle. */
export function kernelModule(file: string, options: KernelModuleOptions): KernelModule {
  const project = options.project ?? createProject();
  // The project caches the files a kernel imported last time: read the current text of each before compiling
  // again (compileFiles reads the kernel file itself).
  if (project.getSourceFile(path.resolve(file))) {
    for (const imported of importedFiles(project, file)) project.getSourceFile(imported)?.refreshFromFileSystemSync();
  }
  const result = compileFiles([file], { targets: ["wgsl"], baseDir: options.root, defines: options.defines, project });
  const watchFiles = importedFiles(project, file);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  const warnings = result.diagnostics.filter((d) => d.severity !== "error").map((d) => bundlerMessage(d, options.root));
  if (errors.length > 0) return { ok: false, errors: [bundlerMessage(errors[0]!, options.root, errors.slice(1))], warnings, watchFiles };
  const output = result.files[0]!;
  warnings.push(...otherExports(project, output).map((d) => bundlerMessage(d, options.root)));
  return { ok: true, code: printModule(output), watchFiles, warnings };
}

/**
 * TSK4012 for each value a kernel file exports that is not a kernel: the built module leaves it out, so an
 * app that imports it would meet only the bundler's "not exported". Types are erased anyway and are fine.
 */
function otherExports(project: ReturnType<typeof createProject>, output: FileOutput): Diagnostic[] {
  const sourceFile = project.getSourceFile(output.sourceFile);
  if (!sourceFile) return [];
  const kernels = new Set(output.module.kernels.map((k) => k.name));
  const diagnostics: Diagnostic[] = [];
  for (const [name, declarations] of sourceFile.getExportedDeclarations()) {
    if (kernels.has(name)) continue;
    const value = declarations.find((d) => !["InterfaceDeclaration", "TypeAliasDeclaration"].includes(d.getKindName()));
    if (!value) continue;
    const span = { file: output.sourceFile, start: value.getStart(), end: value.getEnd() };
    diagnostics.push(makeDiagnostic("TSK4012", value.getSourceFile() === sourceFile ? span : undefined, [name, output.displayPath], { notes: ["import it from a module that is not a kernel file"] }));
  }
  return diagnostics;
}

/** The ES module for a compiled kernel file: one export per kernel, named as in the source. */
function printModule(output: FileOutput): string {
  const wgslName = `${path.basename(output.displayPath).replace(/\.[cm]?ts$/, "")}.wgsl`;
  const manifest = buildManifest([output], new Map([[output, { wgsl: wgslName }]]), "tskernel bundler plugin");
  const byKernel = new Map<string, { description: unknown; entryPoint?: string }[]>();
  manifest.kernels.forEach((description) => {
    const list = byKernel.get(description.name) ?? [];
    // A kernel whose `targets` leave out wgsl has no entry point: it is still exported, and launching it
    // is the runtime's error naming its targets, not the bundler's "not exported".
    const entryPoint = description.outputs.wgsl?.entryPoint;
    list.push({ description, ...(entryPoint !== undefined ? { entryPoint } : {}) });
    byKernel.set(description.name, list);
  });
  const lines = [
    `// Built by the tskernel bundler plugin from ${output.displayPath}: its WGSL and each kernel's launch description, made at build time.`,
    `import { compiledKernel } from ${JSON.stringify(runtimeModule)};`,
    `const wgsl = ${JSON.stringify(output.wgsl?.source ?? "")};`,
    `const lineSources = ${JSON.stringify((output.wgsl?.lineSources ?? []).map((s) => s ?? null))};`,
  ];
  for (const [name, specializations] of byKernel) {
    lines.push(`export const ${name} = /* @__PURE__ */ compiledKernel(${JSON.stringify(specializations)}, wgsl, lineSources);`);
  }
  return `${lines.join("\n")}\n`;
}
