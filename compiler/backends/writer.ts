/** A small indenting text writer that every backend prints through. */

export class Writer {
  private readonly lines: string[] = [];
  /** For each line written, the user source it came from (set with `setSource`), for error mapping. */
  readonly sources: (string | undefined)[] = [];
  private source: string | undefined;
  private depth = 0;

  setSource(source: string | undefined): this {
    this.source = source;
    return this;
  }

  constructor(private readonly indentUnit = "  ") {}

  line(text = ""): this {
    this.lines.push(text === "" ? "" : this.indentUnit.repeat(this.depth) + text);
    this.sources.push(this.source);
    return this;
  }

  /** A line at column 0 whatever the indentation (preprocessor directives). */
  raw(text: string): this {
    this.lines.push(text);
    this.sources.push(this.source);
    return this;
  }

  indent(): this {
    this.depth++;
    return this;
  }

  dedent(): this {
    this.depth--;
    return this;
  }

  /** Writes `open`, the body one level deeper, then `close`. */
  block(open: string, body: () => void, close = "}"): this {
    this.line(open);
    this.indent();
    body();
    this.dedent();
    this.line(close);
    return this;
  }

  toString(): string {
    return `${this.lines.join("\n")}\n`;
  }
}
