/**
 * The bf16 kernels of the memory-bound suite are written once for the 16-bit float types (`<T extends "bf16" |
 * "f16">`): here the same source files, with their specializations switched to T: "f16" (the examples build
 * bf16 only, since WGSL enables f16 for a whole module and the WebGPU adapters tested lack shader-f16), are
 * built for the CPU and CUDA, run on the CPU (plain and checked) against the float64 references of the suite's
 * cases in f16 (cases-bf16.ts, f16Cases: the store's rounding to f16 plus the f32 computation's error), and
 * compiled by nvcc for sm_90 with no spills. The checks are also shown to fail on a result one f16 step off.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { release, runChecked } from "../cli/kernels-bench/bench.ts";
import { f16Cases, halfCases } from "../cli/kernels-bench/cases-bf16.ts";
import { halfRowSourceFiles, writeF16Sources } from "../cli/kernels-bench/f16-sources.ts";
import { checkResult } from "../cli/kernels-bench/checks.ts";
import type { Shape } from "../cli/kernels-bench/cases.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";
import { repoRoot } from "./golden-cases.ts";

/** The examples with every `T: "bf16"` specialization made `T: "f16"`, in a folder of their own. */
function f16Sources(): string[] {
  const files = writeF16Sources(path.join(repoRoot, "examples"), fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-f16-")));
  for (const file of files) expect(fs.readFileSync(file, "utf8"), file).not.toContain('T: "bf16"');
  return files;
}

const shapes: Record<string, readonly Shape[]> = {
  layernorm: [[37, 1000], [5, 4096], [9, 200], [3, 8000]],
  rmsnorm: [[37, 1000], [3, 8000]],
  softmax: [[37, 1000], [3, 8000]],
  gelu: [[8 * 10_007], [8]],
  dequantize: [[37, 48], [5, 1040]],
};

describe("the bf16 kernels built for f16 from the same source", () => {
  const files = f16Sources();
  const library = compileKernelLibrary(files, ["js"]);

  it("builds every specialization with T = f16 and its own entry name", () => {
    const names = library.kernels.map((k) => k.description.entryName);
    // Four row kernels of four specializations (layer norm, RMS norm, softmax; layer norm's shifted variant has a
    // fifth); geluHalf's three, geluHalfTanh's one, dequantizeRows' two, dequantizeRowsPrefetch's one,
    // dequantizeRowsWhole's two.
    expect(names.length).toBe(4 * 4 + 1 + 3 + 1 + 2 + 1 + 2);
    for (const name of names) expect(name).toMatch(/_T_f16(_|$)/);
    for (const kernel of library.kernels) expect(kernel.description.specialization.T).toBe("f16");
  });

  for (const checked of [false, true]) {
    it.each(f16Cases().map((c) => [c.id, c] as const))(`%s matches float64 on the CPU${checked ? ", checked" : ""}`, async (_id, kernelCase) => {
      const device = new CpuDevice({ checked });
      for (const shape of shapes[kernelCase.family!]!) {
        const instance = kernelCase.build(shape, { library, limits: device.limits, backend: "cpu" });
        expect(instance.buffers.some((b) => b.type === "f16")).toBe(true);
        const { set, check } = await runChecked(device, instance);
        for (const buffer of set.buffers.values()) release(device, buffer);
        expect(check.nonFinite, `${kernelCase.id} ${shape.join("×")}`).toBe(0);
        expect(check.failures, `${kernelCase.id} ${shape.join("×")}: worst ${JSON.stringify(check.worst)} (${check.tolerance})`).toBe(0);
      }
    });
  }

  it("whose checks fail on a result one f16 step off, and on a bf16 result", async () => {
    const device = new CpuDevice();
    const layerNorm = f16Cases().find((c) => c.family === "layernorm")!;
    const instance = layerNorm.build([6, 1000], { library, limits: device.limits, backend: "cpu" });
    const { set, check } = await runChecked(device, instance);
    expect(check.pass).toBe(true);
    const out = Float32Array.from((await device.read(set.buffers.get("out")!)) as Float32Array);
    const reference = instance.reference(set.inputs);
    // One element a step of f16 (2^-10 relative) away: outside half a step plus the f32 allowance.
    const stepped = out.slice();
    stepped[123] = stepped[123]! + Math.abs(stepped[123]!) * 2 ** -10 + 2 ** -10;
    expect(checkResult(stepped, reference, instance.check).failures).toBe(1);
    // The same values rounded to bf16 instead (8 significant bits, not 11): most elements fail f16's check.
    const asBf16 = out.map((v) => {
      const bits = new Uint32Array(new Float32Array([v]).buffer)[0]!;
      return new Float32Array(new Uint32Array([(bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000]).buffer)[0]!;
    });
    expect(checkResult(asBf16, reference, instance.check).failures).toBeGreaterThan(out.length / 2);
    for (const buffer of set.buffers.values()) release(device, buffer);
  });

  // The bf16 examples themselves (and blur-rgba8) are goldens: tests/generated-code.test.ts compiles them with
  // nvcc for sm_90 and checks that they do not spill, so only the f16 builds are compiled here.
  it.skipIf(!nvccAvailable())("compiles for CUDA with nvcc for sm_90, with no spills", () => {
    const cudaLibrary = compileKernelLibrary(files, ["cuda"]);
    const modules = new Set(cudaLibrary.kernels.map((k) => k.cuda!.source));
    expect(modules.size).toBe(halfRowSourceFiles.length);
    for (const source of modules) {
      const result = compileCuda(source, { arch: "sm_90" });
      expect(result.ok, result.errors).toBe(true);
      expect(result.functions.filter((fn) => fn.entry).length).toBeGreaterThan(0);
      for (const fn of result.functions) {
        expect(fn.spillStoresBytes, fn.name).toBe(0);
        expect(fn.spillLoadsBytes, fn.name).toBe(0);
      }
    }
    // The suite's cases name the kernels these files declare.
    expect(halfCases.flatMap((c) => Object.values(c.kernels)).every((f) => fs.existsSync(path.join(repoRoot, f)))).toBe(true);
  });
});
