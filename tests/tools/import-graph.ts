/**
 * The project's import graph and its rules (docs/architecture.md): every `import`, `export … from`,
 * dynamic `import()` and `import("…")` type of every TypeScript file, read with TypeScript's parser, then
 * checked for cycles and for imports that break the layering
 *
 *   lang (compiler/lang) ← compiler ← runtime ← plugin ← cli ← tools (bench, tests, examples)
 *
 * where a layer imports only itself and the layers below, the compiler only through compiler/index.ts, no
 * file imports a test file, each layer uses only the packages it is allowed, and the browser entry
 * (runtime/webgpu/browser.ts) reaches, through all its imports, no Node module, no package and no compiler
 * file outside compiler/lang. Type-only imports count as imports: a circle of types is still a circle, and
 * declarations that pull in the compiler's would pull them into a browser app's type-check.
 */

import { builtinModules } from "node:module";
import path from "node:path";
import ts from "typescript";

export type Layer = "lang" | "compiler" | "runtime" | "plugin" | "cli" | "tools";

export const layerOrder: readonly Layer[] = ["lang", "compiler", "runtime", "plugin", "cli", "tools"];

/** The packages each layer may import (tools may import any). Test files may also import vitest. */
export const allowedPackages: Readonly<Record<Exclude<Layer, "tools">, readonly string[]>> = {
  lang: [],
  compiler: ["ts-morph"],
  runtime: ["koffi", "webgpu"],
  // The bundler plugin: unplugin, and the bundlers' own types for its per-bundler entries. The editor plugin:
  // TypeScript's types (at run time it uses the TypeScript that tsserver hands it).
  plugin: ["unplugin", "vite", "esbuild", "rollup", "typescript"],
  cli: ["commander"],
};

export const compilerEntry = "compiler/index.ts";
export const browserEntry = "runtime/webgpu/browser.ts";

export interface ImportEdge {
  /** Repository-relative, with forward slashes. */
  readonly from: string;
  readonly specifier: string;
  readonly line: number;
  readonly typeOnly: boolean;
  /** The imported file (repository-relative) for a relative specifier. */
  readonly target?: string;
}

export type ImportGraph = ReadonlyMap<string, readonly ImportEdge[]>;

export function layerOf(file: string): Layer {
  if (file.startsWith("compiler/lang/")) return "lang";
  if (file.startsWith("compiler/")) return "compiler";
  if (file.startsWith("runtime/")) return "runtime";
  if (file.startsWith("plugin/")) return "plugin";
  if (file.startsWith("cli/")) return "cli";
  return "tools";
}

const isTest = (file: string) => file.endsWith(".test.ts");
const isNodeModule = (specifier: string) => specifier.startsWith("node:") || builtinModules.includes(specifier.split("/")[0]!);
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

/** Every import of every file, from the files' text (repository-relative paths to contents). */
export function buildGraph(sources: ReadonlyMap<string, string>): ImportGraph {
  const graph = new Map<string, ImportEdge[]>();
  for (const [file, text] of sources) {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const edges: ImportEdge[] = [];
    const add = (literal: ts.Expression | undefined, typeOnly: boolean) => {
      if (!literal || !ts.isStringLiteralLike(literal)) return;
      const specifier = literal.text;
      const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
      const target = specifier.startsWith(".") ? path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)) : undefined;
      edges.push({ from: file, specifier, line, typeOnly, target });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        const bindings = clause?.namedBindings;
        const allTypes = Boolean(clause && !clause.name && bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly));
        add(node.moduleSpecifier, Boolean(clause?.isTypeOnly) || allTypes);
      } else if (ts.isExportDeclaration(node)) {
        add(node.moduleSpecifier, node.isTypeOnly);
      } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
        add(node.moduleReference.expression, node.isTypeOnly);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        add(node.arguments[0], false);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        add(node.argument.literal as ts.Expression, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    graph.set(file, edges);
  }
  return graph;
}

/** Why one import breaks the layering, or undefined when it is allowed. */
function layeringProblem(edge: ImportEdge, files: ReadonlySet<string>): string | undefined {
  const layer = layerOf(edge.from);
  if (edge.target !== undefined) {
    if (!files.has(edge.target)) return `imports ${edge.specifier}, which is not a TypeScript file of the project`;
    if (isTest(edge.target)) return `imports the test file ${edge.target}`;
    const targetLayer = layerOf(edge.target);
    // A test may use the shared test helpers in tests/, whatever layer it tests.
    if (isTest(edge.from) && targetLayer === "tools" && edge.target.startsWith("tests/")) return undefined;
    if (layerOrder.indexOf(targetLayer) > layerOrder.indexOf(layer)) return `imports ${edge.target}: ${layer} may not import ${targetLayer} (imports run lang ← compiler ← runtime ← plugin ← cli ← tools)`;
    if (targetLayer === "compiler" && layer !== "compiler" && edge.target !== compilerEntry) return `imports ${edge.target}: outside the compiler, use its public entry ${compilerEntry}`;
    return undefined;
  }
  if (layer === "tools") return undefined;
  if (isNodeModule(edge.specifier)) return layer === "lang" ? `imports ${edge.specifier}: the kernel language's declarations run anywhere and import nothing` : undefined;
  const name = packageOf(edge.specifier);
  if (allowedPackages[layer].includes(name) || (isTest(edge.from) && name === "vitest")) return undefined;
  return `imports the package '${name}', which ${layer} may not use (allowed: ${allowedPackages[layer].join(", ") || "none"})`;
}

export function layeringViolations(graph: ImportGraph): string[] {
  const files = new Set(graph.keys());
  const problems: string[] = [];
  for (const edges of graph.values()) {
    for (const edge of edges) {
      const problem = layeringProblem(edge, files);
      if (problem) problems.push(`${edge.from}:${edge.line} ${problem}`);
    }
  }
  return problems;
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm; recursive, which is fine for a graph of a few hundred files.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const next = (file: string) => [...new Set((graph.get(file) ?? []).map((e) => e.target).filter((t): t is string => t !== undefined && graph.has(t)))];
  const connect = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const target of next(file)) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || next(file).includes(file)) cycles.push(component.sort());
    }
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file);
  return cycles;
}

/** What the browser entry reaches that a browser bundle must not hold: Node modules, packages, the compiler. */
export function browserViolations(graph: ImportGraph, entry = browserEntry): string[] {
  if (!graph.has(entry)) return [`${entry} is missing`];
  const problems: string[] = [];
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (layerOf(file) !== "lang" && layerOf(file) !== "runtime") problems.push(`${file} is reached from ${entry}: the browser runtime may use only runtime files and compiler/lang`);
    for (const edge of graph.get(file) ?? []) {
      if (edge.target === undefined) {
        problems.push(`${edge.from}:${edge.line} imports ${edge.specifier}, reached from ${entry}: the browser runtime imports ${isNodeModule(edge.specifier) ? "nothing from Node" : "no package"}`);
      } else if (!seen.has(edge.target) && graph.has(edge.target)) {
        seen.add(edge.target);
        queue.push(edge.target);
      }
    }
  }
  return problems;
}
