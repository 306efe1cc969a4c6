/**
 * `tskernel bench kernels`: the memory-bound suite (cases.ts) on one device. First the device-to-device copy
 * bandwidth of this run, the roofline every kernel is compared with: Device.timeCopy on CUDA (cuMemcpyDtoD)
 * and the CPU (TypedArray copy), and on WebGPU the copy kernel of examples/copy-vec4.ts (copyBufferToBuffer is
 * measured too, and reported, but through Dawn on the H100 it is several times slower than the kernels). Then, per case and shape: fresh random
 * inputs, outputs poisoned with NaN, one run checked against the float64 reference, then the median of
 * timed runs after a warm-up, each run timed by the device (all launches of a multi-launch case together).
 * When one set of buffers would fit in the cache (twice its bytes within the last-level cache), the timed
 * runs rotate over several sets, so that no run finds its inputs in the cache the previous one filled.
 * Effective bandwidth is the fewest bytes the operation must move over the median time.
 */

import type { Device, DeviceBuffer, KernelArg, KernelHandle, LaunchStep, Timing } from "../../runtime/device.ts";
import { median } from "../../runtime/device.ts";
import { roundToF16 } from "../../compiler/lang/float16.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import { checkResult, type CheckResult } from "./checks.ts";
import { backendUnsupported, copyKernelFile, copyKernelName, kernelCases, shapeLabel, UnsupportedShape, type BufferSpec, type CaseInstance, type InputArray, type KernelCase, type Shape } from "./cases.ts";

export interface KernelBenchOptions {
  readonly library: KernelLibrary;
  /** Default: every case. */
  readonly cases?: readonly KernelCase[];
  /** Shapes per case; default the case's GPU shapes on a GPU and its CPU shapes on the CPU. */
  readonly shapes?: (kernelCase: KernelCase) => readonly Shape[];
  /** Timed runs per shape (median kept); default 20 on a GPU, 5 on the CPU. */
  readonly runs?: number;
  /** The cache the rotation must defeat; default the CUDA device's L2, 64 MiB on WebGPU, 32 MiB on the CPU. */
  readonly cacheBytes?: number;
  /**
   * Elements of the copy that measures the bandwidth; default on a GPU the largest case's bytes (read plus
   * written) rounded up to a power of two, at most 2^28 elements (1 GiB each way); 2^24 on the CPU.
   */
  readonly copyElements?: number;
  readonly onProgress?: (message: string) => void;
}

export interface CopyResult {
  readonly elements: number;
  /** Bytes read plus bytes written. */
  readonly bytes: number;
  readonly ms: number;
  readonly gbps: number;
  readonly method: string;
}

export interface KernelBenchRow {
  readonly backend: string;
  readonly kernel: string;
  readonly title: string;
  readonly shape: Shape;
  readonly label: string;
  /** The specializations launched, in order. */
  readonly launches?: readonly string[];
  readonly bytes?: number;
  readonly ms?: number;
  readonly minMs?: number;
  readonly runs?: number;
  readonly inputSets?: number;
  /** Runs back to back in each timed run (short cases), the time being per run. */
  readonly batch?: number;
  readonly method?: string;
  readonly gbps?: number;
  readonly percentOfCopy?: number;
  /**
   * A device-to-device copy that moves the same number of bytes, timed the same way: how fast a copy of this
   * size runs, for shapes small enough that the launch and the last wave weigh on any kernel.
   */
  readonly copyAtSize?: CopyResult;
  readonly percentOfCopyAtSize?: number;
  readonly check?: CheckResult;
  readonly checkWhy?: string;
  /** PyTorch on the same GPU, from bench/torch-reference.py's run (torch.ts joins it). */
  readonly torch?: TorchCase;
  readonly note?: string;
}

/** PyTorch's counterpart of one row, from bench/torch-reference.py (torch.ts joins it). */
export interface TorchCase {
  /** PyTorch's median time, and ours in the same process, measured alternately round by round. */
  readonly ms: number;
  readonly oursMs: number;
  /** PyTorch's time over ours: above 1, ours is faster. */
  readonly speedup: number;
  readonly rounds: number;
  readonly gbps: number;
  readonly oursPass?: boolean;
  readonly torchPass?: boolean;
  readonly expression: string;
  /** Triton's counterpart in the same rounds (the bf16 cases): its time, and its time over ours. */
  readonly triton?: { readonly ms: number; readonly gbps: number; readonly speedup: number; readonly pass?: boolean };
}

