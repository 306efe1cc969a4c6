/**
 * What a rung of the matmul ladder is, for the rung table (matmul.ts), the tuner's candidates
 * (candidates.ts) and the tuning store (tune-store.ts): its kernel, the shapes it takes, its grid, and the
 * search space of its compile-time constants. Types only, so those files share them without importing each
 * other in a circle.
 */

/** Values of a kernel's compile-time constants, by name. */
export type Constants = Readonly<Record<string, number>>;

/** What the tuner may vary in a rung, and the rules that keep a setting correct and within a device. */
export interface RungSearch {
  /** Values to try for each constant; the candidates are their product, less the settings `invalid` rejects. */
  readonly space: Readonly<Record<string, readonly number[]>>;
  /** Why the kernel would compute garbage (or run out of its tiles) with these constants; undefined if it would not. */
  invalid(c: Constants): string | undefined;
  /** Threads per block with these constants (the kernel's block formula). */
  threads(c: Constants): number;
  /** Bytes of shared memory the kernel declares with these constants. */
  sharedBytes(c: Constants): number;
}

export interface Rung {
  readonly name: string;
  /** The kernel's source file, relative to the package root (or absolute). */
  readonly file: string;
  readonly kernel: string;
  /**
   * The builds of the kernel that belong to this rung: those whose constants have these values (two rungs
   * may run one kernel, e.g. with and without bounds checks). Absent: every build of the kernel.
   */
  readonly builds?: Constants;
  /** The multiples of m, n and k the kernel needs with these constants; absent: any shape. */
  multiples?(c: Constants): readonly [number, number, number];
  /**
   * The grid for a shape, given the specialization's constants (and for a stream-k rung the number of blocks
   * that share the last wave, `streamBlocks`).
   */
  grid(m: number, n: number, c: Constants, streamBlocks?: number): [number, number];
  /**
   * Stream-k rungs (examples/sgemm-streamk.ts): after C the kernel takes two scratch buffers, `partials` (f32,
   * streamBlocks·BM·BN) and `arrivals` (i32, streamBlocks), zero before the first launch and left zero by every
   * launch, and `streamBlocks`, the blocks that run at once: the GPU's multiprocessors times this many.
   */
  readonly streamK?: { blocksPerMultiprocessor(c: Constants): number };
  /** Absent: the rung is not tuned (its library builds are used as they are). */
  readonly search?: RungSearch;
  /**
   * Why the fixed rule passes over this rung on WebGPU (it still runs there when asked for by name). The
   * rungs whose speed comes from asynchronous copies (cp.async), which WGSL does not have: there they are
   * plain copies, and on the H100 through Dawn the double-buffered rung ran at 24.6 TFLOP/s against 33.7 for
   * plain warp tiling (run 9). And rungs not yet measured through Dawn.
   */
  readonly notOnWebgpu?: string;
  /**
   * "tf32" for rungs on tensor cores, which round A and B to TF32: `matmul()` takes them only when asked for
   * `precision: "tf32"` (or by name). Absent: FP32 throughout.
   */
  readonly precision?: "tf32";
  /**
   * The CUDA architecture the rung's kernel needs (wgmma: "sm_90"): the fixed rule and the tuner pass over it
   * on other devices, the CPU backend included (its emulation runs it when asked for by name).
   */
  readonly cudaArch?: string;
  /**
   * Where the fixed rule takes the rung (beyond its shape, architecture and type): absent, wherever those allow.
   * By name (`variant`) it runs wherever its shape fits. `multiprocessors` is the device's (1 off CUDA).
   */
  readonly ruleTakes?: (m: number, n: number, k: number, multiprocessors: number) => boolean;
  /**
   * The lowest CUDA compute capability (times ten) the rung's kernel runs on, for kernels that later GPUs run too
   * (mma.sync m16n8k16: 80): the fixed rule passes over it on older GPUs and on the other backends.
   */
  readonly cudaArchAtLeast?: number;
  /**
   * The kernel takes A's tensor map after C (copyTile, runtime/tensor-map.ts): A as rows = m, cols = k, in
   * boxes of this size. Whoever launches the rung makes the map (`rungArguments`).
   */
  readonly tensorMapA?: TensorMapBox;
  /** The kernel takes B's tensor map too, after A's (B as rows = k, cols = n), in boxes of this size. */
  readonly tensorMapB?: TensorMapBox;
  /**
   * The element type of A, B and C for the 16-bit rungs (matmul16.ts): `matmul()` takes them only for that
   * `dtype`, and the f32 rungs only for f32. Absent: f32.
   */
  readonly dtype?: "bf16" | "f16";
  /**
   * The kernel takes the tensor maps of B and C too, after A's (B as rows = k, cols = n; C as rows = m, cols =
   * n), in boxes of these sizes.
   */
  readonly tensorMapsBC?: { readonly B: TensorMapBox; readonly C: TensorMapBox };
  /**
   * The tensor cores read A truncated to TF32 (from shared memory, filled by ordinary copies: examples/sgemm-wgmma.ts),
   * not rounded: `precision: "tf32-rounded"` passes over the rung.
   */
  readonly truncatesA?: true;
  /** A persistent kernel: its grid is at most one block a multiprocessor, each block walking tiles. */
  readonly persistent?: true;
  /**
   * The blocks of the kernel's clusters (along x): a persistent rung's grid is then a multiple of it (the
   * runtime refuses other grids).
   */
  readonly clusterBlocks?: number;
}

export interface TensorMapBox {
  readonly boxRows: number;
  readonly boxCols: number;
  /** The copy rounds each f32 to TF32 (createTensorMap's `roundToTf32`): A's and B's maps of the TF32 rungs. */
  readonly roundToTf32?: true;
}

/**
 * A persistent rung's grid: its blocks walk the tiles (`tiles`, the rung's grid), so there are no more of them than
 * the GPU runs at once (`multiprocessors`), in whole clusters (the rung's `clusterBlocks`), at least one cluster.
 * matmul(), scaledMatmul(), the torch plan and the bench's variants (which import nothing heavier than this file).
 */
export function persistentGrid(rung: Pick<Rung, "clusterBlocks">, tiles: number, multiprocessors: number): [number, number] {
  const cluster = rung.clusterBlocks ?? 1;
  const blocks = Math.min(tiles, multiprocessors);
  return [Math.max(cluster, blocks - (blocks % cluster)), 1];
}
