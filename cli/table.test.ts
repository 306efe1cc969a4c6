/**
 * Tables that fit a width: unchanged where they fit; narrower by wrapping text cells and headers; every cell's
 * text recoverable from its lines. The rows are the demo's own shape, with the ladder's longest labels.
 */

import { describe, expect, it } from "vitest";
import { formatDemoTable, type DemoRow } from "./demo/run-demo.ts";
import { formatTable, wrapCell, type TableColumn } from "./table.ts";

const errors = { maxRelative: 2.14e-5, averageRelative: 3.58e-7, normwiseRelative: 8.71e-8, nonFinite: 0 } as DemoRow["errors"];
const rows: DemoRow[] = [
  { variant: "naive", backend: "cpu", size: 256, ms: 12.5, gflops: 2.684, errors, status: "pass" },
  {
    variant: "sgemm-warptiling-double-buffered (BM 128, BN 128, BK 16, WM 64, WN 64, WNITER 4, TM 8, TN 4, THREADS 128)",
    backend: "cpu",
    size: 100,
    paddedSize: 128,
    ms: 28.5,
    gflops: 0.147,
    errors,
    status: "pass",
  },
  {
    variant: "sgemm-multistage-guarded (BM 64, BN 128, BK 16, KSPLIT 2, STAGES 2, WM 32, WN 64, WNITER 2, TM 8, TN 4, THREADS 256, SWIZZLE 0, AVEC 1, GUARD 1)",
    backend: "cpu",
    size: 256,
    ms: 60.8,
    gflops: 0.552,
    errors,
    status: "pass",
  },
  { variant: "tiled-32", backend: "webgpu", size: 256, status: "skipped", note: "needs a block of 1024 threads; this device allows 256" },
];

/**
 * The cells of a rendered table, read back by the columns its line of dashes marks, each cell's lines joined;
 * a row starts on the line where column `anchor` (one that never wraps nor is empty) has text.
 */
function readBack(table: string, anchor = 1): string[][] {
  const lines = table.split("\n");
  const dashes = lines.findIndex((line) => /^-+( +-+)*$/.test(line));
  const columns = [...lines[dashes]!.matchAll(/-+/g)].map((m) => ({ start: m.index!, end: m.index! + m[0].length }));
  const cellsOf = (line: string) => columns.map(({ start, end }) => line.slice(start, end).trim());
  const records: string[][][] = [];
  for (const line of lines.slice(dashes + 1)) {
    const cells = cellsOf(line);
    if (cells[anchor] !== "") records.push(cells.map(() => []));
    cells.forEach((cell, i) => {
      if (cell) records.at(-1)![i]!.push(cell);
    });
  }
  const join = (parts: string[]) => parts.reduce((text, part) => (text === "" ? part : text.endsWith("-") ? text + part : `${text} ${part}`), "");
  return records.map((record) => record.map(join));
}

describe("formatTable", () => {
  const columns: TableColumn[] = [
    { header: "name", align: "left", wrap: true },
    { header: "time (ms)", align: "right" },
  ];

  it("lays out a table that fits as the CLI always has: two-space gaps, numbers right-aligned, no trailing spaces", () => {
    const table = formatTable(columns, [["a", "1.0"], ["longer name", "12.5"]]);
    expect(table).toBe(["name         time (ms)", "-----------  ---------", "a                  1.0", "longer name       12.5"].join("\n"));
    expect(formatTable(columns, [["a", "1.0"], ["longer name", "12.5"]], 40)).toBe(table);
  });

  it("wraps the wide text column, then the headers, then narrows the gaps", () => {
    expect(formatTable(columns, [["longer name", "12.5"]], 20).split("\n")).toEqual(["name       time (ms)", "---------  ---------", "longer          12.5", "name"]);
    expect(formatTable(columns, [["longer name", "12.5"]], 12).split("\n")).toEqual(["name    time", "        (ms)", "------  ----", "longer  12.5", "name"]);
    expect(formatTable(columns, [["longer name", "12.5"]], 11).split("\n")).toEqual(["name   time", "       (ms)", "------ ----", "longer 12.5", "name"]);
  });

  it("wraps a cell at spaces, after commas and hyphens, and cuts only a word longer than the column", () => {
    expect(wrapCell("sgemm-vectorized (BM 128, BN 128)", 12)).toEqual(["sgemm-", "vectorized", "(BM 128, BN", "128)"]);
    expect(wrapCell("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrapCell("short", 10)).toEqual(["short"]);
  });
});

describe("the demo's table", () => {
  const natural = formatDemoTable(rows);

  it("is as wide as its longest label without a width, and the same with a width it fits", () => {
    expect(Math.max(...natural.split("\n").map((line) => line.length))).toBeGreaterThan(180);
    expect(formatDemoTable(rows, 400)).toBe(natural);
  });

  it.each([80, 100, 120, 160])("fits %i columns, each cell's text whole when its lines are joined", (width) => {
    const table = formatDemoTable(rows, width);
    for (const line of table.split("\n")) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(readBack(table)).toEqual(readBack(natural));
    expect(readBack(natural).map((cells) => cells[0])).toEqual(rows.map((row) => row.variant));
  });
});
