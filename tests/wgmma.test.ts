/**
 * Warpgroup matrix operations (wgmma; docs/language.md, section 25): the layouts and the 128-byte swizzle as
 * data; whole kernels on the CPU backend, bit for bit against a model of the documented emulation written
 * here in float64 (A rounded to TF32 as cvt.rna does, B truncated to TF32, eight additions per k-step in
 * order, each rounded to f32), for each warpgroup shape, with fresh random inputs, poisoned outputs and the
 * optional column stride of loads and stores; the float64 error within TF32's bound; and the compile-time
 * errors with their codes and locations.
 */

import { describe, expect, it } from "vitest";
import { fragmentElementPosition, fragmentLayouts, roundTf32, swizzle128, truncateTf32 } from "../compiler/index.ts";
import { compileKernelLibrary, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const random = (length: number) => Float32Array.from({ length }, () => Math.fround(Math.random() * 2 - 1));

/** Truncation to TF32 computed on the value: the largest multiple of the TF32 ulp not above |x|, with x's sign. */
function truncateReference(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  let e = Math.floor(Math.log2(Math.abs(x)));
  if (Math.abs(x) < 2 ** e) e--;
  if (Math.abs(x) >= 2 ** (e + 1)) e++;
  const ulp = 2 ** (Math.max(e, -126) - 10);
  return Math.sign(x) * Math.floor(Math.abs(x) / ulp) * ulp;
}

describe("warpgroup layouts and the swizzle", () => {
  it("give every element of A and of each accumulator to exactly one of 128 threads", () => {
    for (const shape of ["m64n64k8", "m64n128k8", "m64n256k8"] as const) {
      for (const layout of [fragmentLayouts[shape].a!, fragmentLayouts[shape].accumulator!]) {
        expect(layout.lanes).toBe(128);
        const seen = new Set<string>();
        for (let lane = 0; lane < 128; lane++) {
          for (let e = 0; e < layout.perLane; e++) {
            const [row, col] = fragmentElementPosition(layout, lane, e);
            expect(row).toBeLessThan(layout.rows);
            expect(col).toBeLessThan(layout.cols);
            seen.add(`${row},${col}`);
          }
        }
        expect(seen.size).toBe(layout.rows * layout.cols);
      }
      expect(fragmentLayouts[shape].b).toBeUndefined();
    }
  });

  it("swizzle128 permutes each 1024-byte group, moving 16-byte pieces within their 128-byte row", () => {
    const image = new Set<number>();
    for (let i = 0; i < 512; i++) {
      const j = swizzle128(i);
      expect(j >> 8, `${i}`).toBe(i >> 8);
      expect(j >> 5, `${i}`).toBe(i >> 5);
      expect(j & 3).toBe(i & 3);
      image.add(j);
    }
    expect(image.size).toBe(512);
    // Row 3 of a group: its 16-byte piece p lands at p ^ 3.
    expect(swizzle128(3 * 32 + 4 * 1 + 2)).toBe(3 * 32 + 4 * (1 ^ 3) + 2);
  });

  it("truncateTf32 drops the low 13 bits, as a float64 formulation does, over many magnitudes", () => {
    for (let i = 0; i < 20000; i++) {
      const x = Math.fround((Math.random() * 2 - 1) * 2 ** Math.floor(Math.random() * 200 - 100));
      expect(truncateTf32(x), `${x}`).toBe(truncateReference(x));
    }
    expect(truncateTf32(1 + 2 ** -10 - 2 ** -23)).toBe(1);
    expect(truncateTf32(Infinity)).toBe(Infinity);
    expect(truncateTf32(Number.NaN)).toBeNaN();
  });
});

/** A kernel computing, in each warpgroup, D = A·B + C (64×K by K×N) with wgmma, B staged through the swizzled tile. */
function panelSource(n: number, steps: number, threads: number): string {
  return `import { fragment, kernel, loadFragment, shared, storeFragment, syncThreads, threadIdx, wgmma, wgmmaCommit, wgmmaWait, type ReadonlyFloat32Array } from "tskernel";
export const panel = kernel({ block: [${threads}] }, (A: ReadonlyFloat32Array, At: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: ReadonlyFloat32Array, D: Float32Array, Dt: Float32Array) => {
  const Bs = shared.f32(${n} * 32);
  const acc = fragment.accumulator("m64n${n}k8", "f32", 1);
  const a = fragment.a("m64n${n}k8", "tf32", ${steps});
  for (let i = threadIdx.x; i < ${n} * 32; i += ${threads}) {
    const col = i >> 5;
    const k = i & 31;
    Bs[i ^ (((i >> 5) & 7) << 2)] = k < ${8 * steps} ? B[k * ${n} + col] : 0;
  }
  syncThreads();
  loadFragment(acc[0], C, 0, ${n});
  for (let s = 0; s < ${steps}; s++) {
    // Even steps from row-major A, odd ones from its transpose At (column stride 64).
    if (s % 2 === 0) {
      loadFragment(a[s], A, s * 8, ${8 * steps});
    } else {
      loadFragment(a[s], At, s * 8 * 64, 1, 64);
    }
  }
  for (let s = 0; s < ${steps}; s++) {
    wgmma(acc[0], a[s], Bs, s * 8);
    wgmmaCommit();
  }
  wgmmaWait(0);
  storeFragment(acc[0], D, 0, ${n});
  storeFragment(acc[0], Dt, 0, 1, 64);
});
`;
}

const handles = new Map<string, KernelHandle>();
function compiled(n: number, steps: number, threads: number): KernelHandle {
  const key = `${n}/${steps}/${threads}`;
  if (!handles.has(key)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-wgmma-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(file, panelSource(n, steps, threads));
    handles.set(key, compileKernelLibrary([file], ["js"]).kernels[0]!);
  }
  return handles.get(key)!;
}

describe("wgmma on the CPU backend", () => {
  const cases = [
    { n: 64, steps: 2, threads: 128, checked: false },
    { n: 64, steps: 3, threads: 256, checked: true },
    { n: 128, steps: 2, threads: 128, checked: false },
    { n: 256, steps: 2, threads: 128, checked: false },
  ];
  for (const { n, steps, threads, checked } of cases) {
    it(`m64n${n}k8, ${steps} k-steps, ${threads} threads: the documented emulation bit for bit${checked ? " (checked mode)" : ""}`, async () => {
      const K = 8 * steps;
      const device = new CpuDevice({ checked });
      const A = random(64 * K);
      const At = new Float32Array(K * 64);
      for (let r = 0; r < 64; r++) for (let k = 0; k < K; k++) At[k * 64 + r] = A[r * K + k]!;
      const B = random(K * n);
      const C = random(64 * n);
      const D = device.createBuffer(new Float32Array(64 * n).fill(Number.NaN));
      const Dt = device.createBuffer(new Float32Array(n * 64).fill(Number.NaN));
      await device.launch(compiled(n, steps, threads), { grid: [1], args: [A, At, B, C, D, Dt].map((x) => (x instanceof Float32Array ? device.createBuffer(x) : x)) });
      const got = (await device.read(D)) as Float32Array;
      const gotT = (await device.read(Dt)) as Float32Array;
      let errorSquared = 0;
      let normSquared = 0;
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < n; c++) {
          let sum = C[r * n + c]!;
          let exact = sum;
          for (let k = 0; k < K; k++) {
            sum = Math.fround(sum + roundTf32(A[r * K + k]!) * truncateReference(B[k * n + c]!));
            exact += A[r * K + k]! * B[k * n + c]!;
          }
          expect(got[r * n + c], `D[${r}][${c}]`).toBe(sum);
          expect(gotT[c * 64 + r], `Dt[${c}][${r}]`).toBe(sum);
          errorSquared += (sum - exact) ** 2;
          normSquared += exact ** 2;
        }
      }
      // TF32's normwise bound (runtime/matmul): 2^-9 + K·2^-23.
      expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan(2 ** -9 + K * 2 ** -23);
    });
  }
});

