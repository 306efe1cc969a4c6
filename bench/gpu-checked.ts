/**
 * Checked GPU builds on the GPU machine (issue 24 §1; docs/language.md, "Checked GPU builds"), per backend
 * (CUDA, WebGPU through Dawn), in three parts:
 *  1. the seeded bugs of tests/checked/corpus.ts on a checked device: per case the line the corpus marks and
 *     the line reported, the kind, and the text against the CPU's checked mode; N/N per backend;
 *  2. the examples on a checked device (it refuses unchecked builds): every case of the memory-bound suite
 *     (cli/kernels-bench) at its CPU shape, every rung of `tskernel bench matmul` at n = 256, the atomics and
 *     subgroup examples (cli/demo/collective-examples.ts), each checked against its reference; the number of
 *     failed checks they report must be 0;
 *  3. the cost: on an unchecked device, the suite at one shape per case (its first GPU shape, halved until it
 *     holds at most 2^24 elements) and the matmul rungs at n = 2048 (MATMUL_N), the plain build and the checked
 *     build on the same inputs, timed in alternate rounds; the checked build's median over the plain one's
 *     per kernel, and whether their outputs are the same bytes.
 *
 * Built by bench/gpu-prep.sh --checked: `tskernel build` of the files below, plain (kernels/) and checked
 * (kernels-checked/, the corpus in kernels-corpus/), with cubins for CUDA, and this file bundled; the corpus's
 * source, package.json and the language declarations beside them, for the CPU's checked mode, compiled there. Run there:
 * `node gpu-checked.mjs --dir <device dir> --out checked-h100.json [--backends cuda,webgpu] [--small]`.
 * --small (rounds 1, the suite at its CPU shapes, n = 256) lets it run end to end where there is no GPU: with
 * --backends webgpu on SwiftShader. The corpus's CPU reports come from the CPU's checked mode here.
 */

import fs from "node:fs";
import path from "node:path";
import { BackendUnavailable, CheckFailures, compareToReference, compileKernelLibrary, CpuDevice, createCudaDevice, createWebGpuDevice, KernelLibrary, LaunchFailure, loadKernelLibrary, median, referenceGemm, type BackendName, type Device, type DeviceBuffer, type KernelHandle, type LaunchStep } from "../runtime/index.ts";
import { createSpecBuffer, initialData, launchSteps, release, runChecked, timeRotating } from "../cli/kernels-bench/bench.ts";
import { backendUnsupported, kernelCases, resolveCases, type CaseInstance, type KernelCase, type Shape } from "../cli/kernels-bench/cases.ts";
import { benchVariants, unsupportedSize, type MatmulVariant } from "../cli/demo/variants.ts";
import { checkCollectiveExamples, collectiveExampleFiles, testSizes } from "../cli/demo/collective-examples.ts";
import { roundToBf16, roundToF16 } from "../compiler/lang/float16.ts";
import { referenceGemmAt } from "../runtime/reference.ts";
import { corpusCases, runCase, type CaseReport } from "../tests/checked/corpus-cases.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const dir = option("--dir", ".");
const outFile = option("--out", "checked-h100.json");
const small = args.includes("--small");
const backends = option("--backends", "cuda,webgpu").split(",") as ("cuda" | "webgpu")[];
const rounds = Number(option("--rounds", small ? "1" : "3"));
const runsPerRound = Number(option("--runs", small ? "3" : "5"));
const matmulN = Number(option("--matmul-n", small ? "256" : "2048"));
// --parts corpus,examples,cost (default all), --cases id,id and --rungs id,id (default all): to try a part alone.
const parts = new Set(option("--parts", "corpus,examples,cost").split(","));
const rungIds = args.includes("--rungs") ? new Set(option("--rungs", "").split(",")) : undefined;
const caseList = args.includes("--cases") ? option("--cases", "") : undefined;
// `--cases` takes `bench kernels`' pinned builds too (`blur-rgba8@STRIP=16`).
const resolvedCases = caseList ? resolveCases(caseList) : kernelCases;
if (typeof resolvedCases === "string") throw new Error(`--cases: ${resolvedCases}`);
const suiteCases = resolvedCases;
// --cost-elements N: the cost's shapes hold at most N elements (default 2^24), e.g. 2^25 for the blur at 8K.
const maxCostElements = Number(option("--cost-elements", String(2 ** 24)));

