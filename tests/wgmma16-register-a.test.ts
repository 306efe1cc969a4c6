/**
 * 16-bit wgmma with A from registers (`fragment.a("m64nNk16", "bf16" | "f16", count)`; docs/language.md §25,
 * "A from registers"): the layout as data (the f32 accumulator's layout of 16 columns, which is what lets an
 * accumulator become an A fragment element by element), a kernel on the CPU backend that sets A fragments
 * from f32 values (rounded to the type, to nearest even), reads them back and multiplies them with B tiles
 * that copyTile brings in (N-major and K-major) — checked bit for bit against a model of the documented
 * emulation and within the normwise bound of a float64 product, fresh random inputs, poisoned outputs — the
 * CUDA it prints, and the compile-time errors.
 */

import { describe, expect, it } from "vitest";
import { fragmentElementPosition, fragmentLayouts } from "../compiler/index.ts";
import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, createTensorMap } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

type Half = "bf16" | "f16";
const encode = { bf16: bf16Bits, f16: f16Bits };
const decode = { bf16: bf16FromBits, f16: f16FromBits };

describe("the 16-bit A fragment's layout", () => {
  it("is the f32 accumulator's layout of each 16-column slice: A fragment c, element e = accumulator element 8c + e", () => {
    const a = fragmentLayouts.m64n64k16.a!;
    expect(a.perLane).toBe(8);
    for (const n of [64, 128, 256] as const) {
      const acc = fragmentLayouts[`m64n${n}k16`].accumulator!;
      for (let lane = 0; lane < 128; lane++) {
        for (let c = 0; c < n / 16; c++) {
          for (let e = 0; e < 8; e++) {
            const [r, col] = fragmentElementPosition(acc, lane, 8 * c + e);
            expect(fragmentElementPosition(a, lane, e), `lane ${lane} slice ${c} e ${e}`).toEqual([r, col - 16 * c]);
          }
        }
      }
    }
    // PTX's figure: lane 5 (g 1, q 1) holds a0 (1, 2), a3 (9, 3), a4 (1, 10); lane 37 the same 16 rows down.
    expect([0, 3, 4].map((e) => fragmentElementPosition(a, 5, e))).toEqual([[1, 2], [9, 3], [1, 10]]);
    expect(fragmentElementPosition(a, 37, 0)).toEqual([17, 2]);
  });
});

/**
 * One warpgroup: C (64×n) = A·B with A (64×64) given as f32 and set into four A fragments through
 * setFragmentElement and loadFragment (each element rounded to the type), read back into Back, and B (64×n, 16-bit) brought
 * into shared memory by copyTile, N-major (boxes of B's rows) or K-major (a box of Bᵀ's rows).
 */
function source(type: Half, n: number, major: "n" | "k"): string {
  const T = type === "bf16" ? "BFloat16Array" : "Float16Array";
  const bTile = major === "n" ? `for (let j = 0; j < ${n / 64}; j++) {
      copyTile(Bs, 4096 * j, B, mapB, 64 * j, 0, bars, 0);
    }` : "copyTile(Bs, 0, B, mapB, 0, 0, bars, 0);";
  const step = major === "n" ? `wgmma(acc[0], a[s], Bs, 1024 * s, { bMajor: "n", bBoxRows: 64 });` : "wgmma(acc[0], a[s], Bs, 16 * s);";
  return `import { arriveExpectBytes, copyTile, fillFragment, fragment, fragmentColumn, fragmentElement, fragmentRow, initBarrier, kernel, loadFragment, setFragmentElement, shared, storeFragment, syncThreads, threadIdx, waitBarrier, wgmma, wgmmaCommit, wgmmaWait, type ReadonlyFloat32Array, type Readonly${T}, type ReadonlyUint32Array } from "tskernel";
export const registerA = kernel({ block: [128], targets: ["cuda", "js"] }, (A: ReadonlyFloat32Array, B: Readonly${T}, C: Float32Array, Back: Float32Array, mapB: ReadonlyUint32Array) => {
  const Bs = shared.${type}(64 * ${n});
  const bars = shared.barriers(1);
  const a = fragment.a("m64n${n}k16", "${type}", 4);
  const acc = fragment.accumulator("m64n${n}k16", "f32", 1);
  if (threadIdx.x === 0) {
    initBarrier(bars, 0, 1);
  }
  syncThreads();
  if (threadIdx.x === 0) {
    arriveExpectBytes(bars, 0, ${64 * n * 2});
    ${bTile}
  }
  // k-steps 0 to 2 element by element, k-step 3 by loadFragment (A's columns 48 to 63).
  unrollSteps: for (let s = 0; s < 3; s++) {
    fillFragment(a[s], 0);
    unrollElements: for (let e = 0; e < 8; e++) {
      const at = fragmentRow(a[s], e) * 64 + 16 * s + fragmentColumn(a[s], e);
      setFragmentElement(a[s], e, A[at]);
    }
  }
  loadFragment(a[3], A, 48, 64);
  unrollBack: for (let s = 0; s < 4; s++) {
    unrollBackElements: for (let e = 0; e < 8; e++) {
      Back[fragmentRow(a[s], e) * 64 + 16 * s + fragmentColumn(a[s], e)] = fragmentElement(a[s], e);
    }
  }
  waitBarrier(bars, 0, 0);
  fillFragment(acc[0], 0);
  unrollMultiply: for (let s = 0; s < 4; s++) {
    ${step}
  }
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], C, 0, ${n});
});
`;
}

