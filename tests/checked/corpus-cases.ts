/**
 * The seeded bugs of corpus.ts as cases: how each kernel is launched and what its checked run must report
 * (the kind, and the line marked BUG). `runCase` runs one on a device and returns the failure's text, so that
 * the tests (CPU checked mode, WebGPU) and the GPU run (CUDA and Dawn on the H100, bench/gpu-checked.ts)
 * compare the same things: the kind, the `file:line`, and the whole first line against the CPU's.
 */

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LaunchFailure, type Device, type FaultKind, type KernelArg, type KernelHandle, type KernelLibrary } from "../../runtime/index.ts";

export const corpusFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus.ts");

export interface CorpusCase {
  readonly kernel: string;
  readonly kind: FaultKind;
  readonly grid: number | readonly [number, number];
  /** The arguments, made on the device. */
  readonly args: (device: Device) => KernelArg[];
}

const f32 = (device: Device, n: number, fill = (i: number) => i) => device.createBuffer(Float32Array.from({ length: n }, (_, i) => fill(i)));
const i32 = (device: Device, values: readonly number[]) => device.createBuffer(Int32Array.from(values));
const u32 = (device: Device, values: readonly number[]) => device.createBuffer(Uint32Array.from(values));

export const corpusCases: readonly CorpusCase[] = [
  { kernel: "tailOffByOne", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 64), f32(d, 40), 40] },
  { kernel: "shiftedWrite", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 40), f32(d, 40), 40] },
  { kernel: "negativeIndex", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 40), f32(d, 40), 40] },
  { kernel: "wrongStride", kind: "out-of-bounds", grid: [1, 1], args: (d) => [f32(d, 64), f32(d, 70), 8, 8] },
  { kernel: "sharedReadPastEnd", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 64), f32(d, 64)] },
  { kernel: "sharedWritePastEnd", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 32), f32(d, 64)] },
  { kernel: "sharedColumnPastEnd", kind: "out-of-bounds", grid: [1, 1], args: (d) => [f32(d, 64), f32(d, 64)] },
  { kernel: "divideByZero", kind: "division-by-zero", grid: 1, args: (d) => [i32(d, new Array(40).fill(0)), i32(d, Array.from({ length: 40 }, (_, i) => i * 3)), i32(d, Array.from({ length: 40 }, (_, i) => (i === 17 ? 0 : i + 1))), 40] },
  { kernel: "remainderByZero", kind: "division-by-zero", grid: 1, args: (d) => [u32(d, new Array(40).fill(0)), u32(d, Array.from({ length: 40 }, (_, i) => i * 7)), 9, 40] },
  { kernel: "helperDivide", kind: "division-by-zero", grid: 1, args: (d) => [i32(d, new Array(40).fill(0)), i32(d, Array.from({ length: 40 }, (_, i) => i * 5)), i32(d, Array.from({ length: 40 }, (_, i) => (i === 29 ? 0 : i + 2))), 40] },
  { kernel: "shiftTooFar", kind: "shift-out-of-range", grid: 1, args: (d) => [u32(d, new Array(33).fill(0)), 33] },
  { kernel: "vectorTail", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 32), f32(d, 30), 8] },
  { kernel: "vectorMisaligned", kind: "misaligned-vector-access", grid: 1, args: (d) => [f32(d, 128), f32(d, 128), 1] },
  { kernel: "histogramOverflow", kind: "out-of-bounds", grid: 1, args: (d) => [u32(d, new Array(16).fill(0)), i32(d, Array.from({ length: 40 }, (_, i) => (i === 23 ? 16 : i % 16))), 40] },
  { kernel: "privateOverflow", kind: "out-of-bounds", grid: 1, args: (d) => [f32(d, 32), i32(d, Array.from({ length: 32 }, (_, i) => (i === 9 ? 4 : i % 4)))] },
  { kernel: "structPastEnd", kind: "out-of-bounds", grid: 1, args: () => [] },
  // Odd lengths, so that on WGSL (16- and 8-bit elements packed in u32 words) the word past the last element exists.
  { kernel: "halfTailOffByOne", kind: "out-of-bounds", grid: 1, args: (d) => [d.createBuffer("bf16", 64), d.createBuffer("bf16", Float64Array.from({ length: 41 }, (_, i) => i / 4)), 41] },
  { kernel: "byteWritePastEnd", kind: "out-of-bounds", grid: 1, args: (d) => [d.createBuffer(new Uint8Array(41)), d.createBuffer(Uint8Array.from({ length: 41 }, (_, i) => i)), 41] },
];

/** The line of corpus.ts that a kernel's BUG comment marks (1-based). */
export function bugLine(kernel: string): number {
  const lines = fs.readFileSync(corpusFile, "utf8").split("\n");
  const start = lines.findIndex((line) => line.startsWith(`export const ${kernel} =`));
  const offset = lines.slice(start).findIndex((line) => line.includes("// BUG"));
  if (start < 0 || offset < 0) throw new Error(`corpus.ts has no marked bug in ${kernel}`);
  return start + offset + 1;
}

/** What a case's run reported: the failure's first line (after "failed: "), its kind and location, or nothing. */
export interface CaseReport {
  readonly kernel: string;
  readonly text?: string;
  readonly kind?: string;
  readonly line?: number;
  readonly error?: string;
}

/** Runs one case on `device` (its library built checked for the device) and reads what it reported. */
export async function runCase(device: Device, library: KernelLibrary, testCase: CorpusCase): Promise<CaseReport> {
  const kernel: KernelHandle = library.get(testCase.kernel);
  const args = testCase.kernel === "structPastEnd" ? structArgs(device, library) : testCase.args(device);
  try {
    await device.launch(kernel, { grid: typeof testCase.grid === "number" ? [testCase.grid] : [...testCase.grid], args });
    await device.synchronize();
  } catch (error) {
    if (!(error instanceof LaunchFailure)) return { kernel: testCase.kernel, error: String(error) };
    const first = error.message.split("\n")[0]!.replace(/^tskernel: launch #\d+ of '[^']*' failed: /, "");
    const match = /^(\S+) in '[^']*' at [^:]+:(\d+):\d+/.exec(first);
    return { kernel: testCase.kernel, text: first, kind: match?.[1], line: match ? Number(match[2]) : undefined };
  }
  return { kernel: testCase.kernel };
}

function structArgs(device: Device, library: KernelLibrary): KernelArg[] {
  const layout = library.layout("Particle");
  const particles = device.createBuffer(layout, Array.from({ length: 40 }, (_, i) => ({ x: i, v: 1 })));
  return [device.createBuffer(new Float32Array(40)), particles, 40];
}
