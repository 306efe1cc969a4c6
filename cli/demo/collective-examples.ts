/**
 * Runs the examples built on atomics and subgroup operations (examples/histogram-atomics.ts, sum-subgroups.ts,
 * compact-subgroups.ts, softmax-subgroups.ts) on a device and checks each against a reference computed here:
 * exactly for the histogram and the compaction (its order within each block, and the multiset overall),
 * against float64 for the sum and the softmax. Inputs are fresh and random on every call; outputs start
 * poisoned (NaN) or, where the kernel adds to them, at random values the result must include. Optionally
 * times each kernel with the device's timer and reports its effective bandwidth. Used by the tests (every
 * backend, subgroup sizes 4 and 32, checked mode) and by the GPU run (bench/gpu-run.ts).
 */

import type { Device } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import { compareToReference } from "../../runtime/reference.ts";

export interface ExampleCheck {
  readonly example: string;
  readonly size: string;
  readonly pass: boolean;
  /** What was compared, for the record. */
  readonly detail: Readonly<Record<string, number | string | boolean>>;
  /** With `time`: the device's median time of one launch, and bytes moved per second at that time. */
  readonly ms?: number;
  readonly gbPerSecond?: number;
}

export interface ExampleOptions {
  /** Time each kernel after checking it (device events or timestamp queries on GPUs). */
  readonly time?: boolean;
  /** f32 tolerance on the softmax's elements, relative to max(|reference|, 1e-6·row max). */
  readonly softmaxTolerance?: number;
}

export interface ExampleSizes {
  /** u32 words of the histogram's input (four bytes each). */
  readonly histogramWords: number;
  readonly sumLength: number;
  readonly compactLength: number;
  readonly softmaxRows: number;
  readonly softmaxCols: number;
}

/** The examples' files, relative to the package root: the library checkCollectiveExamples is given holds their kernels. */
export const collectiveExampleFiles: readonly string[] = ["examples/histogram-atomics.ts", "examples/sum-subgroups.ts", "examples/compact-subgroups.ts", "examples/softmax-subgroups.ts"];

export const testSizes: ExampleSizes = { histogramWords: 25_013, sumLength: 100_003, compactLength: 20_011, softmaxRows: 23, softmaxCols: 517 };
export const gpuSizes: ExampleSizes = { histogramWords: 1 << 24, sumLength: 1 << 26, compactLength: 1 << 22, softmaxRows: 4096, softmaxCols: 4096 };

async function timed(device: Device, run: Parameters<Device["time"]>, bytes: number, options: ExampleOptions): Promise<{ ms?: number; gbPerSecond?: number }> {
  if (!options.time) return {};
  const timing = await device.time(...run);
  return { ms: timing.medianMs, gbPerSecond: bytes / (timing.medianMs * 1e6) };
}

/** Enough blocks to fill a GPU, few enough that each thread loops: grid-stride kernels take any grid. */
function strideGrid(device: Device, work: number, block: number): number {
  const blocks = Math.ceil(work / block);
  return Math.max(1, Math.min(blocks, device.backend === "cpu" ? 7 : 1024));
}

export async function checkHistogram(device: Device, library: KernelLibrary, words: number, options: ExampleOptions = {}): Promise<ExampleCheck> {
  const kernel = library.get("histogram256");
  // Half the bytes from a narrow range, so that many threads hit the same bins at once.
  const data = Uint32Array.from({ length: words }, () => {
    let word = 0;
    for (let b = 0; b < 4; b++) word |= (Math.random() < 0.5 ? 40 + Math.floor(Math.random() * 4) : Math.floor(Math.random() * 256)) << (8 * b);
    return word >>> 0;
  });
  const start = Uint32Array.from({ length: 256 }, () => Math.floor(Math.random() * 1000));
  const expected = Array.from(start);
  for (const word of data) for (let b = 0; b < 4; b++) expected[(word >>> (8 * b)) & 255]!++;
  const hist = device.createBuffer(start);
  const input = device.createBuffer(data);
  const launch = { grid: [strideGrid(device, words, 256)] as [number], args: [hist, input, words] };
  await device.launch(kernel, launch);
  const got = (await device.read(hist)) as Uint32Array;
  const wrongBins = expected.filter((count, bin) => got[bin] !== count).length;
  const speed = await timed(device, [kernel, launch, { warmup: 2, runs: 10 }], 4 * words, options);
  return { example: "histogram256", size: `${4 * words} bytes`, pass: wrongBins === 0, detail: { wrongBins, bytes: 4 * words }, ...speed };
}

export async function checkSum(device: Device, library: KernelLibrary, n: number, options: ExampleOptions = {}): Promise<ExampleCheck> {
  const kernel = library.get("sumOnePass");
  const block = 256;
  const grid = strideGrid(device, n, block);
  const run = async (x: Float32Array, start: number) => {
    const total = device.createBuffer(Float32Array.of(start));
    await device.launch(kernel, { grid: [grid], args: [total, device.createBuffer(x), n] });
    return ((await device.read(total)) as Float32Array)[0]!;
  };
  // Small integers: every partial sum is an integer below 2^24, so every f32 addition is exact and the
  // total must equal the float64 one exactly, whatever the order: a lost or doubled element shows.
  const integers = Float32Array.from({ length: n }, () => Math.floor(Math.random() * 17) - 8);
  const integerStart = Math.floor(Math.random() * 1000);
  const integerSum = integers.reduce((a, b) => a + b, integerStart);
  const exact = await run(integers, integerStart);
  // Values in [0, 1): every partial sum lies between 0 and the total, so each of the at most `depth` roundings
  // on a value's way to the total (its thread's stride, the subgroup and block trees, the blocks' atomics) is
  // within 2^-24 of the total: a bound on the relative error, which holds in any order of addition.
  const x = Float32Array.from({ length: n }, () => Math.random());
  const start = Math.fround(Math.random() * 100);
  const reference = x.reduce((a, b) => a + b, start);
  const got = await run(x, start);
  const depth = Math.ceil(n / (grid * block)) + 2 * 7 + block / 4 + grid + 1;
  const relative = Math.abs(got - reference) / reference;
  const bound = depth * 2 ** -24;
  const input = device.createBuffer(x);
  const speed = await timed(device, [kernel, { grid: [grid], args: [device.createBuffer("f32", 1), input, n] }, { warmup: 2, runs: 10 }], 4 * n, options);
  return {
    example: "sumOnePass",
    size: `n = ${n}`,
    pass: exact === integerSum && relative <= bound,
    detail: { integerSum, exact, got, reference, relativeError: relative, bound },
    ...speed,
  };
}

