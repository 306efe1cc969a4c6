/**
 * 8-bit float warpgroup matrix operations (wgmma m64nNk32 with e4m3 and e5m2; docs/language.md §25, "8-bit
 * inputs"): the swizzled layout of one-byte elements as data; kernels on the CPU backend for every shape and every
 * pair of input types (A and B may differ), with fresh random codes over the whole finite range of each format and
 * NaN-poisoned outputs, checked bit for bit against the documented emulation (ir/matrix.ts's
 * wgmmaM64k32Reference: each product exact in f32, k in order, rounded after each addition) and within the
 * normwise bound of a float64 product; nvcc's acceptance of the generated CUDA for sm_90a (ptxas -v); and the
 * compile-time errors with their codes.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { swizzleIndex, wgmmaM64k32Reference, wgmmaOperandIndex } from "../compiler/index.ts";
import { float8Decode, float8Formats } from "../compiler/lang/float8.ts";
import { compileKernelLibrary, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import { compileCudaMany, nvccAvailable } from "./tools/nvcc.ts";

type Fp8 = "e4m3" | "e5m2";
const decode = (type: Fp8, code: number) => {
  const f = float8Formats[type];
  return float8Decode(code, f.exponentBits, f.mantissaBits, f.infinities);
};

/** Fresh random codes of finite values (NaN and, for e5m2, infinity codes left out), both signs, all magnitudes. */
function randomCodes(type: Fp8, length: number): Uint8Array {
  const top = type === "e4m3" ? 0x7e : 0x7b;
  return Uint8Array.from({ length }, () => (Math.random() < 0.5 ? 0x80 : 0) | Math.floor(Math.random() * (top + 1)));
}

describe("the swizzled layout of 8-bit operands", () => {
  it("swizzleIndex moves 16-byte pieces (16 elements) within their 128-byte row by the row's place in its group of 8", () => {
    const image = new Set<number>();
    for (let i = 0; i < 8 * 128; i++) {
      const j = swizzleIndex(i, 1);
      expect(Math.floor(j / 128)).toBe(Math.floor(i / 128));
      expect(j % 16).toBe(i % 16);
      image.add(j);
    }
    expect(image.size).toBe(1024);
    // Row 3 of a group: its piece 5 lands at piece 5 ^ 3 = 6.
    expect(swizzleIndex(3 * 128 + 16 * 5 + 7, 1)).toBe(3 * 128 + 16 * 6 + 7);
  });

  it("A[row][k] and B[k][col] are rows of 128 elements of k, as the kernels below store them", () => {
    for (const [row, k] of [[0, 0], [9, 31], [63, 17]] as const) {
      expect(wgmmaOperandIndex("a", "k", 64, row, k, 0, 1)).toBe(swizzleIndex(128 * row + 64 + k, 1));
      expect(wgmmaOperandIndex("b", "k", 96, k, row, 0, 1)).toBe(swizzleIndex(128 * row + 96 + k, 1));
    }
  });
});

/**
 * One warpgroup multiplies A (64×K, row-major) by B (K×N), given as Bᵀ (N×K, row-major: K-major, what
 * torch._scaled_mm takes as its second operand), both copied into shared arrays in the swizzle, with k-steps of 32.
 */
function tileKernel(n: 64 | 128 | 256, aType: Fp8, bType: Fp8, k: number): string {
  const array = (t: Fp8) => (t === "e4m3" ? "ReadonlyFloat8E4M3Array" : "ReadonlyFloat8E5M2Array");
  return `import { fillFragment, fragment, kernel, shared, storeFragment, syncThreads, threadIdx, wgmma, wgmmaCommit, wgmmaWait, type ${array(aType)}${aType === bType ? "" : `, type ${array(bType)}`} } from "tskernel";
export const tile = kernel({ block: [128], targets: ["cuda", "js"] }, (C: Float32Array, A: ${array(aType)}, Bt: ${array(bType)}) => {
  const As = shared.${aType}(${64 * k});
  const Bs = shared.${bType}(${n * k});
  const acc = fragment.accumulator("m64n${n}k32", "f32", 1);
  // Element (r, c) of a row-major matrix of K columns: in 128-byte rows, so block j of 128 columns lies after
  // the rows of block j - 1 (a group of 8 rows stays 1024 bytes).
  for (let i = threadIdx.x; i < ${64 * k}; i += 128) {
    const r = i / ${k};
    const c = i % ${k};
    const at = (c >> 7) * ${64 * 128} + r * 128 + (c & 127);
    As[at ^ (((at >> 7) & 7) << 4)] = A[i];
  }
  for (let i = threadIdx.x; i < ${n * k}; i += 128) {
    const r = i / ${k};
    const c = i % ${k};
    const at = (c >> 7) * ${n * 128} + r * 128 + (c & 127);
    Bs[at ^ (((at >> 7) & 7) << 4)] = Bt[i];
  }
  syncThreads();
  fillFragment(acc[0], 0);
  for (let s = 0; s < ${k / 32}; s++) {
    wgmma(acc[0], As, (s >> 2) * ${64 * 128} + 32 * (s & 3), Bs, (s >> 2) * ${n * 128} + 32 * (s & 3));
  }
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], C, 0, ${n});
});
`;
}

