/**
 * 16-bit warpgroup matrix operations (wgmma m64nNk16 with bf16 and f16; docs/language.md §25, "16-bit inputs"):
 * the swizzled layouts as data; whole kernels on the CPU backend that fill shared tiles with copyTile from
 * row-major tensors, multiply with A K-major and B N-major or K-major, store the accumulator both plainly (f32)
 * and through the swizzled box layout and storeTile (16 bits) — checked bit for bit against a model of the
 * documented emulation written here (each product of two 16-bit values exact, sixteen additions per k-step in
 * order, each rounded to f32; the 16-bit output rounded to nearest even), within the normwise bound of a
 * float64 product, with fresh random inputs and poisoned outputs; and the compile-time errors with their codes.
 */

import { describe, expect, it } from "vitest";
import { bitSteps, boxIndex, fragmentLayouts, swizzleIndex, wgmmaOperandIndex } from "../compiler/index.ts";
import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, createTensorMap, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

type Half = "bf16" | "f16";
const encode = { bf16: bf16Bits, f16: f16Bits };
const decode = { bf16: bf16FromBits, f16: f16FromBits };

/** Fresh random 16-bit encodings of values in [-1, 1). */
function randomBits(type: Half, length: number): Uint16Array {
  return Uint16Array.from({ length }, () => encode[type](Math.random() * 2 - 1));
}

describe("the 16-bit swizzled layouts", () => {
  it("swizzleIndex moves 16-byte pieces within their 128-byte row, by the row's place in its group of 8", () => {
    for (const bytes of [2, 4]) {
      const perRow = 128 / bytes;
      const image = new Set<number>();
      for (let i = 0; i < 8 * perRow; i++) {
        const j = swizzleIndex(i, bytes);
        expect(Math.floor(j / perRow), `${i}`).toBe(Math.floor(i / perRow));
        expect(j % (16 / bytes)).toBe(i % (16 / bytes));
        image.add(j);
      }
      expect(image.size).toBe(8 * perRow);
    }
    // Row 5 of a group of 16-bit rows: its piece 2 lands at piece 2 ^ 5 = 7.
    expect(swizzleIndex(5 * 64 + 8 * 2 + 3, 2)).toBe(5 * 64 + 8 * 7 + 3);
  });

  it("an N-major B is the boxes a copyTile of B's rows writes, and a K-major one the rows of Bᵀ", () => {
    // B[k][col] for k < 16 of the k-step at offset 1024·s (16 rows of 64) is box element (16s + k, col % 64) of box col / 64.
    for (const col of [0, 5, 63, 64, 130, 255]) {
      for (const k of [0, 7, 15]) {
        expect(wgmmaOperandIndex("b", "n", 1024, k, col, 64)).toBe(boxIndex(0, 16 + k, col, 64, 2));
        expect(wgmmaOperandIndex("b", "k", 32, k, col, 0)).toBe(swizzleIndex(64 * col + 32 + k, 2));
      }
    }
    expect(wgmmaOperandIndex("a", "k", 16, 9, 3, 0)).toBe(swizzleIndex(64 * 9 + 19, 2));
  });
});

/**
 * A kernel in which one warpgroup computes C = A·B for A (64×64) and B (64×N), both 16-bit and row-major in
 * global memory: thread 0 copies A's box and B's (N-major: N/64 boxes of 64 rows; K-major: a box of Bᵀ's N
 * rows) into shared memory behind an mbarrier, four k16 wgmmas, then C as f32 (plain stores) and as 16 bits
 * through the swizzled box layout and storeTile.
 */