export async function checkCompaction(device: Device, library: KernelLibrary, n: number, options: ExampleOptions = {}): Promise<ExampleCheck> {
  const kernel = library.get("compactPositive");
  const block = 256;
  // Distinct magnitudes (a random permutation), so that each kept value names its input element; some zeros.
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const x = Float32Array.from(order, (k) => (Math.random() < 0.1 ? 0 : (Math.random() < 0.5 ? -1 : 1) * (k + 1)));
  // The count starts at an offset: the kept elements must land after it.
  const offset = Math.floor(Math.random() * 1000);
  const out = device.createBuffer(new Float32Array(offset + n).fill(Number.NaN));
  const count = device.createBuffer(Int32Array.of(offset));
  const input = device.createBuffer(x);
  const launch = { grid: [Math.ceil(n / block)] as [number], args: [out, count, input, n] };
  await device.launch(kernel, launch);
  const [end] = (await device.read(count)) as Int32Array;
  const got = (await device.read(out)) as Float32Array;

  const kept = Array.from(x).filter((v) => v > 0);
  const where = new Map<number, number>();
  got.forEach((v, i) => where.set(v, i));
  let misplaced = 0;
  // Within each block, the kept elements form one run in input order.
  for (let b = 0; b * block < n; b++) {
    const mine = Array.from(x.subarray(b * block, Math.min(n, (b + 1) * block))).filter((v) => v > 0);
    if (mine.length === 0) continue;
    const first = where.get(mine[0]!);
    if (first === undefined || first < offset) {
      misplaced += mine.length;
      continue;
    }
    mine.forEach((v, k) => {
      if (got[first + k] !== v) misplaced++;
    });
  }
  // Overall: exactly the kept elements, once each, after the offset; nothing written elsewhere.
  const written = Array.from(got.subarray(offset, offset + kept.length)).sort((a, b) => a - b);
  const sameMultiset = written.length === kept.length && [...kept].sort((a, b) => a - b).every((v, i) => written[i] === v);
  const untouched = got.subarray(0, offset).every(Number.isNaN) && got.subarray(offset + kept.length).every(Number.isNaN);
  const pass = end === offset + kept.length && misplaced === 0 && sameMultiset && untouched;
  // Each timed launch appends its run after the previous ones': room for all twelve.
  const appended = options.time ? device.createBuffer("f32", 13 * n) : out;
  const speed = await timed(device, [kernel, { ...launch, args: [appended, device.createBuffer("i32", 1), input, n] }, { warmup: 2, runs: 10 }], 4 * n + 4 * kept.length, options);
  return { example: "compactPositive", size: `n = ${n}`, pass, detail: { kept: kept.length, count: end! - offset, misplaced, sameMultiset, untouched }, ...speed };
}

export async function checkSoftmax(device: Device, library: KernelLibrary, rows: number, cols: number, options: ExampleOptions = {}): Promise<ExampleCheck> {
  const kernel = library.get("softmaxRows");
  // Rows with a wide range of values (up to ±30), so that exp would overflow without the maximum.
  const x = Float32Array.from({ length: rows * cols }, () => (Math.random() * 2 - 1) * (Math.random() < 0.1 ? 90 : 8));
  const reference = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * cols, (r + 1) * cols);
    const max = Math.max(...row);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    row.forEach((v, c) => (reference[r * cols + c] = Math.exp(v - max) / sum));
  }
  const out = device.createBuffer(new Float32Array(rows * cols).fill(Number.NaN));
  const input = device.createBuffer(x);
  const launch = { grid: [rows] as [number], args: [out, input, cols] };
  await device.launch(kernel, launch);
  const report = compareToReference((await device.read(out)) as Float32Array, reference, 1e-6 / cols);
  const tolerance = options.softmaxTolerance ?? 1e-5;
  const speed = await timed(device, [kernel, launch, { warmup: 2, runs: 10 }], 8 * rows * cols, options);
  return {
    example: "softmaxRows",
    size: `${rows}×${cols}`,
    pass: report.nonFinite === 0 && report.maxRelative <= tolerance,
    detail: { maxRelative: report.maxRelative, nonFinite: report.nonFinite, tolerance },
    ...speed,
  };
}

/** All four, at the given sizes (softmax also with rows shorter than a block). */
export async function checkCollectiveExamples(device: Device, library: KernelLibrary, sizes: ExampleSizes, options: ExampleOptions = {}): Promise<ExampleCheck[]> {
  return [
    await checkHistogram(device, library, sizes.histogramWords, options),
    await checkSum(device, library, sizes.sumLength, options),
    await checkCompaction(device, library, sizes.compactLength, options),
    await checkSoftmax(device, library, sizes.softmaxRows, sizes.softmaxCols, options),
    await checkSoftmax(device, library, 5, 7, { ...options, time: false }),
  ];
}