const plain = loadKernelLibrary(path.join(dir, "kernels"));
const checked = loadKernelLibrary(path.join(dir, "kernels-checked"));
const corpus = loadKernelLibrary(path.join(dir, "kernels-corpus"));
// The corpus's source sits at tests/checked/corpus.ts under `dir` (with the package's package.json and language
// declarations), so that the CPU's checked mode, compiled here, names the file as the GPU builds do.
const corpusFile = path.join(dir, "tests", "checked", "corpus.ts");
const corpusSource = fs.readFileSync(corpusFile, "utf8").split("\n");

const results: Record<string, unknown> = { date: new Date().toISOString(), small, rounds, runsPerRound, matmulN, backends: {} };
const log = (line: string) => console.log(line);
const save = () => fs.writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);

/** The line of corpus.ts that a kernel's BUG comment marks (as tests/checked/corpus-cases.ts's bugLine, from the copy here). */
function bugLine(kernel: string): number {
  const start = corpusSource.findIndex((line) => line.startsWith(`export const ${kernel} =`));
  const offset = corpusSource.slice(start).findIndex((line) => line.includes("// BUG"));
  return start < 0 || offset < 0 ? -1 : start + offset + 1;
}

/** What a failure says: the failed checks it counts and its first line, or, for any other error, its message. */
function describeFailure(error: unknown): { reports: number; first: string } | { error: string } {
  if (error instanceof LaunchFailure && error.cause instanceof CheckFailures) return { reports: error.cause.failed, first: error.message.split("\n")[0]! };
  return { error: error instanceof Error ? error.message.split("\n")[0]! : String(error) };
}

async function openDevice(backend: "cuda" | "webgpu", isChecked: boolean): Promise<Device | string> {
  try {
    return backend === "cuda" ? createCudaDevice({ checked: isChecked }) : await createWebGpuDevice({ checked: isChecked });
  } catch (error) {
    if (error instanceof BackendUnavailable) return error.reason;
    return `cannot open: ${(error as Error).message}`;
  }
}

/**
 * Example files whose checked WGSL SwiftShader's JIT cannot compile (tests/backends.ts says how it fails): left
 * out where the device is SwiftShader (a dry run here), with the reason in their rows. Dawn on a GPU runs them.
 */
const swiftShaderLimits: Readonly<Record<string, string>> = {
  "examples/sgemm-multistage.ts": "SwiftShader's JIT takes over 10 minutes and 17 GB on the checked build",
};
function unrunnable(device: Device, files: readonly string[]): string | undefined {
  if (device.backend !== "webgpu" || !/swiftshader/i.test(device.name)) return undefined;
  return files.map((file) => swiftShaderLimits[file]).find((why) => why !== undefined);
}

// ---------------------------------------------------------------------------------------------------------
// 1. The corpus.

async function runCorpus(device: Device, cpuReports: ReadonlyMap<string, CaseReport>) {
  const cases = [];
  for (const testCase of corpusCases) {
    const report = await runCase(device, corpus, testCase);
    const expected = bugLine(testCase.kernel);
    const cpu = cpuReports.get(testCase.kernel)!;
    const found = report.line === expected && report.kind === testCase.kind;
    cases.push({ kernel: testCase.kernel, kind: testCase.kind, expectedLine: expected, reportedLine: report.line ?? null, reportedKind: report.kind ?? null, found, sameTextAsCpu: report.text === cpu.text, text: report.text ?? null, error: report.error ?? null });
    log(`  ${testCase.kernel.padEnd(20)} expected line ${expected}, reported ${report.line ?? "-"} (${report.kind ?? report.error ?? "nothing"})${found ? "" : "  MISSED"}${report.text === cpu.text ? "" : "  (text differs from the CPU's)"}`);
  }
  const found = cases.filter((c) => c.found).length;
  log(`  corpus: ${found}/${cases.length}`);
  return { found, total: cases.length, cases };
}

// ---------------------------------------------------------------------------------------------------------
// 2. The examples on a checked device.

function smallShape(kernelCase: KernelCase): Shape {
  return kernelCase.cpuShapes[0]!;
}

/** The first GPU shape, its largest dimension halved until it holds at most maxCostElements (with --small: the CPU shape). */
function costShape(kernelCase: KernelCase): Shape {
  if (small) return kernelCase.cpuShapes[0]!;
  const shape = [...kernelCase.gpuShapes[0]!];
  while (shape.reduce((a, b) => a * b, 1) > maxCostElements) {
    const largest = shape.indexOf(Math.max(...shape));
    shape[largest] = Math.ceil(shape[largest]! / 2);
  }
  return shape;
}

