/**
 * The matmul tuner on the CPU backend at n = 64 with tiny search spaces: the rungs' validity rules against a
 * simulation of their tile loads, pruning by threads and shared memory, a deliberately wrong candidate
 * discarded, the store's round trip and keys, matmul() taking the stored choice, and damaged store files.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../compiler/index.ts";
import { CpuDevice } from "../cpu/cpu-device.ts";
import type { Device } from "../device.ts";
import { compileKernelLibrary } from "../kernels.ts";
import { compareToReference, referenceGemm } from "../reference.ts";
import { enumerateSpace, formatConstants, kernelSourceHash, pruneReason, searchOrder } from "./candidates.ts";
import { chooseMatmul, matmul, matmulRungs, matmulTolerance16, type Constants, type MatmulChoice, type Rung } from "./matmul.ts";
import { roundToBf16 } from "../../compiler/lang/float16.ts";
import { deviceKeyOf, shapeClass, TuningStore, type TunedEntry } from "./tune-store.ts";
import { formatTuneTable, tuneMatmul } from "./tune.ts";

const rung = (name: string) => matmulRungs.find((r) => r.name === name)!;
const made: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-tune-test-"));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);
const library = compileKernelLibrary(["sgemm.ts", "sgemm-blocktiling.ts"].map((f) => path.join(packageRoot(), "examples", f)));

/** A CPU device that reports other limits or another name, to stand for another device. */
function variantOf(device: CpuDevice, overrides: { name?: string; maxThreadsPerBlock?: number }): Device {
  return Object.create(device, {
    name: { value: overrides.name ?? device.name },
    limits: { value: { ...device.limits, maxThreadsPerBlock: overrides.maxThreadsPerBlock ?? device.limits.maxThreadsPerBlock } },
  }) as Device;
}

/**
 * Where each thread of the blocktiling kernels reads and writes, replayed in plain JS from the kernels' index
 * formulas: the A and B tiles must each be written exactly once per step and only inside the tile, and the
 * threads' TM×TN result tiles must cover the block's tile of C exactly once.
 */
function loadsAreExact(kind: "1d" | "2d", c: Constants): boolean {
  const { BM, BN, BK, TM } = c as Record<string, number>;
  const TN = kind === "1d" ? 1 : c.TN!;
  if ((BM * BN) % (TM * TN) !== 0) return false;
  const threads = (BM * BN) / (TM * TN);
  const a = new Uint8Array(BM * BK);
  const b = new Uint8Array(BK * BN);
  const out = new Uint8Array(BM * BN);
  const strideA = Math.trunc(threads / BK);
  const strideB = Math.trunc(threads / BN);
  if (kind === "2d" && (strideA === 0 || strideB === 0)) return false; // the load loops would never end
  for (let t = 0; t < threads; t++) {
    const rowsA = kind === "1d" ? [Math.trunc(t / BK)] : range(0, BM, strideA).map((o) => Math.trunc(t / BK) + o);
    for (const r of rowsA) if (r >= BM || a[r * BK + (t % BK)]!++ > 0) return false;
    const rowsB = kind === "1d" ? [Math.trunc(t / BN)] : range(0, BK, strideB).map((o) => Math.trunc(t / BN) + o);
    for (const r of rowsB) if (r >= BK || b[r * BN + (t % BN)]!++ > 0) return false;
    const across = BN / TN;
    for (let m = 0; m < TM; m++) {
      for (let n = 0; n < TN; n++) {
        const row = Math.trunc(t / across) * TM + m;
        const col = (t % across) * TN + n;
        if (row >= BM || col >= BN || out[row * BN + col]!++ > 0) return false;
      }
    }
  }
  return a.every((x) => x === 1) && b.every((x) => x === 1) && out.every((x) => x === 1);
}

/**
 * The 4-wide tile loads of the vectorized and warp-tiled kernels, replayed: thread t loads row t / (BK/4)
 * (plus multiples of threads·4/BK) of the A tile at column 4·(t % (BK/4)), and likewise for B with BN; every
 * element must be loaded once, inside the tile. `results(t)` gives the [row, col] of each result of thread t,
 * which must cover the block's BM×BN tile once.
 */
function wideLoadsAreExact(c: Constants, threads: number, results: (t: number) => [number, number][] | undefined): boolean {
  const { BM, BN, BK } = c as Record<string, number>;
  if (!Number.isInteger(threads) || BK % 4 !== 0 || BN % 4 !== 0) return false;
  const strideA = Math.trunc((threads * 4) / BK);
  const strideB = Math.trunc((threads * 4) / BN);
  if (strideA === 0 || strideB === 0) return false;
  const a = new Uint8Array(BM * BK);
  const b = new Uint8Array(BK * BN);
  const out = new Uint8Array(BM * BN);
  for (let t = 0; t < threads; t++) {
    for (const offset of range(0, BM, strideA)) {
      const row = Math.trunc(t / (BK / 4)) + offset;
      for (let lane = 0; lane < 4; lane++) if (row >= BM || a[row * BK + (t % (BK / 4)) * 4 + lane]!++ > 0) return false;
    }
    for (const offset of range(0, BK, strideB)) {
      const row = Math.trunc(t / (BN / 4)) + offset;
      for (let lane = 0; lane < 4; lane++) if (row >= BK || b[row * BN + (t % (BN / 4)) * 4 + lane]!++ > 0) return false;
    }
    const cells = results(t);
    if (!cells) return false;
    for (const [row, col] of cells) if (row < 0 || col < 0 || row >= BM || col >= BN || out[row * BN + col]!++ > 0) return false;
  }
  return a.every((x) => x === 1) && b.every((x) => x === 1) && out.every((x) => x === 1);
}