function build(text: string, target: "js" | "cuda") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-wgmma16-ra-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, text);
  return compileKernelLibrary([file], [target]);
}

describe("16-bit wgmma with A from registers on the CPU backend", () => {
  const cases = [
    { type: "bf16", n: 64, major: "n", checked: false },
    { type: "f16", n: 128, major: "k", checked: true },
  ] as const;
  for (const { type, n, major, checked } of cases) {
    it(`m64n${n}k16 ${type}, B ${major === "n" ? "N" : "K"}-major: A rounded to nearest even, the documented emulation bit for bit${checked ? " (checked mode)" : ""}`, async () => {
      const K = 64;
      const device = new CpuDevice({ checked });
      // f32 inputs that are not 16-bit values, so that the rounding shows.
      const aValues = Float32Array.from({ length: 64 * K }, () => Math.random() * 2 - 1);
      const bBits = Uint16Array.from({ length: K * n }, () => encode[type](Math.random() * 2 - 1));
      const a = Array.from(aValues, (x) => decode[type](encode[type](x)));
      const b = Array.from(bBits, (x) => decode[type](x));
      const bGiven = major === "n" ? bBits : Uint16Array.from({ length: n * K }, (_, i) => bBits[(i % K) * n + Math.floor(i / K)]!);
      const A = device.createBuffer(aValues);
      const B = device.createBuffer(type, bGiven);
      const C = device.createBuffer(new Float32Array(64 * n).fill(Number.NaN));
      const Back = device.createBuffer(new Float32Array(64 * K).fill(Number.NaN));
      const mapB = major === "n" ? createTensorMap(device, B, { rows: K, cols: n, boxRows: 64, boxCols: 64 }) : createTensorMap(device, B, { rows: n, cols: K, boxRows: n, boxCols: 64 });
      await device.launch(build(source(type, n, major), "js").kernels[0]!, { grid: [1], args: [A, B, C, Back, mapB] });
      const back = (await device.read(Back)) as Float32Array;
      expect(Array.from(back)).toEqual(a);
      expect(a.some((x, i) => x !== aValues[i])).toBe(true);
      const got = (await device.read(C)) as Float32Array;
      let errorSquared = 0;
      let normSquared = 0;
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < n; c++) {
          let sum = 0;
          let exact = 0;
          for (let k = 0; k < K; k++) {
            sum = Math.fround(sum + a[r * K + k]! * b[k * n + c]!);
            exact += aValues[r * K + k]! * b[k * n + c]!;
          }
          expect(got[r * n + c], `C[${r}][${c}]`).toBe(sum);
          errorSquared += (sum - exact) ** 2;
          normSquared += exact ** 2;
        }
      }
      // Against the float64 product of the unrounded A: A's rounding (2^-9 for bf16, 2^-12 for f16) and the f32 sums.
      expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan((type === "bf16" ? 2 ** -8 : 2 ** -11) + K * 2 ** -23);
    });
  }

});