async function suiteOnChecked(device: Device) {
  const rows = [];
  const context = { library: checked, limits: device.limits, backend: device.backend };
  for (const kernelCase of suiteCases) {
    const skipped = backendUnsupported(kernelCase, checked, device.backend) ?? unrunnable(device, Object.values(kernelCase.kernels));
    const shape = smallShape(kernelCase);
    if (skipped || kernelCase.unsupported(shape)) {
      rows.push({ case: kernelCase.id, files: Object.values(kernelCase.kernels), skipped: skipped ?? kernelCase.unsupported(shape) });
      continue;
    }
    try {
      const instance = kernelCase.build(shape, context);
      const { set, check } = await runChecked(device, instance);
      for (const buffer of set.buffers.values()) release(device, buffer);
      rows.push({ case: kernelCase.id, files: Object.values(kernelCase.kernels), shape, reports: 0, pass: check.pass, launches: instance.steps.map((s) => s.kernel.description.entryName) });
      log(`  ${kernelCase.id} ${shape.join("×")}: 0 reports, check ${check.pass ? "pass" : "FAIL"}`);
    } catch (error) {
      rows.push({ case: kernelCase.id, files: Object.values(kernelCase.kernels), shape, ...describeFailure(error) });
      log(`  ${kernelCase.id} ${shape.join("×")}: ${JSON.stringify(describeFailure(error))}`);
    }
  }
  return rows;
}

const rounders = { bf16: roundToBf16, f16: roundToF16 } as const;

/** A, B and C of one element type at size n, with the values of A and B as the kernels see them. */
function matmulInputs(device: Device, n: number, dtype: "f32" | "bf16" | "f16") {
  const round = dtype === "f32" ? Math.fround : rounders[dtype];
  const A = Float64Array.from({ length: n * n }, () => round(Math.random() * 2 - 1));
  const B = Float64Array.from({ length: n * n }, () => round(Math.random() * 2 - 1));
  const make = (values: Float64Array) => (dtype === "f32" ? device.createBuffer(Float32Array.from(values)) : device.createBuffer(dtype, values));
  return { A, B, a: make(A), b: make(B), c: () => (dtype === "f32" ? device.createBuffer("f32", n * n) : device.createBuffer(dtype, n * n)) };
}

function matmulVariants(library: KernelLibrary, device: Device): readonly MatmulVariant[] {
  return benchVariants(library, device.backend).filter((v) => v.id !== "tiled-2x2" && v.id !== "sgemm-naive" && (!rungIds || rungIds.has(v.id)));
}

async function rungsOnChecked(device: Device) {
  const n = 256;
  const rows = [];
  const inputs = new Map<string, ReturnType<typeof matmulInputs>>();
  for (const variant of matmulVariants(checked, device)) {
    const dtype = variant.dtype ?? "f32";
    const kernel = checked.firstFitting(variant.kernel, variant.specializations, device.limits);
    const why = unsupportedSize(variant, n) ?? unrunnable(device, [variant.file]) ?? (kernel ? refuses(device, kernel) : "its block is larger than this device allows");
    if (why) {
      rows.push({ rung: variant.id, file: variant.file, skipped: why });
      continue;
    }
    if (!inputs.has(dtype)) inputs.set(dtype, matmulInputs(device, n, dtype));
    const { A, B, a, b, c } = inputs.get(dtype)!;
    const C = c();
    const launch = variant.launch(n, { A: a, B: b, C, device }, 1, 0, kernel!.description.specialization as Record<string, number>);
    try {
      await device.launch(kernel!, launch);
      const error = compareToReference((await device.read(C)) as Float32Array, referenceGemm(n, n, n, A, B));
      rows.push({ rung: variant.id, file: variant.file, n, reports: 0, normwiseRelativeError: error.normwiseRelative, maxRelativeError: error.maxRelative, nonFinite: error.nonFinite });
      log(`  ${variant.id} n=${n}: 0 reports, normwise relative error ${error.normwiseRelative.toExponential(2)}${error.nonFinite ? `, ${error.nonFinite} non-finite` : ""}`);
    } catch (error) {
      rows.push({ rung: variant.id, file: variant.file, n, ...describeFailure(error) });
      log(`  ${variant.id} n=${n}: ${JSON.stringify(describeFailure(error))}`);
    } finally {
      launch.release?.();
      release(device, C);
    }
  }
  for (const set of inputs.values()) (release(device, set.a), release(device, set.b));
  return rows;
}