/** Results of a thread of the vectorized kernel: a TM×TN tile, read and written 4 columns at a time. */
function vectorizedResults({ BN, TM, TN }: Constants): (t: number) => [number, number][] | undefined {
  return (t) => {
    if (TM! % 4 !== 0 || TN! % 4 !== 0) return undefined; // wide register loads would run past the tile
    const across = Math.trunc(BN! / TN!);
    const cells: [number, number][] = [];
    for (let m = 0; m < TM!; m++) for (let n = 0; n < TN!; n++) cells.push([Math.trunc(t / across) * TM! + m, (t % across) * TN! + n]);
    return cells;
  };
}

/** Results of a thread of the warp-tiled kernels, from their index formulas (integer division as in the kernel). */
/**
 * The multistage kernel's tile loads and result tiles, replayed: each step moves a BM×KS tile of A (AVEC = 1:
 * four k of one row per thread and pass; AVEC = 0: one k of four rows) and a KS×BN tile of B (four columns
 * per thread and pass), KS = BK·KSPLIT; each of the KSPLIT groups of THREADS/KSPLIT threads covers the whole
 * BM×BN tile of C with the warp-tiled layout; the later groups' partial results fit in the STAGES B stages.
 */
function multistageIsExact(c: Constants): boolean {
  const { BM, BN, BK, KSPLIT, STAGES, THREADS, AVEC, WM, WN } = c as Record<string, number>;
  const KS = BK * KSPLIT;
  const group = THREADS / KSPLIT;
  if (!Number.isInteger(group) || BK % 4 !== 0 || BN % 4 !== 0 || STAGES < 2 || STAGES > 5) return false;
  const strideA = Math.trunc((THREADS * 4) / KS);
  const strideB = Math.trunc((THREADS * 4) / BN);
  if (strideA === 0 || strideB === 0 || (AVEC === 0 && THREADS % KS !== 0)) return false;
  const a = new Uint8Array(BM * KS);
  const b = new Uint8Array(KS * BN);
  for (let t = 0; t < THREADS; t++) {
    for (const offset of range(0, BM, strideA)) {
      for (let lane = 0; lane < 4; lane++) {
        const [row, col] = AVEC === 1 ? [Math.trunc(t / (KS / 4)) + offset, (t % (KS / 4)) * 4 + lane] : [Math.trunc(t / KS) * 4 + offset + lane, t % KS];
        if (row >= BM || col >= KS || a[row * KS + col]!++ > 0) return false;
      }
    }
    for (const offset of range(0, KS, strideB)) {
      const row = Math.trunc(t / (BN / 4)) + offset;
      for (let lane = 0; lane < 4; lane++) if (row >= KS || b[row * BN + (t % (BN / 4)) * 4 + lane]!++ > 0) return false;
    }
  }
  const results = warptilingResults(c);
  for (let g = 0; g < KSPLIT; g++) {
    const out = new Uint8Array(BM * BN);
    for (let t = 0; t < group; t++) {
      const cells = results(t);
      if (!cells || Math.trunc(BM / WM) * Math.trunc(BN / WN) * 32 !== group) return false;
      for (const [row, col] of cells) if (row < 0 || col < 0 || row >= BM || col >= BN || out[row * BN + col]!++ > 0) return false;
    }
    if (!out.every((x) => x === 1)) return false;
  }
  const partialSlots = (KSPLIT - 1) * ((WM * WN) / 32) * group;
  return a.every((x) => x === 1) && b.every((x) => x === 1) && partialSlots <= STAGES * KS * BN;
}

function warptilingResults({ BN, WM, WN, WNITER, TM, TN }: Constants): (t: number) => [number, number][] | undefined {
  const WMITER = Math.trunc((WM! * WN!) / (32 * TM! * TN! * WNITER!));
  if (WMITER === 0 || TM! % 4 !== 0 || TN! % 4 !== 0) return () => undefined;
  const WSUBM = Math.trunc(WM! / WMITER);
  const WSUBN = Math.trunc(WN! / WNITER!);
  const perRow = Math.trunc(WSUBN / TN!);
  if (perRow === 0 || Math.trunc(BN! / WN!) === 0) return () => undefined;
  return (t) => {
    const warp = Math.trunc(t / 32);
    const lane = t % 32;
    const warpCol = warp % Math.trunc(BN! / WN!);
    const warpRow = Math.trunc(warp / Math.trunc(BN! / WN!));
    const cells: [number, number][] = [];
    for (let wm = 0; wm < WMITER; wm++) {
      for (let wn = 0; wn < WNITER!; wn++) {
        for (let m = 0; m < TM!; m++) {
          for (let n = 0; n < TN!; n++) {
            cells.push([warpRow * WM! + wm * WSUBM + Math.trunc(lane / perRow) * TM! + m, warpCol * WN! + wn * WSUBN + (lane % perRow) * TN! + n]);
          }
        }
      }
    }
    return cells;
  };
}

