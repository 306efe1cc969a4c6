/**
 * `attention(device, library, Q, K, V, O, shape, options)`: scaled dot-product attention, O = softmax(scale·Q·Kᵀ
 * (masked above the diagonal when causal))·V for each (batch, head), with the FlashAttention forward kernel
 * (package-kernels.ts's attentionForwardKernel: examples/flash-attention-fold.ts, P kept in registers and the scale folded into each
 * exponential, three consumer warpgroups at D 64; 94–98 % of cuDNN's forward on the H100 on 2026-11-27, where
 * examples/flash-attention.ts, which takes the same arguments, measured 73–77 % on 2026-11-26) from a library that holds it. Q, K, V and O are bf16 buffers laid out as
 * contiguous [batch, heads, seq, headDim] tensors (PyTorch's default), which the kernel reads as 2-D
 * [batch·heads·seq, headDim] through tensor maps that this function makes and frees. The kernel needs sm_90
 * (wgmma, the tensor memory accelerator) on CUDA and runs on the CPU's emulation; seq a multiple of 128 and
 * headDim 64 or 128.
 */

import type { Device, DeviceBuffer, KernelHandle } from "./device.ts";
import { KernelLibrary } from "./library.ts";
import { attentionForwardKernel, packageKernelLibrary } from "./package-kernels.ts";
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
  /**
   * An f32 buffer of batch·heads·seq elements that receives each query row's log-sum-exp, in base 2 of the scaled
   * scores (log2 Σ_j 2^(scale·log2(e)·s_ij)): what `attentionBackward` needs. Left out, a scratch buffer kept for
   * the device takes it.
   */
  readonly lse?: DeviceBuffer;
}

/** The backward kernels' query (and key) rows a block (their grids' x is seq / this), and what seq must be a multiple of. */
const rowsPerBlock = 128;

/**
 * The forward's build for a head dim with the most consumer warpgroups (examples/flash-attention-fold.ts: at
 * D 64 three, 192 query rows a block: 98 % of cuDNN's forward on the H100 against 87 % for two, 2026-11-27).
 */
function forwardBuild(library: KernelLibrary, headDim: number): KernelHandle | undefined {
  const builds = library.kernels.filter((h) => h.description.name === attentionForwardKernel.name && h.description.specialization.D === headDim);
  return builds.reduce<KernelHandle | undefined>((best, h) => (best && consumersOf(best) >= consumersOf(h) ? best : h), undefined);
}

/** A forward build's consumer warpgroups, 64 query rows each (the kernel's default, 2, where not specialized). */
function consumersOf(kernel: KernelHandle): number {
  return (kernel.description.specialization.CONSUMERS as number | undefined) ?? 2;
}

/** Without a library: the package's own kernels (package-kernels.ts: the build `npm pack` ships, no compiler run). */
/** Each device's scratch buffers by purpose (f32), grown as needed: launches on a device run in order. */
const scratch = new WeakMap<Device, Map<string, DeviceBuffer>>();

function scratchFor(device: Device, purpose: string, length: number): DeviceBuffer {
  let held = scratch.get(device);
  if (!held) scratch.set(device, (held = new Map()));
  const buffer = held.get(purpose);
  if (buffer && buffer.length >= length) return buffer;
  const grown = device.createBuffer("f32", Math.max(length, buffer?.length ?? 0));
  held.set(purpose, grown);
  return grown;
}

