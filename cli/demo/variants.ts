/**
 * The seed matmul ladder as the demo runs it: each variant names its example kernel and says how to launch
 * it for an n×n product. Kernels that only handle multiples of their tile are given padded matrices, as the
 * articles do (zeros in the padding add nothing); the row-in-shared-memory kernel has a largest n.
 */

import type { BackendName, KernelArg, Device, DeviceBuffer, Dim3 } from "../../runtime/device.ts";
import { createTensorMap } from "../../runtime/tensor-map.ts";
import { targetsLeaveOut } from "../../runtime/launch-check.ts";
import { persistentGrid } from "../../runtime/matmul/rung.ts";
import type { KernelLibrary } from "../../runtime/library.ts";

export interface VariantBuffers {
  readonly A: DeviceBuffer;
  readonly B: DeviceBuffer;
  readonly C: DeviceBuffer;
  /** The device that holds them: a rung that reads A through a tensor map makes it there. */
  readonly device: Device;
}

export interface MatmulVariant {
  readonly id: string;
  readonly file: string;
  readonly kernel: string;
  /**
   * The specializations to try, best first: the demo runs the first whose block fits the device (the
   * sgemm kernels' 32×32 blocks need 1024 threads, more than WebGPU guarantees).
   */
  readonly specializations?: readonly Readonly<Record<string, number>>[];
  /** The kernel needs n to be a multiple of this: the demo pads. */
  readonly multipleOf?: number;
  /** The kernel cannot handle a larger n: the demo skips it with the reason. */
  readonly maxN?: number;
  /** C = alpha·A·B + beta·C (the demo uses alpha = 0.75, beta = 0.5); otherwise C = A·B. */
  readonly gemm?: boolean;
  /** The launch; `release`, where given, frees what it made (a tensor map) once the caller is done with it. */
  launch(n: number, buffers: VariantBuffers, alpha: number, beta: number, constants: Readonly<Record<string, number>>): { grid: Dim3; block?: Dim3; args: KernelArg[]; release?: () => void };
  /** "tf32": the variant rounds its inputs to TF32 (tensor cores); its results are held to TF32's tolerance. */
  readonly precision?: "tf32";
  /**
   * The element type of A, B and C for the 16-bit rungs (bf16, f16): the bench gives them the 16-bit roundings
   * of its inputs, compares them with a float64 product of those and holds them to matmulTolerance16. Absent: f32.
   */
  readonly dtype?: "bf16" | "f16";
}

/** Why a variant cannot take an n×n product as it is (without padding), or undefined when it can. */
export function unsupportedSize(variant: MatmulVariant, n: number): string | undefined {
  if (variant.maxN !== undefined && n > variant.maxN) return `n > ${variant.maxN}`;
  if (variant.multipleOf && n % variant.multipleOf !== 0) return `n is not a multiple of ${variant.multipleOf}`;
  return undefined;
}

const blocks = (n: number, tile: number) => Math.ceil(n / tile);
const sgemmBlockSizes = [{ BLOCKSIZE: 32 }, { BLOCKSIZE: 16 }];
/**
 * A GEMM rung whose BM×BN block tiles are compile-time constants: the grid follows them (blockIdx.x along
 * the columns of C). `multipleOf` (default: the largest tile, 128) is what the demo pads n to.
 */
function blockTiled(id: string, file: string, kernel: string, specializations: readonly Readonly<Record<string, number>>[], multipleOf = 128): MatmulVariant {
  return {
    id,
    file,
    kernel,
    specializations,
    multipleOf,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta, { BM, BN }) => ({ grid: [Math.ceil(n / BN!), Math.ceil(n / BM!)], args: [n, n, n, alpha, A, B, beta, C] }),
  };
}

// Smaller tiles for devices whose workgroup memory is too small for the defaults (WebGPU's portable 16 KB).
const smallVectorized = { BM: 64, BN: 64, BK: 8, TM: 8, TN: 4 };
const smallWarptiling = { BM: 64, BN: 64, BK: 8, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 };
const smallMultistage = { BM: 64, BN: 64, BK: 8, KSPLIT: 1, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128, GUARD: 1 };
const smallRegisterStaged = { BM: 64, BN: 64, BK: 8, KSPLIT: 1, WM: 32, WN: 32, WNITER: 2, TM: 4, TN: 4, THREADS: 128 };
const multistageFile = "examples/sgemm-multistage.ts";

