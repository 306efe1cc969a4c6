/**
 * The matmul library: `matmul(device, library, A, B, C, { m, n, k, alpha, beta, variant?, tuning? })`
 * computes the row-major GEMM C = αAB + βC (A m×k, B k×n, C m×n) for any sizes with one of the ladder's
 * kernels. The rung table below is the one description of each rung: its kernel, the shapes it takes, its
 * grid, and for the tuner (tune.ts) the search space of its compile-time constants with the rules that keep
 * a setting correct. Without `variant`, matmul takes the fastest rung that handles the shape:
 * - the tuner's stored choice for this device and shape class (tune-store.ts) when there is one that fits
 *   the shape and the device (compiled on first use when the library does not hold that specialization);
 * - otherwise a fixed rule from the H100 measurements in bench/results/: the first rung of the table below
 *   whose tiles divide the shape and whose build fits the device; for shapes no tile divides, the guarded
 *   multistage kernel when n and k are multiples of 4 (16-byte rows), else the register-staged kernel, which
 *   takes any sizes (on WebGPU the guarded 2-D kernel, as the register-staged one is not measured there).
 * With `dtype: "bf16" | "f16"` (or 16-bit buffers) the 16-bit rungs of matmul16.ts run instead, and only they.
 * FP32 is the default. With `precision: "tf32"` the tensor-core rungs come first where their tiles divide the
 * shape and the library holds them: on an sm_90 GPU (H100) the clustered and the warp-specialized warpgroup rungs
 * (examples/sgemm-wgmma-cluster.ts, examples/sgemm-wgmma-ws.ts: a producer warpgroup, the tensor memory
 * accelerator, mbarriers; A's copy rounds it to TF32, ties to even, through its tensor map's `roundToTf32`, and
 * B is rounded in registers), then the warpgroup rung (examples/sgemm-wgmma.ts: A truncated to TF32 by the tensor
 * cores, which read it from shared memory), elsewhere the warp rung (examples/sgemm-tensorcore.ts, mma.sync: A
 * and B rounded); f32 accumulation in all. Other shapes, and WebGPU (no matrix operations), fall back to the FP32
 * rungs. `precision: "tf32-rounded"` passes over the rungs that truncate A (`truncatesA`), to FP32 where no other
 * takes the shape.
 */

import type { Device, DeviceBuffer, KernelArg, KernelHandle } from "../device.ts";
import { createTensorMap } from "../tensor-map.ts";
import { KernelLibrary } from "../library.ts";
import { packageKernelLibrary } from "../package-kernels.ts";
import { kernelFits } from "../launch-check.ts";
import { compileCandidate, kernelSourceHash, targetFor } from "./candidates.ts";
import { defaultTuningStore, deviceKeyOf, shapeClass, type TunedEntry, type TuningStore } from "./tune-store.ts";
import { persistentGrid, type Constants, type Rung, type RungSearch } from "./rung.ts";
import { matmul16Rungs, type MatmulDtype } from "./matmul16.ts";

export type { Constants, Rung, RungSearch } from "./rung.ts";
export { matmulTolerance16, type MatmulDtype } from "./matmul16.ts";

export type MatmulVariantName =
  | "hgemm-wgmma-ws"
  | "hgemm-wgmma-ws-f16"
  | "hgemm-wgmma-small"
  | "hgemm-wgmma-small-f16"
  | "hgemm-mma-guarded"
  | "hgemm-mma-guarded-f16"
  | "hgemm-tiled"
  | "hgemm-tiled-f16"
  | "sgemm-wgmma-cluster"
  | "sgemm-wgmma-ws"
  | "sgemm-wgmma"
  | "sgemm-streamk"
  | "sgemm-tensorcore"
  | "sgemm-multistage"
  | "sgemm-warptiling-double-buffered"
  | "sgemm-warptiling"
  | "sgemm-vectorized"
  | "sgemm-multistage-guarded"
  | "sgemm-warptiling-guarded"
  | "sgemm-register-staged"
  | "sgemm-2d-transposed-a"
  | "sgemm-2d-guarded"
  | "sgemm-2d-blocktiling"
  | "sgemm-1d-blocktiling"
  | "sgemm-shared"
  | "sgemm-naive";

export interface MatmulOptions {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly alpha?: number;
  readonly beta?: number;
  readonly variant?: MatmulVariantName;
  /**
   * "fp32" (default): every rung computes in f32. "tf32": the tensor-core rung may run, which rounds A and B
   * to TF32 (10 mantissa bits) and accumulates in f32: several times faster on GPUs with tensor cores, with a
   * relative error near 2^-11 instead of 2^-24 per input (torch.mm's TF32 error: 2.6e-4 normwise at 4096³ on
   * inputs in [-1, 1]). "tf32-rounded": the same, passing over the one rung that truncates A instead of rounding it
   * (sgemm-wgmma, which only a library without the faster sm_90 rungs falls to), to FP32 rungs where no other
   * takes the shape. Naming the tensor-core rung as `variant` implies it.
   */
  readonly precision?: MatmulPrecision;
  /**
   * The element type of A, B and C: "f32" (default), or "bf16" / "f16" for the 16-bit rungs (matmul16.ts:
   * f32 accumulation, C rounded to 16 bits once). `matmul()` takes it from the buffers when it is left out.
   */
  readonly dtype?: MatmulDtype;
  /**
   * Where to look for tuned choices: a store (tests and tools pass their own), or false for the fixed rule
   * only. Default: the store in $TSKERNEL_TUNE_DIR, else $XDG_CACHE_HOME/tskernel/tune, else
   * ~/.cache/tskernel/tune.
   */
  readonly tuning?: TuningStore | false;
}

export type MatmulPrecision = "fp32" | "tf32" | "tf32-rounded";

/**
 * The normwise relative error (||C − C64|| / ||C64||) a result may have against float64 in the checks of the
 * demo, the tuner and the benchmarks: k·2⁻²³ for FP32 (k summands, each rounding once, with room for
 * reordering); for TF32, 2⁻⁹ more: rounding each input to TF32 (unit roundoff 2⁻¹¹) gives a normwise error
 * near 2⁻¹¹ when the roundings are independent (2.6·10⁻⁴ measured for torch.mm and for our kernel on the
 * H100), and 2⁻⁹ leaves a factor of 4. The tests check TF32 results element by element against the rigorous
 * bound (tests/sgemm-tensorcore.test.ts).
 */
export function matmulTolerance(precision: MatmulPrecision, k: number): number {
  const fp32 = Math.max(k, 16) * 2 ** -23;
  return precision === "tf32" || precision === "tf32-rounded" ? fp32 + 2 ** -9 : fp32;
}

/** The shared-memory tiles of the blocktiling kernels: BM×BK of A and BK×BN of B, 4 bytes an element. */
const blocktilingShared = (c: Constants) => 4 * (c.BM! * c.BK! + c.BK! * c.BN!);

