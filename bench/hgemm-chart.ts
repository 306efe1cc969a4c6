/**
 * The chart of a bench/hgemm-probe.py report (16-bit GEMMs against torch.mm in the same type): per shape,
 * horizontal bars of TFLOP/s for torch.mm, Triton and each of our builds, labelled with the percentage of
 * torch.mm in that type and whether the float64 check passed. As a script:
 *
 *   node dist/bench/hgemm-chart.js report.json out.svg [--title T]
 */

import fs from "node:fs";
import path from "node:path";

interface HgemmRow {
  readonly id: string;
  readonly dtype: "bf16" | "f16";
  readonly tflops: number;
  readonly percentOfTorch: number;
  readonly pass: boolean;
}

interface HgemmReport {
  readonly device: string;
  readonly date: string;
  readonly shapes: readonly { readonly m: number; readonly n: number; readonly k: number; readonly rows: readonly HgemmRow[] }[];
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A row's name for readers: the language rung by its file, the probe by its settings. */
function label(row: HgemmRow): string {
  if (row.id.startsWith("lang_")) return `tskernel hgemm-wgmma-ws ${row.dtype}`;
  if (row.id.startsWith("hgemm_")) return `hand-written probe ${row.id.replace(/^hgemm_|\.cubin$/g, "")}`;
  return row.id;
}

function colour(row: HgemmRow): string {
  if (row.id.startsWith("torch")) return "#888";
  if (row.id.startsWith("triton")) return "#b8a24a";
  if (row.id.startsWith("lang_")) return row.dtype === "bf16" ? "#3b73b9" : "#7aa6dc";
  return "#c0504d";
}

export function hgemmChartSvg(report: HgemmReport, title: string): string {
  const bar = 18;
  const labelWidth = 280;
  const chartWidth = 420;
  const max = Math.max(...report.shapes.flatMap((s) => s.rows.map((r) => r.tflops)), 1);
  const height = 60 + report.shapes.reduce((h, s) => h + 40 + s.rows.length * (bar + 4), 0);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + chartWidth + 230}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  let y = 48;
  for (const s of report.shapes) {
    out.push(`<text x="10" y="${y + 14}" font-weight="bold">${s.m}×${s.n}×${s.k}</text>`);
    y += 24;
    for (const row of s.rows) {
      const width = Math.max(1, (row.tflops / max) * chartWidth);
      const note = `${row.tflops.toFixed(0)} TFLOP/s, ${row.percentOfTorch.toFixed(1)} % of torch.mm ${row.dtype}${row.pass ? "" : ", FAILED its float64 check"}`;
      out.push(`<text x="${labelWidth - 8}" y="${y + 13}" text-anchor="end">${escapeXml(label(row))}</text>`);
      out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${bar}" fill="${colour(row)}"/>`);
      out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 13}">${escapeXml(note)}</text>`);
      y += bar + 4;
    }
    y += 16;
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

function main(): void {
  const [file, svg, ...rest] = process.argv.slice(2);
  if (!file || !svg) throw new Error("usage: node dist/bench/hgemm-chart.js report.json out.svg [--title T]");
  const report = JSON.parse(fs.readFileSync(file, "utf8")) as HgemmReport;
  const titleAt = rest.indexOf("--title");
  const title = titleAt >= 0 ? rest[titleAt + 1]! : `tskernel 16-bit GEMM against torch.mm, ${report.device}, ${report.date.slice(0, 10)}`;
  fs.writeFileSync(svg, hgemmChartSvg(report, title));
}

// Run as a script (not when a module imports it).
if (process.argv[1] && path.basename(process.argv[1]).startsWith("hgemm-chart")) main();
