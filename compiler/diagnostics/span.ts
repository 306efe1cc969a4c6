/**
 * Source spans: every IR node and every diagnostic points into the user's TypeScript through one of these.
 * Offsets are UTF-16 positions in the file text, as ts-morph reports them; lines and columns are derived
 * only when a span is shown to a person.
 */

export interface Span {
  readonly file: string;
  readonly start: number;
  readonly end: number;
}

export interface LineCol {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in UTF-16 code units. */
  readonly column: number;
}

/** Line starts of a text, computed once per file and shared by every lookup in it. */
export class LineMap {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
    }
  }

  lineCol(offset: number): LineCol {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - this.starts[lo]! + 1 };
  }

  lineText(line: number): string {
    const start = this.starts[line - 1] ?? this.text.length;
    const next = this.starts[line];
    const end = next === undefined ? this.text.length : next - 1;
    return this.text.slice(start, end).replace(/\r$/, "");
  }

  get lineCount(): number {
    return this.starts.length;
  }
}

/**
 * Where a span of generated code's IR lies, for the backends' line directives and checked-mode locations: in the
 * file being compiled or in another source file of the build (a helper imported from it), by the path the build
 * shows for that file.
 */
export interface SourceLocator {
  /** The span's file as the build shows it, and its start's line and column there. */
  where(span: Span): { readonly path: string; readonly line: number; readonly column: number };
  /** `path:line:column` of the span's start, as line maps and checked-mode reports show it. */
  location(span: Span): string;
  /** The text of the span's file. */
  text(span: Span): string;
}

/**
 * A locator over the file being compiled (`own`) and the build's other files (`other`, by absolute path; a file
 * it does not know is taken as the own one), each file's lines computed once.
 */
export function sourceLocator(own: { readonly file: string; readonly path: string; readonly text: string }, other: (file: string) => { readonly path: string; readonly text: string } | undefined): SourceLocator {
  const files = new Map<string, { path: string; lines: LineMap }>([[own.file, { path: own.path, lines: new LineMap(own.text) }]]);
  const fileOf = (span: Span) => {
    let found = files.get(span.file);
    if (!found) {
      const source = other(span.file);
      found = source ? { path: source.path, lines: new LineMap(source.text) } : files.get(own.file)!;
      files.set(span.file, found);
    }
    return found;
  };
  const where = (span: Span) => {
    const { path, lines } = fileOf(span);
    return { path, ...lines.lineCol(span.start) };
  };
  return {
    where,
    location: (span) => {
      const { path, line, column } = where(span);
      return `${path}:${line}:${column}`;
    },
    text: (span) => fileOf(span).lines.text,
  };
}