/** The shape checks attention() and attentionBackward() share; the number of rows, batch·heads·seq. */
function checkShape(what: string, device: Device, shape: AttentionShape, buffers: readonly (readonly [string, DeviceBuffer])[]): number {
  const { batch, heads, seq, headDim } = shape;
  if (![batch, heads, seq].every((x) => Number.isInteger(x) && x > 0)) throw new RangeError(`tskernel: ${what}: batch, heads and seq must be positive integers, found ${batch}, ${heads}, ${seq}`);
  if (seq % rowsPerBlock !== 0) throw new RangeError(`tskernel: ${what}: seq must be a multiple of ${rowsPerBlock}, found ${seq}`);
  if (headDim !== 64 && headDim !== 128) throw new RangeError(`tskernel: ${what}: headDim must be 64 or 128, found ${headDim}`);
  if (device.backend === "webgpu") throw new Error(`tskernel: ${what}: WebGPU has no matrix operations (the kernel is for CUDA sm_90 and the CPU)`);
  const rows = batch * heads * seq;
  for (const [name, buffer] of buffers) {
    if (buffer.elementType !== "bf16") throw new TypeError(`tskernel: ${what}: ${name} holds ${buffer.elementType}; the kernel takes bf16`);
    if (buffer.length < rows * headDim) throw new RangeError(`tskernel: ${what}: ${name} has ${buffer.length} elements, the shape needs ${rows * headDim}`);
  }
  return rows;
}

export async function attention(device: Device, Q: DeviceBuffer, K: DeviceBuffer, V: DeviceBuffer, O: DeviceBuffer, shape: AttentionShape, options?: AttentionOptions): Promise<void>;
export async function attention(device: Device, library: KernelLibrary, Q: DeviceBuffer, K: DeviceBuffer, V: DeviceBuffer, O: DeviceBuffer, shape: AttentionShape, options?: AttentionOptions): Promise<void>;
export async function attention(device: Device, ...rest: [DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?] | [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?]): Promise<void> {
  const [library, Q, K, V, O, shape, options = {}] = rest[0] instanceof KernelLibrary ? (rest as [KernelLibrary, DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?]) : [packageKernelLibrary(device), ...(rest as [DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer, AttentionShape, AttentionOptions?])];
  const { batch, heads, seq, headDim } = shape;
  const rows = checkShape("attention", device, shape, [["Q", Q], ["K", K], ["V", V], ["O", O]]);
  const { name, file } = attentionForwardKernel;
  const kernel = forwardBuild(library, headDim);
  if (!kernel) throw new Error(`tskernel: attention: the library holds no ${name} build for headDim ${headDim} (compile ${file})`);
  // Query rows a block: 64 a consumer warpgroup; Q's tensor map boxes are a block's rows.
  const blockRows = 64 * consumersOf(kernel);
  const lse = options.lse ?? scratchFor(device, "lse", rows);
  if (lse.elementType !== "f32" || lse.length < rows) throw new TypeError(`tskernel: attention: lse must be an f32 buffer of at least ${rows} elements, found ${lse.length} ${lse.elementType}`);
  const maps = [
    createTensorMap(device, Q, { rows, cols: headDim, boxRows: blockRows, boxCols: 64 }),
    createTensorMap(device, K, { rows, cols: headDim, boxRows: 128, boxCols: 64 }),
    createTensorMap(device, V, { rows, cols: headDim, boxRows: 128, boxCols: 64 }),
    createTensorMap(device, O, { rows, cols: headDim, boxRows: 64, boxCols: 64 }),
  ];
  const scale = options.scale ?? 1 / Math.sqrt(headDim);
  try {
    await device.launch(kernel, { grid: [Math.ceil(seq / blockRows), batch * heads], args: [Q, K, V, O, lse, ...maps, seq, scale, options.causal ? 1 : 0] });
  } finally {
    for (const map of maps) device.free(map);
  }
}

/**
 * The gradients of `attention()`: given Q, K, V, its output O and log-sum-exps `lse` (attention's `lse` option)
 * and the gradient dO of a loss with respect to O, writes dQ, dK and dV (bf16, [batch, heads, seq, headDim] like
 * the others), with the same causal mask and scale as the forward. The kernels of
 * examples/flash-attention-backward.ts: Dsum = rowsum(dO ∘ O), then dK and dV a block per 128 keys, then dQ a
 * block per 128 queries (the scores recomputed in both). Without a library, the package's own kernels.
 */