export interface KernelBenchReport {
  readonly backend: string;
  readonly device: string;
  readonly date: string;
  /** The baseline of "% of copy": the device's copy, or on WebGPU the copy kernel (its `method` says which). */
  readonly copy?: CopyResult;
  /** On WebGPU, where the copy kernel is the baseline: the API's copyBufferToBuffer, for the record. */
  readonly apiCopy?: CopyResult;
  readonly rows: readonly KernelBenchRow[];
}

export function defaultShapes(kernelCase: KernelCase, backend: string): readonly Shape[] {
  return backend === "cpu" ? kernelCase.cpuShapes : kernelCase.gpuShapes;
}

function defaultCacheBytes(device: Device): number {
  const l2 = (device as { l2Bytes?: number }).l2Bytes;
  if (typeof l2 === "number" && l2 > 0) return l2;
  return device.backend === "cpu" ? 32 * 2 ** 20 : 64 * 2 ** 20;
}

/** Frees a buffer where the device can (CUDA, WebGPU); the CPU's go with the garbage collector. */
export function release(device: Device, buffer: DeviceBuffer): void {
  const free = (device as { free?: (buffer: DeviceBuffer) => void }).free;
  if (typeof free === "function") free.call(device, buffer);
}

/**
 * Uniform random f32 values in [low, high): xorshift128 seeded from Math.random, which fills the 2^28-element
 * inputs several times faster than Math.random per element.
 */
export function randomArray(length: number, low: number, high: number): Float32Array {
  const data = new Float32Array(length);
  const width = (high - low) / 4294967296;
  let x = (Math.random() * 4294967296) >>> 0 || 1;
  let y = (Math.random() * 4294967296) >>> 0;
  let z = (Math.random() * 4294967296) >>> 0;
  let w = (Math.random() * 4294967296) >>> 0;
  for (let i = 0; i < length; i++) {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    data[i] = low + w * width;
  }
  return data;
}

/** Rotation: enough sets that each is out of the cache again by its next turn (1 when one set does not fit). */
export function inputSets(bytes: number, cacheBytes: number): number {
  return bytes >= 2 * cacheBytes ? 1 : Math.min(8, Math.ceil((3 * cacheBytes) / Math.max(bytes, 1)));
}

/** Uniform random whole numbers in [low, high) as u32 (high − low at most 2^32). */
export function randomUint32Array(length: number, low: number, high: number): Uint32Array {
  const unit = randomArray(length, 0, 1);
  const data = new Uint32Array(length);
  for (let i = 0; i < length; i++) data[i] = Math.min(high - 1, low + Math.floor(unit[i]! * (high - low)));
  return data;
}

/** An output's or scratch buffer's poison: NaN, or for u32 a value no count or index reaches by chance. */
export const u32Poison = 0xdeadbeef;
/** A u8 output's poison, in every byte (every byte value is some pixel's, so a missed write shows only where the expected byte differs). */
export const u8Poison = 0xa5;

/**
 * Uniform random f32 values in [low, high) rounded to bf16 (to nearest even, by the integer carry into the upper
 * half, on the values' bits: they are finite), as a Float32Array of the bf16 values, exactly.
 */
export function randomBf16Array(length: number, low: number, high: number): Float32Array {
  const data = randomArray(length, low, high);
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  for (let i = 0; i < bits.length; i++) {
    const u = bits[i]!;
    bits[i] = (u + 0x7fff + ((u >>> 16) & 1)) & 0xffff0000;
  }
  return data;
}

/** Uniform random whole numbers in [low, high) in an 8-bit integer array. */
function randomBytes<T extends Int8Array | Uint8Array>(make: (length: number) => T, length: number, low: number, high: number): T {
  const unit = randomArray(length, 0, 1);
  const data = make(length);
  for (let i = 0; i < length; i++) data[i] = Math.min(high - 1, low + Math.floor(unit[i]! * (high - low)));
  return data;
}

