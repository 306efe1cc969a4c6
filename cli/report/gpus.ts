/**
 * What one streaming multiprocessor of each CUDA architecture holds, and the occupancy a kernel reaches on it:
 * the arithmetic of NVIDIA's occupancy calculator (the CUDA programming guide's "Compute Capabilities" table
 * and the calculator's allocation granularities). A block's warps, registers (allocated per warp, in units of
 * 256) and shared memory (in units of 128 or 256 bytes, plus the 1 KiB the driver keeps per block from
 * sm_80 on) each bound how many blocks fit on a multiprocessor; the smallest bound is the occupancy's, and
 * the function's largest launchable block is what its registers allow a block to have.
 */

export interface GpuArchitecture {
  readonly name: string;
  /** Examples of GPUs of this architecture, for the report's heading. */
  readonly examples: string;
  readonly maxWarpsPerSM: number;
  readonly maxBlocksPerSM: number;
  readonly registersPerSM: number;
  readonly maxRegistersPerBlock: number;
  readonly registerAllocationUnit: number;
  /** Shared memory per SM at the largest carveout, and what one block may have (opt-in above 48 KiB). */
  readonly sharedBytesPerSM: number;
  readonly maxSharedBytesPerBlock: number;
  readonly sharedAllocationUnit: number;
  /** Shared memory the driver reserves for each block (sm_80 and later). */
  readonly reservedSharedBytesPerBlock: number;
}

const KiB = 1024;

export const gpuArchitectures: readonly GpuArchitecture[] = [
  { name: "sm_70", examples: "V100", maxWarpsPerSM: 64, maxBlocksPerSM: 32, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 96 * KiB, maxSharedBytesPerBlock: 96 * KiB, sharedAllocationUnit: 256, reservedSharedBytesPerBlock: 0 },
  { name: "sm_75", examples: "T4, RTX 20", maxWarpsPerSM: 32, maxBlocksPerSM: 16, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 64 * KiB, maxSharedBytesPerBlock: 64 * KiB, sharedAllocationUnit: 256, reservedSharedBytesPerBlock: 0 },
  { name: "sm_80", examples: "A100", maxWarpsPerSM: 64, maxBlocksPerSM: 32, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 164 * KiB, maxSharedBytesPerBlock: 163 * KiB, sharedAllocationUnit: 128, reservedSharedBytesPerBlock: KiB },
  { name: "sm_86", examples: "RTX 30, A10", maxWarpsPerSM: 48, maxBlocksPerSM: 16, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 100 * KiB, maxSharedBytesPerBlock: 99 * KiB, sharedAllocationUnit: 128, reservedSharedBytesPerBlock: KiB },
  { name: "sm_89", examples: "RTX 40, L4, L40", maxWarpsPerSM: 48, maxBlocksPerSM: 24, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 100 * KiB, maxSharedBytesPerBlock: 99 * KiB, sharedAllocationUnit: 128, reservedSharedBytesPerBlock: KiB },
  { name: "sm_90", examples: "H100, H200", maxWarpsPerSM: 64, maxBlocksPerSM: 32, registersPerSM: 65536, maxRegistersPerBlock: 65536, registerAllocationUnit: 256, sharedBytesPerSM: 228 * KiB, maxSharedBytesPerBlock: 227 * KiB, sharedAllocationUnit: 128, reservedSharedBytesPerBlock: KiB },
];

export function gpuArchitecture(name: string): GpuArchitecture | undefined {
  return gpuArchitectures.find((gpu) => gpu.name === name.replace(/a$/, ""));
}

const warpSize = 32;
const maxThreadsPerBlock = 1024;

/** What a compiled function needs of a multiprocessor. */
export interface FunctionResources {
  readonly registers: number;
  readonly staticSharedBytes: number;
  readonly dynamicSharedBytes: number;
}

export type OccupancyLimit = "warps" | "blocks" | "registers" | "shared memory";

export interface Occupancy {
  readonly threads: number;
  readonly blocksPerSM: number;
  readonly warpsPerSM: number;
  /** Active warps over the most the multiprocessor can hold, from 0 to 1. */
  readonly occupancy: number;
  /** The limits that allow no more blocks (several when they tie). */
  readonly limitedBy: readonly OccupancyLimit[];
}

/** Registers one warp takes: a thread's registers times 32, rounded up to the allocation unit. */
function registersPerWarp(gpu: GpuArchitecture, registers: number): number {
  return Math.ceil((registers * warpSize) / gpu.registerAllocationUnit) * gpu.registerAllocationUnit;
}

/** The largest block the function can be launched with: 1024 threads, or fewer where its registers run out. */
export function largestBlock(gpu: GpuArchitecture, registers: number): number {
  if (registers === 0) return maxThreadsPerBlock;
  const warps = Math.floor(gpu.maxRegistersPerBlock / registersPerWarp(gpu, registers));
  return Math.min(maxThreadsPerBlock, warps * warpSize);
}

/** The occupancy of blocks of `threads` threads; 0 blocks when such a block cannot run at all. */
export function occupancy(gpu: GpuArchitecture, resources: FunctionResources, threads: number): Occupancy {
  const warpsPerBlock = Math.ceil(threads / warpSize);
  const shared = resources.staticSharedBytes + resources.dynamicSharedBytes;
  const limits: [OccupancyLimit, number][] = [
    ["warps", Math.floor(gpu.maxWarpsPerSM / warpsPerBlock)],
    ["blocks", gpu.maxBlocksPerSM],
  ];
  if (resources.registers > 0) {
    const perWarp = registersPerWarp(gpu, resources.registers);
    const fits = perWarp * warpsPerBlock <= gpu.maxRegistersPerBlock;
    limits.push(["registers", fits ? Math.floor(Math.floor(gpu.registersPerSM / perWarp) / warpsPerBlock) : 0]);
  }
  if (shared > 0) {
    const perBlock = Math.ceil((shared + gpu.reservedSharedBytesPerBlock) / gpu.sharedAllocationUnit) * gpu.sharedAllocationUnit;
    limits.push(["shared memory", shared > gpu.maxSharedBytesPerBlock ? 0 : Math.floor(gpu.sharedBytesPerSM / perBlock)]);
  }
  const blocksPerSM = Math.min(...limits.map(([, n]) => n));
  const warpsPerSM = blocksPerSM * warpsPerBlock;
  return { threads, blocksPerSM, warpsPerSM, occupancy: warpsPerSM / gpu.maxWarpsPerSM, limitedBy: limits.filter(([, n]) => n === blocksPerSM).map(([limit]) => limit) };
}

/**
 * For a block chosen at launch: the block (a whole number of warps, up to the largest the function allows)
 * with the highest occupancy, the largest of those that tie, as CUDA's cudaOccupancyMaxPotentialBlockSize
 * picks it.
 */
export function bestBlock(gpu: GpuArchitecture, resources: FunctionResources): Occupancy {
  let best: Occupancy | undefined;
  for (let threads = largestBlock(gpu, resources.registers); threads >= warpSize; threads -= warpSize) {
    const candidate = occupancy(gpu, resources, threads);
    if (!best || candidate.occupancy > best.occupancy) best = candidate;
  }
  return best ?? occupancy(gpu, resources, warpSize);
}
