/**
 * How the CLI talks to its caller: output through two callbacks (the process's streams, or strings in
 * tests), diagnostics through the compiler's one renderer with a summary line, and the package's version.
 */

import fs from "node:fs";
import path from "node:path";
import { packageRoot, renderDiagnostics, type Diagnostic } from "../compiler/index.ts";

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export function tskernelVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(packageRoot(), "package.json"), "utf8")).version as string;
  } catch {
    return "0.0.0";
  }
}

export function safeRead(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Renders diagnostics to stderr with code frames, then `N errors, M warnings`. */
export function report(diagnostics: readonly Diagnostic[], io: Io): void {
  if (diagnostics.length === 0) return;
  io.stderr(`${renderDiagnostics(diagnostics, { readFile: (file) => safeRead(file) })}\n`);
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const warnings = diagnostics.length - errors;
  io.stderr(`\n${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}\n`);
}
