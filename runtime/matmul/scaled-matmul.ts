/**
 * `scaledMatmul(device, [library,] A, Bt, C, { m, n, k, scaleA?, scaleB?, beta?, variant? })`: the fp8 GEMM as
 * `torch._scaled_mm` takes it, C (bf16, m×n row-major) = scaleA·scaleB·A·B + beta·C with A e4m3 m×k row-major and
 * B given as Bᵀ, e4m3 n×k row-major (K-major: torch's column-major second operand). matmul() keeps B k×n for every
 * type, so fp8 has this function of its own, with its own ladder, fastest first: on an sm_90 GPU where n is a
 * multiple of 8 and k of 16 (the tensor maps' rows are whole 16-byte units) the warp-specialized wgmma kernel
 * (examples/fp8gemm-wgmma-ws.ts: 105–109 % of torch._scaled_mm on the H100, bench/README.md "fp8 GEMM"), for which
 * this file makes the three tensor maps; elsewhere, and for any shape, the shared-memory tiled kernel
 * (examples/fp8gemm-tiled.ts), which the CPU runs too. On the CPU both add the products in ascending k with f32
 * roundings and round to bf16 once, so they agree bit for bit. WebGPU is refused: WGSL has no 8-bit floats (TSK3120).
 */

import type { Device, DeviceBuffer, KernelArg, KernelHandle } from "../device.ts";
import { KernelLibrary } from "../library.ts";
import { kernelFits } from "../launch-check.ts";
import { packageKernelLibrary } from "../package-kernels.ts";
import { createTensorMap } from "../tensor-map.ts";
import { archAllows, blockThreads, constantsOf, multiprocessorsOf, shapeFits } from "./matmul.ts";
import { persistentGrid, type Constants, type Rung, type TensorMapBox } from "./rung.ts";

export type ScaledMatmulVariantName = "fp8gemm-wgmma-ws" | "fp8gemm-tiled";

export interface ScaledMatmulOptions {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** A's per-tensor scale (torch._scaled_mm's scale_a); default 1. The kernels take alpha = scaleA·scaleB, rounded to f32. */
  readonly scaleA?: number;
  /** Bᵀ's per-tensor scale (scale_b); default 1. */
  readonly scaleB?: number;
  /** C's old contents count beta times; default 0, and then C is not read (it may hold NaN), as in BLAS. */
  readonly beta?: number;
  /** Run this rung (the CPU runs the wgmma rung through its exact emulation only when asked by name). */
  readonly variant?: ScaledMatmulVariantName;
}

/**
 * A rung of the fp8 ladder. The wgmma rung takes three tensor maps after C, each made by `scaledMatmulLaunch`:
 * A (m×k), Bᵀ (n×k: not matmul's B, k×n, hence not `tensorMapA` / `tensorMapsBC`, which `rungArguments` would
 * make for B's layout) and C (m×n), in boxes of these sizes.
 */
export interface ScaledRung extends Rung {
  readonly name: ScaledMatmulVariantName;
  readonly operandMaps?: { readonly A: TensorMapBox; readonly Bt: TensorMapBox; readonly C: TensorMapBox };
}

/** The fp8 rungs, fastest first. */
export const scaledMatmulRungs: readonly ScaledRung[] = [
  {
    name: "fp8gemm-wgmma-ws",
    file: "examples/fp8gemm-wgmma-ws.ts",
    kernel: "fp8gemmWgmmaWs",
    cudaArch: "sm_90",
    // Any m; Bᵀ's and A's rows (k one-byte elements) and C's (n two-byte ones) whole 16-byte units, k in whole
    // k16 halves of a wgmma's k32 (the tensor memory accelerator reads zeros past k's end).
    multiples: () => [1, 8, 16],
    // Tiles of 128×256, partial ones at the edges included; the grid is min(tiles, multiprocessors).
    grid: (m, n) => [Math.ceil(m / 128) * Math.ceil(n / 256), 1],
    persistent: true,
    operandMaps: { A: { boxRows: 128, boxCols: 128 }, Bt: { boxRows: 256, boxCols: 128 }, C: { boxRows: 64, boxCols: 64 } },
    notOnWebgpu: "WebGPU has no 8-bit floats (TSK3120) and no matrix operations (TSK3048)",
  },
  {
    name: "fp8gemm-tiled",
    file: "examples/fp8gemm-tiled.ts",
    kernel: "fp8gemmTiled",
    grid: (m, n, c) => [Math.ceil(n / c.TILE!), Math.ceil(m / c.TILE!)],
    notOnWebgpu: "WebGPU has no 8-bit floats (TSK3120)",
  },
];