/** A buffer's first contents: random for inputs, poisoned otherwise (`poison` false: zeros, for timing only). */
export function initialData(spec: BufferSpec, poison = true): InputArray {
  const random = spec.role === "input" || spec.role === "inout";
  switch (spec.type ?? "f32") {
    case "u32":
      return random ? randomUint32Array(spec.length, spec.low ?? 0, spec.high ?? 2 ** 32) : new Uint32Array(spec.length).fill(poison ? u32Poison : 0);
    case "i8":
      return random ? randomBytes((n) => new Int8Array(n), spec.length, spec.low ?? -128, spec.high ?? 128) : new Int8Array(spec.length);
    case "u8":
      return random ? randomBytes((n) => new Uint8Array(n), spec.length, spec.low ?? 0, spec.high ?? 256) : new Uint8Array(spec.length).fill(poison ? u8Poison : 0);
    case "bf16":
      return random ? randomBf16Array(spec.length, spec.low ?? -1, spec.high ?? 1) : new Float32Array(spec.length).fill(poison ? Number.NaN : 0);
    case "f16":
      return random ? randomArray(spec.length, spec.low ?? -1, spec.high ?? 1).map(roundToF16) : new Float32Array(spec.length).fill(poison ? Number.NaN : 0);
    case "f32":
      return random ? randomArray(spec.length, spec.low ?? -1, spec.high ?? 1) : new Float32Array(spec.length).fill(poison ? Number.NaN : 0);
  }
}

/**
 * A device buffer of the spec's type holding `data` (initialData's): bf16 values go as their encodings, the
 * upper halves of their f32 bits (they are bf16 values already, NaN included: 0x7fc0).
 */
export function createSpecBuffer(device: Device, spec: BufferSpec, data: InputArray): DeviceBuffer {
  if (spec.type === "bf16") {
    const words = new Uint32Array(data.buffer, data.byteOffset, data.length);
    const bits = new Uint16Array(data.length);
    for (let i = 0; i < bits.length; i++) bits[i] = words[i]! >>> 16;
    return device.createBuffer("bf16", bits);
  }
  // f16 values are exact, so the buffer's rounding keeps them.
  if (spec.type === "f16") return device.createBuffer("f16", data);
  return device.createBuffer(data);
}

interface Allocated {
  readonly buffers: ReadonlyMap<string, DeviceBuffer>;
  readonly inputs: ReadonlyMap<string, InputArray>;
}

/** One set of buffers: inputs random as the case says, outputs and scratch poisoned (NaN, 0xdeadbeef for u32, 0xa5 for u8). */
export async function allocate(device: Device, instance: CaseInstance): Promise<Allocated> {
  const buffers = new Map<string, DeviceBuffer>();
  const inputs = new Map<string, InputArray>();
  try {
    for (const spec of instance.buffers) {
      const data = initialData(spec);
      if (spec.role === "input" || spec.role === "inout") inputs.set(spec.name, data);
      buffers.set(spec.name, createSpecBuffer(device, spec, data));
    }
  } catch (error) {
    for (const buffer of buffers.values()) release(device, buffer);
    throw error;
  }
  return { buffers, inputs };
}

/** The launches of one run on one set of buffers. */
export function launchSteps(instance: CaseInstance, buffers: ReadonlyMap<string, DeviceBuffer>): LaunchStep[] {
  return instance.steps.map((step) => ({
    kernel: step.kernel,
    options: {
      grid: step.grid,
      args: step.args.map((arg): KernelArg => ("buffer" in arg ? buffers.get(arg.buffer)! : "i32" in arg ? arg.i32 : arg.f32)),
    },
  }));
}

/** Runs the case once on fresh buffers and checks the output against float64; the buffers stay allocated. */
export async function runChecked(device: Device, instance: CaseInstance): Promise<{ set: Allocated; check: CheckResult }> {
  const set = await allocate(device, instance);
  for (const step of launchSteps(instance, set.buffers)) await device.launch(step.kernel, step.options);
  const output = await device.read(set.buffers.get(instance.output)!);
  return { set, check: checkResult(output, instance.reference(set.inputs), instance.check) };
}

/** Each timed run lasts at least this long: shorter runs repeat the case back to back (see batchSize). */
const minimumRunMs = 0.5;
const maximumBatch = 32;

/** How many runs of a case (of `probeMs` each) one timed run holds: enough to last minimumRunMs. */
export function batchSize(probeMs: number): number {
  return Math.max(1, Math.min(maximumBatch, Math.ceil(minimumRunMs / Math.max(probeMs, 1e-3))));
}

/**
 * The median time of one run over `runs` timed runs. A case shorter than minimumRunMs is run several times back
 * to back in each timed run (the time of one run is the total over their number), so that the start and end
 * of the device timer's window, a few microseconds, do not weigh on 50-microsecond kernels; consecutive runs
 * take the buffer sets in turn.
 */