/**
 * The 1-D kernel gives each thread exactly one element of each tile to load (no loop), so the tiles must
 * hold as many elements as there are threads: BM·BK = BK·BN = BM·BN/TM, that is BM = BN = BK·TM.
 */
const search1D: RungSearch = {
  space: { BM: [32, 64, 128], BN: [32, 64, 128], BK: [4, 8, 16], TM: [4, 8, 16] },
  invalid: ({ BM, BN, BK, TM }) => {
    if (BM !== BN) return "BM must equal BN: each thread loads one element of the A tile and one of the B tile";
    if (BM !== BK! * TM!) return "BM must equal BK·TM: the tiles must hold one element per thread";
    return undefined;
  },
  threads: (c) => (c.BM! * c.BN!) / c.TM!,
  sharedBytes: blocktilingShared,
};

/**
 * The 2-D kernels load the A tile as rows of BK elements, threads/BK rows per step, and the B tile as rows of
 * BN, threads/BN rows per step (the `offset += stride` loops). Those loops cover each tile exactly once only
 * when the thread count is a multiple of the row length and the stride divides the tile's height; otherwise
 * they skip elements (garbage in the product) or write past the tile. A stride of 0 would never end.
 */
function invalid2D({ BM, BN, BK, TM, TN }: Constants): string | undefined {
  if (BM! % TM! !== 0 || BN! % TN! !== 0) return "BM and BN must be multiples of TM and TN: each thread owns a whole TM×TN tile of C";
  const threads = (BM! * BN!) / (TM! * TN!);
  if (threads % BK! !== 0) return `the ${threads} threads must be a multiple of BK (${BK}): the A tile is loaded by whole rows`;
  if (BM! % (threads / BK!) !== 0) return `BM must be a multiple of threads/BK = ${threads / BK!}, the A tile's row stride`;
  if (threads % BN! !== 0) return `the ${threads} threads must be a multiple of BN (${BN}): the B tile is loaded by whole rows`;
  if (BK! % (threads / BN!) !== 0) return `BK must be a multiple of threads/BN = ${threads / BN!}, the B tile's row stride`;
  return undefined;
}

/** Register tiles of 4 or 8 per side: 16×8 and larger need more than the 255 registers a CUDA thread may have. */
const search2D: RungSearch = {
  space: { BM: [64, 128, 256], BN: [64, 128, 256], BK: [8, 16, 32], TM: [4, 8], TN: [4, 8] },
  invalid: invalid2D,
  threads: (c) => (c.BM! * c.BN!) / (c.TM! * c.TN!),
  sharedBytes: blocktilingShared,
};

/**
 * The vectorized kernel loads 4 consecutive elements per thread: the A tile as rows of BK/4 such loads,
 * threads·4/BK rows per pass, the B tile as rows of BN/4, threads·4/BN rows per pass. As in the 2-D rule,
 * the passes must cover each tile exactly once; TM and TN must be multiples of 4 (wide register loads and
 * wide stores of C).
 */
function invalidVectorized({ BM, BN, BK, TM, TN }: Constants): string | undefined {
  if (BM! % TM! !== 0 || BN! % TN! !== 0) return "BM and BN must be multiples of TM and TN: each thread owns a whole TM×TN tile of C";
  if (TM! % 4 !== 0 || TN! % 4 !== 0 || BK! % 4 !== 0) return "TM, TN and BK must be multiples of 4: the kernel moves 4 elements at a time";
  return tileLoadProblem((BM! * BN!) / (TM! * TN!), BM!, BN!, BK!);
}

/** Whether `threads` threads loading 4 elements each cover a BM×BK and a BK×BN tile exactly once. */
function tileLoadProblem(threads: number, BM: number, BN: number, BK: number): string | undefined {
  const rowStrideA = (threads * 4) / BK;
  if (!Number.isInteger(rowStrideA) || threads % (BK / 4) !== 0) return `the ${threads} threads must be a multiple of BK/4 = ${BK / 4}: the A tile is loaded by whole rows`;
  if (BM % rowStrideA !== 0) return `BM must be a multiple of threads·4/BK = ${rowStrideA}, the A tile's row stride`;
  const rowStrideB = (threads * 4) / BN;
  if (!Number.isInteger(rowStrideB) || threads % (BN / 4) !== 0) return `the ${threads} threads must be a multiple of BN/4 = ${BN / 4}: the B tile is loaded by whole rows`;
  if (BK % rowStrideB !== 0) return `BK must be a multiple of threads·4/BN = ${rowStrideB}, the B tile's row stride`;
  return undefined;
}

const searchVectorized: RungSearch = {
  space: { BM: [64, 128, 256], BN: [64, 128, 256], BK: [8, 16, 32], TM: [4, 8], TN: [4, 8], PAD: [0, 4] },
  invalid: invalidVectorized,
  threads: (c) => (c.BM! * c.BN!) / (c.TM! * c.TN!),
  sharedBytes: (c) => 4 * (c.BK! * (c.BM! + c.PAD!) + c.BK! * c.BN!),
};

/**
 * The warp-tiled kernels: THREADS must be one warp per WM×WN warp tile of the BM×BN block tile; a warp tile
 * splits into WMITER×WNITER sub-tiles that the warp's 32 threads cover with TM×TN results each (so WM·WN
 * must be a multiple of 32·TM·TN·WNITER); the tile loads follow the vectorized rule.
 */
function invalidWarptiling({ BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS }: Constants): string | undefined {
  if (BM! % WM! !== 0 || BN! % WN! !== 0) return "BM and BN must be multiples of WM and WN: whole warp tiles per block";
  if (THREADS !== 32 * (BM! / WM!) * (BN! / WN!)) return `THREADS must be 32 per warp tile: ${32 * (BM! / WM!) * (BN! / WN!)}`;
  if (TM! % 4 !== 0 || TN! % 4 !== 0 || BK! % 4 !== 0) return "TM, TN and BK must be multiples of 4: the kernel moves 4 elements at a time";
  if ((WM! * WN!) % (32 * TM! * TN! * WNITER!) !== 0) return "WM·WN must be a multiple of 32·TM·TN·WNITER: whole sub-tiles per warp";
  const WMITER = (WM! * WN!) / (32 * TM! * TN! * WNITER!);
  if (WM! % WMITER !== 0 || WN! % WNITER! !== 0) return "the warp tile must split evenly into WMITER×WNITER sub-tiles";
  const subN = WN! / WNITER!;
  const subM = WM! / WMITER;
  if (subN % TN! !== 0 || subM % TM! !== 0 || (subM / TM!) * (subN / TN!) !== 32) return "a sub-tile must be 32 threads' TM×TN results";
  return tileLoadProblem(THREADS!, BM!, BN!, BK!);
}