function panelSource(type: Half, n: number, major: "n" | "k", threads: number, epilogue: "plain" | "alphaBeta" = "plain"): string {
  const T = type === "bf16" ? "BFloat16Array" : "Float16Array";
  const bTile = major === "n" ? `for (let j = 0; j < ${n / 64}; j++) {
      copyTile(Bs, 4096 * j, B, mapB, 64 * j, 0, bars, 0);
    }` : "copyTile(Bs, 0, B, mapB, 0, 0, bars, 0);";
  const step = major === "n" ? `wgmma(acc[0], As, 16 * s, Bs, 1024 * s, { bMajor: "n", bBoxRows: 64 });` : "wgmma(acc[0], As, 16 * s, Bs, 16 * s);";
  return `import { arriveExpectBytes, copyTile, fillFragment, fragment, initBarrier, kernel, shared, storeFragment, storeTile, syncThreads, threadIdx, waitBarrier, waitTileStores, wgmma, wgmmaCommit, wgmmaWait, type f32, type Readonly${T}, type ReadonlyUint32Array, type ${T} } from "tskernel";
export const panel = kernel({ block: [${threads}], targets: ["cuda", "js"] }, (A: Readonly${T}, B: Readonly${T}, C: ${T}, Cf: Float32Array, mapA: ReadonlyUint32Array, mapB: ReadonlyUint32Array, mapC: ReadonlyUint32Array, alpha: f32, beta: f32) => {
  const As = shared.${type}(64 * 64);
  const Bs = shared.${type}(64 * ${n});
  const Es = shared.${type}(64 * ${n});
  const bars = shared.barriers(1);
  const acc = fragment.accumulator("m64n${n}k16", "f32", 1);
  if (threadIdx.x === 0) {
    initBarrier(bars, 0, 1);
  }
  syncThreads();
  if (threadIdx.x === 0) {
    arriveExpectBytes(bars, 0, ${(64 * 64 + 64 * n) * 2});
    copyTile(As, 0, A, mapA, 0, 0, bars, 0);
    ${bTile}
  }
  waitBarrier(bars, 0, 0);
  fillFragment(acc[0], 0);
  for (let s = 0; s < 4; s++) {
    ${step}
  }
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], Cf, 0, ${n});
  ${epilogue === "plain" ? "storeFragment(acc[0], Es, 0, { swizzle: 128, boxRows: 64 });" : `// C's old boxes into Es (a second phase of the barrier), then alpha·acc + beta·C, rounded once.
  if (threadIdx.x === 0) {
    arriveExpectBytes(bars, 0, ${64 * n * 2});
    for (let j = 0; j < ${n / 64}; j++) {
      copyTile(Es, 4096 * j, C, mapC, 64 * j, 0, bars, 0);
    }
  }
  waitBarrier(bars, 0, 1);
  storeFragment(acc[0], Es, 0, { swizzle: 128, boxRows: 64, alpha, beta });`}
  syncThreads();
  if (threadIdx.x === 0) {
    for (let j = 0; j < ${n / 64}; j++) {
      storeTile(C, mapC, 64 * j, 0, Es, 4096 * j);
    }
    waitTileStores(0);
  }
});
`;
}

const handles = new Map<string, KernelHandle>();
function compiled(type: Half, n: number, major: "n" | "k", threads: number, epilogue: "plain" | "alphaBeta" = "plain"): KernelHandle {
  const key = `${type}/${n}/${major}/${threads}/${epilogue}`;
  if (!handles.has(key)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-wgmma16-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(file, panelSource(type, n, major, threads, epilogue));
    handles.set(key, compileKernelLibrary([file], ["js"]).kernels[0]!);
  }
  return handles.get(key)!;
}

