/**
 * The torch.mm comparison's report (the JSON that bench/torch-matmul.py writes) as a table and as an SVG
 * chart: per shape, torch.mm FP32 (TF32 off) as the 100 %, what matmul() runs, and our fastest build, in
 * TFLOP/s, with torch.mm TF32 beside them for scale. bench/gpu-run.ts joins the report to the run's results;
 * as a script it renders a saved report: node dist/bench/torch-matmul-report.js report.json [--svg out.svg]
 */

import fs from "node:fs";
import path from "node:path";

export interface TorchRow {
  readonly id: string;
  readonly rung: string;
  readonly ms: number;
  readonly tflops: number;
  readonly percentOfTorchFp32: number;
  readonly relativeError: number | null;
  readonly pass: boolean;
  readonly registers?: number | null;
  readonly constants?: Readonly<Record<string, number>> | null;
  /** "tf32" for tensor-core builds (and the torch.mm TF32 row), compared with torch.mm TF32. */
  readonly precision?: "fp32" | "tf32";
  readonly percentOfTorchTf32?: number | null;
}

export interface TorchShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly torchFp32: TorchRow;
  readonly torchTf32: TorchRow | null;
  readonly matmul: TorchRow | null;
  readonly best: TorchRow | null;
  /** What matmul(…, { precision: "tf32" }) runs, and the fastest TF32 build (reports since the tensor-core rung). */
  readonly matmulTf32?: TorchRow | null;
  readonly bestTf32?: TorchRow | null;
  readonly candidates: readonly TorchRow[];
  readonly inputSets?: number;
  readonly rounds?: number;
}

export interface TorchReport {
  readonly date: string;
  readonly device: string;
  readonly torch: string;
  readonly shapes: readonly TorchShape[];
}

const shapeName = (s: TorchShape) => `${s.m}×${s.n}×${s.k}`;
/** A build's name without its kernel prefix: the rung and the constants that differ from nothing. */
const buildName = (r: TorchRow) => `${r.rung}${r.constants ? ` ${Object.entries(r.constants).map(([k, v]) => `${k}=${v}`).join(" ")}` : ""}`;

/** Markdown table: one row per shape. */
export function formatTorchTable(report: TorchReport): string {
  const lines = [
    "| m × n × k | torch.mm FP32 | torch.mm TF32 | matmul() | % of torch.mm FP32 | fastest build | % | passed float64 checks |",
    "|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const s of report.shapes) {
    const passed = s.candidates.filter((c) => c.pass).length;
    lines.push(
      `| ${shapeName(s)} | ${s.torchFp32.tflops.toFixed(2)} | ${s.torchTf32 ? s.torchTf32.tflops.toFixed(1) : "—"} | ${s.matmul ? s.matmul.tflops.toFixed(2) : "—"} | ` +
        `${s.matmul ? `${s.matmul.percentOfTorchFp32.toFixed(1)} %` : "—"} | ${s.best ? s.best.tflops.toFixed(2) : "—"} | ${s.best ? `${s.best.percentOfTorchFp32.toFixed(1)} %` : "—"} | ${passed} of ${s.candidates.length} |`,
    );
  }
  return lines.join("\n");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Horizontal bars per shape: torch.mm FP32, matmul(), the fastest build (and TF32 as a note); where the report
 * has the tensor-core rung, also torch.mm TF32 and matmul(…, { precision: "tf32" }), as percentages of the former.
 */
export function torchChartSvg(report: TorchReport, title: string): string {
  const bar = 18;
  const labelWidth = 200;
  const chartWidth = 460;
  const tf32Rows = (s: TorchShape) => (s.matmulTf32 ? [["torch.mm TF32", s.torchTf32, "#bbb"], ["tskernel matmul() TF32", s.matmulTf32, "#c0504d"]] : []);
  const max = Math.max(...report.shapes.flatMap((s) => [s.torchFp32.tflops, s.matmul?.tflops ?? 0, s.best?.tflops ?? 0, ...(s.matmulTf32 ? [s.torchTf32?.tflops ?? 0, s.matmulTf32.tflops] : [])]), 1);
  const rowsOf = (s: TorchShape) =>
    [
      ["torch.mm FP32 (TF32 off)", s.torchFp32, "#888"],
      ["tskernel matmul()", s.matmul, "#3b73b9"],
      ["fastest tskernel build", s.best, "#7aa6dc"],
      ...tf32Rows(s),
    ].filter(([, row]) => row) as [string, TorchRow, string][];
  const height = 60 + report.shapes.reduce((h, s) => h + 40 + rowsOf(s).length * (bar + 4), 0);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + chartWidth + 190}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  let y = 48;
  for (const s of report.shapes) {
    const tf32 = s.torchTf32 && !s.matmulTf32 ? ` (torch.mm TF32: ${s.torchTf32.tflops.toFixed(0)} TFLOP/s)` : "";
    out.push(`<text x="10" y="${y + 14}" font-weight="bold">${escapeXml(`${shapeName(s)}${tf32}`)}</text>`);
    y += 24;
    for (const [label, row, colour] of rowsOf(s)) {
      const width = Math.max(1, (row.tflops / max) * chartWidth);
      const note =
        row === s.torchFp32 ? "100 %"
        : s.matmulTf32 && row === s.torchTf32 ? "100 % of TF32"
        : row.precision === "tf32" && row.percentOfTorchTf32 != null ? `${row.percentOfTorchTf32.toFixed(1)} % of torch.mm TF32`
        : `${row.percentOfTorchFp32.toFixed(1)} %`;
      out.push(`<text x="${labelWidth - 8}" y="${y + 13}" text-anchor="end">${escapeXml(label)}</text>`);
      out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${bar}" fill="${colour}"/>`);
      out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 13}">${escapeXml(`${row.tflops.toFixed(2)} TFLOP/s, ${note}`)}</text>`);
      y += bar + 4;
    }
    y += 16;
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** The fastest passing build per shape, named with its constants (for logs). */
export function bestBuilds(report: TorchReport): string[] {
  return report.shapes.map((s) => `${shapeName(s)}: ${s.best ? `${buildName(s.best)} ${s.best.tflops.toFixed(2)} TFLOP/s (${s.best.percentOfTorchFp32.toFixed(1)} %)` : "none passed"}`);
}

function main(): void {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) throw new Error("usage: torch-matmul-report <report.json> [--svg out.svg]");
  const report = JSON.parse(fs.readFileSync(file, "utf8")) as TorchReport;
  console.log(formatTorchTable(report));
  for (const line of bestBuilds(report)) console.log(line);
  const svg = rest.indexOf("--svg");
  if (svg >= 0) fs.writeFileSync(rest[svg + 1]!, torchChartSvg(report, `tskernel SGEMM against torch.mm, ${report.device}, ${report.date.slice(0, 10)}`));
}

// Run as a script (not when a module imports it).
if (process.argv[1] && path.basename(process.argv[1]).startsWith("torch-matmul-report")) main();
