/**
 * The CUDA backend's integer semantics against nvcc's optimizer (differential fuzzer, CUDA leg, H100 run 1:
 * 44 of 2800 programs wrong). C++ leaves signed overflow undefined and nvcc optimizes on it: it divided
 * `x * x` as unsigned (a square "cannot" be negative) and compared `x + 1499859162 > 5` as `x > -1499859157`
 * (the sum "cannot" wrap). The language wraps (docs/language.md §6), so the backend computes i32 arithmetic
 * on unsigned bits (compiler/passes/wrap-integers.ts); these tests compile its output with nvcc for sm_90 and
 * read the PTX, where those rewrites would show, and check the printed forms that the H100 run depends on.
 * After those fixes (run 3) six programs still failed: ptxas fuses nested integer min/max into one VIMNMX3 and
 * drops a negated operand's negation, whatever form the negation takes (bench/ptxas-minmax-probe.cu and
 * bench/results/2026-11-23-ptxas-minmax-probe-h100.txt); integer Math.min/max are now compare-and-select in
 * inline PTX, which ptxas leaves alone. The last (seed 4 #386) was `Math.abs(x) % d` for x = -2147483648:
 * PTX `abs.s32` wraps as the language does, but ptxas divides its result as unsigned
 * (bench/ptxas-abs-probe.cu); i32 Math.abs is compare, negate and select in inline PTX now.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileSource } from "./compile-source.ts";
import { nvccAvailable } from "./tools/nvcc.ts";

const source = `import { kernel, threadIdx, f32, i32, type ReadonlyInt32Array, type ReadonlyFloat32Array } from "tskernel";
export const wraps = kernel({ block: [64] }, (out: Int32Array, inI: ReadonlyInt32Array, inS: ReadonlyFloat32Array, v: i32, n: i32) => {
  const t = threadIdx.x;
  const x = inI[t];
  out[t] = (x * x) / ((v & 32767) + 1);
  out[t + 64] = x + 1499859162 > 5 ? 1 : 0;
  out[t + 128] = -x < 0 ? 1 : 0;
  out[t + 192] = x << n;
  out[t + 256] = i32(inS[t]);
  out[t + 320] = Math.abs(inS[t]) >= 0 ? 1 : 0;
  let k = x;
  k += v;
  out[t + 384] = k;
  for (let i = 0; i < n; i++) {
    out[t + 448] = i;
  }
  for (let i = 0; i <= n; i++) {
    out[t + 512] = i;
  }
  const y = inI[t + 64];
  const z = inI[t + 128];
  out[t + 576] = Math.min(Math.min(-x, y), z);
  out[t + 640] = Math.max(z, Math.max(x, -y));
  out[t + 704] = Math.min(Math.max(8, 1), 3);
  out[t + 768] = Math.abs(x) % ((v & 255) + 1);
  out[t + 832] = Math.min(Math.min(-x, 5), 7) + Math.max(y, 3);
});
`;

function cuda(): string {
  const result = compileSource(source, { targets: ["cuda"] });
  expect(result.rendered).toBe("");
  return result.files[0]!.cuda!.source;
}

describe("CUDA integer semantics", () => {
  it("computes i32 + - * << and negation on unsigned bits, and masks run-time shift amounts", () => {
    const text = cuda();
    expect(text).toContain("(int)((unsigned int)x * (unsigned int)x) / (int)((unsigned int)(v & 32767) + 1u)");
    expect(text).toContain("(int)((unsigned int)x + 1499859162u) > 5");
    expect(text).toContain("(int)(0u - (unsigned int)x) < 0");
    expect(text).toContain("(int)((unsigned int)x << (n & 31))");
    expect(text).toContain("k = (int)((unsigned int)k + (unsigned int)v);");
  });

  it("keeps `i++` only where the loop condition rules out the overflow", () => {
    const text = cuda();
    expect(text).toMatch(/for \(int i = 0; i < n; i\+\+\)/);
    expect(text).toMatch(/for \(int (\w+) = 0; \1 <= n; \1 = \(int\)\(\(unsigned int\)\1 \+ 1u\)\)/);
  });

  it("converts floats with the saturating intrinsic and clears the sign bit for Math.abs", () => {
    const text = cuda();
    expect(text).toContain("__float2int_rz(inS[t])");
    expect(text).toContain("tsk_fabsf(inS[t]) >= 0.0f");
    expect(text).toContain("__int_as_float(__float_as_int(x) & 0x7fffffff)");
    expect(text).not.toMatch(/\bfabsf\(/);
  });

  it("prints integer Math.min/max as compare-and-select helpers, and folds them on literals", () => {
    const text = cuda();
    expect(text).toContain("576u)] = tsk_min(tsk_min((int)(0u - (unsigned int)x), y), z);");
    expect(text).toContain("640u)] = tsk_max(z, tsk_max(x, (int)(0u - (unsigned int)y)));");
    expect(text).toContain("704u)] = 3;");
    expect(text).toContain('setp.lt.s32 p, %1, %2; selp.b32 %0, %1, %2, p;');
    // With a literal operand the call stays plain (NVVM folds a chain of those into one, and bounds loops by it).
    expect(text).toContain("832u)] = (int)((unsigned int)min(min((int)(0u - (unsigned int)x), 5), 7) + (unsigned int)max(y, 3));");
    expect(text.replace(/832u\)\] = .*/, "")).not.toMatch(/[^_]\b(min|max)\(/);
  });

  it("prints i32 Math.abs as compare, negate and select (it wraps at -2147483648; ptxas takes abs.s32 as never negative)", () => {
    const text = cuda();
    expect(text).toContain("768u)] = tsk_abs(x) % (int)((unsigned int)(v & 255) + 1u);");
    expect(text).toContain("setp.lt.s32 p, %1, 0; sub.s32 n, 0, %1; selp.b32 %0, n, %1, p;");
    expect(text).not.toMatch(/[^_]\babs\(/);
  });

  it.skipIf(!nvccAvailable())("gives nvcc nothing to optimize on: signed division of the square, the sum compared after wrapping", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-wrap-"));
    fs.writeFileSync(path.join(dir, "wraps.cu"), cuda());
    const run = spawnSync(process.env.NVCC ?? "nvcc", ["-arch=sm_90", "-ptx", "-o", "wraps.ptx", "wraps.cu"], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const ptx = fs.readFileSync(path.join(dir, "wraps.ptx"), "utf8");
    fs.rmSync(dir, { recursive: true, force: true });
    // The old output, `x * x / d`, compiled to div.u32, and `x + 1499859162 > 5` to a compare of x with -1499859157.
    expect(ptx).toMatch(/div\.s32/);
    expect(ptx).not.toMatch(/div\.u32/);
    expect(ptx).toMatch(/add\.s32\s+%r\d+, %r\d+, 1499859162;/);
    expect(ptx).not.toContain("-1499859157");
    // No min/max instruction left for ptxas to fuse into VIMNMX3 (the negation it drops there).
    // (Only the calls with a literal operand keep min.s32/max.s32.)
    expect(ptx.match(/\b(min|max)\.[su]32/g)?.length ?? 0).toBeLessThanOrEqual(2);
    expect(ptx).toMatch(/selp\.b32/);
    // No abs.s32 for ptxas to take as never negative.
    expect(ptx).not.toMatch(/\babs\.s32/);
  }, 120_000);
});