export interface ScaledMatmulChoice {
  readonly rung: ScaledRung;
  readonly kernel: KernelHandle;
  readonly constants: Constants;
}

/** Why a device cannot run any fp8 rung (undefined: it can). */
function deviceRefusal(device: Device): string | undefined {
  return device.backend === "webgpu" ? "WebGPU cannot run it: WGSL has no 8-bit floats (TSK3120), so e4m3 kernels are built for CUDA and the CPU only" : undefined;
}

/**
 * The rung and build `scaledMatmul` would use: the first rung (fastest first) that the device's architecture
 * admits, whose shape multiples divide the shape, and of which the library holds a build that fits the device
 * (the one with the most threads, should it hold several). A `variant` is taken or refused with the reason.
 */
export function chooseScaledMatmul(device: Device, library: KernelLibrary, options: ScaledMatmulOptions): ScaledMatmulChoice {
  const { m, n, k, variant } = options;
  const refusal = deviceRefusal(device);
  if (refusal) throw new Error(`tskernel: scaledMatmul: ${refusal}`);
  if (variant !== undefined && !scaledMatmulRungs.some((r) => r.name === variant)) {
    throw new RangeError(`tskernel: scaledMatmul: unknown variant '${variant}'; the rungs are ${scaledMatmulRungs.map((r) => r.name).join(", ")}`);
  }
  for (const rung of scaledMatmulRungs) {
    if (variant !== undefined && rung.name !== variant) continue;
    // The CPU runs the wgmma rung's emulation when asked by name; a CUDA GPU of another architecture cannot run it at all.
    if (!archAllows(device, rung)) {
      if (variant === undefined) continue;
      if (device.backend === "cuda") throw new Error(`tskernel: scaledMatmul: ${rung.name} needs an ${rung.cudaArch} GPU (wgmma, the tensor memory accelerator); this one is ${(device as Device & { arch?: string }).arch ?? "of another architecture"}`);
    }
    const builds = library.kernels
      .filter((h) => h.description.name === rung.kernel && kernelFits(h.description, device.limits))
      .sort((a, b) => blockThreads(b) - blockThreads(a));
    const kernel = builds[0];
    if (!kernel) {
      if (variant === undefined) continue;
      throw new Error(`tskernel: scaledMatmul: the library holds no build of ${rung.kernel} that fits this device (compile ${rung.file})`);
    }
    const constants = constantsOf(kernel);
    if (shapeFits(rung, constants, m, n, k)) return { rung, kernel, constants };
    if (variant !== undefined) {
      const [mm, nm, km] = rung.multiples!(constants);
      throw new RangeError(`tskernel: scaledMatmul: ${rung.name} needs m, n, k to be multiples of ${mm}, ${nm}, ${km} (its tensor maps' rows are whole 16-byte units); got ${m}, ${n}, ${k}`);
    }
  }
  throw new Error(`tskernel: scaledMatmul: the library holds no fp8 GEMM kernel for this device and shape (compile ${scaledMatmulRungs.map((r) => r.file).join(" and ")})`);
}

/**
 * The grid and arguments that run a choice on an m×n×k product: (m, n, k, alpha, A, Bt, beta, C), and for the
 * wgmma rung its three tensor maps after them, made now and freed by `release` once the launch is done.
 */
export function scaledMatmulLaunch(
  device: Device,
  choice: Pick<ScaledMatmulChoice, "rung" | "constants">,
  shape: { readonly m: number; readonly n: number; readonly k: number },
  buffers: { readonly A: DeviceBuffer; readonly Bt: DeviceBuffer; readonly C: DeviceBuffer },
  alpha = 1,
  beta = 0,
): { grid: [number, number]; args: KernelArg[]; release: () => void } {
  const { rung, constants } = choice;
  const { m, n, k } = shape;
  const { A, Bt, C } = buffers;
  const base: KernelArg[] = [m, n, k, alpha, A, Bt, beta, C];
  const boxes = rung.operandMaps;
  if (!boxes) return { grid: rung.grid(m, n, constants), args: base, release: () => {} };
  const maps = [
    createTensorMap(device, A, { rows: m, cols: k, ...boxes.A }),
    createTensorMap(device, Bt, { rows: n, cols: k, ...boxes.Bt }),
    createTensorMap(device, C, { rows: m, cols: n, ...boxes.C }),
  ];
  return { grid: persistentGrid(rung, rung.grid(m, n, constants)[0], multiprocessorsOf(device)), args: [...base, ...maps], release: () => maps.forEach((map) => device.free(map)) };
}