const warptilingSpace = {
  BM: [64, 128, 256],
  BN: [64, 128, 256],
  BK: [8, 16, 32],
  WM: [32, 64, 128],
  WN: [32, 64, 128],
  WNITER: [1, 2, 4],
  TM: [4, 8],
  TN: [4, 8],
  THREADS: [64, 128, 256, 512],
};
/** AsT's rows are padded by 4 floats in the warp-tiled kernels; the double-buffered ones hold two stages. */
const warptilingShared = (c: Constants) => 4 * (c.BK! * (c.BM! + 4) + c.BK! * c.BN!);
const searchWarptiling: RungSearch = { space: warptilingSpace, invalid: invalidWarptiling, threads: (c) => c.THREADS!, sharedBytes: warptilingShared };
const searchDoubleBuffered: RungSearch = { ...searchWarptiling, sharedBytes: (c) => 2 * warptilingShared(c) };

/**
 * The multistage and register-staged kernels (examples/sgemm-multistage.ts): KSPLIT groups of warps per
 * tile, each with the warp tiling of the rule above (any TM: a thread loads each of its rows on its own);
 * each step moves BM×KS of A and KS×BN of B (KS = BK·KSPLIT), and the later groups' partial results pass
 * through the B stages at the end, which must hold them.
 */
function invalidSliced(c: Constants, stages: number): string | undefined {
  const { BM, BN, BK, KSPLIT, WM, WN, WNITER, TM, TN, THREADS } = c as Record<string, number>;
  if (BM! % WM! !== 0 || BN! % WN! !== 0) return "BM and BN must be multiples of WM and WN: whole warp tiles per block";
  if (THREADS !== 32 * KSPLIT! * (BM! / WM!) * (BN! / WN!)) return `THREADS must be 32 per warp tile and k-group: ${32 * KSPLIT! * (BM! / WM!) * (BN! / WN!)}`;
  if (TN! % 4 !== 0 || BK! % 4 !== 0) return "TN and BK must be multiples of 4: the kernel moves 4 elements at a time";
  if ((WM! * WN!) % (32 * TM! * TN! * WNITER!) !== 0) return "WM·WN must be a multiple of 32·TM·TN·WNITER: whole sub-tiles per warp";
  const WMITER = (WM! * WN!) / (32 * TM! * TN! * WNITER!);
  if (WM! % WMITER !== 0 || WN! % WNITER! !== 0) return "the warp tile must split evenly into WMITER×WNITER sub-tiles";
  const subM = WM! / WMITER;
  const subN = WN! / WNITER!;
  if (subN % TN! !== 0 || subM % TM! !== 0 || (subM / TM!) * (subN / TN!) !== 32) return "a sub-tile must be 32 threads' TM×TN results";
  if (stages * BK! * KSPLIT! < (KSPLIT! - 1) * BM!) return `the B stages (${stages}·BK·KSPLIT rows) must hold the partial results of KSPLIT − 1 groups ((KSPLIT − 1)·BM rows)`;
  return undefined;
}

/** The multistage kernel reads A from its transposed tile four rows at a time, as the warp-tiled kernels do. */
function invalidMultistage(c: Constants): string | undefined {
  if (c.STAGES! < 2 || c.STAGES! > 5) return "STAGES must be 2 to 5 (one waitAsync literal per depth)";
  if (c.TM! % 4 !== 0) return "TM must be a multiple of 4: the kernel moves 4 elements at a time";
  if (c.SWIZZLE! < 0) return "SWIZZLE must be 0 (launch order) or a number of block rows";
  if (c.AVEC === 0 && c.THREADS! % (c.BK! * c.KSPLIT!) !== 0) return "with AVEC = 0 THREADS must be a multiple of BK·KSPLIT: each thread loads one k of four rows";
  return invalidSliced(c, c.STAGES!) ?? tileLoadProblem(c.THREADS!, c.BM!, c.BN!, c.BK! * c.KSPLIT!);
}

/** The register-staged kernel loads one element per thread and pass: whole rows of KS (A) and BN (B) elements. */
function invalidRegisterStaged(c: Constants): string | undefined {
  const problem = invalidSliced(c, 2);
  if (problem) return problem;
  const KS = c.BK! * c.KSPLIT!;
  if (c.THREADS! % KS !== 0 || c.BM! % (c.THREADS! / KS) !== 0) return `THREADS must be a multiple of BK·KSPLIT = ${KS} and BM of THREADS/(BK·KSPLIT): A's tile is loaded by whole rows`;
  if (c.THREADS! % c.BN! !== 0 || KS % (c.THREADS! / c.BN!) !== 0) return `THREADS must be a multiple of BN and BK·KSPLIT of THREADS/BN: B's tile is loaded by whole rows`;
  return undefined;
}

const slicedSpace = {
  BM: [64, 128, 256],
  BN: [64, 128, 256],
  BK: [8, 16, 32],
  KSPLIT: [1, 2, 4],
  WM: [32, 64],
  WN: [32, 64],
  WNITER: [1, 2, 4],
  TM: [4, 8],
  TN: [4, 8],
  THREADS: [64, 128, 256, 512],
};
/** Two stages of A transposed (rows of BM + 4 floats) and STAGES of B. */
const multistageShared = (c: Constants) => 4 * c.BK! * c.KSPLIT! * (2 * (c.BM! + 4) + c.STAGES! * c.BN!);
const multistageSearch = (guard: number): RungSearch => ({
  space: { ...slicedSpace, STAGES: [2, 3, 4], SWIZZLE: [0, 8], AVEC: [0, 1], GUARD: [guard] },
  invalid: invalidMultistage,
  threads: (c) => c.THREADS!,
  sharedBytes: multistageShared,
});
/** Two stages of A (rows of KS + 4 floats) and of B. */
const searchRegisterStaged: RungSearch = {
  space: slicedSpace,
  invalid: invalidRegisterStaged,
  threads: (c) => c.THREADS!,
  sharedBytes: (c) => 4 * 2 * (c.BM! * (c.BK! * c.KSPLIT! + 4) + c.BK! * c.KSPLIT! * c.BN!),
};

/**
 * The tensor-core kernel (examples/sgemm-tensorcore.ts): (BM/WM)·(BN/WN) warps of WM×WN made of m16n8k8
 * fragments, tiles loaded 16 bytes per thread and pass (the vectorized rule), two register buffers of
 * fragments, STAGES shared stages of A (rows of BK + 4) and B (rows of BN + 8), and an epilogue that stages
 * each warp's 16-row strips (rows of WN + 8) in A's stages.
 */
