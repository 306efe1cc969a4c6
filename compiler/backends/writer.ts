/** A small indenting text writer that every backend prints through. */

export class Writer {
  private readonly lines: string[] = [];
  private depth = 0;

  constructor(private readonly indentUnit = "  ") {}

  line(text = ""): this {
    this.lines.push(text === "" ? "" : this.indentUnit.repeat(this.depth) + text);
    return this;
  }

  /** A line at column 0 whatever the indentation (preprocessor directives). */
  raw(text: string): this {
    this.lines.push(text);
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
