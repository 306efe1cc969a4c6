/**
 * `tskernel bench launch`: what a launch costs the host, and whether a chain of real kernels runs at the GPU's
 * speed. Two parts, on one device:
 * - a tiny kernel (examples/elementwise.ts' saxpy on 1024 elements), launched in bursts: the host time per
 *   launch while launches are only enqueued (`await device.launch()` in a loop, and launches not awaited at
 *   all), per launch with a synchronize after each (the round trip), and per kernel of a recorded sequence of
 *   ten replayed; beside the kernel's own time on the device's clock;
 * - a ten-launch sequence of the suite's kernels at realistic sizes (layer norm, a GEMM, GELU, a GEMM, SAXPY,
 *   softmax, transpose, layer norm, and a two-launch sum), each launch's output checked against float64 after
 *   one run, then its wall time per sequence, launched and replayed back to back (the steady state, from the
 *   first launch to the synchronize after the last run, over the runs), against the sum of its launches' own
 *   times (device.time of each). The kernels have buffers of their own: the launches run in order on one queue
 *   whatever their data, as a layer's would.
 * Browser-safe (no Node), so that a web page runs the same measurement (bench/browser-launch.ts).
 */

import type { Device, DeviceBuffer, KernelHandle, LaunchStep } from "../../runtime/device.ts";
import { median } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import { compareToReference, referenceGemm } from "../../runtime/reference.ts";
import { seedVariants } from "../demo/variants.ts";
import { allocate, launchSteps, randomArray } from "../kernels-bench/bench.ts";
import { kernelCases, shapeLabel, type Shape } from "../kernels-bench/cases.ts";
import { checkResult } from "../kernels-bench/checks.ts";

/** The example files a launch benchmark's library needs. */
export const launchBenchFiles: readonly string[] = ["examples/elementwise.ts", "examples/elementwise-vec4.ts", "examples/layer-norm.ts", "examples/softmax.ts", "examples/transpose-vec4.ts", "examples/transpose-aligned.ts", "examples/transpose.ts", "examples/sum-vec4.ts", "examples/sgemm-warptiling.ts"];

export interface LaunchBenchOptions {
  readonly library: KernelLibrary;
  /** "gpu": the realistic shapes (layer of 4096 × 1024, GEMM of 1024³); "small": a CPU's or SwiftShader's. */
  readonly scale: "gpu" | "small";
  /** Launches per burst of the tiny kernel (default 1000), and bursts (default 10; the median is kept). */
  readonly burst?: number;
  readonly bursts?: number;
  /** Timed runs of the sequence (default 5; median kept). */
  readonly runs?: number;
  readonly onProgress?: (message: string) => void;
}

export interface TinyLaunchResult {
  readonly kernel: string;
  readonly elements: number;
  /** The kernel's own time on the device's clock, µs. */
  readonly kernelUs: number;
  readonly kernelMethod: string;
  readonly burst: number;
  /**
   * Host µs per launch: `await device.launch()` in a loop (enqueue only), then the same with the burst's
   * synchronize: when that is well above the enqueue alone, the device ran behind the host, and a long burst
   * may have waited for it (a full queue blocks the launch call).
   */
  readonly queuedUs: number;
  readonly queuedWithSyncUs: number;
  /** Host µs per launch made without awaiting its promise. */
  readonly notAwaitedUs: number;
  /** The same in bursts of 100, short enough that no queue fills: the host's own cost. */
  readonly shortBurst: { readonly burst: number; readonly queuedUs: number; readonly queuedWithSyncUs: number; readonly notAwaitedUs: number };
  /** Awaited enqueue in bursts of 100 on a stream of the device's (device.createStream()) rather than its own queue. */
  readonly onStreamUs: number;
  /** µs per launch followed by `await device.synchronize()`: the round trip. */
  readonly synchronizedUs: number;
  /** Host µs per kernel of a recorded ten-launch sequence replayed (`await sequence.replay()`), and with the synchronize. */
  readonly replayedUs: number;
  readonly replayedWithSyncUs: number;
}

