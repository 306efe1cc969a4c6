/**
 * The differential harness: generates a program, compiles it once for every target the devices need, makes
 * fresh random inputs (integers with their edge values, exact floats, and special floats: NaN, infinities,
 * signed zeros, subnormals, values beyond every integer range), poisons the outputs, runs the program on
 * each device and compares each device's outputs with the reference (evaluate.ts) under compare.ts's
 * rules. `runCampaign` does this for many programs and counts everything; bench/fuzz-cuda.ts runs it on CUDA.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Project } from "ts-morph";
import { compileKernelLibrary, CompileFailure } from "../../../runtime/kernels.ts";
import type { Device, DeviceBuffer } from "../../../runtime/device.ts";
import type { TargetName } from "../../../compiler/index.ts";
import { inputRng, type Rng } from "../rng.ts";
import { compareOutputs, type Backend, type Mismatch, poison } from "./compare.ts";
import { referenceBf16, referenceBf16Bits } from "../../half-reference.ts";
import { evaluate, type Inputs } from "./evaluate.ts";
import { generateProgram } from "./generate.ts";
import { printProgram, type InexactOp, type OutputBuffer, type Program } from "./program.ts";

export interface DeviceUnderTest {
  readonly backend: Backend;
  readonly device: Device;
  /** The target whose code the device runs. */
  readonly target: TargetName;
  /** WGSL lets implementations assume that no value is NaN or infinite (see compare.ts). */
  readonly finiteMathOnly?: boolean;
}

const specialValues = [
  Number.NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -1.5, 2.5, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 3.4028234663852886e38,
  -3.4028234663852886e38, 2147483520, 2147483648, -2147483648, -2147483904, 3e9, 4294967040, 4294967296, 5e9, -3e9, 1e20, -1e20, 16777217, 0.99999994,
];

export function makeInputs(program: Program, rng: Rng): Inputs {
  const n = program.block * program.grid * program.inputs;
  const intEdges = [0, 1, -1, 2, 31, 32, -2147483648, 2147483647, 0x55555555, -0x55555556, 65535, -65536, 7, -7];
  const inI = Int32Array.from({ length: n }, () => (rng.chance(0.3) ? rng.pick(intEdges) : rng.u32() | 0));
  const inU = Uint32Array.from({ length: n }, () => (rng.chance(0.3) ? rng.pick(intEdges) >>> 0 : rng.u32()));
  // Exact floats: multiples of 1/16 up to 4096 in magnitude (the generator's bound for f32 inputs).
  const exact = () => (rng.range(-65536, 65536) / 16) * (rng.chance(0.1) ? 0 : 1);
  const inF = Float32Array.from({ length: n }, exact);
  const inS = Float32Array.from({ length: n }, () => (rng.chance(0.7) ? rng.pick(specialValues) : Math.fround((rng.float() - 0.5) * 2 ** rng.range(-140, 130))));
  // bf16 values: exact floats rounded to bf16 (every bf16 of that range is normal); narrow integers with their edges.
  const inH = Float32Array.from({ length: n }, () => referenceBf16(referenceBf16Bits(exact())!));
  const inB = Int8Array.from({ length: n }, () => (rng.chance(0.3) ? rng.pick([0, 1, -1, 127, -128]) : rng.range(-128, 127)));
  return { inI, inU, inF, inS, inH, inB, sI: rng.chance(0.5) ? rng.range(-5, 12) : rng.u32() | 0, sU: rng.chance(0.5) ? rng.range(0, 12) : rng.u32(), sF: exact(), sB: rng.chance(0.5) };
}

export interface ProgramResult {
  readonly index: number;
  readonly name: string;
  readonly mismatches: readonly Mismatch[];
  /** Set when the program did not compile or a launch failed: a failure of its own. */
  readonly error?: string;
  readonly worstUlps: Partial<Record<Backend, Partial<Record<InexactOp, number>>>>;
  readonly compared: number;
  readonly source: string;
}