function range(start: number, end: number, step: number): number[] {
  const out: number[] = [];
  for (let i = start; i < end; i += step) out.push(i);
  return out;
}

/** A kernel that leaves out the last SKIP terms of every dot product when K > ABOVE: right only when SKIP = 0 or K ≤ ABOVE. */
const skippingKernel = `import { blockIdx, kernel, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const gemmSkipping = kernel(
  { block: ["T"] },
  (M: i32, N: i32, K: i32, alpha: f32, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, beta: f32, C: Float32Array, T: Const<i32> = 32, SKIP: Const<i32> = 0, ABOVE: Const<i32> = 0) => {
    const row = blockIdx.y;
    const col = blockIdx.x * T + threadIdx.x;
    const terms = K > ABOVE ? K - SKIP : K;
    if (col < N) {
      let sum: f32 = 0;
      for (let p = 0; p < terms; p++) {
        sum += A[row * K + p] * B[p * N + col];
      }
      C[row * N + col] = beta === 0 ? alpha * sum : alpha * sum + beta * C[row * N + col];
    }
  },
);
`;

function skippingRung(space: Readonly<Record<string, readonly number[]>> = { T: [32], SKIP: [0, 1] }): Rung {
  const file = path.join(tempDir(), "skipping.ts");
  fs.writeFileSync(file, skippingKernel);
  return {
    name: "test-skipping",
    file,
    kernel: "gemmSkipping",
    grid: (m, n, c) => [Math.ceil(n / c.T!), m],
    search: { space, invalid: () => undefined, threads: (c) => c.T!, sharedBytes: () => 0 },
  };
}

function entry(overrides: Partial<TunedEntry> = {}): TunedEntry {
  const transposed = rung("sgemm-2d-transposed-a");
  return {
    rung: transposed.name,
    kernel: transposed.kernel,
    file: transposed.file,
    sourceHash: kernelSourceHash(transposed.file)!,
    constants: { BM: 32, BN: 32, BK: 8, TM: 4, TN: 4 },
    n: 64,
    ms: 1,
    gflops: 0.5,
    normwiseError: 1e-7,
    date: "2026-11-22T00:00:00.000Z",
    ...overrides,
  };
}

/**
 * A replay that remembers its answer per setting: the tests below replay every accepted setting, then the whole
 * space to count the exact ones, which replayed the accepted settings (the slow, full replays) a second time.
 */
function replayOnce(replay: (c: Constants) => boolean): (c: Constants) => boolean {
  const answers = new Map<string, boolean>();
  return (c) => {
    const key = JSON.stringify(c);
    if (!answers.has(key)) answers.set(key, replay(c));
    return answers.get(key)!;
  };
}

