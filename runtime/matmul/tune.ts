/**
 * The matmul autotuner behind `tskernel tune matmul`: for each tunable rung of the table in matmul.ts it takes
 * the settings of the compile-time constants that the rung's rules accept, prunes those the device cannot
 * run (threads per block, shared memory; after compiling on CUDA, registers), and at each size checks every
 * remaining candidate against a float64 reference (random inputs, C poisoned first) before timing it with
 * the device's own clock. Wrong candidates are reported and discarded; the verified ones go to a tuning store
 * (tune-store.ts) under the device's key and the size's shape class, ranked, for `matmul()` to use.
 */

import type { Device, DeviceBuffer, KernelHandle, LaunchOptions, Timing } from "../device.ts";
import { compareToReference, referenceGemm, type ErrorReport } from "../reference.ts";
import { compileCandidate, enumerateSpace, formatConstants, kernelSourceHash, isDefaults, pruneReason, sameConstants, searchOrder, sharedMemoryLimit, targetFor, type CandidateLimits } from "./candidates.ts";
import { archAllows, matmulLaunch, matmulRungs, matmulTolerance, matmulTolerance16, shapeFits, type Constants, type Rung } from "./matmul.ts";
import { roundToBf16, roundToF16 } from "../../compiler/lang/float16.ts";
import { deviceKeyOf, shapeClass, type TunedEntry, type TuningStore } from "./tune-store.ts";

export interface TuneOptions {
  /** Square sizes n to tune at (n×n times n×n); each fills the store's entry for its shape class. */
  readonly sizes: readonly number[];
  /**
   * Timed launches per candidate and size after one warm-up, at least; short kernels get more, up to 25 ms
   * of timed launches in all. The median is kept. Default 5.
   */
  readonly runs?: number;
  /** Names of the rungs to tune; default every rung of the table that has a search space. */
  readonly rungs?: readonly string[];
  /** The rung table; default the library's (tests pass rungs of their own). */
  readonly table?: readonly Rung[];
  /** Measure at most this many candidates per rung, in search order (candidates.ts: searchOrder). */
  readonly maxCandidates?: number;
  /** Prune with this shared-memory limit instead of the device's. */
  readonly maxSharedBytes?: number;
  /** Where the verified results go; without one they are only reported. */
  readonly store?: TuningStore;
  readonly onProgress?: (line: string) => void;
}

export type CandidateStatus = "ok" | "wrong" | "pruned" | "failed";

export interface CandidateReport {
  readonly rung: string;
  readonly constants: Constants;
  /** The size measured; absent for a verdict that holds at every size (pruned, or failed to compile). */
  readonly n?: number;
  readonly status: CandidateStatus;
  readonly reason?: string;
  readonly ms?: number;
  readonly gflops?: number;
  readonly error?: ErrorReport;
  readonly registers?: number;
  /** The kernel's own default constants: what the fixed rule runs. */
  readonly isDefault?: boolean;
}

/** The fastest verified candidate of a rung at a size. */
export interface TuneBest {
  readonly n: number;
  readonly shapeClass: number;
  readonly rung: string;
  readonly constants: Constants;
  readonly ms: number;
  readonly gflops: number;
  /** The rung's default constants at the same size, same run, when they were measured. */
  readonly defaultGflops?: number;
  readonly checked: number;
  readonly wrong: number;
  /** The fastest of all rungs at this size. */
  readonly overall: boolean;
}

export interface TuneReport {
  readonly backend: string;
  readonly device: string;
  readonly driverVersion?: number | string;
  readonly date: string;
  readonly sizes: readonly number[];
  readonly runs: number;
  readonly candidates: readonly CandidateReport[];
  readonly best: readonly TuneBest[];
  /** The store file the results were written to. */
  readonly storeFile?: string;
  /** Why the results could not be stored, when they could not. */
  readonly storeError?: string;
}

interface Planned {
  readonly rung: Rung;
  readonly constants: Constants;
  readonly isDefault: boolean;
}

/** A compiled candidate, or why it will not be measured at any size. */
type Compiled = { readonly handle: KernelHandle; readonly registers?: number } | { readonly status: "pruned" | "failed"; readonly reason: string };

/** What the CUDA device says about a compiled function (CudaDevice.compiled); other devices have no such method. */
interface FunctionInfo {
  readonly registers?: number;
  readonly maxThreadsPerBlock?: number;
  /** Local memory per thread (spills, or private arrays not kept in registers), where the device reports it. */
  readonly localBytes?: number;
}

/** Each candidate is timed for at least this long in all (more runs for short kernels), up to maximumRuns runs. */
const minimumTimedMs = 25;
const maximumRuns = 200;
/** How many of the fastest candidates at a size are timed again at the end, back to back. */
const retimedLeaders = 3;