/** wgmma rungs (the manifest's `matrix` "warpgroup") need sm_90: the CUDA device refuses them elsewhere. */
function refuses(device: Device, kernel: KernelHandle): string | undefined {
  const arch = (device as { computeCapability?: readonly number[] }).computeCapability;
  if (kernel.description.matrix === "warpgroup" && device.backend === "cuda" && arch && arch[0]! < 9) return "wgmma needs sm_90";
  return undefined;
}

async function collectivesOnChecked(device: Device) {
  try {
    // The examples' own kernels: the library holds examples/softmax.ts's softmaxRows too (another signature).
    const library = new KernelLibrary(checked.kernels.filter((k) => collectiveExampleFiles.some((file) => k.description.source.endsWith(file))));
    const checks = await checkCollectiveExamples(device, library, testSizes, { softmaxTolerance: 1e-3 });
    for (const check of checks) log(`  ${check.example} ${check.size}: 0 reports, check ${check.pass ? "pass" : "FAIL"}`);
    return checks.map((check) => ({ example: check.example, size: check.size, reports: 0, pass: check.pass }));
  } catch (error) {
    log(`  collectives: ${JSON.stringify(describeFailure(error))}`);
    return [{ example: "collectives", ...describeFailure(error) }];
  }
}

// ---------------------------------------------------------------------------------------------------------
// 3. The cost.

const bytesOf = (array: ArrayBufferView) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
const sameBytes = (a: ArrayBufferView, b: ArrayBufferView): boolean => bytesOf(a).equals(bytesOf(b));
/** Where the outputs differ: how many 4-byte words (a float contracted differently by the GPU's compiler shows here). */
function differingWords(a: ArrayBufferView, b: ArrayBufferView): number {
  const words = (v: ArrayBufferView) => new Uint32Array(v.buffer, v.byteOffset, Math.floor(v.byteLength / 4));
  const x = words(a);
  const y = words(b);
  let count = Math.abs(x.length - y.length);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) count++;
  return count;
}

/** Plain and checked timings of one kernel (or launch sequence), alternating round by round. */
async function alternate(timeOne: (build: "plain" | "checked") => Promise<readonly number[]>) {
  const times = { plain: [] as number[], checked: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    times.plain.push(...(await timeOne("plain")));
    times.checked.push(...(await timeOne("checked")));
  }
  const plainMs = median(times.plain);
  const checkedMs = median(times.checked);
  return { plainMs, checkedMs, ratio: checkedMs / plainMs, plainRunsMs: times.plain, checkedRunsMs: times.checked };
}

async function suiteCost(device: Device) {
  const rows = [];
  for (const kernelCase of suiteCases) {
    const shape = costShape(kernelCase);
    const skipped = backendUnsupported(kernelCase, checked, device.backend) ?? unrunnable(device, Object.values(kernelCase.kernels)) ?? kernelCase.unsupported(shape);
    if (skipped) {
      rows.push({ case: kernelCase.id, shape, skipped });
      continue;
    }
    const made: DeviceBuffer[] = [];
    try {
      // One instance (its scalars, SAXPY's a, are drawn when it is built), launched with the plain kernels and
      // with their checked builds, the same specializations.
      const instance = kernelCase.build(shape, { library: plain, limits: device.limits, backend: device.backend });
      const checkedSteps = instance.steps.map((step) => ({ ...step, kernel: checked.get(step.kernel.description.name, step.kernel.description.specialization) }));
      const instances = { plain: instance, checked: { ...instance, steps: checkedSteps } };
      // The same data in two sets of buffers, one per build.
      const data = instances.plain.buffers.map((spec) => initialData(spec));
      const steps = {} as Record<"plain" | "checked", LaunchStep[]>;
      const outputs = {} as Record<"plain" | "checked", ArrayBufferView>;
      for (const build of ["plain", "checked"] as const) {
        const instance: CaseInstance = instances[build];
        const buffers = new Map(instance.buffers.map((spec, i) => [spec.name, createSpecBuffer(device, spec, data[i]!.slice() as typeof data[number])]));
        made.push(...buffers.values());
        steps[build] = launchSteps(instance, buffers);
        for (const step of steps[build]) await device.launch(step.kernel, step.options);
        outputs[build] = (await device.read(buffers.get(instance.output)!)) as ArrayBufferView;
      }
      const timing = await alternate(async (build) => (await timeRotating(device, [steps[build]], runsPerRound)).runsMs);
      const same = sameBytes(outputs.plain, outputs.checked);
      const row = { case: kernelCase.id, shape, launches: steps.plain.map((s) => s.kernel.description.entryName), sameOutput: same, ...(same ? {} : { differingWords: differingWords(outputs.plain, outputs.checked) }), reports: 0, ...timing };
      rows.push(row);
      log(`  ${kernelCase.id} ${shape.join("×")}: plain ${timing.plainMs.toFixed(4)} ms, checked ${timing.checkedMs.toFixed(4)} ms, ×${timing.ratio.toFixed(2)}${same ? "" : `, outputs differ in ${row.differingWords} words`}`);
    } catch (error) {
      rows.push({ case: kernelCase.id, shape, ...describeFailure(error) });
      log(`  ${kernelCase.id}: ${JSON.stringify(describeFailure(error))}`);
    } finally {
      for (const buffer of made) release(device, buffer);
    }
  }
  return rows;
}