/** The checks of scaledMatmul's operands, before any choice: shape, element types, lengths and scales; gives alpha. */
function checkOperands(A: DeviceBuffer, Bt: DeviceBuffer, C: DeviceBuffer, options: ScaledMatmulOptions): number {
  const { m, n, k } = options;
  if (![m, n, k].every((x) => Number.isInteger(x) && x > 0)) throw new RangeError(`tskernel: scaledMatmul: m, n and k must be positive integers, found ${m}, ${n}, ${k}`);
  for (const [name, buffer, type] of [["A", A, "e4m3"], ["Bt", Bt, "e4m3"], ["C", C, "bf16"]] as const) {
    if (buffer.elementType !== type) throw new TypeError(`tskernel: scaledMatmul: ${name} holds ${buffer.elementType}; it must be ${type} (A and Bt e4m3, torch's float8_e4m3fn; C bf16)`);
  }
  for (const [name, buffer, rows, cols] of [["A", A, m, k], ["Bt", Bt, n, k], ["C", C, m, n]] as const) {
    if (buffer.length < rows * cols) throw new RangeError(`tskernel: scaledMatmul: ${name} has ${buffer.length} elements, the shape needs ${rows * cols} (${rows}×${cols})`);
  }
  const { scaleA = 1, scaleB = 1, beta = 0 } = options;
  for (const [name, value] of [["scaleA", scaleA], ["scaleB", scaleB], ["beta", beta]] as const) {
    if (typeof value !== "number" || !Number.isFinite(value)) throw new RangeError(`tskernel: scaledMatmul: ${name} must be a finite number, found ${String(value)}`);
  }
  return scaleA * scaleB;
}

/**
 * C = scaleA·scaleB·A·B + beta·C on the device, B given as Bt = Bᵀ (A e4m3 m×k, Bt e4m3 n×k, C bf16 m×n, all
 * row-major); returns the rung that ran. Without a library, the package's own kernels (package-kernels.ts: the build `npm pack` ships).
 */
export async function scaledMatmul(device: Device, A: DeviceBuffer, Bt: DeviceBuffer, C: DeviceBuffer, options: ScaledMatmulOptions): Promise<ScaledMatmulVariantName>;
export async function scaledMatmul(device: Device, library: KernelLibrary, A: DeviceBuffer, Bt: DeviceBuffer, C: DeviceBuffer, options: ScaledMatmulOptions): Promise<ScaledMatmulVariantName>;
export async function scaledMatmul(device: Device, ...rest: [DeviceBuffer, DeviceBuffer, DeviceBuffer, ScaledMatmulOptions] | [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, ScaledMatmulOptions]): Promise<ScaledMatmulVariantName> {
  const explicit = rest[0] instanceof KernelLibrary;
  const [A, Bt, C, options] = (explicit ? rest.slice(1) : rest) as [DeviceBuffer, DeviceBuffer, DeviceBuffer, ScaledMatmulOptions];
  const alpha = checkOperands(A, Bt, C, options);
  // Refuse WebGPU before loading the package's kernels for it (its WGSL build has no fp8 kernel to find).
  const refusal = deviceRefusal(device);
  if (refusal) throw new Error(`tskernel: scaledMatmul: ${refusal}`);
  const library = explicit ? (rest[0] as KernelLibrary) : packageKernelLibrary(device);
  const choice = chooseScaledMatmul(device, library, options);
  const { grid, args, release } = scaledMatmulLaunch(device, choice, options, { A, Bt, C }, alpha, options.beta ?? 0);
  try {
    await device.launch(choice.kernel, { grid, args });
  } finally {
    release();
  }
  return choice.rung.name;
}