/**
 * One candidate's median time: at least `runs` launches, and for short kernels enough launches to fill
 * minimumTimedMs (80 µs kernels at 1000³ on an H100 were ranked differently from run to run with 5).
 */
async function timeCandidate(device: Device, handle: KernelHandle, launch: LaunchOptions, runs: number): Promise<Timing> {
  const probe = await device.time(handle, launch, { warmup: 1, runs: 1 });
  const enough = Math.min(maximumRuns, Math.max(runs, Math.ceil(minimumTimedMs / Math.max(probe.medianMs, 1e-3))));
  return device.time(handle, launch, { warmup: 0, runs: enough });
}

export async function tuneMatmul(device: Device, options: TuneOptions): Promise<TuneReport> {
  const progress = options.onProgress ?? (() => {});
  const runs = options.runs ?? 5;
  const table = options.table ?? matmulRungs;
  const target = targetFor(device.backend);
  const limits: CandidateLimits = { ...device.limits, maxSharedBytes: options.maxSharedBytes ?? sharedMemoryLimit(device) };
  const reports: CandidateReport[] = [];

  const selected = options.rungs ? options.rungs.map((name) => table.find((r) => r.name === name) ?? unknownRung(name, table)) : table.filter((r) => r.search && archAllows(device, r));
  const plan: Planned[] = [];
  for (const rung of selected) {
    const search = rung.search;
    if (!search) throw new RangeError(`tskernel: ${rung.name} has no search space to tune`);
    let defaults: Constants | undefined;
    try {
      // A rung that runs some builds of its kernel (rung.builds) takes the kernel's defaults with those values.
      defaults = compileCandidate(rung, rung.builds, target).description.specialization as Constants;
    } catch (error) {
      progress(`${rung.name}: its default constants do not compile for ${target} (${firstLine(error)})`);
    }
    const { valid, invalid } = enumerateSpace(search);
    if (defaults && !valid.some((c) => isDefaults(c, defaults)) && search.invalid(defaults) === undefined) valid.unshift(defaults);
    const rejected = [...invalid.values()].reduce((a, b) => a + b, 0);
    progress(`${rung.name}: ${valid.length} candidates${rejected ? `; ${rejected} other settings of the space would break the kernel's tile loads` : ""}`);
    const fitting: Constants[] = [];
    for (const c of valid) {
      const reason = pruneReason(search, c, limits);
      if (reason === undefined) {
        fitting.push(c);
        continue;
      }
      reports.push({ rung: rung.name, constants: c, status: "pruned", reason, isDefault: isDefaults(c, defaults) });
      progress(`  pruned ${rung.name} ${formatConstants(c)}: ${reason}`);
    }
    const ordered = searchOrder(search, fitting, defaults);
    const chosen = options.maxCandidates !== undefined ? ordered.slice(0, options.maxCandidates) : ordered;
    if (chosen.length < ordered.length) progress(`  ${rung.name}: measuring the first ${chosen.length} of ${ordered.length} in search order (maxCandidates)`);
    plan.push(...chosen.map((c) => ({ rung, constants: c, isDefault: isDefaults(c, defaults) })));
  }

  const compiled = new Map<Planned, Compiled>();
  const compile = (p: Planned): Compiled => {
    let state = compiled.get(p);
    if (!state) {
      state = compileAndProbe(device, p, target);
      compiled.set(p, state);
      if ("status" in state) reports.push({ rung: p.rung.name, constants: p.constants, status: state.status, reason: state.reason, isDefault: p.isDefault });
    }
    return state;
  };

  const total = options.sizes.reduce((sum, n) => sum + plan.filter((p) => shapeFits(p.rung, p.constants, n, n, n)).length, 0);
  let index = 0;
  // A candidate wrong at any size is trusted at none: its results at other sizes are dropped too.
  const discarded = new Set<Planned>();
  const measured = new Map<number, { p: Planned; entry: TunedEntry }[]>();
  for (const n of options.sizes) {
    const fitting = plan.filter((p) => shapeFits(p.rung, p.constants, n, n, n));
    if (fitting.length < plan.length) progress(`n=${n}: ${plan.length - fitting.length} candidate(s) need tile multiples that ${n} is not, not measured`);
    if (fitting.length === 0) continue;
    // One set of inputs per element type at this size (f32, and the 16-bit rungs' bf16 or f16 roundings of them),
    // made when a candidate of that type first needs them.
    const inputs = new Map<string, { check: ReturnType<typeof makeCheck>; a: DeviceBuffer; b: DeviceBuffer; c: DeviceBuffer }>();
    const inputsOf = (dtype: "f32" | "bf16" | "f16") => {
      let made = inputs.get(dtype);
      if (!made) {
        const check = makeCheck(n, dtype);
        made = dtype === "f32" ? { check, a: device.createBuffer(check.A as Float32Array), b: device.createBuffer(check.B as Float32Array), c: device.createBuffer("f32", n * n) } : { check, a: device.createBuffer(dtype, check.A), b: device.createBuffer(dtype, check.B), c: device.createBuffer(dtype, n * n) };
        inputs.set(dtype, made);
      }
      return made;
    };
    // Poison: NaN, so an element a candidate never writes fails the check (with β = 0 the kernels ignore C).
    const poison = new Float32Array(n * n).fill(Number.NaN);
    // Tensor maps (the rungs that take them) stay for the size's run: the leaders are timed again at the end.
    const releases: (() => void)[] = [];
    const contenders: { p: Planned; handle: KernelHandle; launch: LaunchOptions; report: number }[] = [];
    for (const p of fitting) {
      const label = `[${++index}/${total}] n=${n} ${p.rung.name} ${formatConstants(p.constants)}`;
      const state = compile(p);
      if ("status" in state) {
        progress(`${label}: ${state.status}: ${state.reason}`);
        continue;
      }
      if (discarded.has(p)) {
        progress(`${label}: not measured: it was wrong at an earlier size`);
        continue;
      }
      const base = { rung: p.rung.name, constants: p.constants, n, registers: state.registers, isDefault: p.isDefault };
      try {
        const { check, a, b, c } = inputsOf(p.rung.dtype ?? "f32");
        // The grid and arguments as matmul() makes them (a persistent rung's grid of at most one block a
        // multiprocessor, the tensor maps of the rungs that take them).
        const { grid, args, release } = matmulLaunch(device, p, { m: n, n, k: n }, { A: a, B: b, C: c });
        releases.push(release);
        const launch = { grid, args };
        await device.write(c, poison);
        await device.launch(state.handle, launch);
        const error = check.compare((await device.read(c)) as Float32Array);
        // TF32 rungs are held to TF32's tolerance, the 16-bit ones to theirs (against the 16-bit inputs' product),
        // the others to FP32's.
        const tolerance = p.rung.dtype ? matmulTolerance16(p.rung.dtype, n) : matmulTolerance(p.rung.precision ?? "fp32", n);
        if (error.nonFinite > 0 || !(error.normwiseRelative <= tolerance)) {
          const reason = `normwise error ${error.normwiseRelative.toExponential(2)} against float64 (allowed ${tolerance.toExponential(2)})${error.nonFinite ? `, ${error.nonFinite} non-finite elements` : ""}`;
          reports.push({ ...base, status: "wrong", reason, error });
          discarded.add(p);
          progress(`${label}: WRONG, discarded: ${reason}`);
          continue;
        }
        // Short kernels (80 µs at 1000³ on an H100) are timed more often: at least minimumTimedMs in all,
        // or their ranking is noise (runs 9 and 12 ranked the 1000³ candidates differently with 5 runs).
        const timing = await timeCandidate(device, state.handle, launch, runs);
        const gflops = (2 * n ** 3) / (timing.medianMs * 1e6);
        reports.push({ ...base, status: "ok", ms: timing.medianMs, gflops, error });
        contenders.push({ p, handle: state.handle, launch, report: reports.length - 1 });
        progress(`${label}: ${timing.medianMs.toFixed(3)} ms, ${gflops.toFixed(1)} GFLOP/s${state.registers !== undefined ? `, ${state.registers} registers` : ""}`);
        const sourceHash = kernelSourceHash(p.rung.file);
        if (sourceHash) {
          if (!measured.has(n)) measured.set(n, []);
          measured.get(n)!.push({
            p,
            entry: {
              rung: p.rung.name,
              kernel: p.rung.kernel,
              file: p.rung.file,
              sourceHash,
              constants: p.constants,
              n,
              ms: timing.medianMs,
              gflops,
              normwiseError: error.normwiseRelative,
              ...(state.registers !== undefined ? { registers: state.registers } : {}),
              date: new Date().toISOString(),
            },
          });
        }
      } catch (error) {
        const reason = `failed to run: ${firstLine(error)}`;
        reports.push({ ...base, status: "failed", reason });
        progress(`${label}: ${reason}`);
      }
    }
    // The fastest few, timed again back to back: each was first timed right after its own compile, at
    // whatever clocks the GPU had then, and the winner should not be decided by that.
    const leaders = contenders
      .filter((x) => !discarded.has(x.p))
      .sort((x, y) => reports[y.report]!.gflops! - reports[x.report]!.gflops!)
      .slice(0, retimedLeaders);
    if (leaders.length > 1) {
      for (const leader of leaders) {
        const timing = await timeCandidate(device, leader.handle, leader.launch, runs);
        const gflops = (2 * n ** 3) / (timing.medianMs * 1e6);
        reports[leader.report] = { ...reports[leader.report]!, ms: timing.medianMs, gflops };
        const stored = measured.get(n)?.find((m) => m.p === leader.p);
        if (stored) stored.entry = { ...stored.entry, ms: timing.medianMs, gflops };
        progress(`n=${n} again: ${leader.p.rung.name} ${formatConstants(leader.p.constants)}: ${timing.medianMs.toFixed(3)} ms, ${gflops.toFixed(1)} GFLOP/s`);
      }
    }
    for (const free of releases) free();
    for (const { a, b, c } of inputs.values()) for (const buffer of [a, b, c]) release(device, buffer);
  }

  let storeFile: string | undefined;
  let storeError: string | undefined;
  for (const [n, results] of options.store ? measured : []) {
    const verified = results.filter((r) => !discarded.has(r.p)).map((r) => r.entry);
    if (verified.length === 0) continue;
    try {
      storeFile = options.store!.record(deviceKeyOf(device), shapeClass(n, n, n), verified);
      progress(`n=${n}: stored ${verified.length} verified result(s) for shape class ${shapeClass(n, n, n)} in ${storeFile}`);
    } catch (error) {
      storeError = `cannot write the tuning store ${options.store!.dir}: ${firstLine(error)}`;
      progress(`n=${n}: ${storeError}`);
      break;
    }
  }
  const wrongSomewhere = (r: CandidateReport) => [...discarded].some((p) => p.rung.name === r.rung && sameConstants(p.constants, r.constants));

  const key = deviceKeyOf(device);
  return {
    backend: device.backend,
    device: device.name,
    ...(key.driverVersion !== undefined ? { driverVersion: key.driverVersion } : {}),
    date: new Date().toISOString(),
    sizes: [...options.sizes],
    runs,
    candidates: reports,
    best: bestOf(reports, options.sizes, selected, wrongSomewhere),
    ...(storeFile !== undefined ? { storeFile } : {}),
    ...(storeError !== undefined ? { storeError } : {}),
  };
}

function unknownRung(name: string, table: readonly Rung[]): never {
  throw new RangeError(`tskernel: no rung named '${name}' (tunable: ${table.filter((r) => r.search).map((r) => r.name).join(", ")})`);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // A CompileFailure starts with a generic line; the first diagnostic is what says why.
  const lines = message.split("\n").filter((line) => line.trim() !== "");
  return (lines[0]?.endsWith("failed to compile:") ? lines[1] : lines[0])?.trim() ?? "unknown error";
}

/**
 * Compiles a candidate and, where the device can say (CUDA: CudaDevice.compiled), prunes it by registers:
 * a function whose registers leave room for fewer threads than its block needs cannot be launched, and one
 * that uses local memory has spilled (or lost its private arrays to memory), which no tile size pays back.
 */
function compileAndProbe(device: Device, p: Planned, target: ReturnType<typeof targetFor>): Compiled {
  let handle: KernelHandle;
  try {
    handle = compileCandidate(p.rung, p.constants, target);
  } catch (error) {
    return { status: "failed", reason: `does not compile: ${firstLine(error)}` };
  }
  const probe = (device as { compiled?: (kernel: KernelHandle) => FunctionInfo }).compiled;
  if (typeof probe !== "function") return { handle };
  let info: FunctionInfo;
  try {
    info = probe.call(device, handle);
  } catch (error) {
    return { status: "failed", reason: `does not compile for the device: ${firstLine(error)}` };
  }
  const threads = p.rung.search!.threads(p.constants);
  if (typeof info.maxThreadsPerBlock === "number" && info.maxThreadsPerBlock < threads) {
    return { status: "pruned", reason: `${info.registers} registers per thread leave room for ${info.maxThreadsPerBlock} threads per block; it needs ${threads}` };
  }
  if (typeof info.localBytes === "number" && info.localBytes > 0) {
    return { status: "pruned", reason: `${info.localBytes} bytes of local memory per thread (spilled from ${info.registers} registers)` };
  }
  return { handle, registers: info.registers };
}

/** Frees a buffer where the device can (CUDA); the others release theirs with the device. */
function release(device: Device, buffer: DeviceBuffer): void {
  const free = (device as { free?: (buffer: DeviceBuffer) => void }).free;
  if (typeof free === "function") free.call(device, buffer);
}

/** Above this size the reference covers windows of C rather than all of it (a full one takes minutes at 4096). */
const fullCheckLimit = 1024;
const windowSide = 256;

/**
 * Random inputs for one size (of one element type), and the float64 reference every candidate at that size is compared with:
 * the whole of C up to n = 1024; above, three 256×256 windows (top-left, bottom-right, one at random).
 * Windows hold whole block tiles of every candidate, so a mistake in how a tile is loaded or stored shows up
 * there, and the bottom-right one catches the last tiles of each dimension.
 */
function makeCheck(n: number, dtype: "f32" | "bf16" | "f16" = "f32"): { A: Float32Array | Float64Array; B: Float32Array | Float64Array; compare(result: Float32Array): ErrorReport } {
  // 16-bit rungs get inputs that are exactly 16-bit values, and the reference is their exact product.
  const round = dtype === "bf16" ? roundToBf16 : dtype === "f16" ? roundToF16 : undefined;
  const random = () => (round ? Float64Array.from({ length: n * n }, () => round(Math.random() * 2 - 1)) : Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1));
  const A = random();
  const B = random();
  if (n <= fullCheckLimit) {
    const expected = referenceGemm(n, n, n, A, B);
    return { A, B, compare: (result) => compareToReference(result, expected) };
  }
  const side = windowSide;
  const corners = [[0, 0], [n - side, n - side], [Math.floor(Math.random() * (n - side + 1)), Math.floor(Math.random() * (n - side + 1))]] as const;
  const indices: number[] = [];
  const expected: number[] = [];
  for (const [row, col] of corners) {
    // Rows row… of A times columns col… of B: the window's own small product.
    const columns = new Float32Array(n * side);
    for (let p = 0; p < n; p++) columns.set(B.subarray(p * n + col, p * n + col + side), p * side);
    const window = referenceGemm(side, side, n, A.subarray(row * n, (row + side) * n), columns);
    for (let i = 0; i < side; i++) {
      for (let j = 0; j < side; j++) {
        indices.push((row + i) * n + col + j);
        expected.push(window[i * side + j]!);
      }
    }
  }
  return { A, B, compare: (result) => compareToReference(Float32Array.from(indices, (i) => result[i]!), expected) };
}

