/**
 * Checked mode on atomics and subgroup operations: seeded bugs it must catch (a plain access racing an
 * atomic on one shared element, a subgroup operation that only part of a subgroup reaches), each with the
 * kind, the TypeScript location and the thread, and the correct kernels beside them, which it must pass.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CpuDevice } from "./cpu-device.ts";
import { KernelFault } from "./checker.ts";
import { LaunchFailure } from "../launch-ledger.ts";
import { compileKernelLibrary } from "../kernels.ts";

const header = 'import { atomicAdd, kernel, shared, syncThreads, threadIdx, type f32, type i32 } from "tskernel";\n';

function compile(source: string, options: { unsafeSkipBarrierCheck?: boolean } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-checked-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, header + source);
  return { library: compileKernelLibrary([file], ["js"], options), source: header + source };
}

/** The 1-based line:column of the first occurrence of `needle` in `source`. */
function where(source: string, needle: string): string {
  const offset = source.indexOf(needle);
  expect(offset, `'${needle}' occurs in the kernel`).toBeGreaterThanOrEqual(0);
  const before = source.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

/**
 * The KernelFault a checked launch meets. It is found while the launch runs, so it comes from the device's
 * next synchronize() (or read()), as a LaunchFailure that names the kernel and the launch, with the fault as
 * its cause. `device`: the one to synchronize, when `run` only launches.
 */
async function fault(...args: [run: () => Promise<unknown>] | [device: CpuDevice, run: () => Promise<unknown>]): Promise<KernelFault> {
  const [device, run] = args.length === 1 ? [undefined, args[0]] : args;
  try {
    await run();
    await device?.synchronize();
  } catch (error) {
    if (error instanceof LaunchFailure && error.cause instanceof KernelFault) {
      expect(error.message.startsWith(`tskernel: launch #${error.launch} of '${error.cause.kernel}' failed: ${error.cause.message.slice("tskernel: ".length)}`)).toBe(true);
      return error.cause;
    }
    throw error;
  }
  throw new Error("expected a KernelFault, but the launch completed");
}

/** A shared histogram of 4 bins; `between` goes between the atomics and the barrier after them. */
const histogram = (before: string, between: string) => `export const bins4 = kernel({ block: [32] }, (out: Int32Array) => {
  const bins = shared.i32(4);
  if (threadIdx.x < 4) {
    bins[threadIdx.x] = 0;
  }
  syncThreads();
${before}
  atomicAdd(bins, threadIdx.x & 3, 1);
${between}
  syncThreads();
  if (threadIdx.x < 4) {
    out[threadIdx.x] = bins[threadIdx.x];
  }
});
`;

describe("checked mode and atomics", () => {
  const device = new CpuDevice({ checked: true });

  it("atomics of many threads on one shared element are not a race", async () => {
    const { library } = compile(histogram("", ""));
    const out = device.createBuffer(new Int32Array(4).fill(-1));
    await device.launch(library.get("bins4"), { grid: [1], args: [out] });
    expect(Array.from((await device.read(out)) as Int32Array)).toEqual([8, 8, 8, 8]);
  });

  it("a plain write after other threads' atomics on the element, with no barrier between", async () => {
    const { library, source } = compile(histogram("", "  if (threadIdx.x === 5) {\n    bins[1] = 100;\n  }"));
    const error = await fault(device, () => device.launch(library.get("bins4"), { grid: [1], args: [device.createBuffer("i32", 4)] }));
    expect(error.kind).toBe("shared-race");
    // Reported at the plain write, by the thread that made it.
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "bins[1] = 100")}$`));
    expect(error.threadIdx).toEqual([5, 0, 0]);
    expect(error.message).toContain("write to shared 'bins'[1], which other threads updated with an atomic at");
    expect(error.message).toContain(`kernel.ts:${where(source, "atomicAdd(bins")}`);
  });

  it("a plain write before other threads' atomics on the element, with no barrier between", async () => {
    const { library, source } = compile(histogram("  if (threadIdx.x === 0) {\n    bins[1] = 100;\n  }", ""));
    const error = await fault(device, () => device.launch(library.get("bins4"), { grid: [1], args: [device.createBuffer("i32", 4)] }));
    expect(error.kind).toBe("shared-race");
    // Still reported at the plain write and its thread, though the atomic of thread 1 found it.
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "bins[1] = 100")}$`));
    expect(error.threadIdx).toEqual([0, 0, 0]);
    expect(error.message).toContain("which thread (1, 0, 0) also updates with an atomic at");
  });

  it("a plain read of an element other threads update atomically", async () => {
    const { library, source } = compile(histogram("", "  if (threadIdx.x === 31) {\n    out[4] = bins[0];\n  }"));
    const error = await fault(device, () => device.launch(library.get("bins4"), { grid: [1], args: [device.createBuffer("i32", 5)] }));
    expect(error.kind).toBe("shared-race");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "bins[0];")}$`));
    expect(error.threadIdx).toEqual([31, 0, 0]);
  });

  it("an atomic on shared memory nobody initialized", async () => {
    const { library, source } = compile(`export const noInit = kernel({ block: [8] }, (out: Int32Array) => {
  const total = shared.i32(1);
  atomicAdd(total, 0, threadIdx.x);
  syncThreads();
  out[threadIdx.x] = total[0];
});
`);
    const error = await fault(device, () => device.launch(library.get("noInit"), { grid: [1], args: [device.createBuffer("i32", 8)] }));
    expect(error.kind).toBe("uninitialized-shared-read");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "atomicAdd(total")}$`));
    expect(error.threadIdx).toEqual([0, 0, 0]);
  });

  it("an atomic outside a global buffer", async () => {
    const { library, source } = compile(`export const past = kernel({ block: [8] }, (counts: Int32Array, n: i32) => {
  atomicAdd(counts, threadIdx.x + n, 1);
});
`);
    const error = await fault(device, () => device.launch(library.get("past"), { grid: [1], args: [device.createBuffer("i32", 8), 3] }));
    expect(error.kind).toBe("out-of-bounds");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "atomicAdd(counts")}$`));
    expect(error.threadIdx).toEqual([5, 0, 0]);
    expect(error.message).toContain("atomic on 'counts'[8], but it has 8 elements");
  });
});

describe("checked mode and subgroup operations (kernels that got past the compiler's uniformity check)", () => {
  const sum = (condition: string) => `import { subgroupAdd, subgroupInvocationId } from "tskernel";
