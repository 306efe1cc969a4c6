/**
 * How the CLI talks to its caller: output through two callbacks (the process's streams, or strings in
 * tests), the terminal's width where tables wrap to it, and diagnostics through the compiler's one renderer
 * with a summary line. Only the commands that compile import this file's `report` (it loads the compiler).
 */

import fs from "node:fs";
import { renderDiagnostics, type Diagnostic } from "../compiler/index.ts";

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /**
   * The width tables fit (the `demo` table wraps its long cells to it): the terminal's columns when stdout is
   * a terminal, else `$COLUMNS`; absent when neither says (a pipe or a file), and then lines are as long as
   * their contents.
   */
  readonly columns?: number;
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