export const seedVariants: readonly MatmulVariant[] = [
  {
    id: "naive",
    file: "examples/matmul-naive.ts",
    kernel: "matmulNaive",
    launch: (n, { A, B, C }) => ({ grid: [blocks(n, 16), blocks(n, 16)], args: [C, A, B, n, n, n, n] }),
  },
  {
    id: "pmpp",
    file: "examples/matmul-pmpp.ts",
    kernel: "matrixMulKernel",
    launch: (n, { A, B, C }) => ({ grid: [blocks(n, 16), blocks(n, 16)], args: [A, B, C, n] }),
  },
  {
    id: "kahan",
    file: "examples/matmul-kahan.ts",
    kernel: "matmulKahan",
    launch: (n, { A, B, C }) => ({ grid: [blocks(n, 16), blocks(n, 16)], args: [C, A, B, n, n, n, n] }),
  },
  {
    id: "row-shared",
    file: "examples/matmul-row-shared.ts",
    kernel: "matmulRowShared",
    maxN: 2048,
    launch: (n, { A, B, C }) => ({ grid: [n], args: [C, A, B, n, n, n, n] }),
  },
  {
    id: "tiled-16",
    file: "examples/matmul-tiled.ts",
    kernel: "matmulTiled",
    launch: (n, { A, B, C }) => ({ grid: [blocks(n, 16), blocks(n, 16)], args: [C, A, B, n, n, n] }),
  },
  {
    id: "tiled-16-padded",
    file: "examples/matmul-tiled-padded.ts",
    kernel: "matmulTiledPadded",
    multipleOf: 16,
    launch: (n, { A, B, C }) => ({ grid: [n / 16, n / 16], args: [C, A, B, n] }),
  },
  {
    id: "tiled-2x2",
    file: "examples/matmul-tiled-2x2.ts",
    kernel: "matmulTiled2x2",
    multipleOf: 2,
    launch: (n, { A, B, C }) => ({ grid: [n / 2, n / 2], args: [A, B, C, n] }),
  },
  {
    id: "cuda-samples-16",
    file: "examples/matmul-cuda-samples.ts",
    kernel: "matrixMulCuda",
    specializations: [{ BLOCK_SIZE: 16 }],
    multipleOf: 16,
    launch: (n, { A, B, C }) => ({ grid: [n / 16, n / 16], args: [C, A, B, n, n] }),
  },
  {
    id: "cuda-samples-32",
    file: "examples/matmul-cuda-samples.ts",
    kernel: "matrixMulCuda",
    specializations: [{ BLOCK_SIZE: 32 }],
    multipleOf: 32,
    launch: (n, { A, B, C }) => ({ grid: [n / 32, n / 32], args: [C, A, B, n, n] }),
  },
  {
    id: "sgemm-naive",
    file: "examples/sgemm.ts",
    kernel: "sgemmNaive",
    specializations: sgemmBlockSizes,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta, { BLOCKSIZE }) => ({ grid: [blocks(n, BLOCKSIZE!), blocks(n, BLOCKSIZE!)], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  {
    id: "sgemm-coalesce",
    file: "examples/sgemm.ts",
    kernel: "sgemmCoalesce",
    specializations: sgemmBlockSizes,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta, { BLOCKSIZE }) => ({ grid: [blocks(n, BLOCKSIZE!), blocks(n, BLOCKSIZE!)], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  {
    id: "sgemm-shared",
    file: "examples/sgemm.ts",
    kernel: "sgemmSharedMemory",
    specializations: sgemmBlockSizes,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta, { BLOCKSIZE }) => ({ grid: [blocks(n, BLOCKSIZE!), blocks(n, BLOCKSIZE!)], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  {
    id: "sgemm-1d-blocktiling",
    file: "examples/sgemm-blocktiling.ts",
    kernel: "sgemm1DBlocktiling",
    multipleOf: 64,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta) => ({ grid: [n / 64, n / 64], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  {
    id: "sgemm-2d-blocktiling",
    file: "examples/sgemm-blocktiling.ts",
    kernel: "sgemm2DBlocktiling",
    multipleOf: 128,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta) => ({ grid: [n / 128, n / 128], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  {
    id: "sgemm-2d-transposed-a",
    file: "examples/sgemm-blocktiling.ts",
    kernel: "sgemm2DBlocktilingTransposedA",
    multipleOf: 128,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta) => ({ grid: [n / 128, n / 128], args: [n, n, n, alpha, A, B, beta, C] }),
  },
  blockTiled("sgemm-vectorized", "examples/sgemm-vectorized.ts", "sgemmVectorized", [{ PAD: 0 }, { ...smallVectorized, PAD: 0 }]),
  // The same kernel with AsT's rows padded by 4 floats: its transposing stores are free of bank conflicts.
  blockTiled("sgemm-vectorized-padded", "examples/sgemm-vectorized.ts", "sgemmVectorized", [{ PAD: 4 }, { ...smallVectorized, PAD: 4 }]),
  blockTiled("sgemm-warptiling", "examples/sgemm-warptiling.ts", "sgemmWarptiling", [{}, smallWarptiling]),
  blockTiled("sgemm-warptiling-double-buffered", "examples/sgemm-warptiling.ts", "sgemmWarptilingDoubleBuffered", [{}, smallWarptiling]),
  // Any size whose rows stay 16-byte aligned; the grid covers the ragged edge.
  blockTiled("sgemm-warptiling-guarded", "examples/sgemm-warptiling.ts", "sgemmWarptilingGuarded", [{}, smallWarptiling], 4),
  // Both tiles through cp.async stages: the aligned build, and the guarded one with two k-groups per tile.
  blockTiled("sgemm-multistage", multistageFile, "sgemmMultistage", [{}, smallMultistage]),
  blockTiled("sgemm-multistage-guarded", multistageFile, "sgemmMultistage", [{ GUARD: 1, KSPLIT: 2 }, smallMultistage], 4),
  // Any size at all (no multiple of 4 needed): element-wise loads through registers, two k-groups per tile.
  blockTiled("sgemm-register-staged", multistageFile, "sgemmRegisterStaged", [{}, smallRegisterStaged], 1),
  {
    id: "sgemm-2d-guarded",
    file: "examples/sgemm-blocktiling.ts",
    kernel: "sgemm2DBlocktilingGuarded",
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta) => ({ grid: [Math.ceil(n / 128), Math.ceil(n / 128)], args: [n, n, n, alpha, A, B, beta, C] }),
  },
];

/**
 * A persistent grid over an n×n product's 256×128 tiles, in whole clusters of `clusterBlocks`: at most one block a
 * multiprocessor of a device that says how many it has (CUDA), one a tile elsewhere.
 */
function persistentTiles(n: number, device: Device, clusterBlocks?: number): Dim3 {
  const tiles = (n / 128) * (n / 256);
  return persistentGrid({ clusterBlocks }, tiles, (device as Device & { readonly multiprocessors?: number }).multiprocessors ?? tiles);
}

/**
 * The clustered TF32 rung's launch: A's map in half-height boxes (128 rows of 32: each block of a cluster copies
 * half of A's k-tile for both), B's in 32 × 32 boxes, both rounding to TF32 as they copy (as matmul() makes them);
 * a persistent grid of whole clusters of two. `release` frees the maps.
 */
function clusterLaunch(n: number, { A, B, C, device }: VariantBuffers, alpha: number, beta: number) {
  const maps = [createTensorMap(device, A, { rows: n, cols: n, boxRows: 128, boxCols: 32, roundToTf32: true }), createTensorMap(device, B, { rows: n, cols: n, boxRows: 32, boxCols: 32, roundToTf32: true })];
  return {
    grid: persistentTiles(n, device, 2),
    args: [n, n, n, alpha, A, B, beta, C, ...maps],
    release: () => maps.forEach((buffer) => device.free(buffer)),
  };
}

/**
 * The tensor-core rungs (TF32 inputs, f32 accumulation), benchmarked beside the seed ladder where a backend has
 * matrix operations (CUDA, and the CPU's emulation: their kernels' targets are cuda and js); not in the demo,
 * whose ladder is FP32 throughout. The warpgroup rungs (wgmma: in clusters, with and without warp specialization) run on
 * sm_90 GPUs only (the bench notes it on others) and need n to be a multiple of their 256-row tile, so the CPU's
 * default sizes (128, 256) run them once, at 256, as they run the warp rung at 128 and 256.
 */
export const tensorCoreVariants: readonly MatmulVariant[] = [
  {
    // The clustered rung (what matmul(…, { precision: "tf32" }) runs on sm_90 where n is a multiple of 256).
    id: "sgemm-wgmma-cluster",
    file: "examples/sgemm-wgmma-cluster.ts",
    kernel: "sgemmWgmmaCluster",
    multipleOf: 256,
    gemm: true,
    launch: (n, buffers, alpha, beta) => clusterLaunch(n, buffers, alpha, beta),
    precision: "tf32",
  },
  {
    // The warp-specialized warpgroup rung: the same tiles, A read through a tensor map in the box the
    // example names (256 rows of 32), which each launch makes and releases. (The rung table in
    // runtime/matmul/matmul.ts says the same; this file is bundled for the browser, so it imports no compiler.)
    id: "sgemm-wgmma-ws",
    file: "examples/sgemm-wgmma-ws.ts",
    kernel: "sgemmWgmmaWs",
    multipleOf: 256,
    gemm: true,
    launch: (n, { A, B, C, device }, alpha, beta) => {
      const mapA = createTensorMap(device, A, { rows: n, cols: n, boxRows: 256, boxCols: 32, roundToTf32: true });
      return { grid: [n / 128, n / 256], args: [n, n, n, alpha, A, B, beta, C, mapA], release: () => device.free(mapA) };
    },
    precision: "tf32",
  },
  {
    id: "sgemm-wgmma",
    file: "examples/sgemm-wgmma.ts",
    kernel: "sgemmWgmma",
    // Four stages, then three (less shared memory) for a device that does not have room for four.
    specializations: [{}, { STAGES: 3 }],
    // M a multiple of 256, N of 128, K of 64: 256 for a square product.
    multipleOf: 256,
    gemm: true,
    launch: (n, { A, B, C }, alpha, beta) => ({ grid: [n / 128, n / 256], args: [n, n, n, alpha, A, B, beta, C] }),
    precision: "tf32",
  },
  {
    ...blockTiled("sgemm-tensorcore", "examples/sgemm-tensorcore.ts", "sgemmTensorCore", [{}, { BM: 64, BN: 64, BK: 16, WM: 32, WN: 32, STAGES: 2, THREADS: 128, SWIZZLE: 0 }]),
    precision: "tf32",
  },
];

/**
 * The 16-bit rungs (bf16 and f16 inputs and output, f32 accumulation: what `matmul(…, { dtype })` runs), benchmarked
 * beside cuBLAS's GEMM in the same type on CUDA. The warp-specialized wgmma rung needs sm_90 and n a multiple of
 * 256 (its 128×256 tiles and 64-deep stages); each launch makes the three tensor maps (A in boxes of 128 × 64, B
 * and C in 64 × 64, as the rung table in runtime/matmul/matmul16.ts says: this file is bundled for the browser,
 * so it imports no compiler) and frees them after timing; its grid is persistent, one block a multiprocessor at
 * most. The tiled rung takes any n, on CUDA and the CPU.
 */
export const halfVariants: readonly MatmulVariant[] = (["bf16", "f16"] as const).flatMap((dtype): MatmulVariant[] => [
  {
    id: dtype === "bf16" ? "hgemm-wgmma-ws" : "hgemm-wgmma-ws-f16",
    file: "examples/hgemm-wgmma-ws.ts",
    kernel: dtype === "bf16" ? "hgemmWgmmaWs" : "hgemmWgmmaWsF16",
    multipleOf: 256,
    gemm: true,
    dtype,
    launch: (n, { A, B, C, device }, alpha, beta) => {
      const maps = [
        createTensorMap(device, A, { rows: n, cols: n, boxRows: 128, boxCols: 64 }),
        createTensorMap(device, B, { rows: n, cols: n, boxRows: 64, boxCols: 64 }),
        createTensorMap(device, C, { rows: n, cols: n, boxRows: 64, boxCols: 64 }),
      ];
      return { grid: persistentTiles(n, device), args: [n, n, n, alpha, A, B, beta, C, ...maps], release: () => maps.forEach((map) => device.free(map)) };
    },
  },
  {
    id: dtype === "bf16" ? "hgemm-tiled" : "hgemm-tiled-f16",
    file: "examples/hgemm-tiled.ts",
    kernel: dtype === "bf16" ? "hgemmTiledBf16" : "hgemmTiledF16",
    gemm: true,
    dtype,
    launch: (n, { A, B, C }, alpha, beta, { TILE }) => ({ grid: [blocks(n, TILE!), blocks(n, TILE!)], args: [n, n, n, alpha, A, B, beta, C] }),
  },
]);

/**
 * Every variant's example file: what the seed library compiles for any backend. A kernel whose `targets`
 * option leaves out the backend's target (the tensor-core rungs: WebGPU has no matrix operations) is skipped
 * by the compiler, and the library still describes it (benchVariants).
 */
export const variantFiles: readonly string[] = [...new Set([...seedVariants, ...tensorCoreVariants, ...halfVariants].map((v) => v.file))];

/**
 * The variants `tskernel bench matmul` runs on a backend: the seed ladder and the rungs the backend adds,
 * less those whose kernel's `targets` leave out the backend's target, read from the kernels as compiled into
 * `library` (the example file is the one place it is written).
 */
export function benchVariants(library: KernelLibrary, backend: BackendName): readonly MatmulVariant[] {
  return [...seedVariants, ...tensorCoreVariants, ...halfVariants].filter((v) => {
    const kernel = library.kernels.find((k) => k.description.name === v.kernel);
    return !kernel || !targetsLeaveOut(kernel.description, backend);
  });
}