function invalidTensorCore(c: Constants): string | undefined {
  const { BM, BN, BK, WM, WN, STAGES, THREADS, SWIZZLE } = c as Record<string, number>;
  if (BM! % WM! !== 0 || BN! % WN! !== 0) return "BM and BN must be multiples of WM and WN: whole warp tiles per block";
  if (WM! % 16 !== 0 || WN! % 8 !== 0) return "WM must be a multiple of 16 and WN of 8: whole m16n8 fragments per warp tile";
  if (BK! % 8 !== 0) return "BK must be a multiple of 8: whole k8 slices per step";
  if (THREADS !== 32 * (BM! / WM!) * (BN! / WN!)) return `THREADS must be 32 per warp tile: ${32 * (BM! / WM!) * (BN! / WN!)}`;
  if (STAGES! < 2 || STAGES! > 4) return "STAGES must be 2 to 4 (one waitAsync literal per depth)";
  if (SWIZZLE! < 0) return "SWIZZLE must be 0 (launch order) or a number of block rows";
  if ((THREADS! / 32) * 16 * (WN! + 8) > STAGES! * BM! * (BK! + 4)) return "the epilogue's strips (16 rows of WN + 8 per warp) must fit in A's stages";
  return tileLoadProblem(THREADS!, BM!, BN!, BK!);
}

const searchTensorCore: RungSearch = {
  space: { BM: [64, 128, 256], BN: [64, 128, 256], BK: [16, 32], WM: [32, 64], WN: [32, 64], STAGES: [2, 3, 4], THREADS: [64, 128, 256, 512], SWIZZLE: [0, 8] },
  invalid: invalidTensorCore,
  threads: (c) => c.THREADS!,
  sharedBytes: (c) => 4 * c.STAGES! * (c.BM! * (c.BK! + 4) + c.BK! * (c.BN! + 8)),
};

/**
 * The warpgroup (wgmma) kernel (examples/sgemm-wgmma.ts): fixed 256×128 block tiles of two warpgroups, k-tiles
 * of 32 (two per iteration), STAGES shared stages of A (256 rows of 32, swizzled) and B (32 rows of 136), and
 * 1024 bytes more for the operand's alignment.
 */
const searchWgmma: RungSearch = {
  space: { STAGES: [3, 4], SWIZZLE: [8] },
  invalid: ({ STAGES, SWIZZLE }) => (STAGES! < 3 || STAGES! > 4 ? "STAGES must be 3 or 4 (one group stays in flight, so a stage is refilled STAGES − 2 tiles ahead)" : SWIZZLE! < 1 ? "SWIZZLE must be a number of block rows (at least 1)" : undefined),
  threads: () => 256,
  sharedBytes: (c) => 4 * c.STAGES! * (256 * 32 + 32 * 136) + 1024,
};

/**
 * The warp-specialized wgmma rung (examples/sgemm-wgmma-ws.ts): the same tiles and stage contents as
 * sgemm-wgmma, plus a "full" and an "empty" mbarrier a stage and one for the consumers' epilogue (8 bytes
 * each). Each consumer keeps one wgmma group in flight, so it holds two stages at once: three stages are the
 * fewest that let the producer copy ahead, and five do not fit in 227 KiB.
 */
const searchWgmmaWs: RungSearch = {
  space: { STAGES: [3, 4], SWIZZLE: [8] },
  invalid: ({ STAGES, SWIZZLE }) => (STAGES! < 3 || STAGES! > 4 ? "STAGES must be 3 or 4 (a consumer holds two stages while a wgmma group is in flight; five do not fit)" : SWIZZLE! < 1 ? "SWIZZLE must be a number of block rows (at least 1)" : undefined),
  threads: () => 384,
  sharedBytes: (c) => searchWgmma.sharedBytes(c) + 8 * (2 * c.STAGES! + 1),
};

/**
 * The clustered rung (examples/sgemm-wgmma-cluster.ts): stages in two arrays (A's 256×32 tiles, B's 32×128 as
 * four 32×32 boxes, both copied by the tensor memory accelerator), a "full" and an "empty" mbarrier a stage, no
 * epilogue barrier (C goes out from the accumulators).
 */
const searchWgmmaCluster: RungSearch = {
  space: { STAGES: [3, 4], SWIZZLE: [8] },
  invalid: searchWgmmaWs.invalid,
  threads: () => 384,
  sharedBytes: (c) => 4 * c.STAGES! * (256 * 32 + 32 * 128) + 1024 + 8 * 2 * c.STAGES!,
};

/**
 * The stream-k kernel (examples/sgemm-streamk.ts) runs one or two blocks per multiprocessor: its builds use
 * about 227 registers per thread, which the register file (64 Ki per multiprocessor on sm_80 and sm_90)
 * allocates as up to 256, and shared memory (227 KiB, less 1 KiB per block) rarely binds first.
 */
function streamKBlocksPerMultiprocessor(c: Constants): number {
  const shared = 4 * c.BK! * (2 * (c.BM! + 4) + c.STAGES! * c.BN!) + 4;
  return Math.max(1, Math.min(Math.floor(65536 / (c.THREADS! * 256)), Math.floor((227 * 1024) / (shared + 1024))));
}

const blocktilingFile = "examples/sgemm-blocktiling.ts";
const warptilingFile = "examples/sgemm-warptiling.ts";
const multistageFile = "examples/sgemm-multistage.ts";
const ceilGrid = (m: number, n: number, c: Constants): [number, number] => [Math.ceil(n / c.BN!), Math.ceil(m / c.BM!)];
const asyncCopiesOnWebgpu = "its speed comes from cp.async, which WGSL copies synchronously";
const tileMultiples = (c: Constants) => [c.BM!, c.BN!, c.BK!] as const;
// blockIdx.x walks the columns of C in the blocktiling kernels, the rows in Boehm's first kernels.
const tileGrid = (m: number, n: number, c: Constants): [number, number] => [n / c.BN!, m / c.BM!];

/**
 * Clusters of two blocks sharing A's k-tiles by multicast, B by the tensor memory accelerator too, a persistent
 * grid: medians of 97.6 % and 95.6 % of torch.mm TF32 at 4096³ and 8192³ on the H100 over 20 and 19 runs
 * (bench/results/2026-11-27-tf32-cluster-h100-run19.json to -run38). Column tiles in pairs: N a multiple of 256.
 */
const clusterRung: Rung = {
  name: "sgemm-wgmma-cluster",
  file: "examples/sgemm-wgmma-cluster.ts",
  kernel: "sgemmWgmmaCluster",
  precision: "tf32",
  cudaArch: "sm_90",
  multiples: () => [256, 256, 64],
  // Tiles (blocks' worth of work); the launch takes min(tiles, multiprocessors), whole clusters.
  grid: (m, n) => [(n / 128) * (m / 256), 1],
  persistent: true,
  clusterBlocks: 2,
  // Both copies round to TF32, ties to even (as torch.mm's cuBLAS kernel does): the tensor cores would truncate A
  // read from shared memory, and B's rounding in the consumers' registers then changes nothing.
  tensorMapA: { boxRows: 128, boxCols: 32, roundToTf32: true },
  tensorMapB: { boxRows: 32, boxCols: 32, roundToTf32: true },
  search: searchWgmmaCluster,
  notOnWebgpu: "WebGPU has no matrix operations or clusters (TSK3048, TSK3167)",
};

/**
 * The ladder, fastest first: the fixed rule takes the first rung that fits the shape and the device (and the
 * precision: the TF32 rung only when asked for).
 */