function bestOf(reports: readonly CandidateReport[], sizes: readonly number[], rungs: readonly Rung[], discarded: (r: CandidateReport) => boolean): TuneBest[] {
  const best: TuneBest[] = [];
  for (const n of sizes) {
    const atSize: TuneBest[] = [];
    for (const rung of rungs) {
      const measured = reports.filter((r) => r.n === n && r.rung === rung.name);
      const ok = measured.filter((r) => r.status === "ok" && !discarded(r)).sort((x, y) => y.gflops! - x.gflops!);
      if (ok.length === 0) continue;
      const top = ok[0]!;
      const fallback = ok.find((r) => r.isDefault);
      atSize.push({
        n,
        shapeClass: shapeClass(n, n, n),
        rung: rung.name,
        constants: top.constants,
        ms: top.ms!,
        gflops: top.gflops!,
        ...(fallback ? { defaultGflops: fallback.gflops! } : {}),
        checked: measured.filter((r) => r.status === "ok" || r.status === "wrong").length,
        wrong: measured.filter((r) => r.status === "wrong").length,
        overall: false,
      });
    }
    const fastest = Math.max(...atSize.map((b) => b.gflops));
    best.push(...atSize.map((b) => ({ ...b, overall: b.gflops === fastest })));
  }
  return best;
}

/** The final table: per size, each rung's fastest verified constants against its defaults; `*` marks the fastest rung. */
export function formatTuneTable(report: TuneReport): string {
  const header = ["n", "class", "rung", "constants", "time (ms)", "GFLOP/s", "default GFLOP/s", "gain", "checked", "wrong"];
  const lines = report.best.map((b) => [
    String(b.n),
    String(b.shapeClass),
    `${b.rung}${b.overall ? " *" : ""}`,
    formatConstants(b.constants),
    b.ms.toFixed(3),
    b.gflops.toFixed(1),
    b.defaultGflops !== undefined ? b.defaultGflops.toFixed(1) : "-",
    b.defaultGflops !== undefined ? `${(b.gflops / b.defaultGflops).toFixed(2)}x` : "-",
    String(b.checked),
    String(b.wrong),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const left = new Set([2, 3]);
  const format = (cells: string[]) => cells.map((c, i) => (left.has(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  return [format(header), widths.map((w) => "-".repeat(w)).join("  "), ...lines.map(format)].join("\n");
}
