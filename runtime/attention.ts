/**
 * `attention(device, library, Q, K, V, O, shape, options)`: scaled dot-product attention, O = softmax(scale·Q·Kᵀ
 * (masked above the diagonal when causal))·V for each (batch, head), with the FlashAttention forward kernel
 * (examples/flash-attention.ts) from a library that holds it. Q, K, V and O are bf16 buffers laid out as
 * contiguous [batch, heads, seq, headDim] tensors (PyTorch's default), which the kernel reads as 2-D
 * [batch·heads·seq, headDim] through tensor maps that this function makes and frees. The kernel needs sm_90
 * (wgmma, the tensor memory accelerator) on CUDA and runs on the CPU's emulation; seq a multiple of 128 and
 * headDim 64 or 128.
 */

import type { Device, DeviceBuffer } from "./device.ts";
import { KernelLibrary } from "./library.ts";
import { packageKernelLibrary } from "./package-kernels.ts";
import { createTensorMap } from "./tensor-map.ts";

export interface AttentionShape {
  readonly batch: number;
  readonly heads: number;
  readonly seq: number;
  readonly headDim: number;
}

export interface AttentionOptions {
  /** Mask keys after each query's position (a decoder's attention). Default false. */
  readonly causal?: boolean;
  /** The scores' scale; default 1 / sqrt(headDim). */
  readonly scale?: number;
}

/** The kernel's query rows a block (its grid's x is seq / this). */
const rowsPerBlock = 128;

/** Without a library: the package's own kernels (package-kernels.ts: the build `npm pack` ships, no compiler run). */
export async function attention(device: Device, Q: DeviceBuffer, K: DeviceBuffer, V: DeviceBuffer, O: DeviceBuffer, shape: AttentionShape, options?: AttentionOptions): Promise<void>;
export async function attention(device: Device, library: KernelLibrary, Q: DeviceBuffer, K: DeviceBuffer, V: DeviceBuffer, O: DeviceBuffer, shape: AttentionShape, options?: AttentionOptions): Promise<void>;
export async function attention(device: Device, ...rest: [DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?] | [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?]): Promise<void> {
  const [library, Q, K, V, O, shape, options = {}] = rest[0] instanceof KernelLibrary ? (rest as [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?]) : [packageKernelLibrary(device), ...(rest as [DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?])];
  const { batch, heads, seq, headDim } = shape;
  if (![batch, heads, seq].every((x) => Number.isInteger(x) && x > 0)) throw new RangeError(`tskernel: attention: batch, heads and seq must be positive integers, found ${batch}, ${heads}, ${seq}`);
  if (seq % rowsPerBlock !== 0) throw new RangeError(`tskernel: attention: seq must be a multiple of ${rowsPerBlock}, found ${seq}`);
  if (headDim !== 64 && headDim !== 128) throw new RangeError(`tskernel: attention: headDim must be 64 or 128, found ${headDim}`);
  if (device.backend === "webgpu") throw new Error("tskernel: attention: WebGPU has no matrix operations (the kernel is for CUDA sm_90 and the CPU)");
  const rows = batch * heads * seq;
  for (const [name, buffer] of [["Q", Q], ["K", K], ["V", V], ["O", O]] as const) {
    if (buffer.elementType !== "bf16") throw new TypeError(`tskernel: attention: ${name} holds ${buffer.elementType}; the kernel takes bf16`);
    if (buffer.length < rows * headDim) throw new RangeError(`tskernel: attention: ${name} has ${buffer.length} elements, the shape needs ${rows * headDim}`);
  }
  const kernel = library.kernels.find((h) => h.description.name === "flashAttention" && h.description.specialization.D === headDim);
  if (!kernel) throw new Error(`tskernel: attention: the library holds no flashAttention build for headDim ${headDim} (compile examples/flash-attention.ts)`);
  const maps = [
    createTensorMap(device, Q, { rows, cols: headDim, boxRows: 128, boxCols: 64 }),
    createTensorMap(device, K, { rows, cols: headDim, boxRows: 128, boxCols: 64 }),
    createTensorMap(device, V, { rows, cols: headDim, boxRows: 128, boxCols: 64 }),
    createTensorMap(device, O, { rows, cols: headDim, boxRows: 64, boxCols: 64 }),
  ];
  const scale = options.scale ?? 1 / Math.sqrt(headDim);
  try {
    await device.launch(kernel, { grid: [seq / rowsPerBlock, batch * heads], args: [Q, K, V, O, ...maps, seq, scale, options.causal ? 1 : 0] });
  } finally {
    for (const map of maps) device.free(map);
  }
}