describe("the search space", () => {
  it("accepts exactly the settings whose tile loads and stores a replay of the kernels finds exact", () => {
    const wide = { BM: [16, 32, 64, 128, 256], BN: [16, 32, 64, 128, 256], BK: [2, 4, 8, 16, 32], TM: [1, 2, 4, 8, 16], TN: [1, 2, 4, 8, 16] };
    for (const [name, kind] of [["sgemm-1d-blocktiling", "1d"], ["sgemm-2d-blocktiling", "2d"], ["sgemm-2d-transposed-a", "2d"], ["sgemm-2d-guarded", "2d"]] as const) {
      const search = rung(name).search!;
      const space = kind === "1d" ? { BM: wide.BM, BN: wide.BN, BK: wide.BK, TM: wide.TM } : wide;
      const exact = replayOnce((c) => loadsAreExact(kind, c));
      const { valid, invalid } = enumerateSpace({ ...search, space });
      const rejected = [...invalid.values()].reduce((x, y) => x + y, 0);
      expect(valid.length + rejected).toBe(Object.values(space).reduce((product, values) => product * values.length, 1));
      for (const c of valid) expect(exact(c), `${name} ${JSON.stringify(c)} accepted`).toBe(true);
      const replayedValid = enumerateSpace({ ...search, space, invalid: () => undefined }).valid.filter(exact);
      expect(replayedValid.length, `${name}: every exact setting is accepted`).toBe(valid.length);
      // The rung's own space keeps enough to search: the kernels' defaults and more.
      expect(enumerateSpace(search).valid.length).toBeGreaterThanOrEqual(kind === "1d" ? 7 : 90);
    }
  });

  it("accepts exactly the vectorized and warp-tiled settings whose 4-wide loads and result tiles a replay finds exact", () => {
    const vectorized = { BM: [32, 64, 128, 256], BN: [32, 64, 128, 256], BK: [4, 8, 16, 32], TM: [2, 4, 8], TN: [2, 4, 8], PAD: [0] };
    const check = (name: string, space: Readonly<Record<string, readonly number[]>>, replayEach: (c: Constants) => boolean, minimum: number) => {
      const replay = replayOnce(replayEach);
      const search = rung(name).search!;
      const { valid } = enumerateSpace({ ...search, space });
      for (const c of valid) expect(replay(c), `${name} ${JSON.stringify(c)} accepted`).toBe(true);
      const exact = enumerateSpace({ ...search, space, invalid: () => undefined }).valid.filter(replay);
      expect(exact.length, `${name}: every exact setting is accepted`).toBe(valid.length);
      expect(enumerateSpace(search).valid.length, `${name}: its own space`).toBeGreaterThanOrEqual(minimum);
    };
    check("sgemm-vectorized", vectorized, (c) => wideLoadsAreExact(c, c.BM! * c.BN! / (c.TM! * c.TN!), vectorizedResults(c)), 20);
    const warps = { BM: [64, 128, 256], BN: [64, 128], BK: [8, 16, 32], WM: [32, 64, 128], WN: [32, 64], WNITER: [1, 2, 4], TM: [4, 8], TN: [4, 8], THREADS: [64, 128, 256] };
    for (const name of ["sgemm-warptiling", "sgemm-warptiling-double-buffered", "sgemm-warptiling-guarded"]) {
      check(name, warps, (c) => Number.isInteger(c.BM! / c.WM!) && wideLoadsAreExact(c, c.THREADS!, warptilingResults(c)), 20);
    }
  });

  it("accepts exactly the multistage settings whose loads, sliced-k result tiles and partial sums a replay finds exact", () => {
    const space = { BM: [32, 64, 128], BN: [64, 128], BK: [4, 8, 16], KSPLIT: [1, 2, 4], STAGES: [2, 3], WM: [32, 64], WN: [32, 64], WNITER: [1, 2], TM: [4, 8], TN: [4, 8], THREADS: [64, 128, 256, 512], SWIZZLE: [0], AVEC: [0, 1], GUARD: [0] };
    const search = rung("sgemm-multistage").search!;
    const replay = replayOnce(multistageIsExact);
    const { valid } = enumerateSpace({ ...search, space });
    for (const c of valid) expect(replay(c), `${JSON.stringify(c)} accepted`).toBe(true);
    const exact = enumerateSpace({ ...search, space, invalid: () => undefined }).valid.filter(replay);
    expect(exact.length).toBe(valid.length);
    expect(valid.length).toBeGreaterThan(50);
    expect(valid.some((c) => c.KSPLIT === 4 && c.AVEC === 0)).toBe(true);
    // The rung's own space, and the guarded rung's, fix GUARD.
    expect(new Set(enumerateSpace(search).valid.map((c) => c.GUARD))).toEqual(new Set([0]));
    expect(new Set(enumerateSpace(rung("sgemm-multistage-guarded").search!).valid.map((c) => c.GUARD))).toEqual(new Set([1]));
  });

  it("prunes by threads per block and shared memory, and orders the search", () => {
    const search = rung("sgemm-2d-transposed-a").search!;
    const limits = { maxThreadsPerBlock: 256, maxBlockDims: [256, 256, 64] as const, maxGridDims: [65535, 65535, 65535] as const, maxSharedBytes: 16 * 1024 };
    expect(pruneReason(search, { BM: 128, BN: 128, BK: 8, TM: 4, TN: 8 }, limits)).toBe("512 threads per block; the device allows 256");
    expect(pruneReason(search, { BM: 128, BN: 128, BK: 32, TM: 8, TN: 8 }, limits)).toBe("32768 bytes of shared memory; the device allows 16384");
    expect(pruneReason(search, { BM: 128, BN: 128, BK: 16, TM: 8, TN: 8 }, limits)).toBeUndefined();
    const defaults = { BM: 128, BN: 128, BK: 8, TM: 8, TN: 8 };
    const small = { BM: 64, BN: 64, BK: 8, TM: 8, TN: 8 }; // 64 threads
    const small256 = { BM: 64, BN: 64, BK: 8, TM: 4, TN: 4 };
    const wide = { BM: 128, BN: 64, BK: 8, TM: 8, TN: 4 };
    // Defaults, then each tile area in turn (largest first), threads nearest 256 first within an area.
    expect(searchOrder(search, [small, small256, wide, defaults], defaults)).toEqual([defaults, wide, small256, small]);
  });

  it("prunes by the shared bytes the compiler reports for each build (CUDA's allocation: padding and wgmma's alignment included)", () => {
    const files = [...new Set(matmulRungs.filter((r) => r.search).map((r) => r.file))].map((f) => path.join(packageRoot(), f));
    const cuda = compileKernelLibrary(files, ["cuda"]);
    let compared = 0;
    for (const tuned of matmulRungs.filter((r) => r.search)) {
      for (const kernel of cuda.kernels.filter((k) => k.description.name === tuned.kernel)) {
        const c = kernel.description.specialization as Constants;
        expect(tuned.search!.sharedBytes(c), `${tuned.name} ${formatConstants(c)}`).toBe(kernel.description.sharedBytes);
        compared++;
      }
    }
    // The wgmma rung's 1024 bytes for aligning its operand are in both (the launch asks for them).
    const wgmma = cuda.kernels.find((k) => k.description.name === "sgemmWgmma")!;
    expect(wgmma.description.sharedBytes).toBe(wgmma.cuda!.dynamicSharedBytes);
    expect(wgmma.description.sharedBytes).toBe(4 * 4 * (256 * 32 + 32 * 136) + 1024);
    expect(compared).toBeGreaterThan(20);
  });
});

