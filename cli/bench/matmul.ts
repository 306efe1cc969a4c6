/**
 * `tskernel bench matmul`: every rung of the matmul ladder at each size on one backend (and the tensor-core
 * rungs, TF32, where the backend has matrix operations: mma, and wgmma on sm_90), with the vendor
 * library as the reference column where the backend has one (cuBLAS SGEMM, FP32 and TF32, on CUDA).
 * Timing: one warm-up launch, then the median of the timed launches spread over three sets of inputs (so a
 * small problem does not stay in cache between launches), each timed by the device (CUDA events, WebGPU
 * timestamp queries, performance.now on the CPU). Inputs are random in [-1, 1]. Errors are against a float64
 * reference: the whole matrix up to n = 512, a random sample of 1024 elements above (the full reference at
 * n = 4096 would take minutes of CPU time per size). A backend without a vendor library (WebGPU) gets its
 * percentages from reference times measured elsewhere in the same run (cuBLAS FP32 from the CUDA part), when
 * the run has them; otherwise its rows stay absolute.
 */

import type { Device, DeviceBuffer, KernelHandle, ReferenceGemm, Timing } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import { compareToReference, referenceGemm, referenceGemmAt, type ErrorReport } from "../../runtime/reference.ts";
import { roundToBf16, roundToF16 } from "../../compiler/lang/float16.ts";
import { benchVariants, unsupportedSize, type MatmulVariant } from "../demo/variants.ts";

export interface BenchRow {
  readonly backend: string;
  readonly n: number;
  readonly variant: string;
  readonly specialization?: Readonly<Record<string, number>>;
  readonly ms: number;
  readonly gflops: number;
  /** Percentage of the reference library's FP32 throughput at the same size, same run. */
  readonly percentOfReference?: number;
  /** The reference that percentage is of (e.g. "cuBLAS SGEMM (FP32)", or "cuBLAS SGEMM (FP32) on cuda" for another backend's). */
  readonly percentOf?: string;
  readonly error?: ErrorReport;
  readonly errorMethod?: string;
  /** "tf32" for the tensor-core rung, whose error is held to TF32's tolerance (matmulTolerance). */
  readonly precision?: "tf32";
  /**
   * The element type of A, B and C of a 16-bit rung or reference (bf16, f16): its error is against a float64
   * product of the same 16-bit inputs (matmulTolerance16), its percentage of the 16-bit reference in that type.
   */
  readonly dtype?: "bf16" | "f16";
  readonly note?: string;
}

export interface BenchOptions {
  readonly sizes: readonly number[];
  readonly runs: number;
  readonly library: KernelLibrary;
  readonly variants?: readonly MatmulVariant[];
  readonly references?: readonly ReferenceGemm[];
  /**
   * FP32 reference times by n measured on another device in the same run, for a backend with no reference of
   * its own (`references` empty): the WebGPU rows then get percentages of cuBLAS from the CUDA rows.
   */
  readonly externalReference?: { readonly name: string; readonly msByN: ReadonlyMap<number, number> };
  readonly onProgress?: (message: string) => void;
}

/** The times of one reference row by n (default: cuBLAS FP32), to pass as another backend's externalReference. */
export function referenceTimes(rows: readonly BenchRow[], name = "cuBLAS SGEMM (FP32)"): Map<number, number> {
  return new Map(rows.filter((r) => r.variant === name && Number.isFinite(r.ms)).map((r) => [r.n, r.ms]));
}

function random(length: number): Float32Array {
  return Float32Array.from({ length }, () => Math.random() * 2 - 1);
}

/** The inputs of one element type at one size: three sets of A, B and C, and the float64 reference of the first. */
interface InputSets {
  readonly sets: { readonly a: DeviceBuffer; readonly b: DeviceBuffer; readonly c: DeviceBuffer }[];
  readonly expected: ArrayLike<number>;
}

const rounders = { bf16: roundToBf16, f16: roundToF16 } as const;

