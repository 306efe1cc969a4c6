/**
 * The 16-bit rungs of the matmul ladder (`matmul(…, { dtype: "bf16" | "f16" })`): A, B and C in bf16 or f16,
 * products accumulated in f32, C = α·A·B + β·C rounded to 16 bits once. On an sm_90 GPU, where n and k are
 * multiples of 8 (the tensor maps' rows must be whole 16-byte units), the warp-specialized tensor-core rung (examples/hgemm-wgmma-ws.ts:
 * wgmma m64n256k16 with both operands in shared memory, the tensor memory accelerator for the copies and the
 * stores, a persistent grid, partial tiles at the edges; 98.6 % / 102.2 % of torch.mm bf16 at 4096³ / 8192³ on the H100,
 * bench/results/2026-11-26-hgemm-lang-h100.json), and where its 128×256 tiles number fewer than three quarters of
 * the multiprocessors, the same structure in 64×128 tiles (examples/hgemm-wgmma-small.ts); on other CUDA GPUs from sm_80, and for the shapes whose rows tensor
 * maps cannot describe, the warp-level tensor-core rung (examples/hgemm-mma-guarded.ts: mma.sync m16n8k16, any
 * shape); on the CPU, and where nothing else runs, the tiled kernel (examples/hgemm-tiled.ts). matmul.ts puts these
 * rungs in its ladder and the f32 rungs apart from them by `dtype`; the tuner searches the warpgroup and tiled
 * rungs (their search spaces below) on 16-bit inputs.
 */

import type { Rung, RungSearch } from "./rung.ts";

/** The element types matmul() multiplies: f32 (with the FP32 and TF32 rungs), bf16 and f16. */
export type MatmulDtype = "f32" | "bf16" | "f16";

/**
 * The normwise relative error (||C − C64|| / ||C64||) a 16-bit result may have against a float64 product of
 * the same 16-bit inputs: the output's rounding to the format (its unit roundoff, 2⁻⁸ for bf16 and 2⁻¹¹ for
 * f16, bounds each element's relative error, so the normwise one too) plus the f32 accumulation's k·2⁻²³.
 * Measured on the H100: 1.66·10⁻³ (bf16) and 2.07·10⁻⁴ (f16) for torch.mm and our rung alike
 * (bench/results/2026-11-26-hgemm-probe-h100-run2.json).
 */
export function matmulTolerance16(dtype: "bf16" | "f16", k: number): number {
  return (dtype === "bf16" ? 2 ** -8 : 2 ** -11) + Math.max(k, 16) * 2 ** -23;
}

/**
 * The warp-specialized rung's search (the tuner, tune.ts): its stages (a stage holds A's 128×64 box and B's
 * 64×256, 48 KiB; each consumer also keeps a 64×256 epilogue buffer, 64 KiB for both, so three stages fill the
 * 227 KiB of an H100 and four do not fit) and GROUP, the tile rows that the blocks running together walk (their
 * share of A's rows and B's columns in L2).
 */
const searchWgmmaWs16: RungSearch = {
  space: { STAGES: [2, 3], GROUP: [4, 8, 16] },
  invalid: ({ STAGES, GROUP }) => (STAGES! < 2 || STAGES! > 3 ? "STAGES must be 2 or 3 (a stage is 48 KiB and the epilogue buffers 64 KiB: four stages do not fit in 227 KiB)" : GROUP! < 1 ? "GROUP must be at least one tile row" : undefined),
  threads: () => 384,
  // Stages and epilogue buffers of 2-byte elements, 1024 bytes for their alignment (the swizzle's period), and
  // mbarriers full and empty a stage, joined and loaded a consumer: what the compiler reports (tune.test.ts).
  sharedBytes: (c) => 2 * (c.STAGES! * 24576 + 2 * 64 * 256) + 1024 + 8 * (2 * c.STAGES! + 4),
};

/** The tiled rung's search: its square tile (TILE² threads, two TILE×TILE f32 tiles of shared memory). */
const searchTiled16: RungSearch = {
  space: { TILE: [8, 16, 32] },
  invalid: ({ TILE }) => (TILE! < 1 ? "TILE must be positive" : undefined),
  threads: (c) => c.TILE! * c.TILE!,
  sharedBytes: (c) => 2 * 4 * c.TILE! * c.TILE!,
};

