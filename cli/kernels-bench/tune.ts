/**
 * `tskernel tune kernels`: the memory-bound suite's block sizes and items per thread, searched on a device.
 * For each case and shape, every setting of the constants the case lists (cases.ts: `space`, e.g. BLOCK and
 * ITEMS, or THREADS, ROWS and ITEMS for the row kernels) is compiled in-process for the device's target,
 * pruned when the device cannot run it (threads, shared memory; on CUDA registers, spills), checked against
 * float64 on a smaller shape of the same kind (partial chunks and tiles included, outputs poisoned), and timed
 * at the shape itself, on inputs shared by every candidate, as the bench times (bench.ts: timeRotating). The three fastest and the case's own choice are
 * timed again back to back at the end, so that the comparison does not depend on the clocks at the moment
 * each was first measured. The report says how far the case's fixed choice is from the fastest: the
 * examples' defaults are meant to be the tuner's choice on the GPU the suite is measured on.
 */

import path from "node:path";
import { createProject, packageRoot } from "../../compiler/index.ts";
import type { Device, DeviceBuffer, Timing } from "../../runtime/device.ts";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import type { KernelHandle } from "../../runtime/device.ts";
import { KernelLibrary } from "../../runtime/library.ts";
import { kernelFits } from "../../runtime/launch-check.ts";
import { createSpecBuffer, initialData, launchSteps, release, runChecked, timeRotating } from "./bench.ts";
import { backendUnsupported, kernelCases, shapeLabel, type CaseInstance, type Constants, type KernelCase, type Shape } from "./cases.ts";

export interface KernelTuneOptions {
  readonly cases?: readonly KernelCase[];
  readonly shapes?: (kernelCase: KernelCase) => readonly Shape[];
  /** Timed runs per candidate (median kept); default 10. */
  readonly runs?: number;
  /** The package root whose examples/ are compiled; default this package's. */
  readonly root?: string;
  /** The library the cases take the kernels outside the search from (scan's middle launch). */
  readonly library: KernelLibrary;
  readonly onProgress?: (line: string) => void;
}

export interface KernelTuneCandidate {
  readonly kernel: string;
  readonly label: string;
  readonly constants: Constants;
  readonly isDefault: boolean;
  readonly status: "ok" | "wrong" | "pruned" | "failed";
  readonly reason?: string;
  readonly ms?: number;
  readonly gbps?: number;
  readonly registers?: number;
  /** Local memory per thread (CUDA): spills, or the stack of a math function's slow path. */
  readonly localBytes?: number;
}

export interface KernelTuneBest {
  readonly kernel: string;
  readonly label: string;
  readonly constants: Constants;
  readonly ms: number;
  readonly gbps: number;
  readonly defaultConstants: Constants;
  readonly defaultMs?: number;
  /** The fixed choice's time over the fastest's: 1 when the fixed choice is the fastest. */
  readonly defaultSlowdown?: number;
  readonly verified: number;
}

export interface KernelTuneReport {
  readonly backend: string;
  readonly device: string;
  readonly date: string;
  readonly candidates: readonly KernelTuneCandidate[];
  readonly best: readonly KernelTuneBest[];
}

/** Every setting of the space, in order. */
export function settingsOf(constants: Readonly<Record<string, readonly (number | boolean)[]>>): Constants[] {
  let settings: Record<string, number | boolean>[] = [{}];
  for (const [name, values] of Object.entries(constants)) settings = settings.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  return settings;
}

/** A smaller shape of the same kind for the float64 check: partial chunks, tiles and rows, the same row length. */
export function checkShape(kernelCase: KernelCase, shape: Shape): Shape {
  if (shape.length === 1) return [Math.min(shape[0]!, 4 * 262_657)];
  const [rows, cols] = shape as [number, number];
  if (kernelCase.id === "transpose") return rows % 4 === 0 && cols % 4 === 0 ? [Math.min(rows, 1000), Math.min(cols, 1004)] : [Math.min(rows, 999), Math.min(cols, 1001)];
  return [Math.min(rows, 67), cols];
}

const sameConstants = (a: Constants, b: Constants) => Object.keys(a).every((k) => a[k] === b[k]);