describe("16-bit wgmma, copyTile and storeTile on the CPU backend", () => {
  const cases = [
    { type: "bf16", n: 64, major: "n", threads: 128, checked: false },
    { type: "bf16", n: 256, major: "n", threads: 128, checked: false },
    { type: "bf16", n: 128, major: "k", threads: 128, checked: true },
    { type: "f16", n: 128, major: "n", threads: 128, checked: true },
    { type: "f16", n: 64, major: "k", threads: 128, checked: false },
  ] as const;
  for (const { type, n, major, threads, checked } of cases) {
    it(`m64n${n}k16 ${type}, B ${major === "n" ? "N" : "K"}-major, ${threads} threads: the documented emulation bit for bit${checked ? " (checked mode)" : ""}`, async () => {
      const K = 64;
      const device = new CpuDevice({ checked });
      const aBits = randomBits(type, 64 * K);
      const bBits = randomBits(type, K * n);
      const a = Array.from(aBits, (x) => decode[type](x));
      const b = Array.from(bBits, (x) => decode[type](x));
      // K-major B is given as Bᵀ (N×K, row-major): its rows are B's columns.
      const bGiven = major === "n" ? bBits : Uint16Array.from({ length: n * K }, (_, i) => bBits[(i % K) * n + Math.floor(i / K)]!);
      const A = device.createBuffer(type, aBits);
      const B = device.createBuffer(type, bGiven);
      // Poison: NaN in both outputs (0x7fff is NaN in bf16 and f16 alike).
      const C = device.createBuffer(type, new Uint16Array(64 * n).fill(0x7fff));
      const Cf = device.createBuffer(new Float32Array(64 * n).fill(Number.NaN));
      const mapA = createTensorMap(device, A, { rows: 64, cols: K, boxRows: 64, boxCols: 64 });
      const mapB = major === "n" ? createTensorMap(device, B, { rows: K, cols: n, boxRows: 64, boxCols: 64 }) : createTensorMap(device, B, { rows: n, cols: K, boxRows: n, boxCols: 64 });
      const mapC = createTensorMap(device, C, { rows: 64, cols: n, boxRows: 64, boxCols: 64 });
      await device.launch(compiled(type, n, major, threads), { grid: [1], args: [A, B, C, Cf, mapA, mapB, mapC, 1, 0] });
      const got = (await device.read(Cf)) as Float32Array;
      const gotBits = (await device.read(C, { bits: true })) as Uint16Array;
      let errorSquared = 0;
      let normSquared = 0;
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < n; c++) {
          let sum = 0;
          let exact = 0;
          for (let k = 0; k < K; k++) {
            sum = Math.fround(sum + a[r * K + k]! * b[k * n + c]!);
            exact += a[r * K + k]! * b[k * n + c]!;
          }
          expect(got[r * n + c], `Cf[${r}][${c}]`).toBe(sum);
          expect(gotBits[r * n + c], `C[${r}][${c}]`).toBe(encode[type](sum));
          errorSquared += (sum - exact) ** 2;
          normSquared += exact ** 2;
        }
      }
      // The f32 accumulation's normwise bound (the inputs are exact: no rounding of them).
      expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan(K * 2 ** -23);
    });
  }
});

describe("the box store's GEMM epilogue on the CPU backend", () => {
  for (const type of ["bf16", "f16"] as const) {
    it(`${type}: C = alpha·A·B + beta·C rounded once, bit for bit (checked mode)`, async () => {
      const n = 128;
      const K = 64;
      const device = new CpuDevice({ checked: true });
      const aBits = randomBits(type, 64 * K);
      const bBits = randomBits(type, K * n);
      const cBits = randomBits(type, 64 * n);
      const a = Array.from(aBits, (x) => decode[type](x));
      const b = Array.from(bBits, (x) => decode[type](x));
      const A = device.createBuffer(type, aBits);
      const B = device.createBuffer(type, bBits);
      const C = device.createBuffer(type, cBits);
      const Cf = device.createBuffer(new Float32Array(64 * n).fill(Number.NaN));
      const mapA = createTensorMap(device, A, { rows: 64, cols: K, boxRows: 64, boxCols: 64 });
      const mapB = createTensorMap(device, B, { rows: K, cols: n, boxRows: 64, boxCols: 64 });
      const mapC = createTensorMap(device, C, { rows: 64, cols: n, boxRows: 64, boxCols: 64 });
      const alpha = Math.fround(0.75);
      const beta = Math.fround(-1.25);
      await device.launch(compiled(type, n, "n", 128, "alphaBeta"), { grid: [1], args: [A, B, C, Cf, mapA, mapB, mapC, alpha, beta] });
      const gotBits = (await device.read(C, { bits: true })) as Uint16Array;
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < n; c++) {
          let sum = 0;
          for (let k = 0; k < K; k++) sum = Math.fround(sum + a[r * K + k]! * b[k * n + c]!);
          const old = decode[type](cBits[r * n + c]!);
          const value = Math.fround(Math.fround(alpha * sum) + Math.fround(beta * old));
          expect(gotBits[r * n + c], `C[${r}][${c}]`).toBe(encode[type](value));
        }
      }
    });
  }
});