const wgmmaTensorMaps = { B: { boxRows: 64, boxCols: 64 }, C: { boxRows: 64, boxCols: 64 } } as const;
// A persistent rung's tiles of bm×bn, partial ones at the edges included; the grid is min(tiles, multiprocessors) (matmulLaunch).
const tilesOf = (bm: number, bn: number) => (m: number, n: number): [number, number] => [Math.ceil(m / bm) * Math.ceil(n / bn), 1];
const tiles16 = tilesOf(128, 256);

/** The 16-bit rungs, fastest first for each type. */
export const matmul16Rungs: readonly Rung[] = (["bf16", "f16"] as const).flatMap((dtype): Rung[] => [
  {
    // The warpgroup kernel in 64×128 tiles with one consumer (examples/hgemm-wgmma-small.ts), where the large tiles
    // of the next rung would number fewer than three quarters of the multiprocessors: on the H100 (seven stages)
    // 75–99 % of torch.mm from 512³ to 1536³ (72 large tiles) where the large tiles ran 54–72 %; at 2048³ and
    // 4096 × 1000 × 1000 (128 large tiles) the large ones win (bench/README.md, "Small 16-bit products").
    name: dtype === "bf16" ? "hgemm-wgmma-small" : "hgemm-wgmma-small-f16",
    file: "examples/hgemm-wgmma-small.ts",
    // One kernel over the element type: its builds of each type belong to the rung of that dtype (belongsTo).
    kernel: "hgemmWgmmaSmall",
    dtype,
    cudaArch: "sm_90",
    multiples: () => [1, 8, 8],
    ruleTakes: (m, n, _k, multiprocessors) => tiles16(m, n)[0] < (3 * multiprocessors) / 4,
    grid: tilesOf(64, 128),
    persistent: true,
    tensorMapA: { boxRows: 64, boxCols: 64 },
    tensorMapsBC: wgmmaTensorMaps,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: dtype === "bf16" ? "hgemm-wgmma-ws" : "hgemm-wgmma-ws-f16",
    file: "examples/hgemm-wgmma-ws.ts",
    kernel: dtype === "bf16" ? "hgemmWgmmaWs" : "hgemmWgmmaWsF16",
    dtype,
    cudaArch: "sm_90",
    // Any m; n and k multiples of 8: B's and C's rows (n elements) and A's (k) are whole 16-byte units, as
    // tensor maps need. Partial tiles cost a whole tile's work: at 1000³ that is 32 tiles, 1.07 times the flops.
    multiples: () => [1, 8, 8],
    grid: tiles16,
    persistent: true,
    tensorMapA: { boxRows: 128, boxCols: 64 },
    tensorMapsBC: wgmmaTensorMaps,
    search: searchWgmmaWs16,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: dtype === "bf16" ? "hgemm-mma-guarded" : "hgemm-mma-guarded-f16",
    file: "examples/hgemm-mma-guarded.ts",
    // One kernel over the element type: its builds of each type belong to the rung of that dtype (belongsTo).
    kernel: "hgemmMmaGuarded",
    dtype,
    // mma.sync m16n8k16 and ldmatrix: sm_80 and later. Any shape (partial tiles, rows of any length).
    cudaArchAtLeast: 80,
    grid: (m, n, c) => [Math.ceil(n / c.BN!), Math.ceil(m / c.BM!)],
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: dtype === "bf16" ? "hgemm-tiled" : "hgemm-tiled-f16",
    file: "examples/hgemm-tiled.ts",
    kernel: dtype === "bf16" ? "hgemmTiledBf16" : "hgemmTiledF16",
    dtype,
    grid: (m, n, c) => [Math.ceil(n / c.TILE!), Math.ceil(m / c.TILE!)],
    search: searchTiled16,
    notOnWebgpu: "WebGPU's 16-bit arrays are not done yet (issue 20, step 3)",
  },
]);