async function rungCost(device: Device) {
  const n = matmulN;
  const rows = [];
  const inputs = new Map<string, ReturnType<typeof matmulInputs>>();
  const sample = Array.from({ length: 1024 }, () => Math.floor(Math.random() * n * n));
  for (const variant of matmulVariants(plain, device)) {
    const dtype = variant.dtype ?? "f32";
    const kernels = { plain: plain.firstFitting(variant.kernel, variant.specializations, device.limits), checked: checked.firstFitting(variant.kernel, variant.specializations, device.limits) };
    const why = unsupportedSize(variant, n) ?? unrunnable(device, [variant.file]) ?? (kernels.plain && kernels.checked ? refuses(device, kernels.plain) : "its block is larger than this device allows");
    if (why) {
      rows.push({ rung: variant.id, n, skipped: why });
      continue;
    }
    if (!inputs.has(dtype)) inputs.set(dtype, matmulInputs(device, n, dtype));
    const { A, B, a, b, c } = inputs.get(dtype)!;
    const C = { plain: c(), checked: c() };
    const launches = {
      plain: variant.launch(n, { A: a, B: b, C: C.plain, device }, 1, 0, kernels.plain!.description.specialization as Record<string, number>),
      checked: variant.launch(n, { A: a, B: b, C: C.checked, device }, 1, 0, kernels.checked!.description.specialization as Record<string, number>),
    };
    try {
      const outputs = {} as Record<"plain" | "checked", Float32Array>;
      for (const build of ["plain", "checked"] as const) {
        await device.launch(kernels[build]!, launches[build]);
        outputs[build] = (await device.read(C[build])) as Float32Array;
      }
      const error = compareToReference(Float32Array.from(sample, (i) => outputs.plain[i]!), referenceGemmAt(n, n, A, B, sample));
      const timing = await alternate(async (build) => (await device.time(kernels[build]!, launches[build], { warmup: 1, runs: runsPerRound })).runsMs);
      const same = sameBytes(outputs.plain, outputs.checked);
      const row = { rung: variant.id, dtype, n, specialization: kernels.plain!.description.specialization, sameOutput: same, ...(same ? {} : { differingWords: differingWords(outputs.plain, outputs.checked) }), normwiseRelativeError: error.normwiseRelative, maxRelativeError: error.maxRelative, reports: 0, ...timing };
      rows.push(row);
      log(`  ${variant.id} n=${n}: plain ${timing.plainMs.toFixed(4)} ms, checked ${timing.checkedMs.toFixed(4)} ms, ×${timing.ratio.toFixed(2)}${same ? "" : `, outputs differ in ${row.differingWords} words`}`);
    } catch (error) {
      rows.push({ rung: variant.id, n, ...describeFailure(error) });
      log(`  ${variant.id}: ${JSON.stringify(describeFailure(error))}`);
    } finally {
      launches.plain.release?.();
      launches.checked.release?.();
      release(device, C.plain);
      release(device, C.checked);
    }
  }
  for (const set of inputs.values()) (release(device, set.a), release(device, set.b));
  return rows;
}

// ---------------------------------------------------------------------------------------------------------