function compileTile(source: string): KernelHandle {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-wgmma-fp8-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, source);
  return compileKernelLibrary([file], ["js"]).get("tile");
}

const pairs: readonly [Fp8, Fp8][] = [["e4m3", "e4m3"], ["e4m3", "e5m2"], ["e5m2", "e4m3"], ["e5m2", "e5m2"]];

describe("wgmma m64nNk32 on the CPU", () => {
  const cases = ([64, 128, 256] as const).flatMap((n) => pairs.map(([a, b]) => ({ n, a, b, k: n === 128 ? 256 : 128 })));
  for (const checked of [false, true]) {
    it.each(cases)(`m64n$n k32, A $a, B $b, K $k${checked ? " (checked mode)" : ""}: bit for bit against the documented order, within the float64 bound`, async ({ n, a, b, k }) => {
      const kernel = compileTile(tileKernel(n, a, b, k));
      const device = new CpuDevice({ checked });
      const aCodes = randomCodes(a, 64 * k);
      const btCodes = randomCodes(b, n * k);
      const C = device.createBuffer(new Float32Array(64 * n).fill(Number.NaN));
      await device.launch(kernel, { grid: [1], args: [C, device.createBuffer(a, aCodes), device.createBuffer(b, btCodes)] });
      const got = (await device.read(C)) as Float32Array;
      const A = Float64Array.from(aCodes, (c) => decode(a, c));
      const Bt = Float64Array.from(btCodes, (c) => decode(b, c));
      // The documented order: C from zero, k-steps in order, each 32 products added in order (ir/matrix.ts).
      let model: Float32Array = new Float32Array(64 * n);
      for (let s = 0; s < k / 32; s++) {
        const aStep = Float64Array.from({ length: 64 * 32 }, (_, i) => A[Math.floor(i / 32) * k + 32 * s + (i % 32)]!);
        const bStep = Float64Array.from({ length: 32 * n }, (_, i) => Bt[(i % n) * k + 32 * s + Math.floor(i / n)]!);
        model = wgmmaM64k32Reference(n, aStep, bStep, model);
      }
      const wrong: string[] = [];
      let worst = 0;
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < n; c++) {
          let exact = 0;
          let magnitude = 0;
          for (let j = 0; j < k; j++) {
            exact += A[r * k + j]! * Bt[c * k + j]!;
            magnitude += Math.abs(A[r * k + j]! * Bt[c * k + j]!);
          }
          const value = got[r * n + c]!;
          if (!Object.is(value, model[r * n + c]) && wrong.length < 8) wrong.push(`C[${r}][${c}] = ${value}, the documented order gives ${model[r * n + c]}`);
          // k additions, each rounded to f32: |error| ≤ k · 2⁻²⁴ · Σ|products| (products exact).
          worst = Math.max(worst, Math.abs(value - exact) / (k * 2 ** -24 * magnitude || 1));
        }
      }
      expect(wrong).toEqual([]);
      expect(worst).toBeLessThanOrEqual(1);
      expect(got.some((x) => x !== 0)).toBe(true);
    });
  }
});