export interface SequenceStepResult {
  readonly name: string;
  readonly shape: string;
  readonly ms: number;
  readonly method: string;
  readonly pass: boolean;
  readonly error?: number;
}

export interface SequenceResult {
  readonly launches: number;
  readonly steps: readonly SequenceStepResult[];
  /** Σ of the launches' own times, ms. */
  readonly sumMs: number;
  /** Wall ms per sequence, back to back: launched one by one, and as a recorded sequence replayed. */
  readonly launchedMs: number;
  readonly replayedMs: number;
  /** Wall ms of one sequence from its first launch to the end of its synchronize (nothing else in flight). */
  readonly oneShotMs: number;
  readonly repeats: number;
  readonly launchedRatio: number;
  readonly replayedRatio: number;
  readonly pass: boolean;
}

export interface LaunchBenchReport {
  readonly backend: string;
  readonly device: string;
  readonly date: string;
  readonly tiny: TinyLaunchResult;
  readonly sequence: SequenceResult;
  /** WebGPU: launches per submission at most, and the submissions the run made. */
  readonly batching?: { readonly batchSize: number; readonly submissions: number };
}

const now = () => globalThis.performance.now();

/** The median of `trials` runs of `run`, each returning µs. */
async function medianOf(trials: number, run: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < trials; i++) values.push(await run());
  return median(values);
}

async function tinyLaunches(device: Device, library: KernelLibrary, burst: number, bursts: number): Promise<TinyLaunchResult> {
  const kernel = library.get("saxpy");
  const n = 1024;
  const x = device.createBuffer(randomArray(n, -1, 1));
  const y = device.createBuffer(randomArray(n, -1, 1));
  // a = 0: y stays as it is however many launches run, so that no value grows without bound.
  const options = { grid: [n / 256] as [number], args: [n, 0, x, y] };
  for (let i = 0; i < 50; i++) await device.launch(kernel, options);
  await device.synchronize();
  const timing = await device.time(kernel, options, { warmup: 5, runs: 50 });
  const perLaunch = (start: number, count: number) => ((now() - start) * 1000) / count;
  /** Median host µs per launch over the bursts: awaited enqueue, the same with the burst's synchronize, not awaited. */
  const timeBursts = async (size: number) => {
    const withSync: number[] = [];
    const queued = await medianOf(bursts, async () => {
      const start = now();
      for (let i = 0; i < size; i++) await device.launch(kernel, options);
      const enqueued = perLaunch(start, size);
      await device.synchronize();
      withSync.push(perLaunch(start, size));
      return enqueued;
    });
    const notAwaited = await medianOf(bursts, async () => {
      const start = now();
      for (let i = 0; i < size; i++) void device.launch(kernel, options);
      const enqueued = perLaunch(start, size);
      await device.synchronize();
      return enqueued;
    });
    return { burst: size, queuedUs: queued, queuedWithSyncUs: median(withSync), notAwaitedUs: notAwaited };
  };
  // Discarded: the first bursts meet a cold JIT (and on a GPU cold queues).
  await timeBursts(Math.min(100, burst));
  const long = await timeBursts(burst);
  const shortBurst = await timeBursts(Math.min(100, burst));
  const stream = device.createStream();
  const onStream = { ...options, stream };
  const onStreamUs = await medianOf(bursts, async () => {
    const start = now();
    for (let i = 0; i < shortBurst.burst; i++) await device.launch(kernel, onStream);
    const enqueued = perLaunch(start, shortBurst.burst);
    await stream.synchronize();
    return enqueued;
  });
  stream.dispose();
  const roundTrips = Math.max(20, Math.floor(burst / 10));
  const synchronizedUs = await medianOf(bursts, async () => {
    const start = now();
    for (let i = 0; i < roundTrips; i++) {
      await device.launch(kernel, options);
      await device.synchronize();
    }
    return perLaunch(start, roundTrips);
  });
  const sequence = await device.record(Array.from({ length: 10 }, () => ({ kernel, options })));
  const replays = Math.max(1, Math.floor(burst / 10));
  let replayedWithSync = 0;
  const replayedUs = await medianOf(bursts, async () => {
    const start = now();
    for (let i = 0; i < replays; i++) await sequence.replay();
    const enqueued = perLaunch(start, replays * 10);
    await device.synchronize();
    replayedWithSync += perLaunch(start, replays * 10) / bursts;
    return enqueued;
  });
  sequence.dispose();
  device.free(x);
  device.free(y);
  return {
    kernel: kernel.description.entryName,
    elements: n,
    kernelUs: timing.medianMs * 1000,
    kernelMethod: timing.method,
    burst,
    queuedUs: long.queuedUs,
    queuedWithSyncUs: long.queuedWithSyncUs,
    notAwaitedUs: long.notAwaitedUs,
    shortBurst,
    onStreamUs,
    synchronizedUs,
    replayedUs,
    replayedWithSyncUs: replayedWithSync,
  };
}

