/**
 * Atomics with memory orders, waitFlag and syncWarpgroup (docs/language.md §23 "Memory orders", and the table of
 * roles): what CUDA prints for each (acquire loads, release stores, fenced read-modify-writes, the flag wait, a
 * named barrier a warpgroup, and the global proxy fences only where a kernel copies tiles from a buffer it
 * writes); the compile-time rules with their codes and locations; and, on the CPU, one warpgroup handing data to
 * another through a flag (every value checked against the inputs, which are random), and a flag nobody sets
 * reported as a deadlock at its line.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";

const imports =
  'import { atomicAdd, atomicCompareExchange, atomicLoad, atomicStore, copyTile, initBarrier, kernel, shared, syncThreads, syncWarpgroup, threadIdx, waitFlag, warpgroupIdx, type i32, type ReadonlyUint32Array } from "tskernel";\n';
const source = (body: string, targets = '["cuda", "js"]', block = 256) =>
  `${imports}export const k = kernel({ block: [${block}], targets: ${targets} }, (n: i32, X: Float32Array, flags: Int32Array, map: ReadonlyUint32Array) => {\n  const tile = shared.f32(1024);\n  const bars = shared.barriers(1);\n${body}\n});\n`;
const errorsOf = (body: string, targets?: string) => compileSource(source(body, targets), { targets: ["cuda", "js"] }).rendered;
const cudaOf = (body: string) => {
  const result = compileSource(source(body), { targets: ["cuda"] });
  expect(result.rendered).toBe("");
  // Without the #line directives, so that the patterns see the statements side by side.
  return result.files[0]!.cuda!.source.replace(/^#line .*\n/gm, "");
};

describe("memory orders in CUDA", () => {
  it("prints acquire loads, release stores and read-modify-writes between acq_rel fences", () => {
    const cuda = cudaOf(
      '  const seen = atomicLoad(flags, 0, "acquire");\n  atomicStore(flags, 1, seen, "release");\n  const old = atomicAdd(flags, 2, 1, "acqRel");\n  const was = atomicCompareExchange(flags, 3, 0, 1, "acquire");\n  atomicStore(flags, 4, old + was, "relaxed");',
    );
    expect(cuda).toMatch(/const int seen = \(int\)tsk_load_acquire\(&flags\[0\]\);/);
    expect(cuda).toMatch(/tsk_store_release\(&flags\[1\], \(unsigned\)\(seen\)\);/);
    expect(cuda).toMatch(/tsk_fence_acq_rel\(\);\s+const int old = atomicAdd\(&flags\[2\], 1\);\s+tsk_fence_acq_rel\(\);/);
    expect(cuda).toMatch(/const int was = atomicCAS\(&flags\[3\], 0, 1\);\s+tsk_fence_acq_rel\(\);/);
    expect(cuda).toMatch(/\*\(volatile int\*\)\(&flags\[4\]\) = /);
    expect(cuda).toContain('asm volatile("ld.acquire.gpu.b32 %0, [%1];"');
    // No tile is copied from what the kernel writes: no global proxy fence anywhere.
    expect(cuda).not.toContain("tsk_fence_proxy_async_global();");
  });

  it("prints waitFlag as a spin on an acquire load and syncWarpgroup as the warpgroup's named barrier", () => {
    const cuda = cudaOf("  waitFlag(flags, warpgroupIdx, 2);\n  syncWarpgroup();");
    expect(cuda).toMatch(/tsk_wait_flag\(&flags\[[^\]]+\], \(unsigned\)\(2\)\);/);
    expect(cuda).toContain('asm volatile("bar.sync %0, 128;" :: "r"(1 + tsk_warpgroup_idx()) : "memory");');
  });

  it("fences global memory for the tensor memory accelerator where a kernel copies tiles from a buffer it writes", () => {
    const body =
      '  if (threadIdx.x === 0) {\n    initBarrier(bars, 0, 1);\n  }\n  syncThreads();\n  X[threadIdx.x] = 1;\n  syncWarpgroup();\n  if (threadIdx.x === 0) {\n    atomicStore(flags, 0, 1, "release");\n  }\n  waitFlag(flags, 0, 1);\n  if (threadIdx.x === 0) {\n    copyTile(tile, 0, X, map, 0, 0, bars, 0);\n  }\n  X[threadIdx.x + 256] = 2;\n  atomicStore(flags, 1, 1, "release");';
    const cuda = cudaOf(body);
    // The first syncThreads() follows no store into X: no fence. The stores are published at the barrier after
    // them, so the release right after it needs none; a release straight after stores does.
    expect(cuda).toMatch(/\n\s+__syncthreads\(\);/);
    expect(cuda).toMatch(/tsk_fence_proxy_async_global\(\); asm volatile\("bar\.sync/);
    expect(cuda).toMatch(/\{\s+tsk_store_release\(&flags\[0\]/);
    expect(cuda).toMatch(/= 2\.0f;\s+tsk_fence_proxy_async_global\(\);\s+tsk_store_release\(&flags\[1\]/);
    expect(cuda).toMatch(/tsk_wait_flag\([^;]+;\s+tsk_fence_proxy_async_global\(\);/);
  });
});

describe("the compile-time rules of memory orders, waitFlag and syncWarpgroup", () => {
  it("a memory order must be a literal the atomic takes", () => {
    // The editor (TypeScript) already refuses an order the function does not take; tskernel too, in its words.
    expect(errorsOf('  atomicLoad(flags, 0, "release");')).toContain(`TypeScript: Argument of type '"release"' is not assignable to parameter of type '"relaxed" | "acquire" | undefined'.\n --> kernel.ts:5:24`);
    expect(errorsOf('  const order = "acquire";\n  atomicAdd(flags, 0, 1, order);')).toContain("error[TSK2008]: the memory order of atomicAdd() expects a string literal");
  });

  it("waitFlag takes a global buffer, three arguments, and is no value", () => {
    expect(errorsOf("  const local = shared.i32(4);\n  waitFlag(local, 0, 1);")).toContain("error[TSK2008]: waitFlag() expects a writable global buffer (Int32Array or Uint32Array), found the shared array 'local'");
    expect(errorsOf('  waitFlag(flags, 0, 1, "acquire");')).toContain("error[TSK2008]: waitFlag() expects 3 arguments (an array, an index and the value to wait for), found 4");
    expect(errorsOf("  const x = waitFlag(flags, 0, 1);")).toContain("error[TSK1011]: waitFlag() is a statement in kernels");
  });

  it("TSK3086 and TSK3087: waits and warpgroup barriers need the warpgroup to agree", () => {
    expect(errorsOf("  if (threadIdx.x < 64) {\n    waitFlag(flags, 0, 1);\n  }")).toContain(
      "error[TSK3086]: waitFlag() is reached in control flow that differs within a warpgroup: the 128 threads of a warpgroup wait together\n --> kernel.ts:6:5",
    );
    expect(errorsOf("  if (threadIdx.x === 0) {\n    syncWarpgroup();\n  }")).toContain("error[TSK3086]: syncWarpgroup() is reached in control flow that differs within a warpgroup");
    expect(errorsOf("  waitFlag(flags, threadIdx.x, 1);")).toContain("error[TSK3087]: the index of waitFlag() must be the same for every thread of the warpgroup");
    // Within one warpgroup's role: allowed.
    expect(errorsOf("  if (warpgroupIdx === 1) {\n    syncWarpgroup();\n    waitFlag(flags, warpgroupIdx, 1);\n  }")).toBe("");
  });

  it("WebGPU: TSK3051 for an order, TSK3085 for waitFlag and syncWarpgroup", () => {
    const wgsl = (body: string) => compileSource(source(body, '["cuda", "js", "wgsl"]'), { targets: ["wgsl"] }).rendered;
    expect(wgsl('  atomicStore(flags, 0, 1, "release");')).toContain(`error[TSK3051]: WebGPU's atomics are relaxed only, and kernel 'k' asks atomicStore() for "release" order\n --> kernel.ts:5:3`);
    expect(wgsl("  waitFlag(flags, 0, 1);")).toContain("error[TSK3085]: WebGPU has no mbarriers or warpgroup roles, and kernel 'k' uses waitFlag()");
    expect(wgsl("  syncWarpgroup();")).toContain("error[TSK3085]: WebGPU has no mbarriers or warpgroup roles, and kernel 'k' uses syncWarpgroup()");
  });
});

describe("waitFlag on the CPU", () => {
  // Warpgroup 1 writes X's doubles into Y, meets at syncWarpgroup, and one thread releases the flag; warpgroup 0
  // waits for it and copies Y into Z, reversed. The CPU runs warpgroup 0 first: it must yield at the wait.
  const handoff = `import { atomicStore, kernel, syncWarpgroup, threadIdx, waitFlag, warpgroupIdx, type i32 } from "tskernel";
export const handoff = kernel({ block: [256], targets: ["cuda", "js"] }, (X: Float32Array, Y: Float32Array, Z: Float32Array, flags: Int32Array, WAIT: i32) => {
  const t = threadIdx.x & 127;
  if (warpgroupIdx === 0) {
    waitFlag(flags, 0, WAIT);
    Z[t] = Y[127 - t];
  } else {
    Y[t] = X[t] * 2;
    syncWarpgroup();
    if (t === 0) {
      atomicStore(flags, 0, 7, "release");
    }
  }
});
`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-flags-"));
  fs.writeFileSync(path.join(dir, "handoff.ts"), handoff);
  const kernel = compileKernelLibrary([path.join(dir, "handoff.ts")], ["js"]).get("handoff");

  it.each([false, true])("one warpgroup waits for the data another publishes (checked: %s)", async (checked) => {
    const device = new CpuDevice({ checked });
    const X = Float32Array.from({ length: 128 }, () => Math.random() * 2 - 1);
    const Z = device.createBuffer(new Float32Array(128).fill(Number.NaN));
    await device.launch(kernel, { grid: [1], args: [device.createBuffer(X), device.createBuffer(new Float32Array(128).fill(Number.NaN)), Z, device.createBuffer(new Int32Array(1)), 7] });
    const got = (await device.read(Z)) as Float32Array;
    expect(Array.from(got)).toEqual(Array.from({ length: 128 }, (_, t) => Math.fround(X[127 - t]! * 2)));
  });

  it("a flag that never takes the value is a deadlock, named where the warpgroup waits", async () => {
    const device = new CpuDevice({ checked: true });
    const args = [device.createBuffer(new Float32Array(128).fill(1)), device.createBuffer(new Float32Array(128)), device.createBuffer(new Float32Array(128)), device.createBuffer(new Int32Array(1)), 8];
    // A launch's failure surfaces at the next read.
    const launched = async () => {
      await device.launch(kernel, { grid: [1], args });
      await device.read(args[2] as Parameters<typeof device.read>[0]);
    };
    await expect(launched()).rejects.toThrow(/deadlock in 'handoff': no warpgroup can move \(warpgroup 0 waits at .*handoff\.ts:5:5\)/);
  });
});

describe("warpgroupBroadcast", () => {
  // Each warpgroup counts down from a flag its first thread reads: the loop around syncWarpgroup() depends on the
  // broadcast value, which the compiler knows to be the same across the warpgroup (the flag read is not).
  const countdown = `import { atomicLoad, f32, kernel, syncWarpgroup, threadIdx, warpgroupBroadcast, warpgroupIdx } from "tskernel";
export const countdown = kernel({ block: [256], targets: ["cuda", "js"] }, (flags: Int32Array, Y: Float32Array) => {
  const t = threadIdx.x;
  const seen = atomicLoad(flags, warpgroupIdx + 2 * (t & 1));
  const rounds = warpgroupBroadcast(seen);
  let sum = 0;
  for (let r = 0; r < rounds; r++) {
    syncWarpgroup();
    sum += r + 1;
  }
  Y[t] = f32(sum);
});
`;

  it("makes a value uniform across the warpgroup: a loop around syncWarpgroup() may depend on it (CPU, random counts)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-broadcast-"));
    fs.writeFileSync(path.join(dir, "countdown.ts"), countdown);
    const kernel = compileKernelLibrary([path.join(dir, "countdown.ts")], ["js"]).get("countdown");
    for (const checked of [false, true]) {
      const device = new CpuDevice({ checked });
      // Odd threads read other words (2, 3) than the first thread of their warpgroup (0, 1): only thread 0's counts.
      const counts = Int32Array.from({ length: 4 }, () => 1 + Math.floor(Math.random() * 9));
      const Y = device.createBuffer(new Float32Array(256).fill(Number.NaN));
      await device.launch(kernel, { grid: [1], args: [device.createBuffer(counts), Y] });
      const got = (await device.read(Y)) as Float32Array;
      const expected = Array.from({ length: 256 }, (_, t) => { const n = counts[t >> 7]!; return (n * (n + 1)) / 2; });
      expect(Array.from(got)).toEqual(expected);
    }
  });

  it("prints a shared word between the warpgroup's named barriers on CUDA; without it the loop is TSK3086", () => {
    const result = compileSource(countdown.replace("export const countdown", "export const k"), { targets: ["cuda"] });
    expect(result.rendered).toBe("");
    const cuda = result.files[0]!.cuda!.source;
    // The words are one of the kernel's shared arrays, so that the manifest counts them.
    expect(cuda).toMatch(/__shared__ int broadcastWords\[8\];/);
    expect(cuda).toMatch(/const int rounds = tsk_warpgroup_broadcast\(seen, &broadcastWords\[0\]\);/);
    expect(cuda).toContain("if ((linear & 127u) == 0u) words[group] = x;");
    expect(result.files[0]!.specializations[0]!.facts.sharedBytes).toBe(32);
    expect(compileSource(countdown.replace("warpgroupBroadcast(seen)", "seen"), { targets: ["cuda"] }).rendered).toContain("error[TSK3086]: syncWarpgroup() is reached in control flow that differs within a warpgroup");
    expect(compileSource(countdown.replace('targets: ["cuda", "js"]', 'targets: ["cuda", "js", "wgsl"]'), { targets: ["wgsl"] }).rendered).toContain("error[TSK3085]: WebGPU has no mbarriers or warpgroup roles, and kernel 'countdown' uses");
  });
});
