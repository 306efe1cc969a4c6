/**
 * The benchmarks' measured kernels on their device's roofline (`--roofline chart.svg` on `bench matmul` and
 * `bench kernels`). A kernel's place across is its arithmetic intensity, flops per byte of global memory, as
 * the compiler estimates it from the source (compiler/cost.ts: the ratio as the run-time loops grow); up, the
 * flop rate it reached: the matmul's 2n³ flops over its time, or for the memory-bound suite (whose rows are
 * bandwidths) its intensity times the effective bandwidth it reached (a case of several launches by its main
 * one, which moves the most memory per thread). The roofs: memory, the bandwidth of the
 * device-to-device copy measured in the same run; compute, the device's nominal FP32 peak where this file
 * knows the GPU, else (the matmul) the fastest rung of the run, drawn dashed and named as measured.
 */

import { compileFiles, estimateCost, intensity, leadingTerms, type CostEstimate, type SpecializedKernel } from "../../compiler/index.ts";

export interface RooflinePoint {
  readonly label: string;
  readonly backend: string;
  /** flops per byte of global memory. */
  readonly intensity: number;
  readonly gflops: number;
}

export interface Roof {
  readonly backend: string;
  readonly device: string;
  /** GB/s of the copy measured in the run. */
  readonly bandwidth?: number;
  readonly peak?: { readonly gflops: number; readonly source: "nominal" | "measured" };
}

/**
 * Nominal FP32 peaks (without tensor cores) of the GPUs benchmarks run on, from NVIDIA's datasheets, matched
 * against the device's name.
 */
const nominalPeaks: readonly { readonly name: RegExp; readonly gflops: number }[] = [
  { name: /H100.*PCIe/i, gflops: 51_200 },
  { name: /H100|H200|GH200/i, gflops: 66_900 },
  { name: /A100/i, gflops: 19_500 },
  { name: /L40S/i, gflops: 91_600 },
  { name: /\bL4\b/i, gflops: 30_300 },
  { name: /RTX 4090/i, gflops: 82_600 },
];

export function nominalPeakGflops(deviceName: string): number | undefined {
  return nominalPeaks.find((peak) => peak.name.test(deviceName))?.gflops;
}

/** Estimates of kernel specializations, each compiled once (in memory, no code generated). */
export class IntensityEstimates {
  private readonly byKey = new Map<string, number | undefined>();
  private readonly byEntry = new Map<string, CostEstimate>();

  private static estimate(spec: SpecializedKernel): CostEstimate {
    return estimateCost(spec.kernel, (span) => `L${span.start}`);
  }

  /** The specialization of `kernel` in `file` with these constants. */
  of(file: string, kernel: string, constants: Readonly<Record<string, string | number | boolean>> = {}): number | undefined {
    const key = `${file}#${kernel}#${JSON.stringify(constants)}`;
    if (!this.byKey.has(key)) {
      const defines = new Map(Object.entries(constants).map(([name, value]) => [name, String(value)]));
      const result = compileFiles([file], { targets: ["cuda", "wgsl", "js"], kernels: new Set([kernel]), defines, emit: false });
      const spec = result.ok ? result.files[0]?.specializations[0] : undefined;
      this.byKey.set(key, spec ? intensity(IntensityEstimates.estimate(spec)) : undefined);
    }
    return this.byKey.get(key);
  }

  /** Every specialization of these files, by entry name (the memory-bound suite's rows name their launches so). */
  ofEntries(files: readonly string[]): ReadonlyMap<string, CostEstimate> {
    if (this.byEntry.size === 0) {
      const result = compileFiles(files, { targets: ["cuda", "wgsl", "js"], emit: false });
      for (const file of result.files) for (const spec of file.specializations) this.byEntry.set(spec.entryName, IntensityEstimates.estimate(spec));
    }
    return this.byEntry;
  }
}

const colors = ["#3b73b9", "#d1495b", "#2a9d8f", "#e9a03b"];

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const formatNumber = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toPrecision(2));

/**
 * A log-log roofline chart as a standalone SVG: the roofs per backend, the points labelled (each circle also
 * carries its figures as data- attributes); `omitted` names what has no place on it.
 */