export async function benchMatmul(device: Device, options: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const variants = (options.variants ?? benchVariants(options.library, device.backend)).filter((v) => v.id !== "tiled-2x2" && v.id !== "sgemm-naive");
  for (const n of options.sizes) {
    // The f32 inputs; the 16-bit rungs get their roundings (made when a rung or reference of the type first needs
    // them), compared with a float64 product of the rounded values.
    const values = [0, 1, 2].map(() => ({ A: random(n * n), B: random(n * n) }));
    const sample = n <= 512 ? undefined : Array.from({ length: 1024 }, () => Math.floor(Math.random() * n * n));
    const inputs = new Map<string, InputSets>();
    const inputsOf = (dtype: "f32" | "bf16" | "f16"): InputSets => {
      let made = inputs.get(dtype);
      if (!made) {
        const round = dtype === "f32" ? (x: number) => x : rounders[dtype];
        const rounded = values.map(({ A, B }) => (dtype === "f32" ? { A, B } : { A: Float64Array.from(A, round), B: Float64Array.from(B, round) }));
        const sets = rounded.map(({ A, B }) =>
          dtype === "f32"
            ? { a: device.createBuffer(A as Float32Array), b: device.createBuffer(B as Float32Array), c: device.createBuffer("f32", n * n) }
            : { a: device.createBuffer(dtype, A), b: device.createBuffer(dtype, B), c: device.createBuffer(dtype, n * n) },
        );
        const { A, B } = rounded[0]!;
        made = { sets, expected: sample ? referenceGemmAt(n, n, A, B, sample) : referenceGemm(n, n, n, A, B) };
        inputs.set(dtype, made);
      }
      return made;
    };
    const flops = 2 * n ** 3;
    // The reference time of each element type: f32 rows are percentages of the first f32 reference (cuBLAS FP32),
    // 16-bit rows of the reference in their type (cuBLAS's GEMM in bf16 or f16) where the run has one.
    const referenceMs = new Map<string, { ms: number; name: string }>();
    for (const reference of options.references ?? []) {
      options.onProgress?.(`n=${n}: ${reference.name}`);
      const dtype = reference.dtype ?? "f32";
      const runs: number[] = [];
      for (const set of inputsOf(dtype).sets) runs.push(...reference.time(reference.enqueue(n, set.a, set.b, set.c), Math.max(1, Math.ceil(options.runs / 3))).runsMs);
      const ms = median(runs);
      if (!referenceMs.has(dtype)) referenceMs.set(dtype, { ms, name: reference.name });
      const base = referenceMs.get(dtype)!;
      rows.push({ backend: device.backend, n, variant: reference.name, ...(reference.dtype ? { dtype: reference.dtype } : {}), ms, gflops: flops / (ms * 1e6), percentOfReference: (100 * base.ms) / ms, percentOf: base.name });
    }
    if (!referenceMs.has("f32") && options.externalReference?.msByN.has(n)) {
      referenceMs.set("f32", { ms: options.externalReference.msByN.get(n)!, name: options.externalReference.name });
    }
    for (const variant of variants) {
      const dtype = variant.dtype ?? "f32";
      const base = { backend: device.backend, n, variant: variant.id, ...(variant.precision ? { precision: variant.precision } : {}), ...(variant.dtype ? { dtype: variant.dtype } : {}) };
      const unsupported = unsupportedSize(variant, n);
      if (unsupported) {
        rows.push({ ...base, ms: Number.NaN, gflops: Number.NaN, note: unsupported });
        continue;
      }
      const kernel = options.library.firstFitting(variant.kernel, variant.specializations, device.limits);
      if (!kernel) {
        rows.push({ ...base, ms: Number.NaN, gflops: Number.NaN, note: "its block is larger than this device allows" });
        continue;
      }
      const refused = deviceRefuses(device, kernel);
      if (refused) {
        rows.push({ ...base, ms: Number.NaN, gflops: Number.NaN, note: refused });
        continue;
      }
      options.onProgress?.(`n=${n}: ${variant.id}`);
      const constants = kernel.description.specialization as Record<string, number>;
      const { sets, expected } = inputsOf(dtype);
      const runs: number[] = [];
      let error: ErrorReport | undefined;
      for (const [index, set] of sets.entries()) {
        const launch = variant.launch(n, { A: set.a, B: set.b, C: set.c, device }, 1, 0, constants);
        if (index === 0) {
          // Poison C with NaN: every rung must write every element (the rungs ignore C when beta = 0).
          await device.write(set.c, new Float32Array(n * n).fill(Number.NaN));
          await device.launch(kernel, launch);
          const result = (await device.read(set.c)) as Float32Array;
          error = compareToReference(sample ? Float32Array.from(sample, (i) => result[i]!) : result, expected);
        }
        runs.push(...(await device.time(kernel, launch, { warmup: index === 0 ? 1 : 0, runs: Math.max(1, Math.ceil(options.runs / 3)) })).runsMs);
        launch.release?.();
      }
      const ms = median(runs);
      const reference = referenceMs.get(dtype);
      rows.push({
        ...base,
        specialization: Object.keys(constants).length > 0 ? constants : undefined,
        ms,
        gflops: flops / (ms * 1e6),
        ...(reference !== undefined ? { percentOfReference: (100 * reference.ms) / ms, percentOf: reference.name } : {}),
        error,
        errorMethod: `${sample ? "float64 reference at 1024 random elements" : "float64 reference, every element"}${variant.dtype ? ` (of the ${variant.dtype} inputs)` : ""}`,
      });
    }
  }
  return rows;
}