describe("fragment elements", () => {
  it("every layout in the table is linear in the bits of its element index (what fragmentRow and fragmentColumn rely on)", () => {
    for (const [shape, roles] of Object.entries(fragmentLayouts)) {
      for (const layout of Object.values(roles)) {
        for (const axis of ["row", "col"] as const) expect(() => bitSteps(layout!, axis), `${shape} ${axis}`).not.toThrow();
      }
    }
    expect(bitSteps(fragmentLayouts.m64n256k16.accumulator!, "col")).toEqual([1, 0, 8, 16, 32, 64, 128]);
  });

  for (const checked of [false, true]) {
    it(`fragmentElement, fragmentRow and fragmentColumn place each element where storeFragment does; setFragmentElement writes it${checked ? " (checked mode)" : ""}`, async () => {
      // One warpgroup multiplies a 64×64 bf16 tile by itself; each thread scales its elements by 1 + row/64 + col/4096
      // through the element functions and stores them itself, beside storeFragment of the same accumulator.
      const source = `import { fillFragment, fragment, fragmentColumn, fragmentElement, fragmentRow, kernel, setFragmentElement, shared, storeFragment, syncThreads, threadIdx, wgmma, wgmmaCommit, wgmmaWait, f32, type ReadonlyBFloat16Array } from "tskernel";
export const elements = kernel({ block: [128], targets: ["cuda", "js"] }, (A: ReadonlyBFloat16Array, Plain: Float32Array, Own: Float32Array, Scaled: Float32Array) => {
  const As = shared.bf16(4096);
  const acc = fragment.accumulator("m64n64k16", "f32", 1);
  for (let i = threadIdx.x; i < 4096; i += 128) {
    As[i] = A[i];
  }
  syncThreads();
  fillFragment(acc[0], 0);
  for (let s = 0; s < 4; s++) {
    wgmma(acc[0], As, 16 * s, As, 16 * s);
  }
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], Plain, 0, 64);
  unrollElements: for (let e = 0; e < 32; e++) {
    const r = fragmentRow(acc[0], e);
    const c = fragmentColumn(acc[0], e);
    Own[r * 64 + c] = fragmentElement(acc[0], e);
    const factor: f32 = 1 + f32(r) / 64 + f32(c) / 4096;
    setFragmentElement(acc[0], e, fragmentElement(acc[0], e) * factor);
  }
  storeFragment(acc[0], Scaled, 0, 64);
});
`;
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-elements-"));
      const file = path.join(dir, "kernel.ts");
      fs.writeFileSync(file, source);
      const device = new CpuDevice({ checked });
      const aBits = randomBits("bf16", 4096);
      const outputs = [0, 1, 2].map(() => device.createBuffer(new Float32Array(4096).fill(Number.NaN)));
      await device.launch(compileKernelLibrary([file], ["js"]).get("elements"), { grid: [1], args: [device.createBuffer("bf16", aBits), ...outputs] });
      const [plain, own, scaled] = (await Promise.all(outputs.map((b) => device.read(b)))) as Float32Array[];
      expect(Array.from(own!)).toEqual(Array.from(plain!));
      for (let r = 0; r < 64; r++) {
        for (let c = 0; c < 64; c++) {
          const factor = Math.fround(Math.fround(1 + Math.fround(r / 64)) + Math.fround(c / 4096));
          expect(scaled![r * 64 + c], `[${r}][${c}]`).toBe(Math.fround(plain![r * 64 + c]! * factor));
        }
      }
      // Not a test on zeros: the product of random bf16 tiles.
      expect(plain!.some((x) => x !== 0)).toBe(true);
    });
  }
});

/** The rendered diagnostics of a kernel body with 16-bit operands (CUDA and JS). */
function errorsOf(body: string, targets: ("cuda" | "wgsl" | "js")[] = ["cuda", "js"]): string {
  const source = `import { copyTile, fillFragment, fragment, kernel, shared, storeFragment, storeTile, waitTileStores, wgmma, wgmmaCommit, wgmmaWait, type BFloat16Array, type Float16Array, type ReadonlyUint32Array } from "tskernel";
export const k = kernel({ block: [128] }, (C: BFloat16Array, H: Float16Array, D: Float32Array, map: ReadonlyUint32Array) => {
  const As = shared.bf16(4096);
  const Bs = shared.bf16(16384);
  const Hs = shared.f16(4096);
  const Fs = shared.f32(4096);
  const acc = fragment.accumulator("m64n256k16", "f32", 1);
${body}
});
`;
  return compileSource(source, { targets }).rendered;
}