interface SequencePart {
  readonly name: string;
  readonly shape: string;
  readonly steps: readonly LaunchStep[];
  /** Checks the output after one run of the sequence: pass and the largest error. */
  check(): Promise<{ pass: boolean; error: number }>;
  readonly buffers: readonly DeviceBuffer[];
}

/** A case of the memory-bound suite at one shape, with buffers of its own (inputs random, outputs poisoned). */
async function casePart(device: Device, library: KernelLibrary, id: string, shape: Shape): Promise<SequencePart> {
  const kernelCase = kernelCases.find((c) => c.id === id)!;
  const unsupported = kernelCase.unsupported(shape);
  if (unsupported) throw new Error(`tskernel: bench launch: ${id} at ${shapeLabel(shape)}: ${unsupported}`);
  const instance = kernelCase.build(shape, { library, limits: device.limits, backend: device.backend });
  const set = await allocate(device, instance);
  return {
    name: id,
    shape: shapeLabel(shape),
    steps: launchSteps(instance, set.buffers),
    buffers: [...set.buffers.values()],
    check: async () => {
      const result = checkResult(await device.read(set.buffers.get(instance.output)!), instance.reference(set.inputs), instance.check);
      return { pass: result.pass, error: result.maxRelative ?? result.maxOfAllowed ?? result.normwiseRelative };
    },
  };
}

/** C = A·B (n × n) with the warp-tiled SGEMM (examples/sgemm-warptiling.ts), checked as the demo checks it. */
async function gemmPart(device: Device, library: KernelLibrary, n: number): Promise<SequencePart> {
  const variant = seedVariants.find((v) => v.id === "sgemm-warptiling")!;
  const kernel: KernelHandle | undefined = library.firstFitting(variant.kernel, variant.specializations, device.limits);
  if (!kernel) throw new Error("tskernel: bench launch: no build of sgemmWarptiling fits this device");
  const A = randomArray(n * n, -1, 1);
  const B = randomArray(n * n, -1, 1);
  const buffers = { A: device.createBuffer(A), B: device.createBuffer(B), C: device.createBuffer(new Float32Array(n * n).fill(Number.NaN)), device };
  const launch = variant.launch(n, buffers, 1, 0, kernel.description.specialization as Record<string, number>);
  return {
    name: "sgemm-warptiling",
    shape: `${n}³`,
    steps: [{ kernel, options: { grid: launch.grid, block: launch.block, args: launch.args } }],
    buffers: [buffers.A, buffers.B, buffers.C],
    check: async () => {
      const errors = compareToReference((await device.read(buffers.C)) as Float32Array, referenceGemm(n, n, n, A, B));
      return { pass: errors.nonFinite === 0 && errors.normwiseRelative <= n * 2 ** -23, error: errors.normwiseRelative };
    },
  };
}

