/**
 * Loads kernel files into a ts-morph project and answers the questions the lowering asks about names: is
 * this identifier tskernel's `kernel`, `threadIdx`, `f32`…, or a global like `Float32Array` or `Math`, or a
 * helper function declared in the user's code? Names from "tskernel" are recognized through the import
 * declaration that brings them in, so a file compiles even where the package cannot be resolved, and a user
 * variable that happens to be called `f32` is not mistaken for the builtin.
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Node, Project, SyntaxKind, ts, type Identifier, type SourceFile } from "ts-morph";

/** The root of the tskernel package (where package.json is), found from this file's location. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "package.json");
    if (fs.existsSync(candidate)) {
      try {
        if (JSON.parse(fs.readFileSync(candidate, "utf8")).name === "tskernel") return dir;
      } catch {
        // An unreadable package.json on the way up is not ours; keep looking.
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("internal: cannot find the tskernel package root");
    dir = parent;
  }
}

/**
 * The declarations users import as "tskernel": the source in a checkout, the emitted declarations in an
 * installed package (which ships no TypeScript sources).
 */
export function languageModulePath(): string {
  const root = packageRoot();
  const source = path.join(root, "compiler", "lang", "index.ts");
  return fs.existsSync(source) ? source : path.join(root, "dist", "compiler", "lang", "index.d.ts");
}

export function createProject(): Project {
  return new Project({
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      lib: ["lib.es2022.d.ts"],
      types: [],
      paths: { tskernel: [languageModulePath()] },
    },
    skipAddingFilesFromTsConfig: true,
  });
}

/** Where a name used in a kernel comes from. */
export type NameOrigin =
  | { readonly kind: "tskernel"; readonly name: string }
  | { readonly kind: "global"; readonly name: string }
  | { readonly kind: "user"; readonly declaration: Node }
  | { readonly kind: "unknown" };

const languageFile = (() => {
  let cached: string | undefined;
  return () => (cached ??= path.resolve(languageModulePath()));
})();

/**
 * Whether a file is the language's: index.ts and the files it re-exports (vectors.ts) sit in one folder. Kept
 * per parsed file, since every name a kernel uses asks (resolving the path each time was about 1 % of an editor
 * compile); an edited file is parsed anew, so its entry goes with its old tree.
 */
const languageFiles = new WeakMap<ts.SourceFile, boolean>();
function isLanguageFile(file: SourceFile): boolean {
  let known = languageFiles.get(file.compilerNode);
  if (known === undefined) {
    known = path.dirname(path.resolve(file.getFilePath())) === path.dirname(languageFile());
    languageFiles.set(file.compilerNode, known);
  }
  return known;
}

/** Resolves an identifier to the tskernel export, global, or user declaration it names. */
export function originOf(identifier: Identifier): NameOrigin {
  const symbol = identifier.getSymbol();
  if (!symbol) {
    return { kind: "unknown" };
  }
  for (const declaration of symbol.getDeclarations()) {
    // `import { f32 } from "tskernel"` (possibly renamed: `import { f32 as float }`).
    if (Node.isImportSpecifier(declaration)) {
      // Read from the syntax tree: after a syntax error the specifier may not be a string (`from ;`), and
      // ts-morph's getModuleSpecifierValue() throws on that.
      const specifier = declaration.getImportDeclaration().compilerNode.moduleSpecifier;
      if (ts.isStringLiteral(specifier) && specifier.text === "tskernel") return { kind: "tskernel", name: declaration.getName() };
    }
  }
  const target = symbol.isAlias() ? symbol.getAliasedSymbol() ?? symbol : symbol;
  const declarations = target.getDeclarations();
  if (declarations.length === 0) return { kind: "unknown" };
  const file = declarations[0]!.getSourceFile();
  if (isLanguageFile(file)) return { kind: "tskernel", name: target.getName() };
  if (file.isFromExternalLibrary() || file.isDeclarationFile()) return { kind: "global", name: target.getName() };
  return { kind: "user", declaration: declarations[0]! };
}

/** The `kernel(...)` calls of a file, each with the exported const it initializes (if any). */
export function findKernelCalls(file: SourceFile): { call: Node; declarationName?: string; exported: boolean }[] {
  const found: { call: Node; declarationName?: string; exported: boolean }[] = [];
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    if (!Node.isIdentifier(callee)) continue;
    const origin = originOf(callee);
    if (origin.kind !== "tskernel" || origin.name !== "kernel") continue;
    const parent = call.getParent();
    if (Node.isVariableDeclaration(parent) && parent.getInitializer() === call) {
      const statement = parent.getVariableStatement();
      const isConst = parent.getVariableStatement()?.getDeclarationKind() === "const";
      const topLevel = statement?.getParent() === file;
      found.push({
        call,
        declarationName: Node.isIdentifier(parent.getNameNode()) ? parent.getName() : undefined,
        exported: Boolean(statement?.isExported() && isConst && topLevel),
      });
    } else {
      found.push({ call, exported: false });
    }
  }
  return found;
}