export function rooflineSvg(points: readonly RooflinePoint[], roofs: readonly Roof[], title: string, omitted: readonly string[] = []): string {
  const width = 900;
  const height = 560;
  const left = 80;
  const right = 260;
  const top = 50;
  const bottom = 60;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const xs = [...points.map((p) => p.intensity), ...roofs.flatMap((r) => (r.bandwidth && r.peak ? [r.peak.gflops / r.bandwidth] : []))];
  const ys = [...points.map((p) => p.gflops), ...roofs.flatMap((r) => (r.peak ? [r.peak.gflops] : []))];
  const decade = (x: number, up: boolean) => 10 ** (up ? Math.ceil(Math.log10(x)) : Math.floor(Math.log10(x)));
  const xMin = decade(Math.min(0.01, ...xs), false);
  const xMax = decade(Math.max(10, ...xs) * 1.5, true);
  const yMin = decade(Math.min(...ys, ...roofs.flatMap((r) => (r.bandwidth ? [r.bandwidth * xMin] : []))), false);
  const yMax = decade(Math.max(...ys, 1) * 1.5, true);
  const x = (v: number) => left + (Math.log10(v / xMin) / Math.log10(xMax / xMin)) * plotWidth;
  const y = (v: number) => top + plotHeight - (Math.log10(v / yMin) / Math.log10(yMax / yMin)) * plotHeight;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="28" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `<rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}" fill="none" stroke="#999"/>`,
    // Roofs run past the plot where a peak or bandwidth is off its scale: they are cut at its edge.
    `<clipPath id="plot"><rect x="${left}" y="${top}" width="${plotWidth}" height="${plotHeight}"/></clipPath>`,
  ];
  for (let v = xMin; v <= xMax * 1.0001; v *= 10) {
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${top}" x2="${x(v).toFixed(1)}" y2="${top + plotHeight}" stroke="#eee"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${top + plotHeight + 16}" text-anchor="middle">${formatNumber(v)}</text>`);
  }
  for (let v = yMin; v <= yMax * 1.0001; v *= 10) {
    out.push(`<line x1="${left}" y1="${y(v).toFixed(1)}" x2="${left + plotWidth}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${formatNumber(v)}</text>`);
  }
  out.push(`<text x="${left + plotWidth / 2}" y="${height - 18}" text-anchor="middle">arithmetic intensity (flops per byte of global memory, estimated from the source)</text>`);
  out.push(`<text x="18" y="${top + plotHeight / 2}" transform="rotate(-90 18 ${top + plotHeight / 2})" text-anchor="middle">GFLOP/s</text>`);
  const backends = [...new Set([...roofs.map((r) => r.backend), ...points.map((p) => p.backend)])];
  const color = (backend: string) => colors[backends.indexOf(backend) % colors.length]!;
  let legend = top + 10;
  const note = (text: string, fill = "#333", indent = 0) => {
    out.push(`<text x="${left + plotWidth + 14 + indent}" y="${legend}" fill="${fill}">${escapeXml(text)}</text>`);
    legend += 16;
  };
  const plotted: string[] = [];
  if (omitted.length > 0) {
    note("not shown (0 flops per byte, estimated):");
    for (const label of omitted) note(label, "#333", 10);
  }
  for (const roof of roofs) {
    const c = color(roof.backend);
    note(`${roof.device} (${roof.backend})`, c);
    const ridge = roof.bandwidth && roof.peak ? roof.peak.gflops / roof.bandwidth : undefined;
    if (roof.bandwidth) {
      const end = ridge ?? xMax;
      plotted.push(`<line x1="${x(xMin).toFixed(1)}" y1="${y(roof.bandwidth * xMin).toFixed(1)}" x2="${x(end).toFixed(1)}" y2="${y(roof.bandwidth * end).toFixed(1)}" stroke="${c}" stroke-width="2"/>`);
      note(`memory: copy ${formatNumber(roof.bandwidth)} GB/s`, c, 10);
    } else note("memory: no copy measured", c, 10);
    if (roof.peak) {
      const dash = roof.peak.source === "measured" ? ` stroke-dasharray="6 4"` : "";
      plotted.push(`<line x1="${x(ridge ?? xMin).toFixed(1)}" y1="${y(roof.peak.gflops).toFixed(1)}" x2="${x(xMax).toFixed(1)}" y2="${y(roof.peak.gflops).toFixed(1)}" stroke="${c}" stroke-width="2"${dash}/>`);
      note(`compute: ${roof.peak.source === "nominal" ? "nominal FP32 peak" : "fastest measured"} ${formatNumber(roof.peak.gflops)} GFLOP/s`, c, 10);
    } else note("compute: no known peak", c, 10);
  }
  for (const point of points) {
    const c = color(point.backend);
    plotted.push(`<circle cx="${x(point.intensity).toFixed(1)}" cy="${y(point.gflops).toFixed(1)}" r="4" fill="${c}" data-label="${escapeXml(point.label)}" data-intensity="${point.intensity}" data-gflops="${point.gflops}"/>`);
    plotted.push(`<text x="${(x(point.intensity) + 6).toFixed(1)}" y="${(y(point.gflops) - 5).toFixed(1)}" fill="${c}" font-size="9">${escapeXml(point.label)}</text>`);
  }
  out.push(`<g clip-path="url(#plot)">`, ...plotted, "</g>", "</svg>");
  return `${out.join("\n")}\n`;
}

