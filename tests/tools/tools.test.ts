/**
 * Tests for the two external-toolchain test tools (nvcc.ts and dawn.ts) against small hand-written samples
 * in samples/: each tool must accept valid code, reject broken code with the toolchain's own diagnostic,
 * and report the resource facts (registers, spills, shared memory, device limits) that later tests of the
 * compiler's CUDA and WGSL output rely on. The nvcc tests skip, saying why, where nvcc is not installed.
 */

import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { closeDawn, dawnLimits, findComputeEntryPoints, validateWgsl } from "./dawn.ts";
import { compileCuda, compileCudaMany, nvccAvailable, parsePtxasVerbose } from "./nvcc.ts";

const sample = (name: string): string => readFileSync(new URL(`./samples/${name}`, import.meta.url), "utf8");

const noNvcc = !nvccAvailable();
const skipReason = noNvcc ? " (skipped: nvcc not found on PATH or $NVCC)" : "";

describe(`nvcc${skipReason}`, () => {
  it.skipIf(noNvcc)("compiles a shared-memory kernel and reports its ptxas resources", () => {
    const result = compileCuda(sample("reduce_shared.cu"), { name: "reduce_shared" });
    expect(result.errors).toBe("");
    expect(result.ok).toBe(true);

    const reduce = result.functions.find((f) => f.name === "reduce_sum");
    expect(reduce).toBeDefined();
    expect(reduce!.entry).toBe(true);
    expect(reduce!.registers).toBeGreaterThan(0);
    expect(reduce!.sharedBytes).toBe(256 * 4); // __shared__ float tile[256]
    expect(reduce!.barriers).toBe(1);
    expect(reduce!.spillStoresBytes).toBe(0);
    expect(reduce!.spillLoadsBytes).toBe(0);

    // The C++-linkage kernel is reported under its mangled name and uses no shared memory.
    const scale = result.functions.find((f) => f.name === "_Z5scalePffi");
    expect(scale).toBeDefined();
    expect(scale!.registers).toBeGreaterThan(0);
    expect(scale!.sharedBytes).toBe(0);
  });

  it.skipIf(noNvcc)("fails on invalid CUDA with the compiler's error text", () => {
    const result = compileCuda(sample("syntax_error.cu"), { name: "syntax_error" });
    expect(result.ok).toBe(false);
    expect(result.errors).toContain('syntax_error.cu(4): error: identifier "undefined_thing" is undefined');
    expect(result.functions).toEqual([]);
  });

  it.skipIf(noNvcc)("reports spills when registers are capped by __launch_bounds__", () => {
    const result = compileCuda(sample("spill.cu"), { name: "spill" });
    expect(result.ok).toBe(true);
    const kernel = result.functions.find((f) => f.name === "spill_heavy");
    expect(kernel).toBeDefined();
    expect(kernel!.registers).toBeLessThanOrEqual(32); // 65536 registers / (1024 threads * 2 blocks)
    expect(kernel!.spillStoresBytes).toBeGreaterThan(0);
    expect(kernel!.spillLoadsBytes).toBeGreaterThan(0);
    expect(kernel!.stackFrameBytes).toBeGreaterThan(0);
  });

  it.skipIf(noNvcc)("compiles several sources in parallel, keeping their order", async () => {
    const results = await compileCudaMany([
      { source: sample("spill.cu"), options: { name: "spill" } },
      { source: sample("syntax_error.cu"), options: { name: "syntax_error" } },
      { source: sample("reduce_shared.cu"), options: { name: "reduce_shared" } },
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(results[0]!.functions.map((f) => f.name)).toEqual(["spill_heavy"]);
    expect(results[1]!.errors).toContain("undefined_thing");
    expect(results[2]!.functions.find((f) => f.name === "reduce_sum")?.sharedBytes).toBe(1024);
  });
});

// The parser is checked on recorded nvcc 13 output too, so its format assumptions are tested on machines
// without nvcc, including a non-inlined device function and a final line with no newline.
describe("ptxas -v parser", () => {
  it("reads entry and non-entry functions from recorded output", () => {
    const recorded = [
      "ptxas info    : 0 bytes gmem",
      "ptxas info    : Compiling entry function '_Z4tmplILi3EEvPfi' for 'sm_90'",
      "ptxas info    : Function properties for _Z4tmplILi3EEvPfi",
      "    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
      "ptxas info    : Used 26 registers, used 0 barriers, 256 bytes cumulative stack size",
      "ptxas info    : Compile time = 2.987 ms",
      "ptxas info    : Function properties for _Z6helperfi",
      "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads",
      "ptxas info    : Compiling entry function 'reduce_sum' for 'sm_90'",
      "ptxas info    : Function properties for reduce_sum",
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
      "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem",
      "ptxas info    : Compile time = 2.142 ms",
    ].join("\n");
    const functions = parsePtxasVerbose(recorded + "ptxas info    : 0 bytes gmem\n");
    expect(functions).toEqual([
      {
        name: "_Z4tmplILi3EEvPfi",
        entry: true,
        registers: 26,
        spillStoresBytes: 0,
        spillLoadsBytes: 0,
        sharedBytes: 0,
        stackFrameBytes: 256,
        barriers: 0,
      },
      {
        name: "_Z6helperfi",
        entry: false,
        registers: 0,
        spillStoresBytes: 8,
        spillLoadsBytes: 12,
        sharedBytes: 0,
        stackFrameBytes: 0,
        barriers: 0,
      },
      {
        name: "reduce_sum",
        entry: true,
        registers: 10,
        spillStoresBytes: 0,
        spillLoadsBytes: 0,
        sharedBytes: 1024,
        stackFrameBytes: 0,
        barriers: 1,
      },
    ]);
  });
});

describe("Dawn WGSL validation (null backend)", () => {
  afterAll(closeDawn);

  it("accepts a valid compute shader with no messages", async () => {
    const result = await validateWgsl(sample("valid.wgsl"));
    expect(result.messages).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("accepts a shader with `enable subgroups;`: the device has the subgroups feature, as the goldens need", async () => {
    const result = await validateWgsl(sample("subgroups.wgsl"));
    expect(result.messages).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("reports an unresolved identifier at its line and column", async () => {
    const result = await validateWgsl(sample("unresolved.wgsl"));
    expect(result.ok).toBe(false);
    expect(result.messages).toContainEqual({
      type: "error",
      line: 6,
      column: 31,
      message: "unresolved value 'scale'",
    });
  });

  it("rejects workgroupBarrier() in control flow that depends on local_invocation_id", async () => {
    const result = await validateWgsl(sample("nonuniform_barrier.wgsl"));
    expect(result.ok).toBe(false);
    const error = result.messages.find((m) => m.type === "error");
    expect(error).toMatchObject({ line: 8 });
    expect(error!.message).toContain("'workgroupBarrier' must only be called from uniform control flow");
    // Tint explains the error with "info" notes pointing at the branch and the builtin.
    expect(result.messages.some((m) => m.type === "info" && m.line === 7)).toBe(true);
  });

  it("reports a pipeline error when workgroup storage exceeds the device limit", async () => {
    const limit = (await dawnLimits()).maxComputeWorkgroupStorageSize;
    expect(limit).toBeLessThan(65536);
    const result = await validateWgsl(sample("big_workgroup_storage.wgsl"));
    expect(result.ok).toBe(false);
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]).toMatchObject({ type: "error", line: 0, entryPoint: "main" });
    expect(result.messages[0]!.message).toContain(
      `The total use of workgroup storage (65536 bytes) is larger than the maximum allowed (${limit} bytes)`,
    );
  });

  it("treats a warning as a failure", async () => {
    // dawn.node also prints this warning's compilation log to stdout; that cannot be turned off from JS.
    const result = await validateWgsl(sample("unreachable_warning.wgsl"));
    expect(result.ok).toBe(false);
    expect(result.messages).toEqual([
      { type: "warning", line: 7, column: 11, message: "code is unreachable" },
    ]);
  });

  it("reports a named entry point that does not exist", async () => {
    const result = await validateWgsl(sample("valid.wgsl"), ["reduce_sum", "missing"]);
    expect(result.ok).toBe(false);
    expect(result.messages).toHaveLength(1);
    expect(result.messages[0]!.entryPoint).toBe("missing");
    expect(result.messages[0]!.message).toContain("doesn't exist");
  });

  it("keeps concurrent validations apart on the shared device", async () => {
    const names = ["valid.wgsl", "big_workgroup_storage.wgsl", "unresolved.wgsl", "valid.wgsl"];
    const results = await Promise.all(names.map((n) => validateWgsl(sample(n))));
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true]);
    expect(results[1]!.messages[0]!.entryPoint).toBe("main");
    expect(results[2]!.messages[0]!.line).toBe(6);
  });

  it("opens a fresh device after closeDawn", async () => {
    await closeDawn();
    const result = await validateWgsl(sample("valid.wgsl"));
    expect(result).toEqual({ ok: true, messages: [] });
  });

  it("finds @compute entry points past attributes and comments", () => {
    const code = [
      "// @compute fn commented_out() {}",
      "/* @compute /* nested */ fn also_commented() {} */",
      "@compute @workgroup_size(8, max(2, 4), 1) fn a() {}",
      "@workgroup_size(64)",
      "@compute",
      "fn b(@builtin(local_invocation_id) l: vec3u) {}",
      "fn helper() {}",
    ].join("\n");
    expect(findComputeEntryPoints(code)).toEqual(["a", "b"]);
  });
});
