/**
 * How the memory-bound suite's results are shown: one text table over every backend of a run, and an SVG bar
 * chart of each kernel's effective bandwidth as a percentage of the same backend's copy bandwidth, with
 * PyTorch's and Triton's (as percentages of the CUDA copy) beside ours where the run has them.
 */

import type { KernelBenchReport, KernelBenchRow } from "./bench.ts";

function checkCell(row: KernelBenchRow): string {
  const check = row.check;
  if (!check) return "-";
  const verdict = check.pass ? "pass" : `FAIL (${check.failures} of ${check.elements}${check.nonFinite ? `, ${check.nonFinite} NaN` : ""})`;
  if (check.kind === "relative") return `${verdict} ${check.maxRelative!.toExponential(1)}`;
  if (check.kind === "bound" || check.kind === "rounded") return `${verdict} ${(100 * check.maxOfAllowed!).toFixed(1)} % of bound`;
  return `${verdict} exact`;
}

/** What the copy row measured: the copy kernel, or the device's own copy. */
function copyNote(method: string): string {
  const kernel = /^the copy kernel (\S+)/.exec(method);
  return kernel ? `baseline: the copy kernel ${kernel[1]}` : "baseline: the device's copy";
}

export function formatKernelTable(reports: readonly KernelBenchReport[]): string {
  const header = ["kernel", "shape", "backend", "time (ms)", "GB/s", "% of copy", "float64 check", "PyTorch (ms)", "PyTorch / ours", "Triton / ours", "note"];
  const lines: string[][] = [];
  for (const report of reports) {
    if (report.copy) lines.push(["copy", `${(report.copy.bytes / 2 ** 30).toFixed(2)} GiB`, report.backend, report.copy.ms.toFixed(3), report.copy.gbps.toFixed(1), "100.0 %", "-", "-", "-", "-", copyNote(report.copy.method)]);
    if (report.copy && report.apiCopy) {
      const api = report.apiCopy;
      lines.push(["API copy", `${(api.bytes / 2 ** 30).toFixed(2)} GiB`, report.backend, api.ms.toFixed(3), api.gbps.toFixed(1), `${((100 * api.gbps) / report.copy.gbps).toFixed(1)} %`, "-", "-", "-", "-", "not the baseline"]);
    }
  }
  const rows = reports.flatMap((r) => r.rows);
  const order = [...new Set(rows.map((r) => `${r.kernel} ${r.label}`))];
  for (const key of order) {
    for (const row of rows.filter((r) => `${r.kernel} ${r.label}` === key)) {
      lines.push([
        row.kernel,
        row.label,
        row.backend,
        row.ms !== undefined ? row.ms.toFixed(3) : "-",
        row.gbps !== undefined ? row.gbps.toFixed(1) : "-",
        row.percentOfCopy !== undefined ? `${row.percentOfCopy.toFixed(1)} %` : "-",
        checkCell(row),
        row.torch ? row.torch.ms.toFixed(3) : "-",
        row.torch ? `${row.torch.speedup.toFixed(2)}×` : "-",
        row.torch?.triton ? `${row.torch.triton.speedup.toFixed(2)}×` : "-",
        row.note ?? "",
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const left = new Set([0, 1, 2, 6, 10]);
  const format = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [format(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(format)].join("\n");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const colors: Record<string, string> = { cuda: "#3b73b9", webgpu: "#e08a2c", cpu: "#5a9e4b", pytorch: "#888888", triton: "#9b59b6" };

/**
 * Bars of % of the copy bandwidth, grouped by kernel and shape; a dashed line marks the copy itself. Each
 * backend's bars are relative to its own copy, or with `roofline: "cuda"` all of them to the CUDA copy of the
 * same run (when WebGPU's copyBufferToBuffer is much slower than the memory, as on the H100).
 */
export function kernelChartSvg(reports: readonly KernelBenchReport[], title: string, options: { roofline?: "own" | "cuda" } = {}): string {
  const rows = reports.flatMap((r) => r.rows).filter((r) => r.percentOfCopy !== undefined);
  const cudaCopy = reports.find((r) => r.backend === "cuda")?.copy;
  const againstCuda = options.roofline === "cuda" && cudaCopy !== undefined;
  const groups = [...new Set(rows.map((r) => `${r.kernel} ${r.label}`))];
  const bars = groups.map((key) => {
    const list: { label: string; percent: number; gbps: number; color: string }[] = [];
    for (const row of rows.filter((r) => `${r.kernel} ${r.label}` === key)) {
      const percent = againstCuda ? (100 * row.gbps!) / cudaCopy.gbps : row.percentOfCopy!;
      list.push({ label: row.backend, percent, gbps: row.gbps!, color: colors[row.backend] ?? "#3b73b9" });
      if (row.torch && cudaCopy) list.push({ label: "PyTorch", percent: (100 * row.torch.gbps) / cudaCopy.gbps, gbps: row.torch.gbps, color: colors.pytorch! });
      if (row.torch?.triton && cudaCopy) list.push({ label: "Triton", percent: (100 * row.torch.triton.gbps) / cudaCopy.gbps, gbps: row.torch.triton.gbps, color: colors.triton! });
    }
    return { key, list };
  });
  const barHeight = 16;
  const labelWidth = 200;
  const chartWidth = 460;
  const maxPercent = Math.max(110, ...bars.flatMap((b) => b.list.map((x) => x.percent)));
  const scale = (percent: number) => (percent / maxPercent) * chartWidth;
  const height = 80 + bars.reduce((sum, b) => sum + 22 + b.list.length * (barHeight + 3), 0);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + chartWidth + 170}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="10" y="40" fill="#444">${escapeXml(
      againstCuda
        ? `effective bandwidth (fewest bytes read + written / time) as % of the CUDA device-to-device copy of the run (${cudaCopy.gbps.toFixed(0)} GB/s)`
        : "effective bandwidth (fewest bytes read + written / time) as % of the same backend's device-to-device copy",
    )}</text>`,
  ];
  let y = 56;
  for (const { key, list } of bars) {
    out.push(`<text x="10" y="${y + 12}" font-weight="bold">${escapeXml(key)}</text>`);
    y += 18;
    for (const bar of list) {
      const width = Math.max(1, scale(bar.percent));
      out.push(`<text x="${labelWidth - 8}" y="${y + 12}" text-anchor="end">${escapeXml(bar.label)}</text>`);
      out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${barHeight}" fill="${bar.color}"/>`);
      out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 12}">${bar.percent.toFixed(1)} % (${bar.gbps.toFixed(0)} GB/s)</text>`);
      y += barHeight + 3;
    }
    y += 4;
  }
  const copyX = labelWidth + scale(100);
  out.push(`<line x1="${copyX.toFixed(1)}" y1="48" x2="${copyX.toFixed(1)}" y2="${y}" stroke="#c00" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${(copyX + 3).toFixed(1)}" y="${y + 12}" fill="#c00">copy = 100 %</text>`);
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