export async function tuneKernels(device: Device, options: KernelTuneOptions): Promise<KernelTuneReport> {
  const progress = options.onProgress ?? (() => {});
  const runs = options.runs ?? 10;
  const root = options.root ?? packageRoot();
  const target = device.backend === "cpu" ? "js" : device.backend === "webgpu" ? "wgsl" : "cuda";
  const project = createProject();
  const candidates: KernelTuneCandidate[] = [];
  const best: KernelTuneBest[] = [];
  for (const kernelCase of options.cases ?? kernelCases) {
    if (backendUnsupported(kernelCase, options.library, device.backend)) continue;
    for (const shape of options.shapes?.(kernelCase) ?? (device.backend === "cpu" ? kernelCase.cpuShapes : kernelCase.gpuShapes)) {
      if (kernelCase.unsupported(shape)) continue;
      const label = shapeLabel(shape);
      const space = kernelCase.space(shape, device.limits, device.backend);
      const base = { library: options.library, limits: device.limits, backend: device.backend };
      const fixed = kernelCase.build(shape, base);
      const defaultConstants = fixed.steps.find((s) => space.kernels.includes(s.kernel.description.name))!.kernel.description.specialization as Constants;
      const settings = settingsOf(space.constants).filter((c) => !space.valid || space.valid(c) === undefined);
      progress(`${kernelCase.id} ${label}: ${settings.length} candidates over ${Object.keys(space.constants).join(", ")} (fixed choice ${formatConstants(defaultConstants)})`);
      const shared = new SharedBuffers(device);
      const contenders: { constants: Constants; instance: CaseInstance; report: number }[] = [];
      try {
        for (const constants of settings) {
          const isDefault = sameConstants(constants, defaultConstants);
          const entry = { kernel: kernelCase.id, label, constants, isDefault };
          const compiled = compileSetting(kernelCase, space.kernels, constants, target, root, project, options.library, device);
          if ("status" in compiled) {
            candidates.push({ ...entry, ...compiled });
            progress(`  ${formatConstants(constants)}: ${compiled.status}: ${compiled.reason}`);
            continue;
          }
          const prefer = Object.fromEntries(space.kernels.map((name) => [name, compiled.handles.get(name)!.description.specialization as Constants]));
          const context = { ...base, library: compiled.library, prefer };
          try {
            const small = await runChecked(device, kernelCase.build(checkShape(kernelCase, shape), context));
            for (const buffer of small.set.buffers.values()) release(device, buffer);
            if (!small.check.pass) {
              candidates.push({ ...entry, status: "wrong", reason: `float64 check at ${shapeLabel(checkShape(kernelCase, shape))}: ${small.check.failures} elements outside ${small.check.tolerance}` });
              progress(`  ${formatConstants(constants)}: WRONG`);
              continue;
            }
            const instance = kernelCase.build(shape, context);
            const timing = await timeRotating(device, [launchSteps(instance, await shared.buffersFor(instance))], runs);
            const gbps = instance.bytes / (timing.medianMs * 1e6);
            candidates.push({ ...entry, status: "ok", ms: timing.medianMs, gbps, ...(compiled.registers ? { registers: compiled.registers } : {}), ...(compiled.localBytes ? { localBytes: compiled.localBytes } : {}) });
            contenders.push({ constants, instance, report: candidates.length - 1 });
            progress(`  ${formatConstants(constants)}: ${timing.medianMs.toFixed(3)} ms, ${gbps.toFixed(1)} GB/s${compiled.registers ? `, ${compiled.registers} registers` : ""}${compiled.localBytes ? `, ${compiled.localBytes} bytes local` : ""}${isDefault ? " (fixed choice)" : ""}`);
          } catch (error) {
            candidates.push({ ...entry, status: "failed", reason: firstLine(error) });
            progress(`  ${formatConstants(constants)}: failed: ${firstLine(error)}`);
          }
        }
        // The leaders and the fixed choice again, back to back.
        const ranked = [...contenders].sort((a, b) => candidates[a.report]!.ms! - candidates[b.report]!.ms!);
        const again = [...ranked.slice(0, 3), ...ranked.filter((c) => candidates[c.report]!.isDefault)].filter((c, i, list) => list.indexOf(c) === i);
        const retimed = new Map<(typeof contenders)[number], Timing>();
        for (const contender of again) retimed.set(contender, await timeRotating(device, [launchSteps(contender.instance, await shared.buffersFor(contender.instance))], runs));
        for (const [contender, timing] of retimed) {
          const report = candidates[contender.report]!;
          candidates[contender.report] = { ...report, ms: timing.medianMs, gbps: contender.instance.bytes / (timing.medianMs * 1e6) };
          progress(`  again: ${formatConstants(contender.constants)}: ${timing.medianMs.toFixed(3)} ms`);
        }
        const verified = candidates.filter((c) => c.kernel === kernelCase.id && c.label === label && c.status === "ok");
        if (verified.length > 0) {
          const fastest = verified.reduce((a, b) => (b.ms! < a.ms! ? b : a));
          const fixedRow = verified.find((c) => c.isDefault);
          best.push({
            kernel: kernelCase.id,
            label,
            constants: fastest.constants,
            ms: fastest.ms!,
            gbps: fastest.gbps!,
            defaultConstants,
            ...(fixedRow ? { defaultMs: fixedRow.ms!, defaultSlowdown: fixedRow.ms! / fastest.ms! } : {}),
            verified: verified.length,
          });
          progress(`${kernelCase.id} ${label}: fastest ${formatConstants(fastest.constants)} ${fastest.ms!.toFixed(3)} ms; fixed choice ${fixedRow ? `${fixedRow.ms!.toFixed(3)} ms (${((fixedRow.ms! / fastest.ms! - 1) * 100).toFixed(1)} % slower)` : "not measured"}`);
        }
      } finally {
        shared.releaseAll();
      }
    }
  }
  return { backend: device.backend, device: device.name, date: new Date().toISOString(), candidates, best };
}

