/**
 * The matmul library: `matmul(device, library, A, B, C, { m, n, k, alpha, beta, variant? })` computes the
 * row-major GEMM C = αAB + βC (A m×k, B k×n, C m×n) for any sizes with one of the ladder's kernels. Without
 * `variant` it takes the fastest rung that handles the shape, by the H100 measurements in bench/results/:
 * 2-D blocktiling with A transposed in shared memory when m and n are multiples of 128 and k of 8, 1-D blocktiling for multiples of 64 and 8,
 * otherwise the guarded 2-D kernel, which takes any sizes. (The tuner of issue 6 will replace
 * this rule with measured choices per device and shape.)
 */

import type { Device, DeviceBuffer } from "../device.ts";
import type { KernelHandle, KernelLibrary } from "../library.ts";
import { blockFits } from "../launch-check.ts";

export type MatmulVariantName = "sgemm-2d-transposed-a" | "sgemm-2d-guarded" | "sgemm-2d-blocktiling" | "sgemm-1d-blocktiling" | "sgemm-shared" | "sgemm-naive";

export interface MatmulOptions {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly alpha?: number;
  readonly beta?: number;
  readonly variant?: MatmulVariantName;
}

interface Rung {
  readonly name: MatmulVariantName;
  readonly kernel: string;
  /** Block tile sizes the shape must be a multiple of ([m, n, k]); undefined: any shape. */
  readonly multiples?: readonly [number, number, number];
  /** The grid for a shape, given the specialization's constants. */
  grid(m: number, n: number, constants: Readonly<Record<string, number>>): [number, number];
}

const rungs: readonly Rung[] = [
  { name: "sgemm-2d-transposed-a", kernel: "sgemm2DBlocktilingTransposedA", multiples: [128, 128, 8], grid: (m, n) => [n / 128, m / 128] },
  { name: "sgemm-2d-blocktiling", kernel: "sgemm2DBlocktiling", multiples: [128, 128, 8], grid: (m, n) => [n / 128, m / 128] },
  { name: "sgemm-1d-blocktiling", kernel: "sgemm1DBlocktiling", multiples: [64, 64, 8], grid: (m, n) => [n / 64, m / 64] },
  { name: "sgemm-2d-guarded", kernel: "sgemm2DBlocktilingGuarded", grid: (m, n) => [Math.ceil(n / 128), Math.ceil(m / 128)] },
  // blockIdx.x walks the rows of C in Boehm's first kernels.
  { name: "sgemm-shared", kernel: "sgemmSharedMemory", grid: (m, n, c) => [Math.ceil(m / c.BLOCKSIZE!), Math.ceil(n / c.BLOCKSIZE!)] },
  { name: "sgemm-naive", kernel: "sgemmNaive", grid: (m, n, c) => [Math.ceil(m / c.BLOCKSIZE!), Math.ceil(n / c.BLOCKSIZE!)] },
];

/** The rung and kernel `matmul` would use for a shape on a device. */
export function chooseMatmul(device: Device, library: KernelLibrary, options: MatmulOptions): { rung: Rung; kernel: KernelHandle } {
  const { m, n, k } = options;
  for (const rung of rungs) {
    if (options.variant && rung.name !== options.variant) continue;
    const shapeOk = !rung.multiples || (m % rung.multiples[0] === 0 && n % rung.multiples[1] === 0 && k % rung.multiples[2] === 0);
    if (!shapeOk) {
      if (options.variant) throw new RangeError(`tskernel: ${rung.name} needs m, n, k to be multiples of ${rung.multiples!.join(", ")}; got ${m}, ${n}, ${k}`);
      continue;
    }
    const candidates = library.kernels.filter((h) => h.description.name === rung.kernel);
    // Bigger blocks first (BLOCKSIZE 32 before 16), as long as the device can run them.
    const kernel = [...candidates].sort((a, b) => blockThreads(b) - blockThreads(a)).find((h) => blockFits(h.description.block, device.limits));
    if (kernel) return { rung, kernel };
    if (options.variant) throw new RangeError(`tskernel: no build of ${rung.name} fits this device's ${device.limits.maxThreadsPerBlock} threads per block`);
  }
  throw new Error("tskernel: no matmul kernel in the library handles this shape (compile examples/sgemm.ts and examples/sgemm-blocktiling.ts)");
}

function blockThreads(handle: KernelHandle): number {
  const block = handle.description.block;
  return block ? block[0] * block[1] * block[2] : 0;
}

/** C = alpha·A·B + beta·C on the device, row-major; returns the rung that ran. */
export async function matmul(
  device: Device,
  library: KernelLibrary,
  A: DeviceBuffer,
  B: DeviceBuffer,
  C: DeviceBuffer,
  options: MatmulOptions,
): Promise<MatmulVariantName> {
  const { m, n, k } = options;
  for (const [name, buffer, length] of [["A", A, m * k], ["B", B, k * n], ["C", C, m * n]] as const) {
    if (buffer.length < length) throw new RangeError(`tskernel: matmul: ${name} has ${buffer.length} elements, the shape needs ${length}`);
  }
  const { rung, kernel } = chooseMatmul(device, library, options);
  const constants = kernel.description.specialization as Record<string, number>;
  await device.launch(kernel, { grid: rung.grid(m, n, constants), args: [m, n, k, options.alpha ?? 1, A, B, options.beta ?? 0, C] });
  return rung.name;
}