export async function attentionBackward(device: Device, tensors: AttentionBackwardTensors, shape: AttentionShape, options?: Omit<AttentionOptions, "lse">): Promise<void>;
export async function attentionBackward(device: Device, library: KernelLibrary, tensors: AttentionBackwardTensors, shape: AttentionShape, options?: Omit<AttentionOptions, "lse">): Promise<void>;
export async function attentionBackward(device: Device, ...rest: [AttentionBackwardTensors, AttentionShape, Omit<AttentionOptions, "lse">?] | [KernelLibrary, AttentionBackwardTensors, AttentionShape, Omit<AttentionOptions, "lse">?]): Promise<void> {
  const [library, tensors, shape, options = {}] = rest[0] instanceof KernelLibrary ? (rest as [KernelLibrary, AttentionBackwardTensors, AttentionShape, Omit<AttentionOptions, "lse">?]) : [packageKernelLibrary(device), ...(rest as [AttentionBackwardTensors, AttentionShape, Omit<AttentionOptions, "lse">?])];
  const { Q, K, V, O, dO, lse, dQ, dK, dV } = tensors;
  const { batch, heads, seq, headDim } = shape;
  const rows = checkShape("attentionBackward", device, shape, [["Q", Q], ["K", K], ["V", V], ["O", O], ["dO", dO], ["dQ", dQ], ["dK", dK], ["dV", dV]]);
  if (lse.elementType !== "f32" || lse.length < rows) throw new TypeError(`tskernel: attentionBackward: lse must be an f32 buffer of at least ${rows} elements, found ${lse.length} ${lse.elementType}`);
  const find = (name: string) => {
    const kernel = library.kernels.find((h) => h.description.name === name && h.description.specialization.D === headDim);
    if (!kernel) throw new Error(`tskernel: attentionBackward: the library holds no ${name} build for headDim ${headDim} (compile examples/flash-attention-backward.ts)`);
    return kernel;
  };
  const [pre, kv, q] = [find("flashAttentionBackwardPre"), find("flashAttentionBackwardKV"), find("flashAttentionBackwardQ")];
  const dsum = scratchFor(device, "dsum", rows);
  const map = (buffer: DeviceBuffer, boxRows: number) => createTensorMap(device, buffer, { rows, cols: headDim, boxRows, boxCols: 64 });
  // The dK/dV kernel streams 64-query tiles against a block of 128 keys; the dQ kernel the other way round.
  const kvMaps = [map(Q, 64), map(K, 128), map(V, 128), map(dO, 64), map(dK, 64), map(dV, 64)];
  const qMaps = [map(Q, 128), map(K, 64), map(V, 64), map(dO, 128), map(dQ, 64)];
  const scale = options.scale ?? 1 / Math.sqrt(headDim);
  const causal = options.causal ? 1 : 0;
  try {
    await device.launch(pre, { grid: [Math.ceil((rows * headDim) / 8 / 128)], args: [O, dO, dsum, rows] });
    await device.launch(kv, { grid: [seq / rowsPerBlock, batch * heads], args: [Q, K, V, dO, lse, dsum, dK, dV, ...kvMaps, seq, scale, causal] });
    await device.launch(q, { grid: [seq / rowsPerBlock, batch * heads], args: [Q, K, V, dO, lse, dsum, dQ, ...qMaps, seq, scale, causal] });
  } finally {
    for (const m of [...kvMaps, ...qMaps]) device.free(m);
  }
}

/** The buffers of attentionBackward: the forward's inputs, output and log-sum-exps, dO, and the gradients it writes. */
export interface AttentionBackwardTensors {
  readonly Q: DeviceBuffer;
  readonly K: DeviceBuffer;
  readonly V: DeviceBuffer;
  readonly O: DeviceBuffer;
  readonly dO: DeviceBuffer;
  /** f32, batch·heads·seq: the forward's log-sum-exps (attention's `lse` option). */
  readonly lse: DeviceBuffer;
  readonly dQ: DeviceBuffer;
  readonly dK: DeviceBuffer;
  readonly dV: DeviceBuffer;
}