describe.skipIf(!nvccAvailable())("nvcc accepts the 8-bit wgmma for sm_90a", () => {
  it("every shape and pair of types compiles without spills", async () => {
    const sources = ([64, 128, 256] as const).flatMap((n) => pairs.map(([a, b]) => {
      const result = compileSource(tileKernel(n, a, b, 128), { targets: ["cuda"] });
      expect(result.rendered).toBe("");
      return result.files[0]!.cuda!.source;
    }));
    for (const source of sources) expect(source).toMatch(/wgmma\.mma_async\.sync\.aligned\.m64n(64|128|256)k32\.f32\.e(4m3|5m2)\.e(4m3|5m2) \{/);
    const results = await compileCudaMany(sources.map((source, i) => ({ source, options: { arch: "sm_90a", name: `wgmma_fp8_${i}` } })));
    expect(results.flatMap((result) => (result.ok ? [] : [result.errors]))).toEqual([]);
    for (const result of results) {
      const tile = result.functions.find((f) => f.entry);
      expect(tile?.name).toBe("tile");
      expect(tile?.spillStoresBytes).toBe(0);
    }
  }, 300_000);
});

/** The rendered diagnostics of a kernel body with 8-bit operands. */
function errorsOf(body: string, targets: ("cuda" | "wgsl" | "js")[] = ["cuda", "js"]): string {
  const source = `import { fillFragment, fragment, kernel, shared, wgmma, wgmmaCommit, wgmmaWait } from "tskernel";
export const k = kernel({ block: [128] }, (D: Float32Array) => {
  const As = shared.e4m3(8192);
  const Bs = shared.e5m2(32768);
  const Hs = shared.bf16(1024);
  const acc = fragment.accumulator("m64n256k32", "f32", 1);
  const half = fragment.accumulator("m64n64k16", "f32", 1);
${body}
});
`;
  return compileSource(source, { targets }).rendered;
}

describe("8-bit matrix operation errors", () => {
  const clean = "  fillFragment(acc[0], 0);\n  wgmma(acc[0], As, 32, Bs, 96);\n  wgmmaCommit();\n  wgmmaWait(0);";

  it("a well-formed kernel compiles for CUDA and the CPU; WebGPU refuses it", () => {
    expect(errorsOf(clean)).toBe("");
    expect(errorsOf(clean, ["wgsl"])).toMatch(/error\[TSK(3048|3120)\]/);
  });

  it("TSK2065 and TSK2060: an 8-bit shape with 16-bit arrays, a 16-bit shape with 8-bit ones", () => {
    expect(errorsOf("  // @ts-expect-error\n  wgmma(acc[0], Hs, 0, Bs, 0);")).toContain("error[TSK2065]: wgmma() takes a 1-D shared array of e4m3 or e5m2 as A (its second argument) for an 8-bit shape (k32); found 'Hs', a shared array of bf16");
    expect(errorsOf("  // @ts-expect-error\n  wgmma(half[0], As, 0, Bs, 0);")).toContain("error[TSK2060]: wgmma() takes a 1-D shared array of bf16 or f16 as A (its second argument); found 'As', a shared array of e4m3");
  });

  it("TSK2066: an N-major B", () => {
    expect(errorsOf('  // @ts-expect-error\n  wgmma(acc[0], As, 0, Bs, 0, { bMajor: "n", bBoxRows: 64 });')).toContain("error[TSK2066]: wgmma() of shape m64n256k32 reads B from 'Bs' K-major only: the tensor cores transpose 16-bit operands, not 8-bit ones");
  });

  it("TSK1067: no A fragments of the 8-bit shapes", () => {
    expect(errorsOf('  // @ts-expect-error\n  const a = fragment.a("m64n64k32", "e4m3", 1);')).toContain('error[TSK1067]: fragment.a takes a shape with A fragments: the 8-bit shapes ("m64n64k32", "m64n128k32" or "m64n256k32") read A from a shared array, found "m64n64k32"');
  });

  it("TSK3160 and TSK3161: offsets off the 32-byte steps of a group's first row, and reads past the array", () => {
    expect(errorsOf("  wgmma(acc[0], As, 16, Bs, 0);")).toContain("error[TSK3160]: wgmma() reads A at element offset 16 of 'As': the offset must be a multiple of 32 in the first 128-byte row of a group of 8 rows (offset % 1024 < 128)");
    expect(errorsOf("  wgmma(acc[0], As, 0, Bs, 128);")).toContain("error[TSK3160]: wgmma() reads B at element offset 128 of 'Bs'");
    expect(errorsOf("  wgmma(acc[0], As, 0, Bs, 1024);")).toContain("error[TSK3161]: wgmma() reads B up to element 33695 of 'Bs', which has 32768 elements");
  });
});
