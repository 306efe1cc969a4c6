/** The matmul benchmark on the CPU at small sizes: every row runs and is checked, and the chart shows it. */

import { describe, expect, it } from "vitest";
import { CpuDevice } from "../../runtime/cpu/cpu-device.ts";
import { compileSeedLibrary } from "../demo/seed-library.ts";
import { benchVariants, halfVariants, seedVariants, tensorCoreVariants } from "../demo/variants.ts";
import type { Device } from "../../runtime/device.ts";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import { packageRoot } from "../../compiler/index.ts";
import path from "node:path";
import { matmulRungs, matmulTolerance, matmulTolerance16 } from "../../runtime/matmul/matmul.ts";
import { benchChartSvg, benchMatmul, formatBenchTable, referenceTimes, type BenchRow } from "./matmul.ts";

describe("benchMatmul", () => {
  it("times and checks every runnable rung, and explains the others", async () => {
    const rows = await benchMatmul(new CpuDevice(), { sizes: [64, 70], runs: 3, library: compileSeedLibrary("cpu") });
    for (const row of rows) {
      if (row.note) {
        expect(row.note).toMatch(/^n is not a multiple of \d+$|^n > \d+$/);
        expect(Number.isNaN(row.gflops)).toBe(true);
        continue;
      }
      expect(row.gflops, row.variant).toBeGreaterThan(0);
      expect(row.error!.nonFinite, row.variant).toBe(0);
      expect(row.error!.normwiseRelative, row.variant).toBeLessThan(row.dtype ? matmulTolerance16(row.dtype, row.n) : matmulTolerance(row.precision ?? "fp32", row.n));
    }
    expect(rows.filter((r) => r.n === 64 && !r.note).length).toBeGreaterThanOrEqual(10);
    // The 16-bit rungs: the tiled ones run at any n, checked against float64 of the rounded inputs; the wgmma ones
    // need multiples of 256.
    expect(rows.filter((r) => r.dtype).map((r) => [r.n, r.variant, r.dtype, r.note])).toEqual([64, 70].flatMap((n) => [
      [n, "hgemm-wgmma-ws", "bf16", "n is not a multiple of 256"],
      [n, "hgemm-tiled", "bf16", undefined],
      [n, "hgemm-wgmma-ws-f16", "f16", "n is not a multiple of 256"],
      [n, "hgemm-tiled-f16", "f16", undefined],
    ]));
    // An f16 result is much closer than bf16's (11 significant bits against 8), but not exact: the rows are
    // compared with the 16-bit inputs' product and rounded to 16 bits once.
    const errorOf = (variant: string) => rows.find((r) => r.n === 64 && r.variant === variant)!.error!.normwiseRelative;
    expect(errorOf("hgemm-tiled-f16")).toBeGreaterThan(0);
    expect(errorOf("hgemm-tiled-f16")).toBeLessThan(errorOf("hgemm-tiled"));
    expect(rows.some((r) => r.n === 70 && r.note === "n is not a multiple of 16")).toBe(true);
    const table = formatBenchTable(rows);
    expect(table.split("\n")).toHaveLength(rows.length + 2);
    const svg = benchChartSvg(rows, "test & chart");
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain("test &amp; chart");
    expect(svg.match(/<rect x=/g)!.length).toBe(rows.filter((r) => Number.isFinite(r.gflops)).length);
  });

  it("runs a rung where its kernel's targets include the backend's target: the tensor-core rung on the CPU and CUDA, not on WebGPU", () => {
    const files = ["sgemm-tensorcore.ts", "matmul-tiled.ts"].map((file) => path.join(packageRoot(), "examples", file));
    const ids = (target: "js" | "wgsl" | "cuda", backend: "cpu" | "webgpu" | "cuda") => benchVariants(compileKernelLibrary(files, [target]), backend).map((v) => v.id);
    // The example declares targets: ["cuda", "js"]; the bench lists no backends of its own.
    expect(ids("wgsl", "webgpu")).toContain("tiled-16");
    expect(ids("wgsl", "webgpu")).not.toContain("sgemm-tensorcore");
    expect(ids("js", "cpu")).toContain("sgemm-tensorcore");
    expect(ids("cuda", "cuda")).toContain("sgemm-tensorcore");
  });

  it("runs the warpgroup (wgmma) rung through the CPU's emulation at a multiple of its 256-row tile, and notes the other sizes", async () => {
    const variants = tensorCoreVariants.filter((v) => v.id === "sgemm-wgmma");
    expect(benchVariants(compileSeedLibrary("cpu"), "cpu").map((v) => v.id)).toContain("sgemm-wgmma");
    const rows = await benchMatmul(new CpuDevice(), { sizes: [256, 128], runs: 1, variants, library: compileSeedLibrary("cpu") });
    expect(rows.map((r) => [r.n, r.variant, r.precision, r.note])).toEqual([
      [256, "sgemm-wgmma", "tf32", undefined],
      [128, "sgemm-wgmma", "tf32", "n is not a multiple of 256"],
    ]);
    const [ran] = rows;
    expect(ran!.specialization).toEqual({ STAGES: 4, SWIZZLE: 8 });
    expect(ran!.gflops).toBeGreaterThan(0);
    expect(ran!.error!.nonFinite).toBe(0);
    // Every element of C was written (poisoned with NaN first), within TF32's tolerance of float64.
    expect(ran!.error!.normwiseRelative).toBeLessThan(matmulTolerance("tf32", 256));
    expect(ran!.error!.normwiseRelative).toBeGreaterThan(0);
  });

  it("runs the warp-specialized rung through the CPU's emulation, A read through a tensor map the launch makes and frees", async () => {
    const variants = tensorCoreVariants.filter((v) => v.id === "sgemm-wgmma-ws");
    const library = compileSeedLibrary("cpu");
    expect(benchVariants(library, "cpu").map((v) => v.id)).toContain("sgemm-wgmma-ws");
    expect(benchVariants(compileSeedLibrary("webgpu"), "webgpu").map((v) => v.id)).not.toContain("sgemm-wgmma-ws");
    const device = new CpuDevice();
    const made: unknown[] = [];
    const freed: unknown[] = [];
    const mapContents: number[][] = [];
    const counting = Object.assign(Object.create(device) as CpuDevice, {
      createBuffer: (...args: Parameters<CpuDevice["createBuffer"]>) => {
        const buffer = device.createBuffer(...args);
        made.push(buffer);
        const contents: unknown = args[0];
        if (contents instanceof Uint32Array) mapContents.push(Array.from(contents));
        return buffer;
      },
      free: (buffer: Parameters<CpuDevice["free"]>[0]) => {
        freed.push(buffer);
        device.free(buffer);
      },
    });
    const rows = await benchMatmul(counting, { sizes: [256, 128], runs: 1, variants, library });
    expect(rows.map((r) => [r.n, r.variant, r.precision, r.note])).toEqual([
      [256, "sgemm-wgmma-ws", "tf32", undefined],
      [128, "sgemm-wgmma-ws", "tf32", "n is not a multiple of 256"],
    ]);
    const [ran] = rows;
    expect(ran!.specialization).toEqual({ STAGES: 4, SWIZZLE: 8 });
    expect(ran!.error!.nonFinite).toBe(0);
    expect(ran!.error!.normwiseRelative).toBeLessThan(matmulTolerance("tf32", 256));
    expect(ran!.error!.normwiseRelative).toBeGreaterThan(0);
    // One tensor map per input set's launch, each freed once the set is timed.
    const maps = made.filter((b) => (b as { elementType?: string }).elementType === "u32");
    expect(maps.length).toBeGreaterThan(0);
    expect(freed).toEqual(maps);
    // The map's box is the rung table's (the variant spells it again: it is bundled for the browser without
    // the runtime's matmul module). The CPU's map holds tag, rows, cols, box rows, box cols.
    const box = matmulRungs.find((r) => r.name === "sgemm-wgmma-ws")!.tensorMapA!;
    expect(mapContents[0]!.slice(1, 5)).toEqual([256, 256, box.boxRows, box.boxCols]);
  });

  it("runs the clustered rung through the CPU's emulation at 256 on a persistent grid of whole clusters, with A's and B's maps as the rung table boxes them", async () => {
    const variants = tensorCoreVariants.filter((v) => v.id === "sgemm-wgmma-cluster");
    const library = compileSeedLibrary("cpu");
    expect(benchVariants(library, "cpu").map((v) => v.id)).toContain("sgemm-wgmma-cluster");
    expect(benchVariants(compileSeedLibrary("webgpu"), "webgpu").map((v) => v.id)).not.toContain("sgemm-wgmma-cluster");
    const device = new CpuDevice();
    const mapContents: number[][] = [];
    const recording = Object.assign(Object.create(device) as CpuDevice, {
      createBuffer: (...args: Parameters<CpuDevice["createBuffer"]>) => {
        const contents: unknown = args[0];
        if (contents instanceof Uint32Array) mapContents.push(Array.from(contents));
        return device.createBuffer(...args);
      },
    });
    const rows = await benchMatmul(recording, { sizes: [256, 128], runs: 1, variants, library });
    expect(rows.map((r) => [r.n, r.variant, r.precision, r.note])).toEqual([
      [256, "sgemm-wgmma-cluster", "tf32", undefined],
      [128, "sgemm-wgmma-cluster", "tf32", "n is not a multiple of 256"],
    ]);
    const [ran] = rows;
    expect(ran!.error!.nonFinite).toBe(0);
    expect(ran!.error!.normwiseRelative).toBeLessThan(matmulTolerance("tf32", 256));
    expect(ran!.error!.normwiseRelative).toBeGreaterThan(0);
    const rung = matmulRungs.find((r) => r.name === "sgemm-wgmma-cluster")!;
    // The CPU's maps: tag, rows, cols, box rows, box cols, element bytes, and 1 where the copy rounds to TF32 (as matmul()'s).
    expect(mapContents[0]!.slice(1, 7)).toEqual([256, 256, rung.tensorMapA!.boxRows, rung.tensorMapA!.boxCols, 4, 1]);
    expect(mapContents[1]!.slice(1, 7)).toEqual([256, 256, rung.tensorMapB!.boxRows, rung.tensorMapB!.boxCols, 4, 1]);
  });

  it("runs the 16-bit warp-specialized rung through the CPU's emulation at 256, with its three tensor maps made and freed, within matmulTolerance16", async () => {
    const library = compileKernelLibrary([path.join(packageRoot(), "examples", "hgemm-wgmma-ws.ts")], ["js"]);
    const device = new CpuDevice();
    const made: unknown[] = [];
    const freed: unknown[] = [];
    const counting = Object.assign(Object.create(device) as CpuDevice, {
      createBuffer: (...args: Parameters<CpuDevice["createBuffer"]>) => {
        const buffer = device.createBuffer(...args);
        made.push(buffer);
        return buffer;
      },
      free: (buffer: Parameters<CpuDevice["free"]>[0]) => {
        freed.push(buffer);
        device.free(buffer);
      },
    });
    const rows = await benchMatmul(counting, { sizes: [256], runs: 1, variants: halfVariants.filter((v) => v.id.startsWith("hgemm-wgmma-ws")), library });
    expect(rows.map((r) => [r.variant, r.dtype, r.note])).toEqual([
      ["hgemm-wgmma-ws", "bf16", undefined],
      ["hgemm-wgmma-ws-f16", "f16", undefined],
    ]);
    for (const row of rows) {
      expect(row.error!.nonFinite, row.variant).toBe(0);
      expect(row.error!.normwiseRelative, row.variant).toBeGreaterThan(0);
      expect(row.error!.normwiseRelative, row.variant).toBeLessThan(matmulTolerance16(row.dtype!, 256));
    }
    // Three maps per launch (A, B, C), each freed once its input set is timed; the buffers were 16-bit.
    const maps = made.filter((b) => (b as { elementType?: string }).elementType === "u32");
    expect(maps.length).toBe(2 * 3 * 3);
    expect(freed).toEqual(maps);
    expect(new Set(made.filter((b) => !maps.includes(b)).map((b) => (b as { elementType: string }).elementType))).toEqual(new Set(["bf16", "f16"]));
  });

  it("gives 16-bit rows percentages of the reference in their own type", async () => {
    // A stand-in reference per type on the CPU (the CUDA device's are cuBLAS's); each row's percentage is of its type's.
    const device = new CpuDevice();
    const fixed = (name: string, ms: number, dtype?: "bf16" | "f16") => ({ name, ...(dtype ? { dtype } : {}), enqueue: () => () => {}, time: () => ({ medianMs: ms, minMs: ms, runsMs: [ms], method: "fixed" }) });
    const references = [fixed("FP32 stand-in", 2), fixed("bf16 stand-in", 0.5, "bf16")];
    const variants = [...seedVariants.filter((v) => v.id === "tiled-16"), ...halfVariants.filter((v) => v.id === "hgemm-tiled" || v.id === "hgemm-tiled-f16")];
    const rows = await benchMatmul(device, { sizes: [32], runs: 1, variants, library: compileSeedLibrary("cpu"), references });
    const row = (variant: string) => rows.find((r) => r.variant === variant)!;
    expect(row("bf16 stand-in").percentOfReference).toBe(100);
    expect(row("bf16 stand-in").dtype).toBe("bf16");
    expect(row("tiled-16").percentOf).toBe("FP32 stand-in");
    expect(row("tiled-16").percentOfReference).toBeCloseTo((100 * 2) / row("tiled-16").ms, 10);
    expect(row("hgemm-tiled").percentOf).toBe("bf16 stand-in");
    expect(row("hgemm-tiled").percentOfReference).toBeCloseTo((100 * 0.5) / row("hgemm-tiled").ms, 10);
    // No f16 reference in this run: the f16 row stays absolute rather than borrowing another type's.
    expect(row("hgemm-tiled-f16").percentOfReference).toBeUndefined();
  });

  it("notes the wgmma rung on a CUDA GPU other than sm_90 instead of launching it", async () => {
    // Only the device's description is read before the note (no launch, no driver): a stand-in for an A100.
    const buffers: unknown[] = [];
    const a100 = {
      backend: "cuda",
      arch: "sm_80",
      limits: { maxThreadsPerBlock: 1024, maxBlockDims: [1024, 1024, 64], maxGridDims: [2147483647, 65535, 65535], maxSharedBytes: 163 * 1024 },
      createBuffer: (...args: unknown[]) => (buffers.push(args), { kind: "tskernel.buffer" }),
    } as unknown as Device;
    const library = compileKernelLibrary([path.join(packageRoot(), "examples", "sgemm-wgmma.ts")], ["cuda"]);
    const rows = await benchMatmul(a100, { sizes: [512], runs: 1, variants: tensorCoreVariants.filter((v) => v.id === "sgemm-wgmma"), library });
    expect(rows).toEqual([{ backend: "cuda", n: 512, variant: "sgemm-wgmma", precision: "tf32", ms: Number.NaN, gflops: Number.NaN, note: "wgmma needs an sm_90 GPU (Hopper); this one is sm_80" }]);
  });

  it("gives a backend without a reference of its own percentages of another backend's reference from the same run", async () => {
    const variants = seedVariants.filter((v) => v.id === "tiled-16");
    const cudaRows: BenchRow[] = [
      { backend: "cuda", n: 64, variant: "cuBLAS SGEMM (FP32)", ms: 0.002, gflops: 262, percentOfReference: 100 },
      { backend: "cuda", n: 64, variant: "cuBLAS SGEMM (TF32)", ms: 0.001, gflops: 524, percentOfReference: 200 },
    ];
    expect(referenceTimes(cudaRows)).toEqual(new Map([[64, 0.002]]));
    const externalReference = { name: "cuBLAS SGEMM (FP32), CUDA part of this run", msByN: referenceTimes(cudaRows) };
    const rows = await benchMatmul(new CpuDevice(), { sizes: [64, 48], runs: 1, variants, library: compileSeedLibrary("cpu"), externalReference });
    const [at64, at48] = rows;
    expect(at64!.percentOfReference).toBeCloseTo((100 * 0.002) / at64!.ms, 10);
    expect(at64!.percentOf).toBe("cuBLAS SGEMM (FP32), CUDA part of this run");
    // No reference time at n = 48: the row stays absolute.
    expect(at48!.n).toBe(48);
    expect(at48!.percentOfReference).toBeUndefined();
    expect(at48!.percentOf).toBeUndefined();
    // Rows of two backends in one table name their backend.
    const table = formatBenchTable([...cudaRows, ...rows]).split("\n");
    expect(table[2]).toMatch(/^64 {2}cuBLAS SGEMM \(FP32\) \(cuda\) +0\.002 +262\.0 +100\.0 %/);
    expect(table[4]).toMatch(new RegExp(`^64 {2}tiled-16 \\(cpu\\) +${at64!.ms.toFixed(3)} +${at64!.gflops.toFixed(1)} +${at64!.percentOfReference!.toFixed(1)} %`));
  });
});
