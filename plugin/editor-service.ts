/**
 * The editor plugin's work (ts-plugin.cts is its entry, which tsserver loads): tskernel's diagnostics of one
 * kernel file as TypeScript diagnostics, for tsserver to show beside its own in any editor. The file's text is
 * the editor's (unsaved edits included); one compiler project is kept warm for the life of the server, and
 * a file is compiled again only when tsserver's version of it changes, so an edit recompiles only the file
 * edited. Code generation and TypeScript's own errors (which the editor shows already) are left out.
 *
 * A diagnostic keeps its catalogue code (`code` 3001 with `source` "tskernel", and `TSK3001` leading the
 * text), its span, its label and notes (the text's further lines) and its related spans (related
 * information). A diagnostic whose span lies in another file (a helper's) is shown at the start of this one
 * with the real place as related information; one without a span (TSK4004 for a module that declares no
 * kernels, such as a helper that imports only the language's types) is not shown.
 */

import path from "node:path";
import { performance } from "node:perf_hooks";
import type ts from "typescript";
import { compileFiles, createProject, makeDiagnostic, targetNames, type Diagnostic, type TargetName } from "../compiler/index.ts";

/** The plugin's entry in tsconfig.json: `{ "name": "tskernel/ts-plugin", "targets": ["cuda", "wgsl"], "defines": { "TILE": 32 } }`. */
export interface EditorPluginConfig {
  /** The targets whose limits are checked, as `tskernel check --target` (default cuda and wgsl). */
  readonly targets?: readonly string[];
  /** Values of compile-time constants, as `tskernel check --define NAME=VALUE`. */
  readonly defines?: Readonly<Record<string, string | number | boolean>>;
}