describe("tuneMatmul on the CPU", () => {
  it("prunes before compiling, discards a wrong candidate, and stores only the verified ones", async () => {
    const transposed = rung("sgemm-2d-transposed-a");
    const small: Rung = { ...transposed, search: { ...transposed.search!, space: { BM: [32, 64], BN: [32, 64], BK: [8], TM: [4], TN: [4] } } };
    const skipping = skippingRung();
    const device = variantOf(new CpuDevice(), { maxThreadsPerBlock: 128 });
    const store = new TuningStore(tempDir());
    const progress: string[] = [];
    const report = await tuneMatmul(device, { sizes: [64], runs: 1, table: [small, skipping], maxSharedBytes: 3000, store, onProgress: (line) => progress.push(line) });

    const verdicts = report.candidates.map((c) => `${c.rung} ${JSON.stringify(c.constants)} ${c.status}${c.status === "pruned" ? `: ${c.reason}` : ""}`).sort();
    expect(verdicts).toEqual(
      [
        `sgemm-2d-transposed-a {"BM":128,"BN":128,"BK":8,"TM":8,"TN":8} pruned: 256 threads per block; the device allows 128`,
        `sgemm-2d-transposed-a {"BM":32,"BN":32,"BK":8,"TM":4,"TN":4} ok`,
        `sgemm-2d-transposed-a {"BM":32,"BN":64,"BK":8,"TM":4,"TN":4} pruned: 3072 bytes of shared memory; the device allows 3000`,
        `sgemm-2d-transposed-a {"BM":64,"BN":32,"BK":8,"TM":4,"TN":4} pruned: 3072 bytes of shared memory; the device allows 3000`,
        `sgemm-2d-transposed-a {"BM":64,"BN":64,"BK":8,"TM":4,"TN":4} pruned: 256 threads per block; the device allows 128`,
        `test-skipping {"T":32,"SKIP":0} ok`,
        `test-skipping {"T":32,"SKIP":1} wrong`,
      ].sort(),
    );
    const wrong = report.candidates.find((c) => c.status === "wrong")!;
    expect(wrong.error!.normwiseRelative).toBeGreaterThan(1e-3);
    expect(progress.filter((line) => /^\[\d\/3\] n=64 /.test(line))).toHaveLength(3);
    expect(progress).toContain(`[3/3] n=64 test-skipping T=32 SKIP=1: WRONG, discarded: ${wrong.reason}`);
    // The two verified candidates are timed again back to back, the wrong one is not; the report keeps the second timing.
    const again = progress.filter((line) => line.startsWith("n=64 again: "));
    expect(again.map((line) => line.split(":")[0]! + ":" + line.split(":")[1]!.split(" ").slice(0, 3).join(" ")).sort()).toEqual(
      ["n=64 again: sgemm-2d-transposed-a BM=32", "n=64 again: test-skipping T=32"].sort(),
    );
    for (const line of again) {
      const [, name, constants, ms] = /^n=64 again: (\S+) (.+): ([\d.]+) ms/.exec(line)!;
      const candidate = report.candidates.find((c) => c.rung === name && c.status === "ok" && Object.entries(c.constants).map(([k, v]) => `${k}=${v}`).join(" ") === constants)!;
      expect(candidate.ms!.toFixed(3)).toBe(ms);
    }
    for (const ok of report.candidates.filter((c) => c.status === "ok")) {
      expect(ok.error!.normwiseRelative).toBeLessThan(64 * 2 ** -23);
      expect(ok.gflops).toBeGreaterThan(0);
    }

    const stored = store.entries(deviceKeyOf(device), 64);
    expect(stored.map((e) => `${e.rung} ${JSON.stringify(e.constants)}`).sort()).toEqual([`sgemm-2d-transposed-a {"BM":32,"BN":32,"BK":8,"TM":4,"TN":4}`, `test-skipping {"T":32,"SKIP":0}`]);
    expect(stored[0]!.gflops).toBeGreaterThanOrEqual(stored[1]!.gflops);
    expect(stored.find((e) => e.rung === "test-skipping")!.sourceHash).toBe(kernelSourceHash(skipping.file));
    expect(report.storeFile).toBe(store.fileFor(deviceKeyOf(device)));

    expect(report.best.map((b) => b.rung).sort()).toEqual(["sgemm-2d-transposed-a", "test-skipping"]);
    expect(report.best.filter((b) => b.overall)).toHaveLength(1);
    expect(report.best.find((b) => b.rung === "test-skipping")).toMatchObject({ checked: 2, wrong: 1, constants: { T: 32, SKIP: 0 } });
    expect(formatTuneTable(report).split("\n")).toHaveLength(2 + report.best.length);
  });

  it("drops a candidate that is wrong at one size from every size", async () => {
    // Right at n = 64, wrong at 128; the kernel's defaults (SKIP = 0) are right at both.
    const skipping = skippingRung({ T: [32], SKIP: [1], ABOVE: [64] });
    const store = new TuningStore(tempDir());
    const cpu = new CpuDevice();
    const progress: string[] = [];
    const report = await tuneMatmul(cpu, { sizes: [64, 128], runs: 1, table: [skipping], store, onProgress: (line) => progress.push(line) });
    expect(report.candidates.map((c) => `${c.n} ${formatConstants(c.constants)} ${c.status}`)).toEqual([
      "64 T=32 SKIP=0 ABOVE=0 ok",
      "64 T=32 SKIP=1 ABOVE=64 ok",
      "128 T=32 SKIP=0 ABOVE=0 ok",
      "128 T=32 SKIP=1 ABOVE=64 wrong",
    ]);
    for (const n of [64, 128]) expect(store.entries(deviceKeyOf(cpu), n).map((e) => formatConstants(e.constants))).toEqual(["T=32 SKIP=0 ABOVE=0"]);
    expect(report.best.map((b) => `${b.n} ${formatConstants(b.constants)}`)).toEqual(["64 T=32 SKIP=0 ABOVE=0", "128 T=32 SKIP=0 ABOVE=0"]);
    expect(progress.filter((line) => line.startsWith("n=") && line.includes("stored 1 verified result(s)"))).toHaveLength(2);
  });
});

