/**
 * What `tskernel check` and `build` compile, from their arguments, as tsc and linters read theirs: a file is
 * itself; a directory is every TypeScript file under it that imports from "tskernel" (the kernel files; other
 * modules beside them are left alone, and node_modules and dot-folders are not entered); a glob (quoted, so
 * the shell leaves it: 'src/**\/*.kernel.ts') is every file it matches, with `*`, `?`, `[…]`, `{a,b}` and `**`
 * (any number of folders, again not node_modules or dot-folders). A name that is none of these is passed on
 * as it is, so the compiler reports it as a file it cannot read (TSK4001). Each file is compiled once, in
 * the order found (a directory's and a glob's files sorted).
 */

import fs from "node:fs";
import path from "node:path";
import { makeDiagnostic, type Diagnostic } from "../compiler/index.ts";

export interface ExpandedInputs {
  readonly files: readonly string[];
  /** TSK4010 (a directory with no kernel files) and TSK4011 (a glob that matches nothing). */
  readonly diagnostics: readonly Diagnostic[];
  /** Where to watch for changes: each directory argument, each glob's fixed base, each named file's folder. */
  readonly watchRoots: readonly { readonly dir: string; readonly recursive: boolean }[];
}

const globCharacters = /[*?[\]{}]/;
const typeScriptFile = /\.[cm]?ts$/;
const declarationFile = /\.d\.[cm]?ts$/;
/** An import of the kernel language: the mark of a kernel file. */
const importsTskernel = /\bfrom\s*["']tskernel["']|\bimport\s*\(\s*["']tskernel["']\s*\)/;

export function isGlob(arg: string): boolean {
  return globCharacters.test(arg);
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

function entriesOf(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

/** Folders that neither a directory walk nor `**` enters. */
function skippedFolder(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

/** A dirent's kind, following a symbolic link to what it points at. */
function kindOf(dir: string, entry: fs.Dirent): "file" | "dir" | undefined {
  if (entry.isFile()) return "file";
  if (entry.isDirectory()) return "dir";
  if (entry.isSymbolicLink()) {
    const stat = statOf(path.join(dir, entry.name));
    return stat?.isFile() ? "file" : stat?.isDirectory() ? "dir" : undefined;
  }
  return undefined;
}

/** The kernel files under a directory, sorted. */
function kernelFilesIn(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string, depth: number) => {
    // A symbolic link loop must not walk forever.
    if (depth > 64) return;
    for (const entry of entriesOf(current)) {
      const kind = kindOf(current, entry);
      const file = path.join(current, entry.name);
      if (kind === "dir" && !skippedFolder(entry.name)) walk(file, depth + 1);
      else if (kind === "file" && typeScriptFile.test(entry.name) && !declarationFile.test(entry.name) && importsTskernel.test(fs.readFileSync(file, "utf8"))) found.push(file);
    }
  };
  walk(dir, 0);
  return found;
}

/** One path segment of a glob as a regular expression. */
function segmentPattern(segment: string): RegExp {
  let source = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "[") {
      const end = segment.indexOf("]", i + 2);
      if (end < 0) source += "\\[";
      else {
        const body = segment.slice(i + 1, end).replace(/\\/g, "\\\\");
        source += `[${body.startsWith("!") ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else if (c === "{") {
      const end = segment.indexOf("}", i);
      if (end < 0) source += "\\{";
      else {
        source += `(?:${segment.slice(i + 1, end).split(",").map((alternative) => alternative.replace(/[.+^$()|\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")).join("|")})`;
        i = end;
      }
    } else source += c.replace(/[.+^$()|\\\]}]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** The files a glob matches, sorted, and the fixed folder it starts from. */
export function matchGlob(pattern: string, cwd: string): { files: string[]; base: string } {
  const absolute = path.resolve(cwd, pattern).split(path.sep).join("/");
  const segments = absolute.split("/");
  const firstGlob = segments.findIndex((segment) => isGlob(segment));
  const base = segments.slice(0, firstGlob).join("/") || "/";
  const rest = segments.slice(firstGlob);
  const found = new Set<string>();
  const match = (dir: string, index: number, depth: number): void => {
    if (depth > 64) return;
    const segment = rest[index]!;
    const last = index === rest.length - 1;
    if (segment === "**") {
      // Zero folders, then one more folder and `**` again.
      if (last) {
        for (const file of allFiles(dir)) found.add(file);
        return;
      }
      match(dir, index + 1, depth);
      for (const entry of entriesOf(dir)) if (kindOf(dir, entry) === "dir" && !skippedFolder(entry.name)) match(path.join(dir, entry.name), index, depth + 1);
      return;
    }
    const pattern = segmentPattern(segment);
    for (const entry of entriesOf(dir)) {
      // As in a shell, a wildcard does not match a name starting with a dot unless the pattern does.
      if (entry.name.startsWith(".") && !segment.startsWith(".")) continue;
      if (!pattern.test(entry.name)) continue;
      const kind = kindOf(dir, entry);
      const next = path.join(dir, entry.name);
      if (last && kind === "file") found.add(next);
      else if (!last && kind === "dir") match(next, index + 1, depth + 1);
    }
  };
  match(base, 0, 0);
  return { files: [...found].sort(), base };
}

function allFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of entriesOf(dir)) {
    const kind = kindOf(dir, entry);
    if (kind === "file" && !entry.name.startsWith(".")) files.push(path.join(dir, entry.name));
    else if (kind === "dir" && !skippedFolder(entry.name)) files.push(...allFiles(path.join(dir, entry.name)));
  }
  return files;
}

/** The files the arguments name, in order, each once. */
export function expandInputs(args: readonly string[], cwd = process.cwd()): ExpandedInputs {
  const files: string[] = [];
  const seen = new Set<string>();
  const diagnostics: Diagnostic[] = [];
  const watchRoots: { dir: string; recursive: boolean }[] = [];
  const add = (file: string) => {
    const key = path.resolve(cwd, file);
    if (seen.has(key)) return;
    seen.add(key);
    files.push(file);
  };
  for (const arg of args) {
    const stat = statOf(path.resolve(cwd, arg));
    if (stat?.isDirectory()) {
      const found = kernelFilesIn(path.resolve(cwd, arg));
      if (found.length === 0) diagnostics.push(makeDiagnostic("TSK4010", undefined, [arg]));
      found.forEach(add);
      watchRoots.push({ dir: path.resolve(cwd, arg), recursive: true });
    } else if (!stat && isGlob(arg)) {
      const { files: matched, base } = matchGlob(arg, cwd);
      if (matched.length === 0) diagnostics.push(makeDiagnostic("TSK4011", undefined, [arg]));
      matched.forEach(add);
      watchRoots.push({ dir: base, recursive: true });
    } else {
      add(arg);
      watchRoots.push({ dir: path.dirname(path.resolve(cwd, arg)), recursive: false });
    }
  }
  return { files, diagnostics, watchRoots };
}
