/**
 * The one renderer of diagnostics, used by the CLI and by the golden error tests: a header with the code,
 * the location as `file:line:column`, and a code frame of the user's TypeScript with the span underlined
 * (`^` for the primary span, `-` for related spans), then notes. File paths are shown relative to a base
 * directory so that golden outputs do not depend on where the repository lives.
 */

import path from "node:path";
import type { Diagnostic } from "./diagnostic.ts";
import { LineMap, type Span } from "./span.ts";

export interface RenderOptions {
  /** Paths are printed relative to this directory (default: the current directory). */
  readonly baseDir?: string;
  /** Text of each file by absolute path; files missing here are read from disk through `readFile`. */
  readonly readFile: (file: string) => string | undefined;
}

interface Frame {
  readonly span: Span;
  readonly mark: "^" | "-";
  readonly label?: string;
}

export function renderDiagnostic(diagnostic: Diagnostic, options: RenderOptions): string {
  const lineMaps = new Map<string, LineMap | undefined>();
  const mapFor = (file: string): LineMap | undefined => {
    if (!lineMaps.has(file)) {
      const text = options.readFile(file);
      lineMaps.set(file, text === undefined ? undefined : new LineMap(text));
    }
    return lineMaps.get(file);
  };
  const displayPath = (file: string): string =>
    path.relative(options.baseDir ?? process.cwd(), file).split(path.sep).join("/") || file;

  const frames: Frame[] = [];
  if (diagnostic.span) frames.push({ span: diagnostic.span, mark: "^", label: diagnostic.label });
  for (const related of diagnostic.related) frames.push({ span: related.span, mark: "-", label: related.message });

  const gutterWidth = Math.max(
    1,
    ...frames.map((frame) => String(mapFor(frame.span.file)?.lineCol(frame.span.start).line ?? 0).length),
  );
  const pad = " ".repeat(gutterWidth);
  const out: string[] = [`${diagnostic.severity}[${diagnostic.code}]: ${diagnostic.message}`];

  frames.forEach((frame, index) => {
    const map = mapFor(frame.span.file);
    const where = map ? map.lineCol(frame.span.start) : undefined;
    const location = where ? `${displayPath(frame.span.file)}:${where.line}:${where.column}` : displayPath(frame.span.file);
    out.push(`${pad}${index === 0 ? "-->" : ":::"} ${location}`);
    if (!map || !where) return;
    const lineText = map.lineText(where.line).replace(/\t/g, " ");
    const endOnLine = Math.min(
      frame.span.end,
      frame.span.start + (lineText.length - (where.column - 1)),
    );
    const width = Math.max(1, endOnLine - frame.span.start);
    out.push(`${pad} |`);
    out.push(`${String(where.line).padStart(gutterWidth)} | ${lineText}`);
    const underline = " ".repeat(where.column - 1) + frame.mark.repeat(width);
    out.push(`${pad} | ${underline}${frame.label ? ` ${frame.label}` : ""}`);
  });
  for (const note of diagnostic.notes) out.push(`${pad} = note: ${note}`);
  return out.join("\n");
}

export function renderDiagnostics(diagnostics: readonly Diagnostic[], options: RenderOptions): string {
  return diagnostics.map((d) => renderDiagnostic(d, options)).join("\n\n");
}

/** The `file:line:column` of a span, for one-line messages. */
export function formatLocation(span: Span, text: string, baseDir?: string): string {
  const { line, column } = new LineMap(text).lineCol(span.start);
  return `${path.relative(baseDir ?? process.cwd(), span.file)}:${line}:${column}`;
}