/** Runs a part, keeping its result or its error, and going on either way. */
async function part<T>(name: string, run: () => Promise<T>): Promise<T | { error: string }> {
  const started = Date.now();
  log(`== ${name}`);
  try {
    const result = await run();
    log(`   (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    return result;
  } catch (error) {
    log(`${name} FAILED: ${(error as Error).stack ?? String(error)}`);
    return { error: (error as Error).message };
  }
}

// The CPU's checked mode runs the checked JavaScript, which a build on disk does not hold: compiled here.
const cpu = new CpuDevice({ checked: true });
const cpuCorpus = compileKernelLibrary([corpusFile], ["js"], { baseDir: dir });
const cpuReports = new Map<string, CaseReport>();
for (const testCase of corpusCases) cpuReports.set(testCase.kernel, await runCase(cpu, cpuCorpus, testCase));
results.cpuCorpus = corpusCases.map((c) => ({ kernel: c.kernel, expectedLine: bugLine(c.kernel), reportedLine: cpuReports.get(c.kernel)!.line ?? null, text: cpuReports.get(c.kernel)!.text ?? null, error: cpuReports.get(c.kernel)!.error ?? null }));
log(`== CPU checked mode: ${corpusCases.filter((c) => cpuReports.get(c.kernel)!.line === bugLine(c.kernel)).length}/${corpusCases.length} of the corpus at the marked line`);

const summary: string[] = [];
for (const backend of backends) {
  const record: Record<string, unknown> = {};
  (results.backends as Record<BackendName, unknown>)[backend] = record;
  const checkedDevice = await openDevice(backend, true);
  if (typeof checkedDevice === "string") {
    record.skipped = checkedDevice;
    log(`== ${backend}: skipped (${checkedDevice})`);
    summary.push(`${backend}: skipped (${checkedDevice})`);
    save();
    continue;
  }
  record.device = checkedDevice.name;
  const corpusResult = parts.has("corpus") ? await part(`${backend}: corpus (${checkedDevice.name})`, () => runCorpus(checkedDevice, cpuReports)) : { skipped: "--parts" };
  record.corpus = corpusResult;
  save();
  if (parts.has("examples")) {
    record.suite = await part(`${backend}: the memory-bound suite, checked`, () => suiteOnChecked(checkedDevice));
    save();
    record.rungs = await part(`${backend}: the matmul rungs, checked, n = 256`, () => rungsOnChecked(checkedDevice));
    save();
    record.collectives = await part(`${backend}: atomics and subgroup examples, checked`, () => collectivesOnChecked(checkedDevice));
    save();
  }
  checkedDevice.dispose();
  const device = parts.has("cost") ? await openDevice(backend, false) : "--parts";
  if (typeof device === "string") {
    record.cost = { skipped: device };
  } else {
    record.suiteCost = await part(`${backend}: cost, the memory-bound suite (plain and checked, alternating)`, () => suiteCost(device));
    save();
    record.rungCost = await part(`${backend}: cost, the matmul rungs at n = ${matmulN}`, () => rungCost(device));
    device.dispose();
  }
  // The totals: corpus found, reports in the examples (every row that ran, checked device and cost runs).
  const exampleRows = ["suite", "rungs", "collectives", "suiteCost", "rungCost"].flatMap((key) => (Array.isArray(record[key]) ? (record[key] as Record<string, unknown>[]) : []));
  const reports = exampleRows.reduce((total, row) => total + (typeof row.reports === "number" ? row.reports : 0), 0);
  const errors = exampleRows.filter((row) => typeof row.error === "string").length;
  const failedChecks = exampleRows.filter((row) => row.pass === false).length;
  const ratios = (key: string) => (Array.isArray(record[key]) ? (record[key] as { ratio?: number }[]).map((r) => r.ratio).filter((r): r is number => typeof r === "number") : []);
  const worst = (values: number[]) => (values.length ? Math.max(...values) : Number.NaN);
  const corpusLine = "found" in (corpusResult as object) ? `${(corpusResult as { found: number }).found}/${(corpusResult as { total: number }).total}` : "skipped" in (corpusResult as object) ? "not run" : "error";
  record.totals = { corpus: corpusLine, exampleReports: reports, exampleRunsWithOtherErrors: errors, exampleReferenceFailures: failedChecks, worstSuiteRatio: worst(ratios("suiteCost")), worstRungRatio: worst(ratios("rungCost")) };
  summary.push(`${backend}: corpus ${corpusLine}; examples: ${reports} reports, ${errors} other errors, ${failedChecks} reference failures; worst ratio suite ×${worst(ratios("suiteCost")).toFixed(2)}, rungs ×${worst(ratios("rungCost")).toFixed(2)}`);
  save();
}
log("== summary");
for (const line of summary) log(line);
save();
process.exit(0);
