/**
 * The compiler's side of the editor plugin: the diagnostics of one kernel file's text, as the compiler
 * reports them. One compiler project is kept warm, and a file is compiled again only when its version changes
 * (the editor's text, unsaved edits included); no code is generated and TypeScript's own errors (which the
 * editor shows already) are left out. It runs in the plugin's worker thread (editor-worker.ts), or in
 * tsserver's own thread where a worker cannot start.
 */

import path from "node:path";
import { performance } from "node:perf_hooks";
import { compileFiles, createProject, makeDiagnostic, targetNames, type Diagnostic, type TargetName } from "../compiler/index.ts";

/** The plugin's entry in tsconfig.json: `{ "name": "tskernel/ts-plugin", "targets": ["cuda", "wgsl"], "defines": { "TILE": 32 } }`. */
export interface EditorPluginConfig {
  /** The targets whose limits are checked, as `tskernel check --target` (default cuda and wgsl). */
  readonly targets?: readonly string[];
  /** Values of compile-time constants, as `tskernel check --define NAME=VALUE`. */
  readonly defines?: Readonly<Record<string, string | number | boolean>>;
  /**
   * Compile in a worker thread, while tsserver type-checks the same file (default true); false compiles in
   * tsserver's thread after its check, which takes longer but no second JavaScript heap.
   */
  readonly worker?: boolean;
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