/** The matmul bench's rows on the roofline: each rung's measured GFLOP/s at its estimated intensity. */
export function matmulPoints(
  rows: readonly { backend: string; n: number; variant: string; specialization?: Readonly<Record<string, number>>; gflops: number }[],
  rungOf: (backend: string, variant: string) => { readonly file: string; readonly kernel: string } | undefined,
  estimates: IntensityEstimates,
): RooflinePoint[] {
  const points: RooflinePoint[] = [];
  for (const row of rows) {
    const rung = rungOf(row.backend, row.variant);
    if (!rung || !Number.isFinite(row.gflops) || row.gflops <= 0) continue;
    const ratio = estimates.of(rung.file, rung.kernel, row.specialization);
    if (ratio !== undefined) points.push({ label: `${row.variant} n=${row.n}`, backend: row.backend, intensity: ratio, gflops: row.gflops });
  }
  return points;
}

/**
 * The launch of a case that moves the most global memory per thread (the terms of the highest degree, then
 * their sum): a case's main kernel, not the one that clears its counters first.
 */
function mainLaunch(launches: readonly string[], estimates: ReadonlyMap<string, CostEstimate>): CostEstimate | undefined {
  let best: { estimate: CostEstimate; degree: number; coefficient: number } | undefined;
  for (const launch of launches) {
    const estimate = estimates.get(launch);
    if (!estimate) continue;
    const { degree, coefficient } = leadingTerms(estimate.globalBytes);
    if (!best || degree > best.degree || (degree === best.degree && coefficient > best.coefficient)) best = { estimate, degree, coefficient };
  }
  return best?.estimate;
}

/**
 * The memory-bound suite's rows on the roofline: a row's intensity is its main launch's (the one that moves
 * the most global memory per thread), its flop rate that times its effective GB/s.
 */
export function kernelSuitePoints(
  rows: readonly { backend: string; kernel: string; label: string; launches?: readonly string[]; gbps?: number }[],
  estimates: ReadonlyMap<string, CostEstimate>,
): { points: RooflinePoint[]; omitted: string[] } {
  const points: RooflinePoint[] = [];
  const omitted = new Set<string>();
  for (const row of rows) {
    const main = row.launches ? mainLaunch(row.launches, estimates) : undefined;
    const ratio = main ? intensity(main) : undefined;
    if (row.gbps === undefined || !Number.isFinite(row.gbps)) continue;
    // A kernel estimated at 0 flops per byte (a transpose) has no place on a logarithmic axis.
    if (ratio === undefined || ratio <= 0) omitted.add(row.kernel);
    else points.push({ label: `${row.kernel} ${row.label}`, backend: row.backend, intensity: ratio, gflops: ratio * row.gbps });
  }
  return { points, omitted: [...omitted] };
}