export const lanes = kernel({ block: [16] }, (out: Float32Array, x: Float32Array) => {
  let s: f32 = 0;
  ${condition} {
    s = subgroupAdd(x[threadIdx.x]);
  }
  out[threadIdx.x] = s;
});
`;
  const x = Float32Array.from({ length: 16 }, () => Math.random());
  const launch = async (device: CpuDevice, library: ReturnType<typeof compile>["library"]) => {
    const out = device.createBuffer(new Float32Array(16).fill(Number.NaN));
    await device.launch(library.get("lanes"), { grid: [1], args: [out, device.createBuffer(x)] });
    return (await device.read(out)) as Float32Array;
  };

  it("the compiler rejects these kernels (TSK3015): the unsafe option is what lets them through", () => {
    expect(() => compile(sum("if (subgroupInvocationId < 2)"))).toThrow(/TSK3015/);
  });

  it("a subgroup operation under a lane-dependent branch: the first lane that does not reach it", async () => {
    const { library, source } = compile(sum("if (subgroupInvocationId < 2)"), { unsafeSkipBarrierCheck: true });
    const error = await fault(() => launch(new CpuDevice({ checked: true, subgroupSize: 4 }), library));
    expect(error.kind).toBe("divergent-subgroup-op");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "subgroupAdd(x")}$`));
    expect(error.threadIdx).toEqual([2, 0, 0]);
    expect(error.message).toContain(`the condition at`);
    expect(error.message).toContain(`is false for lane 2 of subgroup 0 but true for lane 0, so only part of the subgroup reaches subgroupAdd()`);
  });

  it("whole subgroups that disagree are reported too: every thread of the block must agree, as for barriers", async () => {
    const { library, source } = compile(sum("if (threadIdx.x < 4)"), { unsafeSkipBarrierCheck: true });
    const error = await fault(() => launch(new CpuDevice({ checked: true, subgroupSize: 4 }), library));
    expect(error.kind).toBe("divergent-subgroup-op");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "subgroupAdd(x")}$`));
    expect(error.threadIdx).toEqual([4, 0, 0]);
    expect(error.message).toContain("is false for subgroup 1 but true for subgroup 0");
  });

  it("lanes that returned before a subgroup operation", async () => {
    const { library, source } = compile(
      sum("if (threadIdx.x === 6) {\n    return;\n  }\n  if (true)"),
      { unsafeSkipBarrierCheck: true },
    );
    const error = await fault(() => launch(new CpuDevice({ checked: true, subgroupSize: 4 }), library));
    expect(error.kind).toBe("divergent-subgroup-op");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "subgroupAdd(x")}$`));
    expect(error.threadIdx).toEqual([6, 0, 0]);
    expect(error.message).toContain("lane 2 of subgroup 1 has returned, but lane 0 reaches this subgroup operation");
  });

  it("the same kernel with the operation outside the branch passes, for any subgroup size", async () => {
    const { library } = compile(`import { subgroupAdd, subgroupInvocationId } from "tskernel";
export const lanes = kernel({ block: [16] }, (out: Float32Array, x: Float32Array) => {
  const total = subgroupAdd(x[threadIdx.x]);
  let s: f32 = 0;
  if (subgroupInvocationId < 2) {
    s = total;
  }
  out[threadIdx.x] = s;
});
`);
    for (const subgroupSize of [4, 8, 16]) {
      const result = await launch(new CpuDevice({ checked: true, subgroupSize }), library);
      for (let t = 0; t < 16; t++) {
        const base = t - (t % subgroupSize);
        const total = x.slice(base, base + subgroupSize).reduce((a, b) => a + b, 0);
        if (t % subgroupSize >= 2) expect(result[t]).toBe(0);
        else expect(Math.abs(result[t]! - total)).toBeLessThan(1e-5);
      }
    }
  });
});