export const matmulRungs: readonly Rung[] = [
  ...matmul16Rungs,
  clusterRung,
  {
    // 82.8 % and 79.5 % of torch.mm TF32 at 4096³ and 8192³ on the H100, against 60.8 % and 60.2 % for
    // sgemm-wgmma in the same run (bench/results/2026-11-23-wgmma-ws-h100.json).
    name: "sgemm-wgmma-ws",
    file: "examples/sgemm-wgmma-ws.ts",
    kernel: "sgemmWgmmaWs",
    precision: "tf32",
    cudaArch: "sm_90",
    multiples: () => [256, 128, 64],
    grid: (m, n) => [n / 128, m / 256],
    tensorMapA: { boxRows: 256, boxCols: 32, roundToTf32: true },
    search: searchWgmmaWs,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: "sgemm-wgmma",
    file: "examples/sgemm-wgmma.ts",
    kernel: "sgemmWgmma",
    precision: "tf32",
    truncatesA: true,
    cudaArch: "sm_90",
    multiples: () => [256, 128, 64],
    grid: (m, n) => [n / 128, m / 256],
    search: searchWgmma,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: "sgemm-tensorcore",
    file: "examples/sgemm-tensorcore.ts",
    kernel: "sgemmTensorCore",
    precision: "tf32",
    multiples: tileMultiples,
    grid: tileGrid,
    search: searchTensorCore,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  // Before the multistage rung on CUDA, where at least one wave of its tiles fills the GPU, or where the next rung's
  // blocks would leave a ragged last wave (chooseMatmul).
  {
    name: "sgemm-streamk",
    file: "examples/sgemm-streamk.ts",
    kernel: "sgemmStreamK",
    multiples: (c) => [c.BM!, c.BN!, c.BK!],
    grid: (m, n, c, streamBlocks = 1) => {
      const tiles = (m / c.BM!) * (n / c.BN!);
      const tail = tiles % streamBlocks;
      return [tiles - tail + (tail > 0 ? streamBlocks : 0), 1];
    },
    streamK: { blocksPerMultiprocessor: streamKBlocksPerMultiprocessor },
    notOnWebgpu: "it calls threadFence(), which WebGPU lacks (TSK3050)",
  },
  {
    name: "sgemm-multistage",
    file: multistageFile,
    kernel: "sgemmMultistage",
    builds: { GUARD: 0 },
    multiples: (c) => [c.BM!, c.BN!, c.BK! * c.KSPLIT!],
    grid: tileGrid,
    search: multistageSearch(0),
    notOnWebgpu: asyncCopiesOnWebgpu,
  },
  {
    name: "sgemm-warptiling-double-buffered",
    file: warptilingFile,
    kernel: "sgemmWarptilingDoubleBuffered",
    multiples: tileMultiples,
    grid: tileGrid,
    search: searchDoubleBuffered,
    notOnWebgpu: asyncCopiesOnWebgpu,
  },
  { name: "sgemm-warptiling", file: warptilingFile, kernel: "sgemmWarptiling", multiples: tileMultiples, grid: tileGrid, search: searchWarptiling },
  { name: "sgemm-vectorized", file: "examples/sgemm-vectorized.ts", kernel: "sgemmVectorized", multiples: tileMultiples, grid: tileGrid, search: searchVectorized },
  { name: "sgemm-2d-transposed-a", file: blocktilingFile, kernel: "sgemm2DBlocktilingTransposedA", multiples: tileMultiples, grid: tileGrid, search: search2D },
  { name: "sgemm-2d-blocktiling", file: blocktilingFile, kernel: "sgemm2DBlocktiling", multiples: tileMultiples, grid: tileGrid, search: search2D },
  { name: "sgemm-1d-blocktiling", file: blocktilingFile, kernel: "sgemm1DBlocktiling", multiples: tileMultiples, grid: tileGrid, search: search1D },
  // Any m; n and k multiples of 4, so that rows of B and C start 16-byte aligned.
  {
    name: "sgemm-multistage-guarded",
    file: multistageFile,
    kernel: "sgemmMultistage",
    builds: { GUARD: 1 },
    multiples: () => [1, 4, 4],
    grid: ceilGrid,
    search: multistageSearch(1),
    notOnWebgpu: asyncCopiesOnWebgpu,
  },
  {
    name: "sgemm-warptiling-guarded",
    file: warptilingFile,
    kernel: "sgemmWarptilingGuarded",
    multiples: () => [1, 4, 4],
    grid: ceilGrid,
    search: searchDoubleBuffered,
    notOnWebgpu: asyncCopiesOnWebgpu,
  },
  // Any shape, warp-tiled: element-wise loads through registers.
  {
    name: "sgemm-register-staged",
    file: multistageFile,
    kernel: "sgemmRegisterStaged",
    grid: ceilGrid,
    search: searchRegisterStaged,
    notOnWebgpu: "not yet measured through Dawn (the fixed rule takes sgemm-2d-guarded there)",
  },
  { name: "sgemm-2d-guarded", file: blocktilingFile, kernel: "sgemm2DBlocktilingGuarded", grid: ceilGrid, search: search2D },
  { name: "sgemm-shared", file: "examples/sgemm.ts", kernel: "sgemmSharedMemory", grid: (m, n, c) => [Math.ceil(m / c.BLOCKSIZE!), Math.ceil(n / c.BLOCKSIZE!)] },
  { name: "sgemm-naive", file: "examples/sgemm.ts", kernel: "sgemmNaive", grid: (m, n, c) => [Math.ceil(m / c.BLOCKSIZE!), Math.ceil(n / c.BLOCKSIZE!)] },
];

/** Whether a build of the rung's kernel with these constants is one of the rung's builds. */
export function belongsTo(rung: Rung, c: Constants): boolean {
  // A kernel over an element type (examples/hgemm-mma-guarded.ts) puts the builds of each type in the rung of that dtype.
  const element = (c as Readonly<Record<string, unknown>>).T;
  if (element !== undefined && element !== (rung.dtype ?? "f32")) return false;
  return !rung.builds || Object.entries(rung.builds).every(([name, value]) => c[name] === value);
}

/** Whether a rung with these constants takes an m×n×k product as it is. */
export function shapeFits(rung: Rung, c: Constants, m: number, n: number, k: number): boolean {
  const multiples = rung.multiples?.(c);
  return !multiples || (m % multiples[0] === 0 && n % multiples[1] === 0 && k % multiples[2] === 0);
}

export interface MatmulChoice {
  readonly rung: Rung;
  readonly kernel: KernelHandle;
  readonly constants: Constants;
  /** The stored tuning result this choice came from; absent when the fixed rule chose. */
  readonly tuned?: TunedEntry;
}

/**
 * Below this share of the multiprocessors, a rung's one wave of blocks leaves enough of the GPU idle that another
 * build wins (chooseMatmul's partial waves): 128 blocks of 132 did not (1024³), 96 did (1024 × 768 × 1024).
 */
const partialWaveShare = 0.75;

/**
 * In a partial wave, stream-k needs k to share among its blocks: k of at least this many elements (chooseMatmul).
 * H100 (bench/README.md, "FP32 at the same sizes"): 768 × 256 × 768 74.4 % of torch.mm FP32 against 58.3 for the best
 * register-staged build, 128 × 1024 × 1024 65.8 against 41.8; at k = 512, 512³ 69.1 against 77.7 and 1024 × 512 × 512
 * 77.8 against 97.9.
 */
const streamKLongK = 768;

/**
 * Below this share of the multiprocessors (and where stream-k does not take the product), the register-staged kernel in
 * smaller tiles beats the rung's one short wave: 1024 × 512 × 512 97.9 % against multistage's 64 blocks' 80.4; not
 * 896³, where multistage's 98 blocks ran 90.7 against 69.6.
 */
const smallProductShare = 0.5;

/** The rung and kernel `matmul` would use for a shape on a device. */
export function chooseMatmul(device: Device, library: KernelLibrary, options: MatmulOptions): MatmulChoice {
  const store = options.tuning === false ? undefined : (options.tuning ?? defaultTuningStore());
  const tuned = store && tunedChoice(device, library, options, store);
  if (tuned) return tuned;
  const { m, n, k } = options;
  // FP32 products that do not fill the GPU (on CUDA). Where the rung the rule takes would launch more blocks than there
  // are multiprocessors (a ragged last wave), stream-k splits its few tiles' k across every multiprocessor (where each
  // block gets a k-step). Where it would launch fewer than three quarters of them (a wave that leaves the rest idle),
  // stream-k if there is k to share (k ≥ streamKLongK), else, below half of them, the register-staged kernel in smaller
  // tiles, for more blocks (smallProductChoice). On the H100 (bench/README.md, "FP32 at the same sizes"): 1536³ 118.9 %
  // of torch.mm FP32 against 72.6 % for multistage's 144 blocks of 128×128, 1280³ 120.4 against 104.0 (200 blocks of
  // 64×128), 768³ 93.7 against 90.8 (72 blocks), 512 × 1024 × 1024 89.5 against 69.6 (64 blocks), 256 × 512 × 8192 93.6
  // against 15.2 (16 blocks); 640³ 92.6 (register-staged 64×64) against 75.8 (50 blocks), 256³ 82.1 (register-staged
  // 32×32) against 63.0; at 1024³ multistage's 128 blocks (one wave, 97 % of the multiprocessors) ran 119.0 against
  // stream-k's 105.4.
  const multiprocessors = multiprocessorsOf(device);
  let fewTiles: { readonly choice: MatmulChoice; readonly stepsPerBlock: number } | undefined;
  for (const rung of matmulRungs) {
    if (options.variant && rung.name !== options.variant) continue;
    if (!options.variant && rung.notOnWebgpu && device.backend === "webgpu") continue;
    if (!options.variant && !precisionAllows(options, rung)) continue;
    if (!options.variant && !dtypeAllows(options, rung)) continue;
    if (!options.variant && !archAllows(device, rung)) continue;
    if (!options.variant && rung.ruleTakes && !rung.ruleTakes(m, n, k, multiprocessors)) continue;
    // Stream-k by the rule only on CUDA (the CPU backend runs it when asked for by name; WebGPU lacks its fence),
    // and where its tiles fill the GPU at least once (else see fewTiles above).
    if (!options.variant && rung.streamK && device.backend !== "cuda") continue;
    const fillsGpu = (h: KernelHandle) => !rung.streamK || options.variant !== undefined || rung.grid(m, n, constantsOf(h))[0] >= streamBlocksFor(device, rung, constantsOf(h));
    const fitting = rungBuilds(device, library, rung);
    const kernel = preferEnoughBlocks(rung, fitting.filter((h) => shapeFits(rung, constantsOf(h), m, n, k) && fillsGpu(h)), m, n);
    if (kernel) {
      const choice = { rung, kernel, constants: constantsOf(kernel) };
      // The FP32 rungs after stream-k, on CUDA, by the rule: see "FP32 products that do not fill the GPU" above.
      if (options.variant || device.backend !== "cuda" || rung.persistent || rung.streamK || rung.precision || rung.dtype) return choice;
      const blocks = blockCount(rung, kernel, m, n);
      if (blocks > multiprocessors) return fewTiles && fewTiles.stepsPerBlock >= 1 ? fewTiles.choice : choice;
      if (blocks >= partialWaveShare * multiprocessors) return choice;
      if (fewTiles && k >= streamKLongK) return fewTiles.choice;
      if (blocks >= smallProductShare * multiprocessors) return choice;
      return smallProductChoice(device, library, options, blocks) ?? choice;
    }
    if (!options.variant && rung.streamK && !fewTiles) {
      const few = preferEnoughBlocks(rung, fitting.filter((h) => shapeFits(rung, constantsOf(h), m, n, k)), m, n);
      // Its blocks share the tiles' k-steps (BM×BN×BK each).
      const stepsPerBlock = (h: KernelHandle) => { const c = constantsOf(h); return ((m / c.BM!) * (n / c.BN!) * (k / c.BK!)) / streamBlocksFor(device, rung, c); };
      if (few) fewTiles = { choice: { rung, kernel: few, constants: constantsOf(few) }, stepsPerBlock: stepsPerBlock(few) };
    }
    if (!options.variant) continue;
    if (fitting.length === 0) throw new RangeError(`tskernel: no build of ${rung.name} fits this device's ${device.limits.maxThreadsPerBlock} threads per block`);
    throw new RangeError(`tskernel: ${rung.name} needs m, n, k to be multiples of ${rung.multiples!(constantsOf(fitting[0]!)).join(", ")}; got ${m}, ${n}, ${k}`);
  }
  if (fewTiles) return fewTiles.choice;
  throw new Error("tskernel: no matmul kernel in the library handles this shape (compile examples/sgemm.ts and examples/sgemm-blocktiling.ts)");
}

/**
 * The register-staged kernel for an FP32 product whose rung would fill less than half a wave (`blocks` of them) and
 * that stream-k does not take: its build in the largest tile that fills half a wave, else in the tile with the most
 * blocks, where that makes more blocks than `blocks` and the library holds one that fits. On the H100 (bench/README.md,
 * "FP32 at the same sizes"): 640³ 92.8 % of torch.mm FP32 in 64×64 tiles (100 blocks) against 74.6 in 32×32, 384 × 768 ×
 * 384 88.0 (72 blocks) against 76.5; 512³ 73.7 in 32×32 (256 blocks) against 71.9 in 64×64 (64), 256³ 84.2 (64) against 78.9.
 */
function smallProductChoice(device: Device, library: KernelLibrary, { m, n, k }: MatmulOptions, blocks: number): MatmulChoice | undefined {
  const rung = matmulRungs.find((r) => r.name === "sgemm-register-staged")!;
  const builds = rungBuilds(device, library, rung).filter((h) => shapeFits(rung, constantsOf(h), m, n, k));
  const kernel = preferEnoughBlocks(rung, builds, m, n, smallProductShare * multiprocessorsOf(device));
  return kernel && blockCount(rung, kernel, m, n) > blocks ? { rung, kernel, constants: constantsOf(kernel) } : undefined;
}

/**
 * The fastest stored result for this device and shape class that takes the shape and fits the device, with
 * its kernel: from the library when it holds that specialization, else compiled here (once per process).
 * Results measured on another version of the kernel's source are passed over with a warning.
 */
function tunedChoice(device: Device, library: KernelLibrary, options: MatmulOptions, store: TuningStore): MatmulChoice | undefined {
  const { m, n, k } = options;
  for (const entry of store.entries(deviceKeyOf(device), shapeClass(m, n, k))) {
    if (options.variant && entry.rung !== options.variant) continue;
    const rung = matmulRungs.find((r) => r.name === entry.rung);
    if (rung && !options.variant && (!precisionAllows(options, rung) || !dtypeAllows(options, rung) || !archAllows(device, rung))) continue;
    // (A result whose constants are not one of the rung's builds, such as an unguarded build stored under the
    // guarded rung, would not take the shapes the rung promises.)
    if (!rung?.search || rung.kernel !== entry.kernel || rung.file !== entry.file || !belongsTo(rung, entry.constants)) continue;
    const sourceHash = kernelSourceHash(rung.file);
    if (entry.sourceHash !== sourceHash) {
      store.warn(
        sourceHash === undefined
          ? `cannot read ${rung.file} to check the tuning results for ${rung.name}; they are ignored`
          : `the tuning results for ${rung.name} in ${store.fileFor(deviceKeyOf(device))} were measured on another version of ${rung.file}; ignored (run \`tskernel tune matmul\` again)`,
      );
      continue;
    }
    const c = entry.constants;
    if (!shapeFits(rung, c, m, n, k) || !kernelFits({ block: [rung.search.threads(c), 1, 1], sharedBytes: rung.search.sharedBytes(c) }, device.limits)) continue;
    const built = library.kernels.find((h) => h.description.name === rung.kernel && Object.entries(c).every(([name, value]) => h.description.specialization[name] === value));
    try {
      return { rung, kernel: built ?? compileCandidate(rung, c, targetFor(device.backend)), constants: c, tuned: entry };
    } catch (error) {
      store.warn(`cannot compile the tuned ${rung.name} (${Object.entries(c).map(([name, value]) => `${name}=${value}`).join(" ")}): ${(error as Error).message.split("\n")[0]}; using the fixed rule`);
    }
  }
  return undefined;
}

/**
 * Whether the device has the architecture the rung needs: a CUDA GPU of exactly that `arch` (wgmma's sm_90a has no
 * successor that runs it), or of at least `cudaArchAtLeast`; rungs without a need fit any device.
 */
export function archAllows(device: Device, rung: Rung): boolean {
  const arch = device.backend === "cuda" ? (device as Device & { readonly arch?: string }).arch : undefined;
  if (rung.cudaArch !== undefined && arch !== rung.cudaArch) return false;
  if (rung.cudaArchAtLeast === undefined) return true;
  const capability = /^sm_(\d+)/.exec(arch ?? "");
  return capability !== null && Number(capability[1]) >= rung.cudaArchAtLeast;
}

/** Whether the requested element type is the rung's: the 16-bit rungs for bf16 and f16, the others for f32. */
function dtypeAllows(options: MatmulOptions, rung: Rung): boolean {
  return (rung.dtype ?? "f32") === (options.dtype ?? "f32");
}

/**
 * Whether the requested precision admits the rung: TF32 rungs only for `precision: "tf32"` or "tf32-rounded", and
 * for "tf32-rounded" only those that round both operands (not `truncatesA`).
 */
function precisionAllows(options: MatmulOptions, rung: Rung): boolean {
  if (rung.precision !== "tf32") return true;
  return options.precision === "tf32" || (options.precision === "tf32-rounded" && !rung.truncatesA);
}

/**
 * A grid this small leaves multiprocessors of a large GPU idle (an H100 has 132): below it, smaller tiles
 * that make more blocks win. Measured on the H100 (bench/results/2026-11-22-gpu-h100-run7): at n = 1024 the
 * warp-tiled kernel ran 26.5 TFLOP/s with 64×128 tiles (128 blocks) and 13.4 with 128×128 (64 blocks).
 */
const minimumBlocks = 128;

/** The library's builds of a rung that the device can run, bigger tiles first (BLOCKSIZE 32 before 16, 128×128 before 64×128). */
function rungBuilds(device: Device, library: KernelLibrary, rung: Rung): KernelHandle[] {
  return library.kernels
    .filter((h) => h.description.name === rung.kernel && belongsTo(rung, constantsOf(h)))
    .sort((a, b) => tileArea(b) - tileArea(a) || blockThreads(b) - blockThreads(a))
    .filter((h) => kernelFits(h.description, device.limits));
}

/** The blocks of a build's grid for an m×n product (a stream-k build's tiles, without its stream blocks). */
function blockCount(rung: Rung, build: KernelHandle, m: number, n: number): number {
  return rung.grid(m, n, constantsOf(build)).reduce((a, b) => a * b, 1);
}

/** Of builds sorted largest tile first, the first whose grid has `enough` blocks, else the one with the most. */
function preferEnoughBlocks(rung: Rung, builds: readonly KernelHandle[], m: number, n: number, enough = minimumBlocks): KernelHandle | undefined {
  const blocks = (h: KernelHandle) => blockCount(rung, h, m, n);
  return builds.find((h) => blocks(h) >= enough) ?? [...builds].sort((a, b) => blocks(b) - blocks(a))[0];
}

function tileArea(handle: KernelHandle): number {
  const c = constantsOf(handle);
  return c.BM !== undefined && c.BN !== undefined ? c.BM * c.BN : (c.BLOCKSIZE ?? 0) ** 2;
}

/** A build's compile-time constants (its specialization). */
export function constantsOf(handle: KernelHandle): Constants {
  return handle.description.specialization as Constants;
}

/** The threads of a build's fixed block (0 without one). */
export function blockThreads(handle: KernelHandle): number {
  const block = handle.description.block;
  return block ? block[0] * block[1] * block[2] : 0;
}

/** The multiprocessors of a CUDA device (a persistent rung's grid is at most that); 1 on the other backends. */
export function multiprocessorsOf(device: Device): number {
  return (device as Device & { readonly multiprocessors?: number }).multiprocessors ?? 1;
}

/** How many blocks share the last wave of a stream-k rung's tiles on this device (0 for other rungs). */
export function streamBlocksFor(device: Device, rung: Rung, c: Constants): number {
  return rung.streamK ? rung.streamK.blocksPerMultiprocessor(c) * multiprocessorsOf(device) : 0;
}

/** The lengths of a stream-k launch's scratch buffers: a BM×BN tile of partial sums and an arrival count per block. */
export function streamKScratchLengths(c: Constants, streamBlocks: number): { partials: number; arrivals: number } {
  return { partials: streamBlocks * c.BM! * c.BN!, arrivals: streamBlocks };
}

/**
 * A device's scratch of one kind: an f32 and an i32 buffer of zeros, which every launch that uses them leaves zero,
 * grown as needed (stream-k's partial tiles and arrivals). One set a
 * device and kind: launches that use it must not run at once on two streams.
 */
interface Scratch {
  readonly floats: DeviceBuffer;
  readonly ints: DeviceBuffer;
}

function scratchFor(kind: WeakMap<Device, Scratch>, device: Device, floats: number, ints: number): Scratch {
  const held = kind.get(device);
  if (held && held.floats.length >= floats && held.ints.length >= ints) return held;
  const grown = {
    floats: device.createBuffer(new Float32Array(Math.max(floats, held?.floats.length ?? 0))),
    ints: device.createBuffer(new Int32Array(Math.max(ints, held?.ints.length ?? 0))),
  };
  kind.set(device, grown);
  return grown;
}

const streamKScratch = new WeakMap<Device, Scratch>();

/**
 * The grid and arguments that run a rung's build on an m×n×k product, C = alpha·A·B + beta·C: the eight of
 * every rung, A's tensor map for a rung that takes one (`rungArguments`; `release` frees it once the caller is
 * done with the launch), and for a stream-k rung its scratch buffers (kept per device) and its number of blocks.
 */
export function matmulLaunch(
  device: Device,
  choice: Pick<MatmulChoice, "rung" | "constants">,
  shape: { readonly m: number; readonly n: number; readonly k: number },
  buffers: { readonly A: DeviceBuffer; readonly B: DeviceBuffer; readonly C: DeviceBuffer },
  alpha = 1,
  beta = 0,
): { grid: [number, number]; args: KernelArg[]; release: () => void } {
  const { rung, constants: c } = choice;
  const { m, n, k } = shape;
  const { args, release } = rungArguments(device, rung, [m, n, k, alpha, buffers.A, buffers.B, beta, buffers.C]);
  if (rung.persistent) return { grid: persistentGrid(rung, rung.grid(m, n, c)[0], multiprocessorsOf(device)), args, release };
  if (!rung.streamK) return { grid: rung.grid(m, n, c), args, release };
  const streamBlocks = streamBlocksFor(device, rung, c);
  const lengths = streamKScratchLengths(c, streamBlocks);
  const scratch = scratchFor(streamKScratch, device, lengths.partials, lengths.arrivals);
  return { grid: rung.grid(m, n, c, streamBlocks), args: [...args, scratch.floats, scratch.ints, streamBlocks], release };
}

/**
 * C = alpha·A·B + beta·C on the device, row-major; returns the rung that ran. Without a library, the package's own
 * kernels (package-kernels.ts: the build `npm pack` ships, loaded once per process, no compiler run).
 */
export async function matmul(device: Device, A: DeviceBuffer, B: DeviceBuffer, C: DeviceBuffer, options: MatmulOptions): Promise<MatmulVariantName>;
export async function matmul(device: Device, library: KernelLibrary, A: DeviceBuffer, B: DeviceBuffer, C: DeviceBuffer, options: MatmulOptions): Promise<MatmulVariantName>;
export async function matmul(device: Device, ...rest: [DeviceBuffer, DeviceBuffer, DeviceBuffer, MatmulOptions] | [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, MatmulOptions]): Promise<MatmulVariantName> {
  const [library, A, B, C, options] = rest[0] instanceof KernelLibrary ? (rest as [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, MatmulOptions]) : [packageKernelLibrary(device), ...(rest as [DeviceBuffer, DeviceBuffer, DeviceBuffer, MatmulOptions])];
  const { m, n, k } = options;
  for (const [name, buffer, length] of [["A", A, m * k], ["B", B, k * n], ["C", C, m * n]] as const) {
    if (buffer.length < length) throw new RangeError(`tskernel: matmul: ${name} has ${buffer.length} elements, the shape needs ${length}`);
  }
  // fp8 has a function of its own, with torch._scaled_mm's layout of B (scaled-matmul.ts).
  for (const [name, buffer] of [["A", A], ["B", B]] as const) {
    if (buffer.elementType === "e4m3" || buffer.elementType === "e5m2") throw new TypeError(`tskernel: matmul: ${name} holds ${buffer.elementType}; matmul multiplies f32, bf16 and f16 (for e4m3 use scaledMatmul, which takes B as Bᵀ, n×k)`);
  }
  // The element type: as asked, else A's; every operand must hold it.
  const dtype: MatmulDtype = options.dtype ?? (A.elementType === "bf16" ? "bf16" : A.elementType === "f16" ? "f16" : "f32");
  for (const [name, buffer] of [["A", A], ["B", B], ["C", C]] as const) {
    if (buffer.elementType !== dtype) throw new TypeError(`tskernel: matmul: ${name} holds ${buffer.elementType}, but the product is in ${dtype} (A, B and C must all be ${dtype})`);
  }
  if (dtype !== "f32" && (options.precision === "tf32" || options.precision === "tf32-rounded")) throw new TypeError(`tskernel: matmul: precision "${options.precision}" is for f32 operands; ${dtype} inputs are multiplied as they are`);
  const choice = chooseMatmul(device, library, { ...options, dtype });
  const { grid, args, release } = matmulLaunch(device, choice, options, { A, B, C }, options.alpha ?? 1, options.beta ?? 0);
  try {
    await device.launch(choice.kernel, { grid, args });
  } finally {
    release();
  }
  return choice.rung.name as MatmulVariantName;
}

/**
 * A rung's launch arguments from the matmul ones (m, n, k, alpha, A, B, beta, C): those, and A's tensor map
 * for a rung that takes one (made now, freed by `release` once the launch is done).
 */
export function rungArguments(device: Device, rung: Rung, base: readonly [number, number, number, number, DeviceBuffer, DeviceBuffer, number, DeviceBuffer]): { args: (number | DeviceBuffer)[]; release: () => void } {
  if (!rung.tensorMapA) return { args: [...base], release: () => {} };
  const [m, n, k, , A, B, , C] = base;
  const maps = [createTensorMap(device, A, { rows: m, cols: k, ...rung.tensorMapA })];
  // The clustered TF32 rung copies B by the tensor memory accelerator too; the 16-bit rungs also store C out.
  if (rung.tensorMapB) maps.push(createTensorMap(device, B, { rows: k, cols: n, ...rung.tensorMapB }));
  if (rung.tensorMapsBC) maps.push(createTensorMap(device, B, { rows: k, cols: n, ...rung.tensorMapsBC.B }), createTensorMap(device, C, { rows: m, cols: n, ...rung.tensorMapsBC.C }));
  return { args: [...base, ...maps], release: () => maps.forEach((map) => device.free(map)) };
}

