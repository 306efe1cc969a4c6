/**
 * Plain-text tables that fit a width. Laid out as the CLI's tables always were (a header, a line of dashes,
 * columns two spaces apart, numbers right-aligned, no trailing spaces) when they fit; when they do not, the
 * widest columns give way first: a cell wraps onto more lines at its spaces and after its commas and hyphens
 * (a word longer than its column is cut), and a header wraps at its spaces. Only if every column is down to
 * its longest word do the gaps shrink to one space; a table that still does not fit is printed as narrow as
 * it can be. Nothing is ever left out, so joining a cell's lines gives its text back.
 */

export interface TableColumn {
  readonly header: string;
  readonly align: "left" | "right";
  /** Whether the cells may wrap onto several lines (text); numbers keep one line. */
  readonly wrap?: boolean;
}

/** The places a line may break in a cell: after a space (which the break eats), a comma or a hyphen. */
function pieces(text: string): string[] {
  return text.match(/[^\s,-]*(?:[,-]+|\s+|$)/g)!.filter((piece) => piece.length > 0);
}

/** The longest run of text that can never be broken, which is as narrow as the cell can get. */
function longestWord(text: string): number {
  return Math.max(0, ...pieces(text).map((piece) => piece.trimEnd().length));
}

/** The cell's lines at `width`, each without trailing spaces. */
export function wrapCell(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const lines: string[] = [];
  let line = "";
  for (const piece of pieces(text)) {
    if ((line + piece).trimEnd().length <= width) {
      line += piece;
      continue;
    }
    if (line.trimEnd().length > 0) lines.push(line.trimEnd());
    line = piece;
    // A word longer than the column: cut it.
    while (line.trimEnd().length > width) {
      lines.push(line.slice(0, width));
      line = line.slice(width);
    }
  }
  if (line.trimEnd().length > 0) lines.push(line.trimEnd());
  return lines;
}

/** The rows under `columns`, as one string of lines without a final newline; `width` absent: no limit. */
export function formatTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[], width?: number): string {
  const natural = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => row[i]!.length)));
  const narrowest = columns.map((column, i) => Math.max(longestWord(column.header), ...rows.map((row) => (column.wrap ? longestWord(row[i]!) : row[i]!.length))));
  const widths = [...natural];
  let gap = 2;
  const total = () => widths.reduce((sum, w) => sum + w, 0) + gap * (columns.length - 1);
  if (width !== undefined) {
    // The widest column that can still give way gives one character at a time.
    while (total() > width) {
      let widest = -1;
      widths.forEach((w, i) => {
        if (w > narrowest[i]! && (widest < 0 || w > widths[widest]!)) widest = i;
      });
      if (widest < 0) break;
      widths[widest]! -= 1;
    }
    if (total() > width) gap = 1;
  }
  const separator = " ".repeat(gap);
  const render = (cells: readonly string[]): string[] => {
    const wrapped = cells.map((cell, i) => wrapCell(cell, widths[i]!));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    const lines: string[] = [];
    for (let line = 0; line < height; line++) {
      const parts = wrapped.map((cellLines, i) => {
        const text = cellLines[line] ?? "";
        return columns[i]!.align === "right" ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
      });
      lines.push(parts.join(separator).trimEnd());
    }
    return lines;
  };
  return [...render(columns.map((c) => c.header)), widths.map((w) => "-".repeat(w)).join(separator), ...rows.flatMap(render)].join("\n");
}