async function kernelSequence(device: Device, library: KernelLibrary, scale: "gpu" | "small", runs: number, progress: (m: string) => void): Promise<SequenceResult> {
  const [rows, cols] = scale === "gpu" ? [4096, 1024] : [256, 256];
  const gemmN = scale === "gpu" ? 1024 : 128;
  const flat = [rows * cols];
  progress(`sequence: building (rows ${rows}, cols ${cols}, GEMM ${gemmN}³)`);
  const parts = [
    await casePart(device, library, "layernorm", [rows, cols]),
    await gemmPart(device, library, gemmN),
    await casePart(device, library, "gelu", flat),
    await gemmPart(device, library, gemmN),
    await casePart(device, library, "saxpy", flat),
    await casePart(device, library, "softmax", [rows, cols]),
    await casePart(device, library, "transpose", [rows, cols]),
    await casePart(device, library, "layernorm", [rows, cols]),
    await casePart(device, library, "sum", flat),
  ];
  const steps = parts.flatMap((p) => p.steps);
  // One run, launches not awaited, then every output against float64.
  for (const step of steps) void device.launch(step.kernel, step.options);
  await device.synchronize();
  const checks = [];
  for (const part of parts) checks.push(await part.check());
  progress(`sequence: ${steps.length} launches, checks ${checks.every((c) => c.pass) ? "pass" : "FAIL"}`);
  const results: SequenceStepResult[] = [];
  for (const [i, part] of parts.entries()) {
    for (const [j, step] of part.steps.entries()) {
      const timing = await device.time(step.kernel, step.options, { warmup: 2, runs: Math.max(runs, 10) });
      results.push({ name: part.steps.length > 1 ? `${part.name} (launch ${j + 1})` : part.name, shape: part.shape, ms: timing.medianMs, method: timing.method, pass: checks[i]!.pass, error: checks[i]!.error });
    }
  }
  const sumMs = results.reduce((total, r) => total + r.ms, 0);
  // Enough runs back to back that the sequence's work is about 50 ms; at least 5.
  const repeats = Math.max(5, Math.min(200, Math.ceil(50 / Math.max(sumMs, 1e-3))));
  const backToBack = async (runOnce: () => Promise<void>) =>
    medianOf(runs, async () => {
      await device.synchronize();
      const start = now();
      for (let i = 0; i < repeats; i++) await runOnce();
      await device.synchronize();
      return (now() - start) / repeats;
    });
  const launchAll = async () => {
    for (const step of steps) await device.launch(step.kernel, step.options);
  };
  const launchedMs = await backToBack(launchAll);
  const recorded = await device.record(steps);
  const replayedMs = await backToBack(() => recorded.replay());
  recorded.dispose();
  const oneShotMs = await medianOf(runs, async () => {
    await device.synchronize();
    const start = now();
    await launchAll();
    await device.synchronize();
    return now() - start;
  });
  for (const part of parts) for (const buffer of part.buffers) device.free(buffer);
  return {
    launches: steps.length,
    steps: results,
    sumMs,
    launchedMs,
    replayedMs,
    oneShotMs,
    repeats,
    launchedRatio: launchedMs / sumMs,
    replayedRatio: replayedMs / sumMs,
    pass: checks.every((c) => c.pass),
  };
}

export async function benchLaunch(device: Device, options: LaunchBenchOptions): Promise<LaunchBenchReport> {
  const progress = options.onProgress ?? (() => {});
  const burst = options.burst ?? 1000;
  const bursts = options.bursts ?? 10;
  progress(`tiny kernel: bursts of ${burst} launches`);
  const tiny = await tinyLaunches(device, options.library, burst, bursts);
  const sequence = await kernelSequence(device, options.library, options.scale, options.runs ?? 5, progress);
  const batcher = (device as { batcher?: { batchSize: number; submissions: number } }).batcher;
  return {
    backend: device.backend,
    device: device.name,
    date: new Date().toISOString(),
    tiny,
    sequence,
    ...(batcher ? { batching: { batchSize: batcher.batchSize, submissions: batcher.submissions } } : {}),
  };
}

