/**
 * The differential fuzzer inside the test suite: a short fixed-seed campaign of random programs on the CPU
 * (plain and checked) and WebGPU against the reference, and checks that the comparison catches what it
 * must. Long campaigns: `npm run fuzz:diff -- --count N --seed S` (tests/fuzz/README.md).
 */

import { describe, expect, it } from "vitest";
import { CpuDevice } from "../../../runtime/cpu/cpu-device.ts";
import { createProject } from "../../../compiler/index.ts";
import { deviceFor } from "../../backends.ts";
import { inputRng } from "../rng.ts";
import { compareOutputs, documentedDifferences } from "./compare.ts";
import { evaluate } from "./evaluate.ts";
import { generateProgram } from "./generate.ts";
import { runDiffCampaign, type DeviceUnderTest } from "./harness.ts";
import { printProgram, type Program } from "./program.ts";

describe("the differential fuzzer", () => {
  it("finds no unexplained difference between the reference, the CPU and WebGPU on 25 random programs", async () => {
    const devices: DeviceUnderTest[] = [
      { backend: "cpu", device: new CpuDevice(), target: "js" },
      { backend: "cpu-checked", device: new CpuDevice({ checked: true }), target: "js" },
    ];
    const webgpu = await deviceFor("webgpu");
    if (typeof webgpu !== "string") devices.push({ backend: "webgpu", device: webgpu, target: "wgsl", finiteMathOnly: true });
    const summary = await runDiffCampaign({ seed: 2026, count: 25, devices, project: createProject() });
    expect(summary.failures).toEqual([]);
    expect(summary.programs).toBe(25);
    expect(summary.compared).toBeGreaterThan(25 * 3 * 64);
  });

  it("generates programs that use what it is meant to test", () => {
    const sources = Array.from({ length: 40 }, (_, i) => printProgram(generateProgram(inputRng(99, i), `p${i}`))).join("\n");
    const vectors = ["vec3f(", "vec4i(", "vec2u(", "add(", "mul(", "min(", "neg(", "dot(", "select(", "lt(", "all(", "any("];
    for (const construct of ["syncThreads()", "shared.", "Math.", " / ", " % ", " >>> ", " << ", " ? ", "while (", "for (", "break;", "continue;", "return;", "u32(", "i32(", "f32(", "fma(", "inS[", "function h", "bf16(", "inH[", "inB[", "outH[", "outB[", "outW[", ...vectors]) {
      expect(sources, construct).toContain(construct);
    }
    expect(sources).not.toMatch(/\bf16\(|\bf64\(|outX\[|outD\[/);
    const wide = Array.from({ length: 40 }, (_, i) => printProgram(generateProgram(inputRng(99, i), `p${i}`, { wide: true }))).join("\n");
    for (const construct of ["f16(", "f64(", "outX[", "outD[", "Math.sqrt(Math.abs(", 'targets: ["cuda", "js"]']) expect(wide, construct).toContain(construct);
  });

  it("finds no unexplained difference between the reference and the CPU (plain and checked) on 40 wide programs (f16, f64)", async () => {
    const devices: DeviceUnderTest[] = [
      { backend: "cpu", device: new CpuDevice(), target: "js" },
      { backend: "cpu-checked", device: new CpuDevice({ checked: true }), target: "js" },
    ];
    const summary = await runDiffCampaign({ seed: 2027, count: 40, devices, project: createProject(), wide: true });
    expect(summary.failures).toEqual([]);
    expect(summary.programs).toBe(40);
    expect(summary.compared).toBeGreaterThan(40 * 8 * 2 * 2);
  });

  it("reports a wrong integer, a wrong exact float and an inexact float beyond its bound", () => {
    const program = generateProgram(inputRng(5, 1), "p");
    const n = program.block * program.grid * program.inputs;
    const inputs = {
      inI: new Int32Array(n).fill(3), inU: new Uint32Array(n).fill(5), inF: new Float32Array(n).fill(1.5), inS: new Float32Array(n).fill(2),
      inH: new Float32Array(n).fill(0.75), inB: new Int8Array(n).fill(-7), sI: 1, sU: 2, sF: 0.5, sB: true,
    };
    const expected = evaluate(program, inputs);
    const exact = {
      outI: Int32Array.from(expected.outI, (v) => v ?? 0),
      outU: Uint32Array.from(expected.outU, (v) => v ?? 0),
      outF: Float32Array.from(expected.outF, (v) => v ?? Number.NaN),
      outH: Float32Array.from(expected.outH, (v) => v ?? Number.NaN),
      outB: Int8Array.from(expected.outB, (v) => v ?? 0),
      outW: Uint16Array.from(expected.outW, (v) => v ?? 0),
    };
    expect(compareOutputs("cpu", expected, exact, false).mismatches).toEqual([]);
    const wrong = { outI: exact.outI.slice(), outU: exact.outU.slice(), outF: exact.outF.slice(), outH: exact.outH.slice(), outB: exact.outB.slice(), outW: exact.outW.slice() };
    wrong.outI[0]! ^= 1;
    const floatIndex = expected.checks.findIndex((c) => c !== undefined);
    wrong.outF[floatIndex] = wrong.outF[floatIndex]! * 1.001 + 1;
    // One bf16 step (2^-7 relative) off, and one bit of a uint16.
    wrong.outH[1] = wrong.outH[1]! * (1 + 2 ** -7) + 2 ** -7;
    wrong.outW[2]! ^= 0x100;
    const found = compareOutputs("cpu", expected, wrong, false).mismatches;
    expect(found.map((m) => [m.buffer, m.index])).toEqual([["outI", 0], ["outH", 1], ["outW", 2], ["outF", floatIndex]]);
  });

  it("evaluates float min and max of a NaN as the CPU does, or with CUDA's fminf/fmaxf rule when asked", () => {
    const program: Program = {
      name: "p", block: 1, grid: 1, slots: 1, inputs: 1, helpers: [], shared: [], wide: false,
      body: [{ k: "out", buf: "outF", slot: 0, check: { kind: "exact" }, value: { k: "math", ty: "f32", fn: "min", args: [{ k: "load", ty: "f32", buf: "inS", index: { k: "lit", ty: "i32", v: 0 } }, { k: "lit", ty: "f32", v: 1.5 }] } }],
    };
    const inputs = { inI: new Int32Array(1), inU: new Uint32Array(1), inF: new Float32Array(1), inS: new Float32Array([Number.NaN]), inH: new Float32Array(1), inB: new Int8Array(1), sI: 0, sU: 0, sF: 0, sB: false };
    expect(evaluate(program, inputs).outF[0]).toBeNaN();
    expect(evaluate(program, inputs, { minMaxIgnoresNaN: true }).outF[0]).toBe(1.5);
  });

  it("lists each documented difference with its reason and a section of docs/language.md", () => {
    for (const difference of documentedDifferences) {
      expect(difference.reason.length).toBeGreaterThan(40);
      expect(difference.doc).toMatch(/^§\d+$/);
    }
  });
});