describe("register pruning", () => {
  it("uses what the device says about a compiled function where it has compiled() (CUDA), before measuring", async () => {
    const transposed = rung("sgemm-2d-transposed-a");
    const small: Rung = { ...transposed, search: { ...transposed.search!, space: { BM: [32], BN: [32], BK: [8], TM: [4], TN: [4] } } };
    const skipping = skippingRung();
    const cpu = new CpuDevice();
    // As CudaDevice.compiled reports: 64-thread blocks of the transposed kernel do not fit its registers, and
    // the skipping kernel without SKIP spills.
    const described = Object.create(cpu, {
      compiled: {
        value: (kernel: { description: { name: string; specialization: Record<string, unknown> } }) =>
          kernel.description.name === "gemmSkipping"
            ? { registers: 40, maxThreadsPerBlock: 1024, localBytes: kernel.description.specialization.SKIP === 0 ? 8 : 0 }
            : { registers: 168, maxThreadsPerBlock: 48 },
      },
    }) as Device;
    const report = await tuneMatmul(described, { sizes: [64], runs: 1, table: [small, skipping], rungs: [small.name, skipping.name] });
    const verdicts = report.candidates.map((c) => `${c.rung} ${formatConstants(c.constants)} ${c.status}${c.status === "pruned" ? `: ${c.reason}` : ""}`);
    expect(verdicts).toContain("sgemm-2d-transposed-a BM=32 BN=32 BK=8 TM=4 TN=4 pruned: 168 registers per thread leave room for 48 threads per block; it needs 64");
    expect(verdicts).toContain("test-skipping T=32 SKIP=0 pruned: 8 bytes of local memory per thread (spilled from 40 registers)");
    expect(verdicts).toContain("test-skipping T=32 SKIP=1 wrong");
    expect(report.candidates.filter((c) => c.status === "ok")).toEqual([]);
  });
});