/** An import of the kernel language: the mark of a kernel file (as for `tskernel check` on a directory). */
const importsTskernel = /\bfrom\s*["']tskernel["']|\bimport\s*\(\s*["']tskernel["']\s*\)/;

export function isKernelText(text: string): boolean {
  return importsTskernel.test(text);
}

/** The diagnostics of kernel files as the compiler reports them, each file compiled once per version. */
export class KernelFileDiagnostics {
  private readonly targets: TargetName[];
  private readonly defines: Map<string, string>;
  /** What is wrong with the configuration, for the server's log. */
  readonly configProblems: string[] = [];
  private project: ReturnType<typeof createProject> | undefined;
  private readonly cache = new Map<string, { readonly version: string; readonly diagnostics: readonly Diagnostic[] }>();
  /** Called after each compilation, with the file and how long it took (the plugin writes it to the server's log). */
  onCompiled?: (file: string, version: string, ms: number) => void;

  constructor(config: EditorPluginConfig = {}) {
    // tsconfig.json is the user's: anything may be there.
    const targets: unknown = config.targets;
    const requested = Array.isArray(targets) ? targets.map(String) : ["cuda", "wgsl"];
    if (targets !== undefined && !Array.isArray(targets)) this.configProblems.push(`"targets" must be an array of target names (${targetNames.join(", ")}); checking cuda and wgsl`);
    this.targets = requested.filter((name): name is TargetName => (targetNames as readonly string[]).includes(name));
    for (const name of requested) {
      if (!this.targets.includes(name as TargetName)) this.configProblems.push(makeDiagnostic("TSK4002", undefined, [name, targetNames.join(", ")]).message);
    }
    if (this.targets.length === 0) this.targets = ["cuda", "wgsl"];
    const defines: unknown = config.defines;
    const usable = typeof defines === "object" && defines !== null && !Array.isArray(defines);
    if (defines !== undefined && !usable) this.configProblems.push(`"defines" must be an object of NAME: value; ignored`);
    this.defines = new Map(Object.entries(usable ? (defines as Record<string, unknown>) : {}).map(([name, value]) => [name, String(value)]));
  }

  /** The diagnostics of `file` (an absolute path) with this text; `version` changes whenever the text does. */
  diagnosticsOf(file: string, version: string, text: string): readonly Diagnostic[] {
    const cached = this.cache.get(file);
    if (cached?.version === version) return cached.diagnostics;
    this.project ??= createProject();
    const absolute = path.resolve(file);
    const start = performance.now();
    const result = compileFiles([absolute], {
      targets: this.targets,
      defines: this.defines,
      project: this.project,
      readFile: (name) => (name === absolute ? text : undefined),
      emit: false,
      typeScriptDiagnostics: false,
    });
    // --define names that no kernel of this one file has are not mistakes here (other files may have them).
    const diagnostics = result.diagnostics.filter((d) => d.code !== "TSK4005" && d.span !== undefined);
    this.cache.set(file, { version, diagnostics });
    this.onCompiled?.(file, version, performance.now() - start);
    return diagnostics;
  }
}

/** The numeric part of a catalogue code, which TypeScript's diagnostics carry as `code`. */
function codeNumber(code: string): number {
  return Number(code.replace(/^TSK/, ""));
}

/**
 * Our diagnostics as TypeScript's, on `sourceFile` (tsserver's own SourceFile of the file, whose text the
 * offsets index); `sourceFileOf` finds other files for related spans.
 */
export function toTypeScriptDiagnostics(
  typescript: typeof ts,
  diagnostics: readonly Diagnostic[],
  sourceFile: ts.SourceFile,
  sourceFileOf: (file: string) => ts.SourceFile | undefined,
): ts.Diagnostic[] {
  const here = path.resolve(sourceFile.fileName);
  return diagnostics.map((d) => {
    const span = d.span!;
    const inThisFile = path.resolve(span.file) === here;
    const lines = [d.label, ...d.notes.map((note) => `note: ${note}`)].filter((line): line is string => Boolean(line));
    const related: ts.DiagnosticRelatedInformation[] = [];
    if (!inThisFile) related.push(relatedInformation(typescript, span, d.label ?? "reported here", sourceFileOf));
    for (const r of d.related) related.push(relatedInformation(typescript, r.span, r.message, sourceFileOf));
    return {
      file: sourceFile,
      start: inThisFile ? span.start : 0,
      length: inThisFile ? Math.max(0, span.end - span.start) : 0,
      messageText: { messageText: `${d.code}: ${d.message}`, category: category(typescript, d), code: codeNumber(d.code), next: lines.map((line) => ({ messageText: line, category: typescript.DiagnosticCategory.Message, code: codeNumber(d.code) })) },
      category: category(typescript, d),
      code: codeNumber(d.code),
      source: "tskernel",
      relatedInformation: related,
    };
  });
}

function category(typescript: typeof ts, d: Diagnostic): ts.DiagnosticCategory {
  return d.severity === "error" ? typescript.DiagnosticCategory.Error : typescript.DiagnosticCategory.Warning;
}

function relatedInformation(typescript: typeof ts, span: NonNullable<Diagnostic["span"]>, message: string, sourceFileOf: (file: string) => ts.SourceFile | undefined): ts.DiagnosticRelatedInformation {
  const file = sourceFileOf(span.file);
  return { file, start: file ? span.start : undefined, length: file ? Math.max(0, span.end - span.start) : undefined, messageText: message, category: typescript.DiagnosticCategory.Message, code: 0 };
}

/**
 * The plugin's service for one tsserver project: the extra semantic diagnostics of a file, and what to log.
 * `info` is what tsserver gives a plugin's `create`.
 */
export function createEditorService(typescript: typeof ts, info: ts.server.PluginCreateInfo): { diagnostics(fileName: string): ts.Diagnostic[]; readonly kernels: KernelFileDiagnostics } {
  const kernels = new KernelFileDiagnostics(info.config as EditorPluginConfig);
  const log = (message: string) => info.project.projectService.logger.info(`tskernel: ${message}`);
  for (const problem of kernels.configProblems) log(`plugin configuration: ${problem}`);
  kernels.onCompiled = (file, version, ms) => log(`compiled ${file} (version ${version}) in ${ms.toFixed(1)} ms`);
  return {
    kernels,
    diagnostics(fileName: string): ts.Diagnostic[] {
      const program = info.languageService.getProgram();
      const sourceFile = program?.getSourceFile(fileName);
      if (!sourceFile || sourceFile.isDeclarationFile || !isKernelText(sourceFile.text)) return [];
      try {
        const version = info.languageServiceHost.getScriptVersion(fileName);
        const found = kernels.diagnosticsOf(fileName, version, sourceFile.text);
        return toTypeScriptDiagnostics(typescript, found, sourceFile, (file) => program?.getSourceFile(file));
      } catch (error) {
        // A compiler crash must not take the editor's other diagnostics with it.
        log(`internal compiler error on ${fileName}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        return [];
      }
    },
  };
}