describe("the CUDA of a wait that leaves some groups running", () => {
  it("wgmmaWait(1) after S's group and P·V's keeps S final (its reads stay below the wait), not P·V's accumulator, and holds P", () => {
    const text = `import { fillFragment, fragment, fragmentElement, kernel, shared, wgmma, wgmmaCommit, wgmmaWait } from "tskernel";
export const k = kernel({ block: [128], targets: ["cuda"] }, (D: Float32Array) => {
  const Qs = shared.bf16(4096);
  const Vs = shared.bf16(8192);
  const S = fragment.accumulator("m64n64k16", "f32", 1);
  const O = fragment.accumulator("m64n64k16", "f32", 1);
  const P = fragment.a("m64n64k16", "bf16", 1);
  fillFragment(S[0], 0);
  fillFragment(O[0], 0);
  fillFragment(P[0], 1);
  wgmma(S[0], Qs, 0, Qs, 0);
  wgmmaCommit();
  wgmma(O[0], P[0], Vs, 0, { bMajor: "n", bBoxRows: 64 });
  wgmmaCommit();
  wgmmaWait(1);
  D[0] = fragmentElement(S[0], 0);
  wgmmaWait(0);
  D[1] = fragmentElement(O[0], 0);
});
`;
    const result = compileSource(text, { targets: ["cuda"] });
    expect(result.rendered).toBe("");
    const cuda = result.files[0]!.cuda!.source;
    expect(cuda).toMatch(/tsk_wgmma_wait<1>\(\);\s*tsk_wgmma_hold<4>\(P\);\s*tsk_wgmma_keep<32>\(S\);\s*(#line \d+ "[^"]*"\s*)?D\[0\]/);
    expect(cuda).not.toMatch(/tsk_wgmma_wait<1>\(\);[^D]*tsk_wgmma_keep<32>\(O\)/);
  });
});

/** The rendered diagnostics of a kernel body with A fragments of 16 bits (CUDA and JS). */
function errorsOf(body: string): string {
  const text = `import { fillFragment, fragment, kernel, loadFragment, shared, wgmma, wgmmaCommit, wgmmaWait } from "tskernel";
export const k = kernel({ block: [128] }, (D: Float32Array) => {
  const Bs = shared.bf16(16384);
  const Hs = shared.f16(4096);
  const a = fragment.a("m64n256k16", "bf16", 2);
  const acc = fragment.accumulator("m64n256k16", "f32", 1);
  fillFragment(acc[0], 0);
  fillFragment(a[0], 1);
  loadFragment(a[1], D, 0, 16);
${body}
});
`;
  return compileSource(text, { targets: ["cuda", "js"] }).rendered;
}

describe("16-bit A fragment errors", () => {
  it("a well-formed kernel compiles for CUDA and the CPU", () => {
    expect(errorsOf('  wgmma(acc[0], a[0], Bs, 1024, { bMajor: "n", bBoxRows: 64 });\n  wgmma(acc[0], a[1], Bs, 16);\n  wgmmaCommit();\n  wgmmaWait(0);')).toBe("");
  });

  it("TSK1170: a tf32 A fragment of a 16-bit shape", () => {
    expect(errorsOf('  // @ts-expect-error\n  const t = fragment.a("m64n64k16", "tf32", 1);')).toContain('error[TSK1170]: fragment.a: the A fragments of the 16-bit shape "m64n64k16" hold "bf16" or "f16", found "tf32"');
  });

  it("TSK2061, TSK3160, TSK3161: B of another type, off the swizzle, past its array", () => {
    expect(errorsOf("  // @ts-expect-error\n  wgmma(acc[0], a[0], Hs, 0);")).toContain("error[TSK2061]: wgmma() multiplies A and B of one type, but 'a' holds bf16 and 'Hs' holds f16");
    expect(errorsOf('  wgmma(acc[0], a[0], Bs, 16, { bMajor: "n", bBoxRows: 64 });')).toContain("error[TSK3160]: wgmma() reads B at element offset 16 of 'Bs': the offset must be a multiple of 512");
    expect(errorsOf("  wgmma(acc[0], a[0], Bs, 512);")).toContain("error[TSK3161]: wgmma() reads B up to element 16847 of 'Bs', which has 16384 elements");
  });
});