describe("stored choices", () => {
  it("round-trip through disk and are used by matmul() only for the same device, shape class and source", async () => {
    const cpu = new CpuDevice();
    const dir = tempDir();
    const warnings: string[] = [];
    new TuningStore(dir).record(deviceKeyOf(cpu), shapeClass(64, 64, 64), [entry()]);
    const store = new TuningStore(dir, (m) => warnings.push(m));
    expect(store.entries(deviceKeyOf(cpu), 64)).toEqual([entry()]);
    expect(store.classes(deviceKeyOf(cpu))).toEqual([64]);

    // The fixed rule would take the 1-D kernel at 64³; the stored 32×32 transposed-A build is compiled on demand.
    const choice = chooseMatmul(cpu, library, { m: 64, n: 64, k: 64, tuning: store });
    expect(choice.rung.name).toBe("sgemm-2d-transposed-a");
    expect(choice.constants).toEqual({ BM: 32, BN: 32, BK: 8, TM: 4, TN: 4 });
    expect(choice.kernel.description.block).toEqual([64, 1, 1]);
    const A = random(64 * 64);
    const B = random(64 * 64);
    const C0 = random(64 * 64);
    const C = cpu.createBuffer(C0);
    expect(await matmul(cpu, library, cpu.createBuffer(A), cpu.createBuffer(B), C, { m: 64, n: 64, k: 64, alpha: 0.5, beta: -1.5, tuning: store })).toBe("sgemm-2d-transposed-a");
    const report = compareToReference((await cpu.read(C)) as Float32Array, referenceGemm(64, 64, 64, A, B, 0.5, -1.5, C0));
    expect(report.nonFinite).toBe(0);
    expect(report.normwiseRelative).toBeLessThan(64 * 2 ** -23);

    expect(chooseMatmul(cpu, library, { m: 64, n: 64, k: 64, tuning: false }).rung.name).toBe("sgemm-1d-blocktiling");
    // Another device, another shape class, or a shape the stored tiles do not divide: the fixed rule.
    const other = variantOf(cpu, { name: "Another CPU" });
    const fixed = (choice: MatmulChoice) => `${choice.rung.name} BM=${choice.constants.BM}${choice.tuned ? " (tuned)" : ""}`;
    expect(fixed(chooseMatmul(other, library, { m: 64, n: 64, k: 64, tuning: store }))).toBe("sgemm-1d-blocktiling BM=64");
    expect(fixed(chooseMatmul(cpu, library, { m: 256, n: 256, k: 64, tuning: store }))).toBe("sgemm-2d-transposed-a BM=128");
    expect(fixed(chooseMatmul(cpu, library, { m: 48, n: 80, k: 8, tuning: store }))).toBe("sgemm-2d-guarded BM=128");
    expect(fixed(choice)).toBe("sgemm-2d-transposed-a BM=32 (tuned)");
    expect(warnings).toEqual([]);

    // A file copied under another device's name is that device's only by its key inside: ignored, with a warning.
    fs.copyFileSync(store.fileFor(deviceKeyOf(cpu)), store.fileFor(deviceKeyOf(other)));
    expect(chooseMatmul(other, library, { m: 64, n: 64, k: 64, tuning: store }).tuned).toBeUndefined();
    expect(warnings).toEqual([`tskernel: ignoring the tuning file ${store.fileFor(deviceKeyOf(other))}: it was written for cpu '${cpu.name}', not cpu 'Another CPU'`]);
  });

  it("takes a stored result only from its rung's own builds, and tunes such a rung from its builds' defaults", async () => {
    const cpu = new CpuDevice();
    const guarded = rung("sgemm-multistage-guarded");
    const multistageLibrary = compileKernelLibrary([path.join(packageRoot(), guarded.file)]);
    const small = { BM: 64, BN: 64, BK: 8, KSPLIT: 1, STAGES: 3, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128, SWIZZLE: 2, AVEC: 0 };
    const stored = (GUARD: number) =>
      entry({ rung: guarded.name, kernel: guarded.kernel, file: guarded.file, sourceHash: kernelSourceHash(guarded.file)!, constants: { ...small, GUARD }, n: 100 });
    // An unguarded build stored under the guarded rung would compute garbage at 100³: it is passed over.
    const store = new TuningStore(tempDir());
    store.record(deviceKeyOf(cpu), shapeClass(100, 100, 100), [stored(0)]);
    const fallback = chooseMatmul(cpu, multistageLibrary, { m: 100, n: 100, k: 100, tuning: store });
    expect(fallback.tuned).toBeUndefined();
    expect([fallback.rung.name, fallback.constants.GUARD]).toEqual(["sgemm-multistage-guarded", 1]);
    store.record(deviceKeyOf(cpu), shapeClass(100, 100, 100), [stored(1)]);
    const tuned = chooseMatmul(cpu, multistageLibrary, { m: 100, n: 100, k: 100, tuning: store });
    expect(tuned.tuned?.constants).toEqual({ ...small, GUARD: 1 });
    // The tuner's first candidate (the defaults) is a build of the rung: GUARD = 1.
    const tiny: Rung = { ...guarded, search: { ...guarded.search!, space: { ...Object.fromEntries(Object.entries(small).map(([k, v]) => [k, [v]])), GUARD: [1] } } };
    const report = await tuneMatmul(cpu, { sizes: [100], runs: 1, table: [tiny], maxCandidates: 1 });
    expect(report.candidates).toHaveLength(1);
    expect(report.candidates[0]).toMatchObject({ status: "ok", isDefault: true, constants: { BM: 128, BN: 128, GUARD: 1 } });
  });

  it("tunes the warp-specialized rung's stages on the CPU's emulation, each build made with A's tensor map and checked", async () => {
    const ws = rung("sgemm-wgmma-ws");
    expect(enumerateSpace(ws.search!).valid.map((c) => c.STAGES)).toEqual([3, 4]);
    const report = await tuneMatmul(new CpuDevice(), { sizes: [256], runs: 1, table: [ws], rungs: [ws.name] });
    const verdicts = report.candidates.map((c) => `${formatConstants(c.constants)} ${c.status}`).sort();
    expect(verdicts).toEqual(["STAGES=3 SWIZZLE=8 ok", "STAGES=4 SWIZZLE=8 ok"]);
  });

  it("tunes the 16-bit rungs on 16-bit inputs, checked within matmulTolerance16, and matmul(…, { dtype }) takes the stored choice", async () => {
    const cpu = new CpuDevice();
    const tiled = rung("hgemm-tiled");
    const ws = rung("hgemm-wgmma-ws-f16");
    expect(enumerateSpace(tiled.search!).valid.map((c) => c.TILE)).toEqual([8, 16, 32]);
    expect(enumerateSpace(ws.search!).valid.map(formatConstants)).toEqual(["STAGES=2 GROUP=4", "STAGES=2 GROUP=8", "STAGES=2 GROUP=16", "STAGES=3 GROUP=4", "STAGES=3 GROUP=8", "STAGES=3 GROUP=16"]);
    // Three stages fit an H100's 227 KiB with the epilogue buffers; four would not (the rule says why).
    expect(ws.search!.sharedBytes({ STAGES: 3, GROUP: 8 })).toBeLessThanOrEqual(232448);
    expect(ws.search!.invalid({ STAGES: 4, GROUP: 8 })).toMatch(/four stages do not fit/);
    const store = new TuningStore(tempDir());
    // hgemm-tiled's three tiles at 48 (a size that no tile but 8 and 16 divides: the guards run), and the f16
    // wgmma rung's stages at 256 on the emulation (GROUP left at its default).
    const small: Rung = { ...ws, search: { ...ws.search!, space: { STAGES: [2, 3], GROUP: [8] } } };
    const report = await tuneMatmul(cpu, { sizes: [48], runs: 1, table: [tiled], rungs: [tiled.name], store });
    expect(report.candidates.map((c) => `${formatConstants(c.constants)} ${c.status}`).sort()).toEqual(["TILE=16 ok", "TILE=32 ok", "TILE=8 ok"]);
    for (const c of report.candidates) {
      expect(c.error!.normwiseRelative).toBeGreaterThan(0);
      expect(c.error!.normwiseRelative).toBeLessThan(matmulTolerance16("bf16", 48));
    }
    const wsReport = await tuneMatmul(cpu, { sizes: [256], runs: 1, table: [small], rungs: [small.name] });
    expect(wsReport.candidates.map((c) => `${formatConstants(c.constants)} ${c.status}`).sort()).toEqual(["STAGES=2 GROUP=8 ok", "STAGES=3 GROUP=8 ok"]);
    for (const c of wsReport.candidates) expect(c.error!.normwiseRelative).toBeLessThan(matmulTolerance16("f16", 256));
    // matmul() with bf16 buffers takes the fastest stored hgemm-tiled build (compiled on demand), and it computes.
    const stored = store.entries(deviceKeyOf(cpu), shapeClass(48, 48, 48));
    expect(stored.map((e) => e.rung)).toEqual(["hgemm-tiled", "hgemm-tiled", "hgemm-tiled"]);
    const halfLibrary = compileKernelLibrary([path.join(packageRoot(), tiled.file)]);
    const choice = chooseMatmul(cpu, halfLibrary, { m: 48, n: 56, k: 44, dtype: "bf16", tuning: store });
    expect([choice.rung.name, choice.constants, choice.tuned?.constants]).toEqual(["hgemm-tiled", stored[0]!.constants, stored[0]!.constants]);
    // The f32 rungs never take the 16-bit results, nor the 16-bit rungs f32 ones.
    expect(chooseMatmul(cpu, library, { m: 48, n: 48, k: 48, tuning: store }).rung.name).toBe("sgemm-2d-guarded");
    const A = Float64Array.from({ length: 48 * 44 }, () => roundToBf16(Math.random() * 2 - 1));
    const B = Float64Array.from({ length: 44 * 56 }, () => roundToBf16(Math.random() * 2 - 1));
    const C = cpu.createBuffer("bf16", new Float32Array(48 * 56).fill(Number.NaN));
    expect(await matmul(cpu, halfLibrary, cpu.createBuffer("bf16", A), cpu.createBuffer("bf16", B), C, { m: 48, n: 56, k: 44, tuning: store })).toBe("hgemm-tiled");
    const error = compareToReference((await cpu.read(C)) as Float32Array, referenceGemm(48, 56, 44, A, B));
    expect(error.nonFinite).toBe(0);
    expect(error.normwiseRelative).toBeLessThan(matmulTolerance16("bf16", 44));
  });

  it("passes over results measured on other kernel source, with a warning", () => {
    const cpu = new CpuDevice();
    const warnings: string[] = [];
    const store = new TuningStore(tempDir(), (m) => warnings.push(m));
    store.record(deviceKeyOf(cpu), 64, [entry({ sourceHash: `sha256:${"0".repeat(64)}` })]);
    const choice = chooseMatmul(cpu, library, { m: 64, n: 64, k: 64, tuning: store });
    expect(choice.rung.name).toBe("sgemm-1d-blocktiling");
    expect(choice.tuned).toBeUndefined();
    expect(warnings).toEqual([
      `tskernel: the tuning results for sgemm-2d-transposed-a in ${store.fileFor(deviceKeyOf(cpu))} were measured on another version of examples/sgemm-blocktiling.ts; ignored (run \`tskernel tune matmul\` again)`,
    ]);
    // A new result of the rung replaces those measured on the old source.
    store.record(deviceKeyOf(cpu), 64, [entry({ constants: { BM: 64, BN: 64, BK: 8, TM: 4, TN: 4 } })]);
    expect(store.entries(deviceKeyOf(cpu), 64).map((e) => e.constants.BM)).toEqual([64]);
  });

  it("treats a damaged file as a warning, never a crash, and a new result replaces it", () => {
    const cpu = new CpuDevice();
    const warnings: string[] = [];
    const store = new TuningStore(tempDir(), (m) => warnings.push(m));
    const file = store.fileFor(deviceKeyOf(cpu));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{ "format": "tskernel-tune-matmul", "version": 1, "key": ');
    expect(chooseMatmul(cpu, library, { m: 64, n: 64, k: 64, tuning: store }).tuned).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^tskernel: ignoring the tuning file ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*JSON`));

    fs.writeFileSync(file, JSON.stringify({ format: "tskernel-tune-matmul", version: 1, key: deviceKeyOf(cpu), updated: "x", classes: { "64": [entry(), { rung: 3 }] } }));
    expect(store.entries(deviceKeyOf(cpu), 64)).toEqual([entry()]);
    expect(warnings[1]).toBe(`tskernel: ignoring 1 malformed result(s) in the tuning file ${file}`);

    fs.writeFileSync(file, "[]");
    store.record(deviceKeyOf(cpu), 64, [entry()]);
    expect(store.entries(deviceKeyOf(cpu), 64)).toEqual([entry()]);
    expect(warnings[2]).toBe(`tskernel: ignoring the tuning file ${file}: it is not a tskernel-tune-matmul file`);
  });

  it("classes shapes by the power of two nearest √(m·n)", () => {
    expect([shapeClass(1000, 1000, 1000), shapeClass(1024, 1024, 3), shapeClass(4096, 4096, 1024), shapeClass(724, 724, 1), shapeClass(1449, 1449, 1), shapeClass(1000, 37, 3)]).toEqual([1024, 1024, 4096, 512, 2048, 256]);
  });
});