export async function timeRotating(device: Device, stepsPerSet: readonly (readonly LaunchStep[])[], runs: number): Promise<Timing & { batch: number }> {
  const probe = await device.timeSequence(stepsPerSet[0]!, { warmup: 2, runs: 3 });
  const batch = device.backend === "cpu" ? 1 : Math.max(batchSize(probe.medianMs), stepsPerSet.length > 1 ? stepsPerSet.length : 1);
  const steps: LaunchStep[] = [];
  for (let i = 0; i < batch; i++) steps.push(...stepsPerSet[i % stepsPerSet.length]!);
  const timing = await device.timeSequence(steps, { warmup: 1, runs });
  const runsMs = timing.runsMs.map((ms) => ms / batch);
  const method = batch > 1 ? `${timing.method}; ${batch} runs back to back per timing, time per run` : timing.method;
  return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method, batch };
}

/**
 * The copy bandwidth of this device now: bytes read plus bytes written over the median copy time. Short copies
 * are repeated back to back within each timed run, as short kernels are. With `kernel` (copyVec4), the copy is
 * that kernel's launch, timed as the cases are (timeRotating); otherwise the device's own copy (timeCopy:
 * cuMemcpyDtoD on CUDA, copyBufferToBuffer on WebGPU, a TypedArray copy on the CPU).
 */
export async function measureCopy(device: Device, elements: number, runs: number, kernel?: KernelHandle): Promise<CopyResult> {
  for (let count = elements; ; count = Math.floor(count / 2)) {
    let source: DeviceBuffer | undefined;
    let destination: DeviceBuffer | undefined;
    try {
      source = device.createBuffer(randomArray(count, -1, 1));
      destination = device.createBuffer("f32", count);
      const bytes = 8 * count;
      if (kernel) {
        const { BLOCK, ITEMS } = kernel.description.specialization as { BLOCK: number; ITEMS: number };
        const grid = Math.max(1, Math.min(Math.ceil(count / 4 / (BLOCK * ITEMS)), device.limits.maxGridDims[0]));
        const step = { kernel, options: { grid: [grid, 1, 1] as [number, number, number], args: [destination, source, count] } };
        const timing = await timeRotating(device, [[step]], runs);
        return { elements: count, bytes, ms: timing.medianMs, gbps: bytes / (timing.medianMs * 1e6), method: `the copy kernel ${kernel.description.entryName} (${copyKernelFile}): ${timing.method}` };
      }
      const probe = await device.timeCopy(destination, source, { warmup: 2, runs: 3 });
      const repeat = device.backend === "cpu" ? 1 : batchSize(probe.medianMs);
      const timing = await device.timeCopy(destination, source, { warmup: 1, runs, repeat });
      return { elements: count, bytes, ms: timing.medianMs, gbps: bytes / (timing.medianMs * 1e6), method: timing.method };
    } catch (error) {
      // A device that cannot hold two buffers this large (WebGPU's binding limits, or its memory) gets a
      // smaller copy.
      if (count <= 2 ** 20) throw error;
    } finally {
      if (source) release(device, source);
      if (destination) release(device, destination);
    }
  }
}

/**
 * The copy every row is compared with: on WebGPU the copy kernel where the library has it (copyBufferToBuffer
 * runs at 848 GB/s through Dawn on the H100, where kernels move 3000 GB/s: a baseline slower than the kernels
 * says nothing), elsewhere the device's own copy.
 */
function copyKernelFor(device: Device, library: KernelLibrary): KernelHandle | undefined {
  if (device.backend !== "webgpu") return undefined;
  return library.firstFitting(copyKernelName, [{}], device.limits);
}

