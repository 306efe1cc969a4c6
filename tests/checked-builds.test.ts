/**
 * Checked GPU builds (docs/language.md, "Checked GPU builds"): every seeded bug of tests/checked/corpus.ts is
 * reported by a checked WebGPU build (SwiftShader here) with the kind and line the corpus marks, in the same
 * text as the CPU's checked mode; the failure is raised by the next synchronize() as a LaunchFailure naming the
 * launch; the violation did not happen and the device goes on. (CUDA: bench/gpu-checked.ts on the GPU machine.)
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, LaunchFailure, CheckFailures, type Device, type KernelLibrary } from "../runtime/index.ts";
import { bugLine, corpusCases, corpusFile, runCase, type CaseReport } from "./checked/corpus-cases.ts";
import { deviceFor } from "./backends.ts";

const webgpu = await deviceFor("webgpu");
const cpu = await createDevice({ backend: "cpu", checked: true });
const cpuLibrary = compileKernelLibrary([corpusFile], ["js"]);
const cpuReports = new Map<string, CaseReport>();
for (const testCase of corpusCases) cpuReports.set(testCase.kernel, await runCase(cpu, cpuLibrary, testCase));

describe("the seeded bugs on the CPU's checked mode", () => {
  it.each(corpusCases.map((c) => [c.kernel, c] as const))("%s is reported at its marked line", (_, testCase) => {
    const report = cpuReports.get(testCase.kernel)!;
    expect(report.error).toBeUndefined();
    expect(report.kind).toBe(testCase.kind);
    expect(report.line).toBe(bugLine(testCase.kernel));
  });
});

describe("a block-uniform statement on the CPU's checked mode", () => {
  it("reports a division by zero once per block, naming no thread (it runs outside the thread loops)", async () => {
    const file = path.join(path.dirname(corpusFile), "block-uniform.ts");
    const kernel = compileKernelLibrary([file], ["js"]).get("uniformDivide");
    await cpu.launch(kernel, { grid: [2], args: [cpu.createBuffer(new Int32Array(64)), 5, 0] });
    const failure = (await cpu.synchronize().catch((error: unknown) => error)) as LaunchFailure;
    expect(failure).toBeInstanceOf(LaunchFailure);
    expect(failure.message).toMatch(/^tskernel: launch #\d+ of 'uniformDivide' failed: division-by-zero in 'uniformDivide' at tests\/checked\/block-uniform\.ts:7:\d+, block \(0, 0, 0\): integer division by zero in `\(a \+ blockIdx\.x\) \/ b`$/);
  });

  it("reports a division by zero in a helper that a block-uniform statement calls, at the helper's line, naming no thread", async () => {
    const file = path.join(path.dirname(corpusFile), "block-uniform.ts");
    const kernel = compileKernelLibrary([file], ["js"]).get("uniformHelperDivide");
    await cpu.launch(kernel, { grid: [2], args: [cpu.createBuffer(new Int32Array(64)), 5, 0] });
    const failure = (await cpu.synchronize().catch((error: unknown) => error)) as LaunchFailure;
    expect(failure).toBeInstanceOf(LaunchFailure);
    expect(failure.message).toMatch(/^tskernel: launch #\d+ of 'uniformHelperDivide' failed: division-by-zero in 'uniformHelperDivide' at tests\/checked\/block-uniform\.ts:23:\d+, block \(0, 0, 0\): integer division by zero in `x \/ y`$/);
  });
});

describe.skipIf(typeof webgpu === "string")(`checked WebGPU builds${typeof webgpu === "string" ? ` (skipped: ${webgpu})` : ""}`, () => {
  const device = webgpu as Device;
  let library: KernelLibrary;
  const reports = new Map<string, CaseReport>();

  it("compiles the corpus checked for WGSL", () => {
    library = compileKernelLibrary([corpusFile], ["wgsl"], { checked: true });
    expect(library.get("tailOffByOne").description.outputs.wgsl!.checks!.sites.length).toBeGreaterThan(0);
  });

  it.each(corpusCases.map((c) => [c.kernel, c] as const))("%s: the same report as the CPU's", async (_, testCase) => {
    const report = await runCase(device, library, testCase);
    reports.set(testCase.kernel, report);
    expect(report.error).toBeUndefined();
    expect(report.kind).toBe(testCase.kind);
    expect(report.line).toBe(bugLine(testCase.kernel));
    expect(report.text).toBe(cpuReports.get(testCase.kernel)!.text);
  });

  it(`reports all of them: ${corpusCases.length} of ${corpusCases.length}`, () => {
    const found = corpusCases.filter((c) => reports.get(c.kernel)?.line === bugLine(c.kernel) && reports.get(c.kernel)?.kind === c.kind);
    expect(found.map((c) => c.kernel)).toEqual(corpusCases.map((c) => c.kernel));
  });

  it("names the launch, keeps the violation from happening and runs the next launch", async () => {
    const kernel = library.get("shiftedWrite");
    const out = device.createBuffer(new Float32Array(40).fill(-1));
    const x = device.createBuffer(Float32Array.from({ length: 40 }, (_, i) => i));
    const guard = device.createBuffer(new Float32Array(4).fill(-1));
    await device.launch(kernel, { grid: [1], args: [out, x, 40] });
    const failure = await device.synchronize().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LaunchFailure);
    const launchFailure = failure as LaunchFailure;
    expect(launchFailure.kernel).toBe("shiftedWrite");
    expect(launchFailure.message).toMatch(/^tskernel: launch #\d+ of 'shiftedWrite' failed: out-of-bounds in 'shiftedWrite' at tests\/checked\/corpus\.ts:\d+:\d+, block \(0, 0, 0\), thread \(39, 0, 0\): write to 'out'\[40\], but it has 40 elements$/);
    expect(launchFailure.cause).toBeInstanceOf(CheckFailures);
    // The store was dropped: out[1..39] hold x[0..38], out[0] is untouched, and the guard after it too.
    const values = (await device.read(out)) as Float32Array;
    expect(values[0]).toBe(-1);
    expect(Array.from(values.subarray(1))).toEqual(Array.from({ length: 39 }, (_, i) => i));
    expect(Array.from((await device.read(guard)) as Float32Array)).toEqual([-1, -1, -1, -1]);
    // The next launch runs, and reports nothing when it breaks no rule.
    await device.launch(kernel, { grid: [1], args: [out, x, 39] });
    const after = (await device.read(out)) as Float32Array;
    expect(after[39]).toBe(38);
  });

  it("gives zeros for a vector load that fails its check, and the loaded values for the others", async () => {
    // x has 30 random elements and 8 groups of 4 read it: group 7 reads x[28..31], past its end.
    const x = Float32Array.from({ length: 30 }, () => Math.fround(Math.random() * 2 - 1));
    const out = device.createBuffer(new Float32Array(32).fill(-1));
    await device.launch(library.get("vectorTail"), { grid: [1], args: [out, device.createBuffer(x), 8] });
    await expect(device.synchronize()).rejects.toBeInstanceOf(LaunchFailure);
    const expected = Array.from({ length: 32 }, (_, i) => {
      const g = Math.floor(i / 4);
      if (g === 7) return 0;
      const lane = (k: number) => x[g * 4 + (k % 4)]!;
      return Math.fround(lane(i % 4) + lane((i % 4) + 1));
    });
    expect(Array.from((await device.read(out)) as Float32Array)).toEqual(expected);
    // A misaligned start (group 3 at 13) fails too: its four values are 0.
    const y = Float32Array.from({ length: 128 }, () => Math.fround(Math.random() * 2 - 1));
    const copied = device.createBuffer(new Float32Array(128).fill(-1));
    await device.launch(library.get("vectorMisaligned"), { grid: [1], args: [copied, device.createBuffer(y), 1] });
    await expect(device.synchronize()).rejects.toBeInstanceOf(LaunchFailure);
    expect(Array.from((await device.read(copied)) as Float32Array)).toEqual(Array.from(y, (value, i) => (i >= 12 && i < 16 ? 0 : value)));
  });

  it("shows the first few reports of a launch where many threads fail, and counts them all", async () => {
    const kernel = library.get("tailOffByOne");
    const out = device.createBuffer(new Float32Array(64));
    // x has 10 elements and n is 40: threads 10 to 40 read past it.
    await device.launch(kernel, { grid: [1], args: [out, device.createBuffer(new Float32Array(10)), 40] });
    const failure = (await device.synchronize().catch((error: unknown) => error)) as LaunchFailure;
    expect(failure).toBeInstanceOf(LaunchFailure);
    const lines = failure.message.split("\n");
    expect(lines.length).toBe(5);
    for (const line of lines.slice(1, 4)) expect(line).toMatch(/^ {2}also: out-of-bounds in 'tailOffByOne' at tests\/checked\/corpus\.ts:\d+:\d+, block \(0, 0, 0\), thread \(\d+, 0, 0\): read of 'x'\[\d+\], but it has 10 elements$/);
    expect(lines[4]).toBe("  (checked build: 31 checks failed in the launches read together; 4 shown)");
    const cause = failure.cause as CheckFailures;
    expect(cause.failed).toBe(31);
    expect(cause.faults.length).toBe(8);
  });

  it("refuses a kernel built without checks on a checked device", async () => {
    const checkedDevice = await createDevice({ backend: "webgpu", checked: true });
    try {
      const unchecked = compileKernelLibrary([corpusFile], ["wgsl"]).get("tailOffByOne");
      await expect(checkedDevice.launch(unchecked, { grid: [1], args: [checkedDevice.createBuffer(new Float32Array(64)), checkedDevice.createBuffer(new Float32Array(64)), 10] })).rejects.toThrow(
        "tskernel: cannot launch 'tailOffByOne': the device runs checked builds only (checked: true), and this kernel was built without checks: compile it with compileKernelLibrary(files, targets, { checked: true }) or tskernel build --checked",
      );
    } finally {
      checkedDevice.dispose();
    }
  });
});