/** The rendered diagnostics of a kernel body that uses warpgroup fragments (CUDA and JS unless given). */
function errorsOf(body: string, options: { targets?: ("cuda" | "wgsl" | "js")[]; block?: number } = {}): string {
  const source = `import { fragment, kernel, loadFragment, mma, shared, storeFragment, fillFragment, threadIdx, wgmma, wgmmaCommit, wgmmaWait, type i32, type ReadonlyFloat32Array } from "tskernel";
export const k = kernel({ block: [${options.block ?? 128}] }, (A: ReadonlyFloat32Array, D: Float32Array, n: i32) => {
  const Bs = shared.f32(2048);
  const acc = fragment.accumulator("m64n64k8", "f32", 1);
  const a = fragment.a("m64n64k8", "tf32", 2);
${body}
});
`;
  return compileSource(source, { targets: options.targets ?? ["cuda", "js"] }).rendered;
}

describe("warpgroup matrix operation errors", () => {
  const clean = "  fillFragment(acc[0], 0);\n  loadFragment(a[0], A, 0, 8);\n  wgmma(acc[0], a[0], Bs, 8);\n  wgmmaCommit();\n  wgmmaWait(0);\n  storeFragment(acc[0], D, 0, 64);";

  it("a well-formed kernel compiles for CUDA and the CPU", () => {
    expect(errorsOf(clean)).toBe("");
  });

  it("TSK3048: WebGPU has no matrix operations", () => {
    expect(errorsOf(clean, { targets: ["wgsl"] })).toContain("error[TSK3048]: WebGPU has no matrix operations, and kernel 'k' uses loadFragment()\n --> kernel.ts:7:3");
  });

  it("TSK3060: a block that is not whole warpgroups", () => {
    expect(errorsOf(clean, { block: 96 })).toContain("error[TSK3060]: kernel 'k' uses warpgroup matrix operations (wgmma), so its block must be a whole number of warpgroups of 128 threads; it has 96");
  });

  it("TSK3061: a constant offset outside the first row of a swizzle group, or not a multiple of 8", () => {
    expect(errorsOf("  wgmma(acc[0], a[0], Bs, 32);")).toContain("error[TSK3061]: wgmma() reads B at element offset 32 of 'Bs': the offset must be a multiple of 8 in the first 128-byte row of a group of 8 (offset % 256 < 32)\n --> kernel.ts:6:27");
    expect(errorsOf("  wgmma(acc[0], a[0], Bs, 4);")).toContain("error[TSK3061]: wgmma() reads B at element offset 4 of 'Bs'");
  });

  it("TSK3062: a constant offset that reads past the array", () => {
    // 64 columns of 32 elements from offset 256: up to element 256 + 32·63 + 7 = 2279 of 2048.
    expect(errorsOf("  wgmma(acc[0], a[0], Bs, 256);")).toContain("error[TSK3062]: wgmma() reads B up to element 2279 of 'Bs', which has 2048 elements\n --> kernel.ts:6:27");
  });

  it("TSK3063: an offset that differs between threads", () => {
    expect(errorsOf("  wgmma(acc[0], a[0], Bs, (threadIdx.x >> 7) * 8);")).toContain("error[TSK3063]: the offset of wgmma()'s shared operand must be the same for every thread of the block\n --> kernel.ts:6:27");
  });

  it("TSK3045: wgmma and its waits under a condition on threadIdx", () => {
    expect(errorsOf("  if (threadIdx.x < 64) {\n    wgmma(acc[0], a[0], Bs, 0);\n  }")).toContain("error[TSK3045]: wgmma() is reached in non-uniform control flow");
    expect(errorsOf("  if (threadIdx.x < 64) {\n    wgmmaWait(0);\n  }")).toContain("error[TSK3045]: wgmmaWait() is reached in non-uniform control flow");
  });

  it("TSK3049: a fragment index that differs between threads", () => {
    expect(errorsOf("  wgmma(acc[0], a[threadIdx.x % 2], Bs, 0);")).toContain("error[TSK3049]: the fragment index of wgmma() must be the same for every thread of the block\n --> kernel.ts:6:19");
  });

  it("TSK1075: a wgmmaWait count that is not a constant from 0 to 7", () => {
    expect(errorsOf("  wgmmaWait(8);")).toContain("error[TSK1075]: wgmmaWait() takes the number of groups that may stay unfinished, a constant from 0 to 7; found 8\n --> kernel.ts:6:13");
    expect(errorsOf("  wgmmaWait(n);")).toContain("error[TSK1075]: wgmmaWait() takes the number of groups that may stay unfinished, a constant from 0 to 7; found n");
  });

  it("TSK2035: warp fragments in wgmma, warpgroup fragments in mma", () => {
    const warp = '  const c = fragment.accumulator("m16n8k8", "f32", 1);\n  // @ts-expect-error\n  wgmma(c[0], a[0], Bs, 0);';
    expect(errorsOf(warp)).toContain("error[TSK2035]: wgmma() takes fragments of a warpgroup shape (m64n64k8, m64n128k8 or m64n256k8; mma() multiplies m16n8k8 or m16n8k16), but 'c' has shape m16n8k8\n --> kernel.ts:8:9");
    const mixed = '  const a2 = fragment.a("m64n128k8", "tf32", 1);\n  // @ts-expect-error\n  wgmma(acc[0], a2[0], Bs, 0);';
    expect(errorsOf(mixed)).toContain("error[TSK2035]: wgmma() takes fragments of the accumulator's shape m64n64k8, but 'a2' has shape m64n128k8");
  });

  it("TSK2036: B from something other than a 1-D shared f32 array", () => {
    expect(errorsOf("  // @ts-expect-error\n  wgmma(acc[0], a[0], A, 0);")).toContain("error[TSK2036]: wgmma() reads B from a 1-D shared array of f32 elements; found 'A', a global array");
  });

  it("TSK1067: warpgroup shapes have no B fragments", () => {
    expect(errorsOf('  // @ts-expect-error\n  const b = fragment.b("m64n64k8", "tf32", 1);\n  fillFragment(b[0], 0);')).toContain(
      'error[TSK1067]: fragment.b takes the shape "m16n8k8" or "m16n8k16": wgmma reads its B operand from shared memory, so the warpgroup shapes have no B fragments, found "m64n64k8"',
    );
  });
});