describe("16-bit matrix operation errors", () => {
  const clean = '  fillFragment(acc[0], 0);\n  wgmma(acc[0], As, 16, Bs, 1024, { bMajor: "n", bBoxRows: 64 });\n  wgmmaCommit();\n  wgmmaWait(0);\n  storeFragment(acc[0], Bs, 0, { swizzle: 128, boxRows: 64 });';

  it("a well-formed kernel compiles for CUDA and the CPU, and WebGPU refuses it (TSK3048)", () => {
    expect(errorsOf(clean)).toBe("");
    expect(errorsOf(clean, ["wgsl"])).toContain("error[TSK3048]: WebGPU has no matrix operations, and kernel 'k' uses");
  });

  it("TSK2060 and TSK2061: operands not in one 16-bit type", () => {
    expect(errorsOf("  // @ts-expect-error\n  wgmma(acc[0], Fs, 0, Bs, 0);")).toContain("error[TSK2060]: wgmma() takes a 1-D shared array of bf16 or f16 as A (its second argument); found 'Fs', a shared array of f32");
    expect(errorsOf("  wgmma(acc[0], As, 0, Hs, 0);")).toContain("error[TSK2061]: wgmma() multiplies A and B of one type, but 'As' holds bf16 and 'Hs' holds f16");
  });

  it("TSK1171: options that are not the layout's", () => {
    expect(errorsOf('  // @ts-expect-error\n  wgmma(acc[0], As, 0, Bs, 0, { bMajor: "n" });')).toContain("error[TSK1171]: wgmma() takes bBoxRows (the rows of B's boxes) with bMajor: \"n\" in its options object");
    expect(errorsOf("  // @ts-expect-error\n  storeFragment(acc[0], Bs, 0, { swizzle: 64, boxRows: 64 });")).toContain("error[TSK1171]: storeFragment() takes swizzle: 128 in its options object; found 64");
  });

  it("TSK3160, TSK3161, TSK3162: constant offsets off the swizzle or past the array, box rows off whole groups", () => {
    expect(errorsOf("  wgmma(acc[0], As, 64, Bs, 0);")).toContain("error[TSK3160]: wgmma() reads A at element offset 64 of 'As': the offset must be a multiple of 16 in the first 128-byte row of a group of 8 rows (offset % 512 < 64)");
    expect(errorsOf('  wgmma(acc[0], As, 0, Bs, 16, { bMajor: "n", bBoxRows: 64 });')).toContain("error[TSK3160]: wgmma() reads B at element offset 16 of 'Bs': the offset must be a multiple of 512");
    // K-major B of 256 columns from offset 32: up to element 32 + 64·255 + 15 = 16367 of 16384 (inside); from 512: past.
    expect(errorsOf("  wgmma(acc[0], As, 0, Bs, 32);")).toBe("");
    expect(errorsOf("  wgmma(acc[0], As, 0, Bs, 512);")).toContain("error[TSK3161]: wgmma() reads B up to element 16847 of 'Bs', which has 16384 elements");
    expect(errorsOf('  wgmma(acc[0], As, 0, Bs, 0, { bMajor: "n", bBoxRows: 12 });')).toContain("error[TSK3162]: wgmma()'s bBoxRows must be a multiple of 8 from 16 to 256");
  });

  it("TSK1172, TSK1173, TSK3163, TSK3164: storeTile operands and counts, tile and box-store offsets off 1024 bytes, box rows", () => {
    expect(errorsOf("  storeTile(H, map, 0, 0, As, 0);")).toContain("error[TSK1172]: storeTile() takes a writable global buffer of bf16 (the shared array's type) as its first argument; found 'H'");
    expect(errorsOf("  waitTileStores(9);")).toContain("error[TSK1173]: waitTileStores() takes the number of tile stores that may still read their source, a constant from 0 to 7; found 9");
    expect(errorsOf("  storeTile(C, map, 0, 0, As, 256);")).toContain("error[TSK3163]: storeTile() reads 'As' from element 256: the 128-byte swizzle needs a multiple of 512 elements (1024 bytes)");
    expect(errorsOf("  storeFragment(acc[0], Bs, 64, { swizzle: 128, boxRows: 64 });")).toContain("error[TSK3163]: storeFragment() writes 'Bs' from element 64: the 128-byte swizzle needs a multiple of 512 elements (1024 bytes)");
    expect(errorsOf("  storeFragment(acc[0], Bs, 0, { swizzle: 128, boxRows: 12 });")).toContain("error[TSK3164]: storeFragment()'s boxRows must be a multiple of 8 from 8 to 256");
  });
});
