/**
 * `tskernel demo`: runs every seed matmul variant on one backend with fresh random inputs, checks each
 * against the float64 reference, and prints one table. A variant passes when its normwise relative error is
 * within k·2⁻²³ (the f32 dot-product error bound with room for reordering) and no element is NaN; outputs
 * are poisoned with NaN before each run so an element a kernel forgets to write cannot pass.
 */

import { compareToReference, referenceGemm, type ErrorReport } from "../../runtime/reference.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { BackendName, Device, Timing } from "../../runtime/device.ts";
import { LaunchError } from "../../runtime/launch-check.ts";
import { formatTable, type TableColumn } from "../table.ts";
import { seedVariants, type MatmulVariant } from "./variants.ts";

export interface DemoRow {
  /** The rung's name, with its constants where the rung has several specializations: `sgemm-vectorized (BM 128, …)`. */
  readonly variant: string;
  /** The values of the specialization that ran (absent for a variant that did not run). */
  readonly constants?: Readonly<Record<string, number>>;
  readonly backend: BackendName;
  readonly size: number;
  /** The size the kernel ran at, when it was padded. */
  readonly paddedSize?: number;
  readonly ms?: number;
  readonly gflops?: number;
  readonly errors?: ErrorReport;
  readonly status: "pass" | "FAIL" | "skipped";
  readonly note?: string;
}

export interface DemoOptions {
  readonly size: number;
  /** The compiled seed kernels (compileSeedLibrary, or loadKernelLibrary on a machine without the compiler). */
  readonly library: KernelLibrary;
  readonly runs?: number;
  readonly variants?: readonly MatmulVariant[];
  readonly onProgress?: (message: string) => void;
}

function randomMatrix(length: number): Float32Array {
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) data[i] = Math.random() * 2 - 1;
  return data;
}

/** Copies an n×n row-major matrix into the top-left of a zeroed N×N one. */
function pad(source: Float32Array, n: number, N: number): Float32Array {
  if (N === n) return source;
  const out = new Float32Array(N * N);
  for (let i = 0; i < n; i++) out.set(source.subarray(i * n, i * n + n), i * N);
  return out;
}

function unpad(source: Float32Array, n: number, N: number): Float32Array {
  if (N === n) return source;
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(source.subarray(i * N, i * N + n), i * n);
  return out;
}

