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