export function formatConstants(c: Constants): string {
  return Object.entries(c).map(([name, value]) => `${name}=${value}`).join(" ");
}

function firstLine(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error)).split("\n").filter((l) => l.trim() !== "");
  return (lines[0]?.endsWith("failed to compile:") ? lines[1] : lines[0])?.trim() ?? "unknown error";
}

/**
 * The searched kernels compiled with one setting, in a library that also holds the case's other kernels;
 * or why the setting is not measured (does not compile, or the device cannot run it).
 */
function compileSetting(
  kernelCase: KernelCase,
  names: readonly string[],
  constants: Constants,
  target: "js" | "wgsl" | "cuda",
  root: string,
  project: ReturnType<typeof createProject>,
  baseLibrary: KernelLibrary,
  device: Device,
): { library: KernelLibrary; handles: Map<string, KernelHandle>; registers?: number; localBytes?: number } | { status: "pruned" | "failed"; reason: string } {
  const handles = new Map<string, KernelHandle>();
  let registers: number | undefined;
  let localBytes: number | undefined;
  for (const name of names) {
    let library: KernelLibrary;
    try {
      const defines = new Map(Object.entries(constants).map(([k, v]) => [k, String(v)]));
      library = compileKernelLibrary([path.join(root, kernelCase.kernels[name]!)], [target], { defines, kernels: new Set([name]), baseDir: root, project });
    } catch (error) {
      return { status: "failed", reason: `does not compile: ${firstLine(error)}` };
    }
    const handle = library.kernels.find((k) => k.description.name === name && sameConstants(constants, k.description.specialization as Constants));
    if (!handle) return { status: "failed", reason: `no specialization of ${name} with these constants` };
    if (!kernelFits(handle.description, device.limits)) {
      return { status: "pruned", reason: `${name}: block ${handle.description.block?.join("×")} or ${handle.description.sharedBytes} bytes of shared memory exceed the device's limits` };
    }
    // CUDA says what the compiled function costs: registers that leave too few threads, or spills.
    const probe = (device as { compiled?: (kernel: KernelHandle) => { registers: number; maxThreadsPerBlock: number; localBytes: number } }).compiled;
    if (typeof probe === "function") {
      try {
        const info = probe.call(device, handle);
        const threads = handle.description.block!.reduce((a, b) => a * b, 1);
        if (info.maxThreadsPerBlock < threads) return { status: "pruned", reason: `${info.registers} registers per thread leave room for ${info.maxThreadsPerBlock} threads` };
        // Local memory is not pruned: the few bytes the IEEE division's slow path saves around its call
        // (layer norm's 1/sqrt) cost nothing measurable, and the timing decides.
        registers = Math.max(registers ?? 0, info.registers);
        localBytes = Math.max(localBytes ?? 0, info.localBytes);
      } catch (error) {
        return { status: "failed", reason: `does not compile for the device: ${firstLine(error)}` };
      }
    }
    handles.set(name, handle);
  }
  return { library: new KernelLibrary([...handles.values(), ...baseLibrary.kernels]), handles, registers, localBytes };
}

/**
 * Buffers shared by every candidate of one shape: the same random inputs for all, and outputs and scratch
 * reused whenever a candidate needs one of the same name and length (the timed runs need no poison).
 */
class SharedBuffers {
  private readonly buffers = new Map<string, DeviceBuffer>();
  constructor(private readonly device: Device) {}

  async buffersFor(instance: CaseInstance): Promise<Map<string, DeviceBuffer>> {
    const out = new Map<string, DeviceBuffer>();
    for (const spec of instance.buffers) {
      const key = `${spec.name}:${spec.length}`;
      let buffer = this.buffers.get(key);
      if (!buffer) {
        buffer = createSpecBuffer(this.device, spec, initialData(spec, false));
        this.buffers.set(key, buffer);
      }
      out.set(spec.name, buffer);
    }
    return out;
  }

  releaseAll(): void {
    for (const buffer of this.buffers.values()) release(this.device, buffer);
    this.buffers.clear();
  }
}

/** Per case and shape: the fastest verified setting against the case's fixed choice. */
export function formatTuneKernelsTable(report: KernelTuneReport): string {
  const header = ["kernel", "shape", "fastest", "ms", "GB/s", "fixed choice", "ms", "fixed / fastest", "verified"];
  const lines = report.best.map((b) => [
    b.kernel,
    b.label,
    formatConstants(b.constants),
    b.ms.toFixed(3),
    b.gbps.toFixed(1),
    formatConstants(b.defaultConstants),
    b.defaultMs !== undefined ? b.defaultMs.toFixed(3) : "-",
    b.defaultSlowdown !== undefined ? `${b.defaultSlowdown.toFixed(3)}×` : "-",
    String(b.verified),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const left = new Set([0, 1, 2, 5]);
  const format = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [format(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(format)].join("\n");
}