/** PyTorch's per-op figures from bench/torch-launch.py (same GPU, same run), for the CUDA report. */
export interface TorchLaunchResult {
  readonly torch: string;
  readonly device: string;
  readonly op: string;
  readonly queuedUs: number;
  readonly synchronizedUs: number;
  readonly graphReplayedUs: number;
  readonly kernelUs: number;
  readonly burst?: number;
  /** µs per op queued in bursts of 100. */
  readonly queuedShortUs?: number;
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "-");

export function formatLaunchReport(report: LaunchBenchReport, torch?: TorchLaunchResult): string {
  const t = report.tiny;
  const s = report.sequence;
  const lines = [
    `${report.device} (${report.backend})`,
    `tiny kernel '${t.kernel}' on ${t.elements} elements: ${fixed(t.kernelUs)} µs on the device's clock (${t.kernelMethod})`,
    `  host µs per launch, bursts of ${t.burst}: awaited enqueue ${fixed(t.queuedUs, 2)} (${fixed(t.queuedWithSyncUs, 2)} with the burst's synchronize), not awaited ${fixed(t.notAwaitedUs, 2)}; with a synchronize after each ${fixed(t.synchronizedUs, 1)}`,
    `  bursts of ${t.shortBurst.burst}: awaited enqueue ${fixed(t.shortBurst.queuedUs, 2)} (${fixed(t.shortBurst.queuedWithSyncUs, 2)} with the synchronize), not awaited ${fixed(t.shortBurst.notAwaitedUs, 2)}; on a stream of the device ${fixed(t.onStreamUs, 2)}`,
    `  replayed sequence of 10: ${fixed(t.replayedUs, 2)} µs per kernel (${fixed(t.replayedWithSyncUs, 2)} with the synchronize)`,
    ...(torch ? [`  PyTorch ${torch.torch} (${torch.op}): ${fixed(torch.queuedUs, 2)} µs per op queued in bursts of ${torch.burst ?? 1000}${torch.queuedShortUs !== undefined ? ` (${fixed(torch.queuedShortUs, 2)} in bursts of 100)` : ""}, ${fixed(torch.synchronizedUs, 1)} with a synchronize after each, ${fixed(torch.graphReplayedUs, 2)} per op of a CUDA graph of 10`] : []),
    `sequence of ${s.launches} launches (${s.pass ? "every output checked against float64: pass" : "CHECK FAILED"}):`,
    ...s.steps.map((step) => `  ${step.name.padEnd(26)} ${step.shape.padEnd(12)} ${fixed(step.ms * 1000, 1).padStart(9)} µs${step.pass ? "" : "  FAIL"}`),
    `  sum of own times ${fixed(s.sumMs * 1000, 1)} µs; back to back (${s.repeats} runs): launched ${fixed(s.launchedMs * 1000, 1)} µs (${fixed(100 * s.launchedRatio, 1)} %), replayed ${fixed(s.replayedMs * 1000, 1)} µs (${fixed(100 * s.replayedRatio, 1)} %); one sequence alone, launch to synchronize: ${fixed(s.oneShotMs * 1000, 1)} µs`,
    ...(report.batching ? [`  WebGPU: up to ${report.batching.batchSize} launches per submission, ${report.batching.submissions} submissions in the run`] : []),
  ];
  return lines.join("\n");
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Two panels as a standalone SVG: host µs per launch of the tiny kernel per backend (and PyTorch's per op),
 * and each backend's sequence wall time as a percentage of the sum of its kernels' own times.
 */
export function launchChartSvg(reports: readonly LaunchBenchReport[], title: string, torch?: TorchLaunchResult): string {
  const bars: { label: string; value: number; color: string; text: string }[] = [];
  for (const r of reports) {
    const name = `${r.backend}`;
    bars.push({ label: `${name}: awaited enqueue (bursts of ${r.tiny.shortBurst.burst})`, value: r.tiny.shortBurst.queuedUs, color: "#2a5a99", text: `${fixed(r.tiny.shortBurst.queuedUs, 2)} µs` });
    bars.push({ label: `${name}: awaited enqueue (bursts of ${r.tiny.burst})`, value: r.tiny.queuedUs, color: "#3b73b9", text: `${fixed(r.tiny.queuedUs, 2)} µs` });
    bars.push({ label: `${name}: replayed (per kernel)`, value: r.tiny.replayedUs, color: "#5a9bd5", text: `${fixed(r.tiny.replayedUs, 2)} µs` });
    bars.push({ label: `${name}: synchronize after each`, value: r.tiny.synchronizedUs, color: "#9bbbe0", text: `${fixed(r.tiny.synchronizedUs, 1)} µs` });
  }
  if (torch) {
    if (torch.queuedShortUs !== undefined) bars.push({ label: "PyTorch: op queued (bursts of 100)", value: torch.queuedShortUs, color: "#777", text: `${fixed(torch.queuedShortUs, 2)} µs` });
    bars.push({ label: `PyTorch: op queued (bursts of ${torch.burst ?? 1000})`, value: torch.queuedUs, color: "#888", text: `${fixed(torch.queuedUs, 2)} µs` });
    bars.push({ label: "PyTorch: CUDA graph (per op)", value: torch.graphReplayedUs, color: "#aaa", text: `${fixed(torch.graphReplayedUs, 2)} µs` });
    bars.push({ label: "PyTorch: synchronize after each", value: torch.synchronizedUs, color: "#ccc", text: `${fixed(torch.synchronizedUs, 1)} µs` });
  }
  const ratios = reports.flatMap((r) => [
    { label: `${r.backend}: launched`, value: 100 * r.sequence.launchedRatio },
    { label: `${r.backend}: replayed`, value: 100 * r.sequence.replayedRatio },
  ]);
  const labelWidth = 230;
  const chartWidth = 480;
  const barHeight = 18;
  const height = 120 + (bars.length + ratios.length) * (barHeight + 4) + 40;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + chartWidth + 120}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="10" y="52" font-weight="bold">Host time per launch of a tiny kernel (µs, log scale; lower is better)</text>`,
  ];
  let y = 62;
  const logMax = Math.log10(Math.max(...bars.map((b) => b.value), 10) * 1.2);
  const logMin = -1;
  for (const bar of bars) {
    const width = Math.max(2, ((Math.log10(Math.max(bar.value, 0.1)) - logMin) / (logMax - logMin)) * chartWidth);
    out.push(`<text x="${labelWidth - 8}" y="${y + 13}" text-anchor="end">${escapeXml(bar.label)}</text>`);
    out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${barHeight}" fill="${bar.color}"/>`);
    out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 13}">${escapeXml(bar.text)}</text>`);
    y += barHeight + 4;
  }
  y += 20;
  out.push(`<text x="10" y="${y}" font-weight="bold">Ten-launch sequence, back to back: wall time as % of the sum of its kernels' own times (100 % = no host overhead)</text>`);
  y += 10;
  const ratioMax = Math.max(...ratios.map((r) => r.value), 120);
  const tenPercent = labelWidth + (110 / ratioMax) * chartWidth;
  for (const ratio of ratios) {
    const width = Math.max(2, (ratio.value / ratioMax) * chartWidth);
    out.push(`<text x="${labelWidth - 8}" y="${y + 13}" text-anchor="end">${escapeXml(ratio.label)}</text>`);
    out.push(`<rect x="${labelWidth}" y="${y}" width="${width.toFixed(1)}" height="${barHeight}" fill="${ratio.value <= 110 ? "#3b9b5a" : "#c0504d"}"/>`);
    out.push(`<text x="${(labelWidth + width + 6).toFixed(1)}" y="${y + 13}">${fixed(ratio.value, 1)} %</text>`);
    y += barHeight + 4;
  }
  out.push(`<line x1="${tenPercent.toFixed(1)}" x2="${tenPercent.toFixed(1)}" y1="${y - ratios.length * (barHeight + 4) - 4}" y2="${y}" stroke="#444" stroke-dasharray="4 3"/>`);
  out.push(`<text x="${(tenPercent + 4).toFixed(1)}" y="${y + 14}" fill="#444">110 %</text>`);
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