export async function runDemo(device: Device, options: DemoOptions): Promise<{ rows: DemoRow[]; ok: boolean }> {
  const n = options.size;
  const variants = options.variants ?? seedVariants;
  const library = options.library;

  const A = randomMatrix(n * n);
  const B = randomMatrix(n * n);
  const C0 = randomMatrix(n * n);
  const alpha = 0.75;
  const beta = 0.5;
  options.onProgress?.(`computing the float64 reference for n = ${n}`);
  const plain = referenceGemm(n, n, n, A, B);
  const gemm = referenceGemm(n, n, n, A, B, alpha, beta, C0);
  const tolerance = n * 2 ** -23;

  const rows: DemoRow[] = [];
  for (const variant of variants) {
    const base = { variant: variant.id, backend: device.backend, size: n };
    const label = (constants: Record<string, unknown>) => `${variant.id}${variant.specializations && variant.specializations.length > 1 ? ` (${Object.entries(constants).map(([k, v]) => `${k} ${v}`).join(", ")})` : ""}`;
    if (variant.maxN !== undefined && n > variant.maxN) {
      rows.push({ ...base, status: "skipped", note: `the kernel keeps a row of A in shared memory: n ≤ ${variant.maxN}` });
      continue;
    }
    options.onProgress?.(`running ${variant.id}`);
    const N = variant.multipleOf ? Math.ceil(n / variant.multipleOf) * variant.multipleOf : n;
    // The first specialization whose block this device can run; none means the variant cannot run here.
    const kernel = library.firstFitting(variant.kernel, variant.specializations, device.limits);
    if (!kernel) {
      const block = library.get(variant.kernel, variant.specializations?.[0]).description.block!;
      rows.push({ ...base, status: "skipped", note: `needs a block of ${block[0] * block[1] * block[2]} threads; this device allows ${device.limits.maxThreadsPerBlock}` });
      continue;
    }
    const constants = kernel.description.specialization as Record<string, number>;
    let errors: ErrorReport;
    let timing: Timing;
    try {
      const a = device.createBuffer(pad(A, n, N));
      const b = device.createBuffer(pad(B, n, N));
      // Poison: NaN everywhere the kernel should write; sgemm reads C (beta), so it gets C0 instead.
      const initialC = variant.gemm ? pad(C0, n, N) : new Float32Array(N * N).fill(Number.NaN);
      const c = device.createBuffer(initialC);
      const launch = variant.launch(N, { A: a, B: b, C: c, device }, alpha, beta, constants);
      await device.launch(kernel, launch);
      const result = unpad((await device.read(c)) as Float32Array, n, N);
      errors = compareToReference(result, variant.gemm ? gemm : plain);
      // Time further launches; sgemm accumulates into C, which does not change the work done.
      timing = await device.time(kernel, launch, { warmup: 0, runs: options.runs ?? 1 });
      launch.release?.();
    } catch (error) {
      // A launch the backend refuses (e.g. a block larger than the adapter allows) fails this variant only.
      if (!(error instanceof LaunchError)) throw error;
      rows.push({ ...base, status: "FAIL", note: error.message.replace(/^tskernel: /, "") });
      continue;
    }
    const flops = 2 * N * N * N;
    const pass = errors.nonFinite === 0 && errors.normwiseRelative <= tolerance;
    rows.push({
      ...base,
      variant: label(constants),
      constants,
      paddedSize: N !== n ? N : undefined,
      ms: timing.medianMs,
      // A time below the timer's resolution reads as 0: no rate then, rather than an infinite one.
      gflops: timing.medianMs > 0 ? flops / (timing.medianMs * 1e6) : undefined,
      errors,
      status: pass ? "pass" : "FAIL",
      note: pass ? undefined : errors.nonFinite > 0 ? `${errors.nonFinite} elements are NaN or infinite` : `normwise error above ${tolerance.toExponential(1)}`,
    });
  }
  return { rows, ok: rows.every((row) => row.status !== "FAIL") };
}

const demoColumns: readonly TableColumn[] = [
  { header: "variant", align: "left", wrap: true },
  { header: "backend", align: "left" },
  { header: "size", align: "right", wrap: true },
  { header: "time (ms)", align: "right" },
  { header: "GFLOP/s", align: "right" },
  { header: "max rel err", align: "right" },
  { header: "avg rel err", align: "right" },
  { header: "norm rel err", align: "right" },
  { header: "result", align: "left", wrap: true },
];

/**
 * The demo's table. With a `width` (the terminal's), long cells wrap to fit it: the long rungs' constants
 * would otherwise make the variant column 140 characters wide (`--json` has every name whole).
 */
export function formatDemoTable(rows: readonly DemoRow[], width?: number): string {
  const cells = rows.map((row) => [
    row.variant,
    row.backend,
    row.paddedSize ? `${row.size} (padded ${row.paddedSize})` : String(row.size),
    row.ms === undefined ? "-" : row.ms.toFixed(1),
    row.gflops === undefined || !Number.isFinite(row.gflops) ? "-" : row.gflops.toFixed(3),
    row.errors ? row.errors.maxRelative.toExponential(2) : "-",
    row.errors ? row.errors.averageRelative.toExponential(2) : "-",
    row.errors ? row.errors.normwiseRelative.toExponential(2) : "-",
    row.note ? `${row.status}: ${row.note}` : row.status,
  ]);
  return formatTable(demoColumns, cells, width);
}