export async function benchKernels(device: Device, options: KernelBenchOptions): Promise<KernelBenchReport> {
  const progress = options.onProgress ?? (() => {});
  const gpu = device.backend !== "cpu";
  const runs = options.runs ?? (gpu ? 20 : 5);
  const cacheBytes = options.cacheBytes ?? defaultCacheBytes(device);
  const cases = options.cases ?? kernelCases;
  const skipped = (kernelCase: KernelCase) => backendUnsupported(kernelCase, options.library, device.backend);
  const shapesOf = (kernelCase: KernelCase) => options.shapes?.(kernelCase) ?? defaultShapes(kernelCase, device.backend);
  const context = { library: options.library, limits: device.limits, backend: device.backend };
  let largest = 0;
  for (const kernelCase of cases) {
    if (skipped(kernelCase)) continue;
    for (const shape of shapesOf(kernelCase)) {
      try {
        if (!kernelCase.unsupported(shape)) largest = Math.max(largest, kernelCase.build(shape, context).bytes);
      } catch {
        // Reported with its row below.
      }
    }
  }
  const copyElements = options.copyElements ?? (gpu ? Math.min(2 ** 28, 2 ** Math.ceil(Math.log2(Math.max(largest / 8, 2 ** 20)))) : 2 ** 24);
  const copyKernel = copyKernelFor(device, options.library);
  const copy = await measureCopy(device, copyElements, runs, copyKernel);
  progress(`copy: ${(copy.bytes / 2 ** 20).toFixed(0)} MiB moved in ${copy.ms.toFixed(3)} ms: ${copy.gbps.toFixed(1)} GB/s (${copy.method})`);
  // The API's own copy too where the kernel is the baseline, for the record.
  const apiCopy = copyKernel ? await measureCopy(device, copyElements, runs) : undefined;
  if (apiCopy) progress(`API copy (not the baseline): ${apiCopy.gbps.toFixed(1)} GB/s (${apiCopy.method})`);
  // Copies of the size of the smaller cases, measured once per size.
  const copies = new Map<number, CopyResult>();
  const copyOfSize = async (bytes: number) => {
    const elements = Math.max(1024, Math.round(bytes / 8));
    if (!copies.has(elements)) copies.set(elements, await measureCopy(device, elements, runs, copyKernel));
    return copies.get(elements)!;
  };
  const rows: KernelBenchRow[] = [];
  for (const kernelCase of cases) {
    for (const shape of shapesOf(kernelCase)) {
      const base = { backend: device.backend, kernel: kernelCase.id, title: kernelCase.title, shape, label: shapeLabel(shape) };
      const unsupported = skipped(kernelCase) ?? kernelCase.unsupported(shape);
      if (unsupported) {
        rows.push({ ...base, note: unsupported });
        continue;
      }
      progress(`${kernelCase.id} ${base.label}`);
      const sets: Allocated[] = [];
      try {
        const instance = kernelCase.build(shape, context);
        const { set, check } = await runChecked(device, instance);
        sets.push(set);
        const count = inputSets(instance.bytes, cacheBytes);
        while (sets.length < count) sets.push(await allocate(device, instance));
        const timing = await timeRotating(device, sets.map((s) => launchSteps(instance, s.buffers)), runs);
        const gbps = instance.bytes / (timing.medianMs * 1e6);
        const copyAtSize = gpu && instance.bytes < copy.bytes / 4 ? await copyOfSize(instance.bytes) : undefined;
        const row: KernelBenchRow = {
          ...base,
          launches: instance.steps.map((s) => s.kernel.description.entryName),
          bytes: instance.bytes,
          ms: timing.medianMs,
          minMs: timing.minMs,
          runs: timing.runsMs.length,
          inputSets: sets.length,
          batch: timing.batch,
          method: timing.method,
          gbps,
          percentOfCopy: (100 * gbps) / copy.gbps,
          ...(copyAtSize ? { copyAtSize, percentOfCopyAtSize: (100 * gbps) / copyAtSize.gbps } : {}),
          check,
          checkWhy: instance.check.why,
        };
        rows.push(row);
        const atSize = row.percentOfCopyAtSize !== undefined ? ` (${row.percentOfCopyAtSize.toFixed(1)} % of a copy of the same bytes, ${copyAtSize!.gbps.toFixed(1)} GB/s)` : "";
        progress(`  ${timing.medianMs.toFixed(3)} ms${timing.batch > 1 ? ` (${timing.batch} per timing)` : ""}, ${gbps.toFixed(1)} GB/s, ${row.percentOfCopy!.toFixed(1)} % of copy${atSize}; check ${check.pass ? "pass" : "FAIL"}`);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        rows.push({ ...base, note: error instanceof UnsupportedShape ? message : `failed: ${message.split("\n")[0]}` });
        progress(`  ${message.split("\n")[0]}`);
      } finally {
        for (const set of sets) for (const buffer of set.buffers.values()) release(device, buffer);
      }
    }
  }
  return { backend: device.backend, device: device.name, date: new Date().toISOString(), copy, ...(apiCopy ? { apiCopy } : {}), rows };
}
