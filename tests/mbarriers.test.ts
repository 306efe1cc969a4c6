/**
 * mbarriers and warpgroup roles (docs/language.md, "Barriers in shared memory and roles") on the CPU backend,
 * where each warpgroup runs as a coroutine: a two-stage producer/consumer pipeline (codegen-tests/mbarriers)
 * against its float64 result on fresh random inputs, unchecked and checked; the misuses the emulation must
 * expose (a producer or consumer that skips its wait, a wrong parity, an arrival that never comes, a barrier
 * used before its initialization); and the compile-time rules with their codes and locations.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import { repoRoot } from "./golden-cases.ts";

const golden = fs.readFileSync(path.join(repoRoot, "codegen-tests", "mbarriers", "kernel.ts"), "utf8");

/** The pipeline kernel in every MISS variant, compiled for the CPU, by MISS. */
function variants(): Map<number, KernelHandle> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-mbarriers-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, golden.replace("specializations: [{}]", "specializations: [{}, { MISS: 1 }, { MISS: 2 }, { MISS: 3 }, { MISS: 4 }]"));
  const kernels = compileKernelLibrary([file], ["js"]).kernels;
  return new Map(kernels.map((k) => [(k.description.specialization as Record<string, number>).MISS!, k]));
}

async function run(kernel: KernelHandle, checked: boolean, chunks = 6) {
  const n = chunks * 128;
  const X = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
  const device = new CpuDevice({ checked });
  const Y = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  await device.launch(kernel, { grid: [1], args: [n, device.createBuffer(X), Y] });
  const got = (await device.read(Y)) as Float32Array;
  // Chunk i of Y is chunk i of X, doubled, reversed and plus one: each element was written by another thread.
  const expected = Float32Array.from({ length: n }, (_, j) => Math.fround(Math.fround(X[(j & ~127) + 127 - (j & 127)]! * 2) + 1));
  return { got, expected };
}

describe("mbarriers on the CPU backend", () => {
  const kernels = variants();

  it.each([false, true])("a producer and a consumer hand six chunks through two stages (checked: %s)", async (checked) => {
    const { got, expected } = await run(kernels.get(0)!, checked);
    expect(Array.from(got)).toEqual(Array.from(expected));
  });

  it("a producer that does not wait for the stage to be handed back laps the consumer: the phases alias, and the consumer waits forever", async () => {
    // Six chunks through two stages complete three phases of each full barrier before the consumer runs: its
    // second wait on full[0] asks for parity 1, which the barrier has (three phases done), so it never passes,
    // as on the GPU.
    await expect(run(kernels.get(1)!, false)).rejects.toThrow("deadlock in 'pipeline_MISS_1': no warpgroup can move (warpgroup 1 waits at waitBarrier(full, …)): a phase waited for never completes");
  });

  it("a consumer that does not wait reads the stage before it is filled: a fault in checked mode; unchecked, its arrivals lap the producer", async () => {
    await expect(run(kernels.get(2)!, true)).rejects.toThrow(/uninitialized-shared-read in 'pipeline_MISS_2' at .*kernel\.ts:42:29, block \(0, 0, 0\), thread \(128, 0, 0\): read of shared 'stage'\[127\]/);
    // The consumer runs first and hands back every chunk before any was filled: three phases of each empty
    // barrier, so the producer's second wait on empty[0] (parity 1) never passes.
    await expect(run(kernels.get(2)!, false)).rejects.toThrow("deadlock in 'pipeline_MISS_2': no warpgroup can move (warpgroup 0 waits at waitBarrier(empty, …)): a phase waited for never completes");
  });

  it("a phase that never completes is a deadlock, with where each warpgroup waits", async () => {
    await expect(run(kernels.get(3)!, true)).rejects.toThrow(
      /deadlock in 'pipeline_MISS_3': no warpgroup can move \(warpgroup 0 waits at .*kernel\.ts:28:11; warpgroup 1 waits at .*kernel\.ts:40:11\)/,
    );
    await expect(run(kernels.get(3)!, false)).rejects.toThrow(/deadlock in 'pipeline_MISS_3'.*waitBarrier\(full/);
  });

  it("a wait for the wrong parity passes before the phase it meant: the stage is read unfilled", async () => {
    await expect(run(kernels.get(4)!, true)).rejects.toThrow(/uninitialized-shared-read/);
  });

  it("a barrier used before initBarrier() is an error with its location", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-mbarriers-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(file, golden.replace("syncThreads();\n    const chunks", "const chunks").replace("      for (let s = 0; s < 2; s++) {", "      for (let s = 1; s < 2; s++) {"));
    const [kernel] = compileKernelLibrary([file], ["js"]).kernels;
    await expect(run(kernel!, true)).rejects.toThrow(/barrier 0 is used before initBarrier\(\) at .*kernel\.ts:\d+:\d+/);
  });
});