/**
 * Why the device cannot run a kernel that the library holds for it: wgmma (a kernel whose manifest `matrix` is
 * "warpgroup") exists on sm_90 GPUs only, and the CUDA device refuses it on others (a LaunchError); the row says
 * so instead. The CPU's emulation runs it anywhere.
 */
function deviceRefuses(device: Device, kernel: KernelHandle): string | undefined {
  const arch = (device as Device & { readonly arch?: string }).arch;
  if (device.backend === "cuda" && kernel.description.matrix === "warpgroup" && arch !== "sm_90") return `wgmma needs an sm_90 GPU (Hopper); this one is ${arch}`;
  return undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One table; a backend column is added when the rows come from more than one backend. */
export function formatBenchTable(rows: readonly BenchRow[]): string {
  const several = new Set(rows.map((r) => r.backend)).size > 1;
  const header = ["n", "variant", "time (ms)", "GFLOP/s", "% of ref", "norm rel err", "note"];
  const lines = rows.map((r) => [
    String(r.n),
    several ? `${r.variant} (${r.backend})` : r.variant,
    Number.isFinite(r.ms) ? r.ms.toFixed(3) : "-",
    Number.isFinite(r.gflops) ? r.gflops.toFixed(1) : "-",
    r.percentOfReference !== undefined && Number.isFinite(r.percentOfReference) ? `${r.percentOfReference.toFixed(1)} %` : "-",
    r.error ? r.error.normwiseRelative.toExponential(2) : "-",
    r.note ?? "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 1 || i === 6 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [format(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(format)].join("\n");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A horizontal bar chart of GFLOP/s, one panel per size, as a standalone SVG. */
export function benchChartSvg(rows: readonly BenchRow[], title: string): string {
  const sizes = [...new Set(rows.map((r) => r.n))];
  const barHeight = 18;
  const labelWidth = 190;
  const chartWidth = 520;
  const panels = sizes.map((n) => rows.filter((r) => r.n === n && Number.isFinite(r.gflops)));
  const several = new Set(rows.map((r) => r.backend)).size > 1;
  const height = 50 + panels.reduce((sum, p) => sum + 34 + p.length * (barHeight + 4), 0);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + chartWidth + 150}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  let y = 50;
  panels.forEach((panel, index) => {
    const max = Math.max(...panel.map((r) => r.gflops), 1);
    out.push(`<text x="10" y="${y + 14}" font-weight="bold">n = ${sizes[index]}</text>`);
    y += 24;
    for (const row of panel) {
      const width = Math.max(1, (row.gflops / max) * chartWidth);
      const isReference = row.percentOfReference !== undefined && row.variant.includes("BLAS");
      const label = `${row.gflops >= 100 ? row.gflops.toFixed(0) : row.gflops.toFixed(1)} GFLOP/s${row.percentOfReference !== undefined && !isReference ? ` (${row.percentOfReference.toFixed(0)} %)` : ""}`;
      out.push(`<text x="${labelWidth - 8}" y="${y + 13}" text-anchor="end">${escapeXml(several ? `${row.variant} (${row.backend})` : row.variant)}</text>`);
      out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${barHeight}" fill="${isReference ? "#888" : "#3b73b9"}"/>`);
      out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 13}">${escapeXml(label)}</text>`);
      y += barHeight + 4;
    }
    y += 10;
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
