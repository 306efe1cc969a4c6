/**
 * Helpers imported from another file, located in that file: the CUDA line directives, the WGSL line map, the
 * CPU's checked-mode faults (a helper's integer division and shift are checked there, with the helper file's
 * line and operation text) and the check sites of a checked GPU build, whose kernels call checked copies of
 * their helpers. The
 * kernel and its helpers are written to a fresh directory, with blank lines that make the two files' line numbers
 * differ, so that a location resolved against the wrong file shows.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileFiles } from "../compiler/index.ts";
import { compileKernelLibrary } from "../runtime/kernels.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { KernelFault } from "../runtime/cpu/checker.ts";
import { LaunchFailure } from "../runtime/launch-ledger.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";

const helperSource = `// Helpers the kernel imports: their spans lie in this file.
import { type i32 } from "tskernel";



/** a / b: checked mode reports a zero b here. */
export function share(a: i32, b: i32): i32 {
  return a / b;
}

/** x shifted left by s, through share so that one helper calls another. */
export function scaled(x: i32, s: i32): i32 {
  const spread = x << s;
  return share(spread, 1);
}
`;

const kernelSource = `import { kernel, threadIdx, blockIdx, type i32 } from "tskernel";
import { scaled, share } from "./helper.ts";

export const split = kernel({ block: [32] }, (out: Int32Array, parts: i32, shift: i32) => {
  const i = blockIdx.x * 32 + threadIdx.x;
  out[i] = share(i + 100, parts) + scaled(i, shift);
});
`;

/** The 1-based line:column of `needle` in `source`. */
function where(source: string, needle: string): string {
  const offset = source.indexOf(needle);
  expect(offset).toBeGreaterThanOrEqual(0);
  const before = source.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

function writeSources(): { dir: string; kernel: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-imported-"));
  fs.writeFileSync(path.join(dir, "helper.ts"), helperSource);
  fs.writeFileSync(path.join(dir, "kernel.ts"), kernelSource);
  return { dir, kernel: path.join(dir, "kernel.ts") };
}

/** The KernelFault a checked launch meets (as the cause of the LaunchFailure that synchronize reports). */
async function fault(device: CpuDevice, run: () => Promise<unknown>): Promise<KernelFault> {
  try {
    await run();
    await device.synchronize();
  } catch (error) {
    if (error instanceof LaunchFailure && error.cause instanceof KernelFault) return error.cause;
    throw error;
  }
  throw new Error("expected a KernelFault, but the launch completed");
}

describe("helpers imported from another file", () => {
  const { dir, kernel } = writeSources();
  const division = where(helperSource, "a / b;");
  const shift = where(helperSource, "x << s;");
  const lineOf = (at: string) => at.split(":")[0];

  it("are located in their own file by CUDA's line directives and WGSL's line map", () => {
    const result = compileFiles([kernel], { targets: ["cuda", "wgsl"], baseDir: dir });
    expect(result.diagnostics).toEqual([]);
    const file = result.files[0]!;
    const directives = file.cuda!.source.split("\n").filter((line) => line.startsWith("#line"));
    expect(directives).toContain(`#line ${lineOf(division)} "helper.ts"`);
    expect(directives).toContain(`#line ${lineOf(shift)} "helper.ts"`);
    expect(directives).toContain(`#line ${lineOf(where(kernelSource, "out[i] ="))} "kernel.ts"`);
    // No directive names a helper's line in the kernel's file (the importing file has only 7 lines).
    expect(directives.filter((line) => line.endsWith('"kernel.ts"')).every((line) => Number(line.split(" ")[1]) <= 7)).toBe(true);
    const map = file.wgsl!.lineSources.filter((s): s is string => s !== undefined);
    // Each WGSL line maps to the statement it prints (a return at its keyword, a declaration at its name).
    expect(map).toContain(`helper.ts:${lineOf(division)}:3`);
    expect(map).toContain(`helper.ts:${lineOf(shift)}:9`);
    expect(map.some((s) => s.startsWith("kernel.ts:6:"))).toBe(true);
  });

  it("has its divisions and shifts checked by the CPU's checked mode, at the helper's line", async () => {
    const library = compileKernelLibrary([kernel], ["js"], { baseDir: dir });
    const device = new CpuDevice({ checked: true });
    const out = device.createBuffer(new Int32Array(64).fill(-1));
    const zero = await fault(device, () => device.launch(library.get("split"), { grid: [2], args: [out, 0, 3] }));
    expect(zero.kind).toBe("division-by-zero");
    expect(zero.location).toBe(`helper.ts:${division}`);
    expect(zero.message).toContain("`a / b`");
    expect(zero.threadIdx).toEqual([0, 0, 0]);
    const wide = await fault(device, () => device.launch(library.get("split"), { grid: [2], args: [out, 5, 40] }));
    expect(wide.kind).toBe("shift-out-of-range");
    expect(wide.location).toBe(`helper.ts:${shift}`);
    expect(wide.message).toContain("`x << s`");
    // In range, the checked kernel computes what the language says: truncating division, shifts in 32 bits.
    const parts = 3 + Math.floor(Math.random() * 5);
    const bits = 1 + Math.floor(Math.random() * 20);
    await device.launch(library.get("split"), { grid: [2], args: [out, parts, bits] });
    const got = Array.from((await device.read(out)) as Int32Array);
    expect(got).toEqual(Array.from({ length: 64 }, (_, i) => (Math.trunc((i + 100) / parts) + (i << bits)) | 0));
  });

  it("has its divisions and shifts checked in a checked GPU build, through the kernel's copy of each helper", () => {
    const result = compileFiles([kernel], { targets: ["cuda", "wgsl"], baseDir: dir, checked: true });
    expect(result.diagnostics.filter((d) => d.code === "TSK3170")).toEqual([]);
    const file = result.files[0]!;
    // The sites in the order the checks are inserted: the stored value's calls (their copies' sites) before the store.
    const sites = (checks: NonNullable<typeof file.cuda>["checks"]) => checks![0]!.sites.map((site) => [site.kind, site.location, site.text]);
    const expected = [
      ["division-by-zero", `helper.ts:${division}`, "a / b"],
      ["shift-out-of-range", `helper.ts:${shift}`, "x << s"],
      ["out-of-bounds", `kernel.ts:${where(kernelSource, "out[i] =")}`, undefined],
    ];
    expect(sites(file.cuda!.checks)).toEqual(expected);
    expect(sites(file.wgsl!.checks)).toEqual(expected);
    // On CUDA the copies take the kernel's error buffer and launch tag after their own parameters.
    const cuda = file.cuda!.source;
    expect(cuda).toMatch(/__device__ __forceinline__ int share\w*\(int a, int b, unsigned\* tsk_errors\w*, unsigned tsk_launch\w*\)/);
    expect(cuda).toMatch(/tsk_check\(tsk_errors\w*, tsk_launch\w*, 1u, /);
    // The shift amount is checked before the copy masks it (as a kernel's is).
    expect(cuda).toMatch(/tsk_check\(tsk_errors\w*, tsk_launch\w*, 1u, \(unsigned int\)s < 32u/);
  });

  it.skipIf(!nvccAvailable())(`gives CUDA that nvcc compiles, checked copies of helpers included${nvccAvailable() ? "" : " (skipped: no nvcc)"}`, async () => {
    const result = compileFiles([kernel], { targets: ["cuda"], baseDir: dir, checked: true });
    const compiled = await compileCuda(result.files[0]!.cuda!.source);
    expect(compiled.errors).toBe("");
    expect(compiled.ok).toBe(true);
  });
});