/** Runs program `index` of campaign `seed` on the devices. */
export async function runProgram(seed: number, index: number, devices: readonly DeviceUnderTest[], workDir: string, project?: Project, wide = false): Promise<ProgramResult> {
  const rng = inputRng(seed, index);
  const name = `fuzz${index}`;
  const program = generateProgram(rng, name, { wide });
  const source = printProgram(program);
  const file = path.join(workDir, `${name}.ts`);
  fs.writeFileSync(file, source);
  const base = { index, name, source, worstUlps: {}, compared: 0 };
  let library;
  try {
    const targets = [...new Set(devices.map((d) => d.target))];
    library = compileKernelLibrary([file], targets, { project });
  } catch (error) {
    const message = error instanceof CompileFailure ? error.rendered : String(error);
    return { ...base, mismatches: [], error: `does not compile:\n${message}` };
  } finally {
    project?.getSourceFile(file)?.forget();
  }
  const inputs = makeInputs(program, rng);
  const expected = evaluate(program, inputs);
  // CUDA's Math.min/max of floats are fminf/fmaxf, which ignore a NaN operand (docs/language.md §12): its
  // outputs are compared with the reference under that rule (evaluated only where CUDA runs).
  const expectedCuda = devices.some((d) => d.backend === "cuda") ? evaluate(program, inputs, { minMaxIgnoresNaN: true }) : expected;
  const kernel = library.get(name);
  const outputs = program.block * program.grid * program.slots;
  const mismatches: Mismatch[] = [];
  const worstUlps: ProgramResult["worstUlps"] = {};
  for (const { backend, device, finiteMathOnly } of devices) {
    const buffers: Partial<Record<OutputBuffer, DeviceBuffer>> = {
      outI: device.createBuffer(new Int32Array(outputs).fill(poison.outI)),
      outU: device.createBuffer(new Uint32Array(outputs).fill(poison.outU)),
      outF: device.createBuffer(new Float32Array(outputs).fill(poison.outF)),
      outH: device.createBuffer("bf16", new Float32Array(outputs).fill(poison.outH)),
      outB: device.createBuffer(new Int8Array(outputs).fill(poison.outB)),
      outW: device.createBuffer(new Uint16Array(outputs).fill(poison.outW)),
      ...(program.wide ? { outX: device.createBuffer("f16", new Float32Array(outputs).fill(poison.outX)), outD: device.createBuffer(new Float64Array(outputs).fill(poison.outD)) } : {}),
    };
    const outputNames = Object.keys(buffers) as OutputBuffer[];
    // In the order of the kernel's parameters (program.ts, programParameters).
    const args = [
      ...outputNames.map((name) => buffers[name]!),
      device.createBuffer(inputs.inI), device.createBuffer(inputs.inU), device.createBuffer(inputs.inF), device.createBuffer(inputs.inS),
      device.createBuffer("bf16", inputs.inH), device.createBuffer(inputs.inB),
      inputs.sI, inputs.sU, inputs.sF, inputs.sB,
    ];
    let got: Partial<Record<OutputBuffer, ArrayLike<number>>> & { outI: ArrayLike<number>; outU: ArrayLike<number>; outF: ArrayLike<number> };
    try {
      // A refused launch rejects here; an error met while it ran comes from the first read (LaunchFailure).
      await device.launch(kernel, { grid: [program.grid], args });
      const read: Partial<Record<OutputBuffer, ArrayLike<number>>> = {};
      for (const name of outputNames) read[name] = (await device.read(buffers[name]!)) as ArrayLike<number>;
      got = read as typeof got;
    } catch (error) {
      return { ...base, mismatches, error: `${backend}: the launch failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    const result = compareOutputs(backend, backend === "cuda" ? expectedCuda : expected, got, finiteMathOnly ?? false);
    mismatches.push(...result.mismatches);
    worstUlps[backend] = result.worstUlps;
  }
  return { ...base, mismatches, worstUlps, compared: outputs * (program.wide ? 8 : 6) * devices.length };
}

/** NaN and the infinities as text in the failure records (JSON would write null for all three). */
function nonFiniteAsText(_key: string, value: unknown): unknown {
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : value;
}

export interface DiffSummary {
  readonly seed: number;
  readonly programs: number;
  readonly backends: readonly Backend[];
  /** Output elements compared with the reference, all backends together. */
  readonly compared: number;
  readonly failures: readonly { index: number; error?: string; mismatches: readonly Mismatch[]; file: string }[];
  /** The largest error seen per backend and inexact operation, in ulps of the reference. */
  readonly worstUlps: Partial<Record<Backend, Partial<Record<InexactOp, number>>>>;
  readonly seconds: number;
  readonly date: string;
  readonly machine: { readonly cpus: number; readonly cpuModel?: string; readonly node: string; readonly devices: readonly string[] };
}

export interface DiffOptions {
  readonly seed: number;
  readonly count: number;
  readonly seconds?: number;
  readonly only?: readonly number[];
  readonly devices: readonly DeviceUnderTest[];
  /** Failing programs are written here (default: a temporary folder). */
  readonly outDir?: string;
  readonly project?: Project;
  /** Programs with f16 and f64 outputs too (CUDA and the CPU: generate.ts). */
  readonly wide?: boolean;
  readonly log?: (line: string) => void;
}

export async function runDiffCampaign(options: DiffOptions): Promise<DiffSummary> {
  const log = options.log ?? (() => {});
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-diff-"));
  const outDir = options.outDir ?? fs.mkdtempSync(path.join(os.tmpdir(), `tskernel-diff-failures-${options.seed}-`));
  fs.mkdirSync(outDir, { recursive: true });
  const started = performance.now();
  const deadline = options.seconds === undefined ? Infinity : started + options.seconds * 1000;
  const failures: DiffSummary["failures"][number][] = [];
  const worstUlps: DiffSummary["worstUlps"] = {};
  let compared = 0;
  let programs = 0;
  const indices = options.only ?? Array.from({ length: options.count }, (_, i) => i);
  for (const index of indices) {
    if (performance.now() > deadline) break;
    const result = await runProgram(options.seed, index, options.devices, workDir, options.project, options.wide);
    programs++;
    compared += result.compared;
    for (const [backend, ops] of Object.entries(result.worstUlps) as [Backend, Partial<Record<InexactOp, number>>][]) {
      const worst = (worstUlps[backend] ??= {});
      for (const [op, ulps] of Object.entries(ops) as [InexactOp, number][]) worst[op] = Math.max(worst[op] ?? 0, ulps);
    }
    if (result.error || result.mismatches.length > 0) {
      const file = path.join(outDir, `${result.name}.ts`);
      fs.writeFileSync(file, result.source);
      fs.writeFileSync(path.join(outDir, `${result.name}.txt`), `seed ${options.seed} index ${index}\n${result.error ?? ""}\n${result.mismatches.slice(0, 50).map((m) => JSON.stringify(m, nonFiniteAsText)).join("\n")}\n`);
      failures.push({ index, error: result.error, mismatches: result.mismatches.slice(0, 20), file });
      log(`FAIL program ${index}: ${result.error ?? `${result.mismatches.length} mismatches, first ${JSON.stringify(result.mismatches[0])}`}`);
    }
    if (programs % 100 === 0) log(`${programs} programs, ${((performance.now() - started) / 1000).toFixed(0)} s, ${failures.length} failing`);
  }
  fs.rmSync(workDir, { recursive: true, force: true });
  return {
    seed: options.seed,
    programs,
    backends: options.devices.map((d) => d.backend),
    compared,
    failures,
    worstUlps,
    seconds: (performance.now() - started) / 1000,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model?.trim(), node: process.version, devices: options.devices.map((d) => `${d.backend}: ${d.device.name}`) },
  };
}