describe("the compile-time rules of mbarriers and roles", () => {
  const imports =
    'import { arriveAfterCopies, arriveBarrier, initBarrier, kernel, setMaxRegisters, shared, syncThreads, threadIdx, waitBarrier, warpgroupIdx, type i32 } from "tskernel";\n';
  const source = (body: string, block = 256, targets = '["cuda", "js"]') =>
    `${imports}export const k = kernel({ block: [${block}], targets: ${targets} }, (n: i32, Y: Float32Array) => {\n  const bars = shared.barriers(2);\n  const data = shared.f32(128);\n${body}\n});\n`;
  const errorsOf = (body: string, block?: number, targets?: string) => compileSource(source(body, block, targets), { targets: ["cuda", "js"] }).rendered;

  it("a well-formed role split compiles for CUDA and the CPU", () => {
    expect(errorsOf("  if (warpgroupIdx === 0) {\n    setMaxRegisters(40);\n    waitBarrier(bars, 0, 0);\n  } else {\n    arriveBarrier(bars, 0);\n  }")).toBe("");
  });

  it("TSK3001: syncThreads() inside a role", () => {
    expect(errorsOf("  if (warpgroupIdx === 0) {\n    syncThreads();\n  }")).toContain(
      "error[TSK3001]: syncThreads() is reached in non-uniform control flow\n --> kernel.ts:6:5",
    );
    expect(errorsOf("  if (warpgroupIdx === 0) {\n    syncThreads();\n  }")).toContain("this condition depends on warpgroupIdx");
  });

  it("TSK3086: a wait that only some threads of a warpgroup reach; arrivals may stand anywhere", () => {
    expect(errorsOf("  if (threadIdx.x < 64) {\n    waitBarrier(bars, 0, 0);\n  }")).toContain(
      "error[TSK3086]: waitBarrier() is reached in control flow that differs within a warpgroup: the 128 threads of a warpgroup wait together\n --> kernel.ts:6:5",
    );
    expect(errorsOf("  if (threadIdx.x < 64) {\n    arriveBarrier(bars, 0);\n  }")).toBe("");
  });

  it("TSK3087: a barrier index or parity that differs within a warpgroup", () => {
    expect(errorsOf("  waitBarrier(bars, threadIdx.x & 1, 0);")).toContain("error[TSK3087]: the barrier index of waitBarrier() must be the same for every thread of the warpgroup\n --> kernel.ts:5:21");
    expect(errorsOf("  waitBarrier(bars, 0, threadIdx.x & 1);")).toContain("error[TSK3087]: the parity of waitBarrier() must be the same for every thread of the warpgroup\n --> kernel.ts:5:24");
    expect(errorsOf("  waitBarrier(bars, warpgroupIdx, 0);")).toBe("");
  });

  it("TSK3085: WebGPU has no mbarriers or roles", () => {
    expect(compileSource(source("  arriveBarrier(bars, 0);", 256, '["cuda", "js", "wgsl"]'), { targets: ["wgsl"] }).rendered).toContain(
      "error[TSK3085]: WebGPU has no mbarriers or warpgroup roles, and kernel 'k' uses arriveBarrier()\n --> kernel.ts:5:3",
    );
  });

  it("TSK3088: roles need whole warpgroups", () => {
    expect(errorsOf("  arriveBarrier(bars, 0);", 96)).toContain(
      "error[TSK3088]: kernel 'k' uses warpgroup roles (warpgroupIdx or mbarriers), so its block must be a whole number of warpgroups of 128 threads; it has 96",
    );
  });

  it("TSK3089: a constant barrier index out of bounds", () => {
    expect(errorsOf("  initBarrier(bars, 2, 1);")).toContain("error[TSK3089]: barrier 2 is outside 'bars', which holds 2 barrier(s)\n --> kernel.ts:5:21");
  });

  it("TSK1095 and TSK1096: barriers are no array, and arrays no barriers", () => {
    expect(errorsOf("  // @ts-expect-error\n  const x = bars[0];\n  Y[0] = x;")).toContain("error[TSK1095]: 'bars' holds mbarriers (shared.barriers), which only the barrier functions use (initBarrier, arriveBarrier, arriveAfterCopies, arriveExpectBytes, waitBarrier, copyTile)");
    expect(errorsOf("  // @ts-expect-error\n  arriveAfterCopies(data, 0);")).toContain("error[TSK1096]: arriveAfterCopies() takes barriers declared with shared.barriers(…) as its first argument; found 'data', an array\n --> kernel.ts:6:21");
  });

  it("TSK3166: roles that ask for more registers than the block has (a hang on the GPU), and ones that fit", () => {
    // 384 threads: a share of 168 a thread, 64512 in all. 88 + 2 · 208 = 504 fits exactly; 96 + 2 · 208 does not.
    const roles = (producer: number, consumer: number) =>
      `  if (warpgroupIdx === 0) {\n    setMaxRegisters(${producer});\n    waitBarrier(bars, 0, 0);\n  } else {\n    setMaxRegisters(${consumer});\n    arriveBarrier(bars, 0);\n  }`;
    expect(errorsOf(roles(88, 208), 384)).toBe("");
    const rendered = errorsOf(roles(96, 208), 384);
    expect(rendered).toContain("error[TSK3166]: the warpgroups of kernel 'k' ask setMaxRegisters() for 65536 registers, but its block has 64512");
    expect(rendered).toContain("warpgroup 0: 96, warpgroup 1: 208, warpgroup 2: 208");
    // The report points at the consumers' increase, the request that would wait.
    expect(rendered).toMatch(/--> kernel\.ts:9:\d+/);
    // A warpgroup that sets nothing keeps its share: 168 + 96 + 256 > 504.
    expect(errorsOf("  if (warpgroupIdx === 1) {\n    setMaxRegisters(96);\n  } else if (warpgroupIdx === 2) {\n    setMaxRegisters(256);\n  }", 384)).toContain("warpgroup 0: 168, warpgroup 1: 96, warpgroup 2: 256");
    // A branch on anything but warpgroupIdx and constants leaves the budget unknown: nothing is reported.
    expect(errorsOf("  if (warpgroupIdx === 0 && n > 0) {\n    setMaxRegisters(96);\n  } else {\n    setMaxRegisters(208);\n  }", 384)).not.toContain("TSK3166");
  });

  it("TSK1097, TSK3090 and TSK3091: setMaxRegisters() takes a constant, whole warpgroups and a fixed block", () => {
    expect(errorsOf("  setMaxRegisters(100);")).toContain("error[TSK1097]: setMaxRegisters() takes a constant multiple of 8 from 24 to 256; found 100\n --> kernel.ts:5:19");
    expect(errorsOf("  if (threadIdx.x < 32) {\n    setMaxRegisters(40);\n  }")).toContain("error[TSK3090]: setMaxRegisters() is reached in control flow that differs within a warpgroup");
    const dynamic = `${imports}export const k = kernel({ targets: ["cuda", "js"] }, (n: i32) => {\n  setMaxRegisters(40);\n});\n`;
    expect(compileSource(dynamic, { targets: ["cuda"] }).rendered).toContain("error[TSK3091]: kernel 'k' calls setMaxRegisters(), so it must fix its block shape");
  });
});

describe("roles that end with return", () => {
  it("a producer that returns ends its warpgroup: the consumer code after its branch is not run for it", async () => {
    // The golden's producer returns at the end of its loop and the consumer's code follows the branch.
    const source = golden
      .replace("        arriveBarrier(full, s);\n      }\n    } else {", "        arriveBarrier(full, s);\n      }\n      return;\n    }\n    {");
    expect(source).toContain("return;\n    }\n    {");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-mbarriers-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(file, source);
    const [kernel] = compileKernelLibrary([file], ["js"]).kernels;
    for (const checked of [false, true]) {
      const { got, expected } = await run(kernel!, checked);
      expect(Array.from(got)).toEqual(Array.from(expected));
    }
  });
});
