/**
 * The WebGPU backend: runs the WGSL backend's output through a `GPUDevice` — Dawn (the `webgpu` package) in
 * Node, or `navigator.gpu` where one exists. Bind group layouts come from the manifest's layout (storage
 * buffers in parameter order, then one uniform buffer of scalars), pipelines are cached per kernel
 * specialization and block shape (the workgroup size is an override constant when the kernel does not fix
 * it), results come back through mapped staging buffers, and launches are timed with timestamp queries when
 * the adapter has them, otherwise by waiting for the queue.
 *
 * Device limits are raised as far as the adapter allows, so big workgroups and big matrices work on real
 * GPUs; a launch that needs more than the device offers is refused with the numbers. The `subgroups` feature
 * is requested wherever the adapter has it, for kernels with subgroup operations; a launch of such a kernel
 * on a device without it is refused, naming the feature, and its blocks must be whole subgroups of the
 * adapter's largest subgroup size.
 *
 * This file is the one WebGPU device for Node and the browser: it imports nothing from Node and no compiler
 * code. dawn.ts finds Dawn in Node; browser.ts (the `tskernel/webgpu` entry) uses `navigator.gpu`.
 */

import { bufferShape, elementBytes, fromStorage, storageConstructors, writeStorage } from "../element-types.ts";
import { BackendUnavailable, checkCopy, median, type BufferValues, type ReadOptions, type Device, type DeviceBuffer, type KernelHandle, type ElementType, type LaunchOptions, type LaunchSequence, type CopyTimingOptions, type LaunchStep, type Stream, type StreamEvent, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { BufferRegistry } from "../buffer-registry.ts";
import { checkLaunch, kernelName, LaunchError, notBuiltFor, type CheckedLaunch, type LaunchLimits } from "../launch-check.ts";
import { LaunchLedger } from "../launch-ledger.ts";
import { checkStream, SingleQueueStream } from "../streams.ts";
import { BindGroupCache, CommandBatcher, type Dispatch } from "./command-batch.ts";
import { kernelPlan, writeScalars, type KernelPlan, type PipelineEntry, type WebGpuBuffer } from "./launch-plan.ts";
import { WebGpuSequence, type SequenceStep } from "./webgpu-sequence.ts";
import type { ManifestLayout } from "../../compiler/lang/manifest.ts";
import { bufferBytes, layoutWriteBytes, structuredBytes, type LayoutValue } from "../layouts.ts";
import { checksOf, CheckedLaunches, implicitArguments } from "../checked-build.ts";

/** The adapter limits a kernel may need raised above WebGPU's defaults. */
const raisedLimits = [
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupsPerDimension",
] as const;

/**
 * A device on a `GPU` object: `navigator.gpu` in a browser, Dawn's in Node (dawn.ts), or any other
 * implementation of the WebGPU API. Asks for the adapter's maximum limits and, where it has them, timestamp
 * queries. `noAdapterHint` ends the BackendUnavailable error when there is no adapter: what to do about it
 * where the caller runs.
 */
export async function requestWebGpuDevice(gpu: GPU, noAdapterHint: string, options: WebGpuLaunchOptions = {}): Promise<WebGpuDevice> {
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new BackendUnavailable("webgpu", `no WebGPU adapter was found. ${noAdapterHint}`);
  const requiredLimits: Record<string, number> = {};
  for (const name of raisedLimits) {
    const value = (adapter.limits as unknown as Record<string, number>)[name];
    if (typeof value === "number") requiredLimits[name] = value;
  }
  // Optional features a kernel may need: timestamps for timing, subgroups for kernels with subgroup operations.
  const requiredFeatures = (["timestamp-query", "subgroups", "shader-f16"] as GPUFeatureName[]).filter((feature) => adapter.features.has(feature));
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(" ") || "WebGPU adapter";
  return new WebGpuDevice(device, name, gpu, options);
}

/** The error of a launch of a kernel that is not a checked build on a device that runs only checked ones. */
function notCheckedBuild(name: string): LaunchError {
  return new LaunchError(name, "the device runs checked builds only (checked: true), and this kernel was built without checks: compile it with compileKernelLibrary(files, targets, { checked: true }) or tskernel build --checked");
}

/** Words of the error buffer every checked build of this version uses (compiler/passes/checks.ts). */
const errorBufferWords = 81;

/** How the device batches launches, and whether it runs only checked builds. */
export interface WebGpuLaunchOptions {
  /** Launches recorded into one submission at most (default 64). */
  readonly batchSize?: number;
  /**
   * Refuse kernels that are not checked builds (`compileKernelLibrary(…, { checked: true })`, `tskernel build
   * --checked`), so that every launch is checked. A checked build runs checked on any device.
   */
  readonly checked?: boolean;
}

/** The command buffers of one timed run. */
type EncodedRun = GPUCommandBuffer[];

const resolved = Promise.resolve();

export class WebGpuDevice implements Device {
  readonly backend = "webgpu" as const;
  private readonly modules = new Map<string, GPUShaderModule>();
  /** Pipelines per shader module (one per distinct WGSL source), then per entry point and block shape. */
  private readonly pipelines = new Map<GPUShaderModule, Map<string, PipelineEntry>>();
  /** The same pipelines per kernel handle and block ("x,y,z"): what a launch looks up. */
  private readonly pipelinesByHandle = new WeakMap<KernelHandle, Map<string, PipelineEntry>>();
  private readonly plans = new WeakMap<KernelHandle, KernelPlan>();
  readonly limits: LaunchLimits;
  private readonly buffers = new BufferRegistry("WebGPU", "webgpu");
  private readonly ledger = new LaunchLedger();
  /** Launches and submissions in batches (command-batch.ts). */
  readonly batcher: CommandBatcher;
  readonly bindGroups: BindGroupCache;
  /**
   * While a launch waits for its pipeline to be made (the first launch of a kernel and block), everything
   * after it waits too, to keep the order: this is the last of them.
   */
  private preparing?: Promise<void>;
  /** Whether the device refuses kernels that are not checked builds. */
  readonly checked: boolean;
  /** Checked launches since the error buffer was last read, and the buffer (made on the first). */
  private readonly checkedLaunches = new CheckedLaunches();
  private errorBuffer?: WebGpuBuffer;

  constructor(
    readonly gpu: GPUDevice,
    readonly name: string,
    /**
     * The GPU instance the device came from. Dawn for Node destroys its native instance when this object is
     * garbage-collected, even with devices still in use, and the next wait on the queue then aborts the
     * process ("The futex facility returned an unexpected error code", or std::system_error "Invalid
     * argument"): the device must keep it alive.
     */
    readonly instance: GPU,
    options: WebGpuLaunchOptions = {},
  ) {
    const l = gpu.limits;
    this.limits = {
      maxThreadsPerBlock: l.maxComputeInvocationsPerWorkgroup,
      maxBlockDims: [l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY, l.maxComputeWorkgroupSizeZ],
      maxGridDims: [l.maxComputeWorkgroupsPerDimension, l.maxComputeWorkgroupsPerDimension, l.maxComputeWorkgroupsPerDimension],
      maxSharedBytes: l.maxComputeWorkgroupStorageSize,
      // The adapter may pick any subgroup size from its minimum to its maximum: blocks of whole subgroups
      // of the largest one are whole subgroups whatever it picks.
      ...(this.hasSubgroups ? { subgroupSize: (gpu as GPUDevice & { adapterInfo?: { subgroupMaxSize?: number } }).adapterInfo?.subgroupMaxSize ?? 128 } : {}),
    };
    const batchSize = options.batchSize ?? 64;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`tskernel: batchSize must be a positive integer, got ${batchSize}`);
    this.batcher = new CommandBatcher(gpu, this.ledger, batchSize);
    this.bindGroups = new BindGroupCache(gpu);
    this.checked = options.checked ?? false;
  }

  /** The error buffer of the device's checked launches (zeroed when made, and after each reading). */
  private errors(): WebGpuBuffer {
    this.errorBuffer ??= {
      kind: "tskernel.buffer",
      backend: "webgpu",
      elementType: "u32",
      length: errorBufferWords,
      gpuBuffer: this.gpu.createBuffer({ size: Math.ceil((errorBufferWords * 4) / 16) * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, label: "tskernel checked-build errors" }),
    };
    return this.errorBuffer;
  }

  /**
   * A launch's arguments for its pipeline: a checked build's implicit ones after its own (the error buffer,
   * `tag`, its buffers' lengths). Other kernels' as they are.
   */
  launchArgs(kernel: KernelHandle, args: readonly unknown[], tag: () => number): readonly unknown[] {
    const checks = checksOf(kernel.description, "wgsl");
    if (!checks) return args;
    return [...args, ...implicitArguments(checks, kernel.description, args as CheckedLaunch["args"], this.errors(), tag())];
  }

  /** For WebGpuSequence: the tag of a recorded checked step (its records are reported as its latest replay's). */
  sequenceTag(kernel: KernelHandle): number {
    const checks = checksOf(kernel.description, "wgsl");
    return checks ? this.checkedLaunches.step(kernel.description, checks) : 0;
  }

  /**
   * When checked launches ran since the error buffer was last read: encodes its copy into a staging buffer and
   * its clearing, and returns what reads the copy once submitted (recording each launch's failures in the
   * ledger).
   */
  private readErrors(encoder: GPUCommandEncoder): (() => Promise<void>) | undefined {
    if (!this.checkedLaunches.pending || !this.errorBuffer) return undefined;
    const bytes = this.errorBuffer.gpuBuffer.size;
    const staging = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(this.errorBuffer.gpuBuffer, 0, staging, 0, bytes);
    encoder.clearBuffer(this.errorBuffer.gpuBuffer);
    this.checkedLaunches.pending = false;
    return async () => {
      try {
        await staging.mapAsync(GPUMapMode.READ);
        const words = new Uint32Array(staging.getMappedRange().slice(0, errorBufferWords * 4));
        staging.unmap();
        this.checkedLaunches.report(words, this.ledger);
      } finally {
        staging.destroy();
      }
    };
  }

  /** Whether the device has the `subgroups` feature, which kernels with subgroup operations need. */
  get hasSubgroups(): boolean {
    return this.gpu.features.has("subgroups" as GPUFeatureName);
  }

  /** Whether the device has a WebGPU feature (`shader-f16`, which kernels with f16 need, …). */
  hasFeature(feature: string): boolean {
    return this.gpu.features.has(feature as GPUFeatureName);
  }

  get hasTimestamps(): boolean {
    return this.gpu.features.has("timestamp-query");
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, lengthOrValues: number | BufferValues): DeviceBuffer;
  createBuffer(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType | ManifestLayout, lengthOrValues?: number | BufferValues | readonly LayoutValue[]): DeviceBuffer {
    this.buffers.assertOpen();
    if (typeof dataOrType === "object" && !ArrayBuffer.isView(dataOrType)) {
      // A buffer of vectors or structs: WGSL's storage layout is its own, so the bytes go as they are.
      const { bytes: data, length: count } = structuredBytes(dataOrType, lengthOrValues as number | Uint8Array | readonly LayoutValue[]);
      const gpuBuffer = this.allocate(data.byteLength);
      if (data.byteLength > 0) this.writeBytes(gpuBuffer, data);
      return this.buffers.add<WebGpuBuffer>({ kind: "tskernel.buffer", backend: "webgpu", elementType: dataOrType.name, length: count, layout: dataOrType, gpuBuffer });
    }
    const { elementType, length: count, storage } = bufferShape(dataOrType, lengthOrValues as number | BufferValues | undefined);
    const gpuBuffer = this.allocate(count * elementBytes(elementType));
    if (storage && count > 0) this.writeBytes(gpuBuffer, storage);
    return this.buffers.add<WebGpuBuffer>({ kind: "tskernel.buffer", backend: "webgpu", elementType, length: count, gpuBuffer });
  }

  private allocate(byteLength: number): GPUBuffer {
    // Whole vec4s: WGSL binds buffers that a kernel only accesses four elements at a time as array<vec4<f32>>;
    // and whole u32 words, in which WGSL holds 8- and 16-bit elements.
    const bytes = Math.max(16, Math.ceil(byteLength / 16) * 16);
    if (bytes > this.gpu.limits.maxStorageBufferBindingSize) {
      throw new RangeError(`tskernel: a buffer of ${bytes} bytes exceeds this adapter's maxStorageBufferBindingSize (${this.gpu.limits.maxStorageBufferBindingSize})`);
    }
    return this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  }

  /** writeBuffer takes whole 4-byte words: an odd number of 8- or 16-bit elements is padded with zeros. */
  private writeBytes(gpuBuffer: GPUBuffer, data: TypedArray): void {
    let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (bytes.byteLength % 4 !== 0) {
      const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
      padded.set(bytes);
      bytes = padded;
    }
    this.gpu.queue.writeBuffer(gpuBuffer, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * A buffer of this device. Another device's buffer (of any backend), a freed one, or any use after
   * dispose() (the GPU device is destroyed then) is refused here, before Dawn sees it: Dawn would report it
   * only as a validation error of the whole command, or wait on a destroyed device.
   */
  private own(buffer: DeviceBuffer): WebGpuBuffer {
    this.buffers.own(buffer);
    return buffer as WebGpuBuffer;
  }

  /**
   * Refuses later uses of the buffer at once, and destroys its GPU memory once no batch being recorded binds
   * it (submitted work keeps what it uses alive: WebGPU frees it after that work).
   */
  free(buffer: DeviceBuffer): void {
    const own = this.own(buffer);
    this.buffers.free(own);
    this.bindGroups.forget(own.gpuBuffer);
    if (this.preparing) void this.preparing.then(() => this.batcher.destroy(own.gpuBuffer));
    else this.batcher.destroy(own.gpuBuffer);
  }

  /**
   * After the launches enqueued before it (they are submitted first: a write goes straight to the queue). Here
   * and in read and synchronize, the batch is submitted before the function's first await, in call order.
   */
  async write(buffer: DeviceBuffer, data: BufferValues): Promise<void> {
    const own = this.own(buffer);
    const storage = own.layout ? layoutWriteBytes(own, own.layout, data) : writeStorage(own as { elementType: ElementType; length: number }, data);
    const write = (source: TypedArray) => {
      this.batcher.flush();
      if (own.length > 0) this.writeBytes(own.gpuBuffer, source);
    };
    if (!this.preparing) return write(storage);
    const copy = storage.slice();
    return this.afterPreparing(async () => write(copy));
  }

  /** A copy of the buffer after the work enqueued before it; raises the first error that work met. */
  async read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray> {
    const own = this.own(buffer);
    return this.preparing ? this.afterPreparing(() => this.readNow(own, options)) : this.readNow(own, options);
  }

  /** Submits the copy at once (with the open batch, in order), then waits for it to be mapped. */
  private async readNow(own: WebGpuBuffer, options?: ReadOptions): Promise<TypedArray> {
    const size = bufferBytes(own);
    // Whole words: buffers of 8- and 16-bit elements are allocated in whole 16-byte units.
    const bytes = Math.max(4, Math.ceil(size / 4) * 4);
    const staging = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.gpu.createCommandEncoder();
    encoder.copyBufferToBuffer(own.gpuBuffer, 0, staging, 0, bytes);
    const errors = this.readErrors(encoder);
    this.batcher.flush([encoder.finish()]);
    try {
      await errors?.();
      await staging.mapAsync(GPUMapMode.READ);
      // A buffer of vectors or structs comes back as its bytes (unpackStructs reads them).
      const range = staging.getMappedRange().slice(0, size);
      const copy = own.layout ? new Uint8Array(range) : fromStorage(own.elementType as ElementType, new storageConstructors[own.elementType as ElementType](range), options);
      staging.unmap();
      await this.batcher.validated();
      this.ledger.raise();
      return copy;
    } finally {
      staging.destroy();
    }
  }

  /** Submits what is recorded, waits for the queue to finish it and for its validation; raises its errors. */
  synchronize(): Promise<void> {
    return this.preparing ? this.afterPreparing(() => this.synchronizeNow()) : this.synchronizeNow();
  }

  private async synchronizeNow(): Promise<void> {
    const encoder = this.checkedLaunches.pending ? this.gpu.createCommandEncoder() : undefined;
    const errors = encoder && this.readErrors(encoder);
    this.batcher.flush(encoder ? [encoder.finish()] : []);
    await errors?.();
    await this.gpu.queue.onSubmittedWorkDone();
    await this.batcher.validated();
    this.ledger.raise();
  }

  /** Runs `job` once every launch waiting for its pipeline has been recorded; later ones wait for it. */
  private afterPreparing<T>(job: () => Promise<T>): Promise<T> {
    const run = (this.preparing ?? resolved).then(job);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.preparing = settled;
    void settled.then(() => {
      if (this.preparing === settled) this.preparing = undefined;
    });
    return run;
  }

  private async module(kernel: KernelHandle): Promise<GPUShaderModule> {
    const source = kernel.wgsl!.source;
    let module = this.modules.get(source);
    if (!module) {
      // In an error scope of its own, so that a shader Dawn rejects is reported with Dawn's messages (not
      // as "invalid due to a previous error" from the pipeline, nor printed by Dawn on its own).
      this.gpu.pushErrorScope("validation");
      module = this.gpu.createShaderModule({ code: source, label: kernel.description.source });
      const error = await this.gpu.popErrorScope();
      if (error) throw new LaunchError(kernel.description.entryName, `WebGPU rejected the shader: ${error.message}${await this.compilationMessages(kernel, module)}`);
      this.modules.set(source, module);
    }
    return module;
  }

  /** A module's compilation messages, each at the TypeScript line its WGSL line came from where known. */
  private async compilationMessages(kernel: KernelHandle, module: GPUShaderModule): Promise<string> {
    const info = await module.getCompilationInfo();
    const where = (line: number) => kernel.wgsl?.lineSources?.[line - 1];
    const messages = info.messages
      .map((m) => `  ${m.type} at ${where(m.lineNum) ? `${where(m.lineNum)} (WGSL line ${m.lineNum})` : `WGSL ${m.lineNum}:${m.linePos}`}: ${m.message}`)
      .join("\n");
    return messages ? `\n${messages}` : "";
  }

  /** The pipeline of a kernel and block when it was made before (what every launch but the first finds). */
  cachedPipeline(kernel: KernelHandle, block: readonly [number, number, number]): PipelineEntry | undefined {
    return this.pipelinesByHandle.get(kernel)?.get(`${block[0]},${block[1]},${block[2]}`);
  }

  async pipeline(kernel: KernelHandle, block: readonly [number, number, number]): Promise<PipelineEntry> {
    const description = kernel.description;
    const wgsl = description.outputs.wgsl;
    if (!kernel.wgsl || !wgsl) throw notBuiltFor(description, "webgpu");
    const module = await this.module(kernel);
    let cache = this.pipelines.get(module);
    if (!cache) this.pipelines.set(module, (cache = new Map()));
    const key = `${wgsl.entryPoint}#${block.join("x")}`;
    let entry = cache.get(key);
    if (!entry) {
      const entries: GPUBindGroupLayoutEntry[] = wgsl.layout.bindings.map((binding) => ({
        binding: binding.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: binding.type },
      }));
      // One layout for every launch of the kernel, whatever its scalars: they sit at a dynamic offset.
      if (wgsl.layout.uniform) entries.push({ binding: wgsl.layout.uniform.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform", hasDynamicOffset: true } });
      this.gpu.pushErrorScope("validation");
      const layout = this.gpu.createBindGroupLayout({ entries, label: description.entryName });
      const constants: Record<string, number> = {};
      wgsl.workgroupSizeOverrides?.forEach((name, axis) => {
        constants[name] = block[axis]!;
      });
      const pipeline = this.gpu.createComputePipeline({
        label: description.entryName,
        layout: this.gpu.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: wgsl.entryPoint, constants },
      });
      const error = await this.gpu.popErrorScope();
      if (error) throw new LaunchError(description.entryName, `WebGPU rejected the pipeline: ${error.message}${await this.compilationMessages(kernel, module)}`);
      entry = { pipeline, layout };
      cache.set(key, entry);
    }
    let byBlock = this.pipelinesByHandle.get(kernel);
    if (!byBlock) this.pipelinesByHandle.set(kernel, (byBlock = new Map()));
    byBlock.set(`${block[0]},${block[1]},${block[2]}`, entry);
    return entry;
  }

  /** Where the kernel's bindings and scalars come from (once per kernel handle). */
  plan(kernel: KernelHandle): KernelPlan {
    let plan = this.plans.get(kernel);
    if (!plan) this.plans.set(kernel, (plan = kernelPlan(kernel)));
    return plan;
  }

  /**
   * Every check a launch gets before anything is enqueued: the kernel has WGSL, the device the features and
   * memory it needs, the arguments and the block are right, the buffers and the stream are this device's.
   */
  checkLaunch(kernel: KernelHandle, options: LaunchOptions): CheckedLaunch {
    const name = kernelName(kernel);
    this.buffers.assertOpen(name);
    if (!kernel.wgsl || !kernel.description.outputs.wgsl) throw notBuiltFor(kernel.description, "webgpu");
    if (this.checked && !kernel.description.outputs.wgsl.checks) throw notCheckedBuild(name);
    if (kernel.description.subgroups && !this.hasSubgroups) {
      throw new LaunchError(name, "it uses subgroup operations, which need the WebGPU feature 'subgroups', and this device does not have it (the adapter does not offer it)");
    }
    for (const feature of kernel.description.outputs.wgsl.features ?? []) {
      if (!this.hasFeature(feature)) {
        throw new LaunchError(name, `its types need the WebGPU feature '${feature}'${feature === "shader-f16" ? " (f16)" : ""}, and this device does not have it (the adapter does not offer it)`);
      }
    }
    const checked = checkLaunch(kernel.description, options, "webgpu", this.limits);
    this.buffers.checkLaunch(name, checked);
    const shared = kernel.description.sharedBytes;
    if (shared > this.gpu.limits.maxComputeWorkgroupStorageSize) {
      throw new LaunchError(name, `it needs ${shared} bytes of workgroup memory; this adapter allows ${this.gpu.limits.maxComputeWorkgroupStorageSize}`);
    }
    checkStream(options.stream, this, name, (stream) => (stream as SingleQueueStream).disposed);
    return checked;
  }

  /**
   * Checks the launch and records it into the open batch (command-batch.ts), which is submitted later: the
   * promise resolves once it is recorded. The first launch of a kernel and block waits for its pipeline (a
   * shader or pipeline WebGPU rejects then rejects the launch), and the launches after it wait their turn.
   */
  launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    let checked: CheckedLaunch;
    try {
      checked = this.checkLaunch(kernel, options);
    } catch (error) {
      return Promise.reject(error);
    }
    const entry = this.preparing ? undefined : this.cachedPipeline(kernel, checked.block);
    if (entry) {
      this.recordLaunch(kernel, checked, entry);
      return resolved;
    }
    return this.afterPreparing(async () => this.recordLaunch(kernel, checked, await this.pipeline(kernel, checked.block)));
  }

  private recordLaunch(kernel: KernelHandle, checked: CheckedLaunch, entry: PipelineEntry): void {
    const plan = this.plan(kernel);
    const launch = this.ledger.next(plan.name);
    const args = this.launchArgs(kernel, checked.args, () => this.checkedLaunches.launched(launch, kernel.description, checksOf(kernel.description, "wgsl")!));
    const storage = plan.bindingArgs.map((arg) => (args[arg] as WebGpuBuffer).gpuBuffer);
    let uniformOffset: number | undefined;
    let uniform: { binding: number; buffer: GPUBuffer; size: number } | undefined;
    if (plan.uniform) {
      const slot = this.batcher.uniformSlot(plan.uniform.size);
      writeScalars(plan, args, slot.view, slot.offset);
      uniformOffset = slot.offset;
      uniform = { binding: plan.uniform.binding, buffer: slot.uniform.buffer, size: plan.uniform.size };
    }
    const bindGroup = this.bindGroups.get(entry.layout, plan.bindings, storage, uniform);
    this.batcher.record({ launch, kernel: plan.name, pipeline: entry.pipeline, bindGroup, uniformOffset, grid: checked.grid }, storage);
  }

  /** For WebGpuSequence: records a replay's dispatches, numbered in the ledger, into the open batch. */
  recordReplay(steps: readonly SequenceStep[]): void {
    for (const step of steps) this.buffers.checkLaunch(step.plan.name, step.checked);
    for (const step of steps) {
      const launch = this.ledger.next(step.plan.name);
      if (step.tag) this.checkedLaunches.replayed(step.tag, launch);
      const dispatch: Dispatch = { launch, kernel: step.plan.name, pipeline: step.entry.pipeline, bindGroup: step.bindGroup, uniformOffset: step.uniformOffset, grid: step.checked.grid };
      this.batcher.record(dispatch, step.storage);
    }
  }

  /** For WebGpuSequence: whether launches are waiting for pipelines (a replay then waits its turn). */
  get waitingForPipelines(): boolean {
    return this.preparing !== undefined;
  }

  /** For WebGpuSequence: runs `job` after the launches waiting for pipelines. */
  inTurn<T>(job: () => Promise<T>): Promise<T> {
    return this.afterPreparing(job);
  }

  createStream(): Stream {
    this.buffers.assertOpen();
    return new SingleQueueStream(
      {
        backend: "webgpu",
        eventNow: (): StreamEvent => {
          const serial = this.batcher.currentSerial;
          return { kind: "tskernel.event", done: () => this.batcher.completed(serial), synchronize: () => this.synchronize() };
        },
        synchronize: () => this.synchronize(),
      },
      this,
    );
  }

  /** Checks the steps and makes their pipelines, bind groups and uniform buffer now (webgpu-sequence.ts). */
  async record(steps: readonly LaunchStep[]): Promise<LaunchSequence> {
    return WebGpuSequence.create(this, steps);
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    return this.timeSequence([{ kernel, options }], timing);
  }

  /**
   * Each run is one submission of every step, one compute pass each; with timestamp queries, the first pass
   * writes the start and the last pass the end, so the time covers the steps and the gaps between them.
   * Earlier work is waited for first.
   */
  async timeSequence(steps: readonly LaunchStep[], timing: TimingOptions = {}): Promise<Timing> {
    await this.synchronize();
    const sequence = await WebGpuSequence.create(this, steps);
    try {
      const encodeRun = (querySet?: GPUQuerySet): EncodedRun => [sequence.encodeTimed(querySet)];
      const label = steps.map((step) => step.kernel.description.entryName).join(", ");
      return await this.measure(encodeRun, timing, steps.length === 1 ? "the compute pass" : `the ${steps.length} compute passes (one per launch)`, label);
    } finally {
      sequence.dispose();
    }
  }

  /**
   * copyBufferToBuffer of the whole source, between two empty compute passes that carry the timestamp
   * writes (a copy has none of its own); the end timestamp is written once the copy has finished.
   */
  async timeCopy(destination: DeviceBuffer, source: DeviceBuffer, timing: CopyTimingOptions = {}): Promise<Timing> {
    checkCopy(destination, source);
    const from = this.own(source).gpuBuffer;
    const to = this.own(destination).gpuBuffer;
    await this.synchronize();
    const repeat = timing.repeat ?? 1;
    const encodeRun = (querySet?: GPUQuerySet): EncodedRun => {
      const encoder = this.gpu.createCommandEncoder();
      if (querySet) encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0 } }).end();
      for (let i = 0; i < repeat; i++) encoder.copyBufferToBuffer(from, 0, to, 0, Math.min(from.size, to.size));
      if (querySet) encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 1 } }).end();
      return [encoder.finish()];
    };
    const what = `empty compute passes before and after ${repeat > 1 ? `${repeat} copyBufferToBuffer calls` : "copyBufferToBuffer"}`;
    const timed = await this.measure(encodeRun, timing, what, "copyBufferToBuffer");
    return { ...timed, medianMs: timed.medianMs / repeat, minMs: timed.minMs / repeat, runsMs: timed.runsMs.map((ms) => ms / repeat) };
  }

  /**
   * Warm-up runs (validation errors there are reported, naming `label`), then each timed run: with timestamp
   * queries where the device has them, else by the host clock. The runs are submitted directly, not batched:
   * each is timed on its own.
   */
  private async measure(encodeRun: (querySet?: GPUQuerySet) => EncodedRun, timing: TimingOptions, what: string, label: string): Promise<Timing> {
    const warmup = timing.warmup ?? 1;
    const runs = timing.runs ?? 5;
    for (let i = 0; i < warmup; i++) {
      this.gpu.pushErrorScope("validation");
      this.gpu.queue.submit(encodeRun());
      await this.gpu.queue.onSubmittedWorkDone();
      const error = await this.gpu.popErrorScope();
      if (error) throw new LaunchError(label, `WebGPU reported: ${error.message}`);
    }
    const runsMs: number[] = [];
    if (this.hasTimestamps) {
      const querySet = this.gpu.createQuerySet({ type: "timestamp", count: 2 });
      const resolve = this.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      for (let i = 0; i < runs; i++) {
        const commands = encodeRun(querySet);
        const encoder = this.gpu.createCommandEncoder();
        encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
        const staging = this.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        encoder.copyBufferToBuffer(resolve, 0, staging, 0, 16);
        this.gpu.queue.submit([...commands, encoder.finish()]);
        await staging.mapAsync(GPUMapMode.READ);
        const [begin, end] = new BigUint64Array(staging.getMappedRange());
        runsMs.push(end! > begin! ? Number(end! - begin!) / 1e6 : 0);
        staging.unmap();
        staging.destroy();
      }
      querySet.destroy();
      resolve.destroy();
      // A browser rounds timestamps (Chromium to 100 µs) against timing attacks, so a short kernel can
      // measure 0: then the clock below times it instead (Dawn in Node gets full resolution, see dawn.ts).
      if (median(runsMs) > 0) return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: `timestamp queries at the start and end of ${what}` };
      runsMs.length = 0;
    }
    for (let i = 0; i < runs; i++) {
      const commands = encodeRun();
      const start = performance.now();
      this.gpu.queue.submit(commands);
      await this.gpu.queue.onSubmittedWorkDone();
      runsMs.push(performance.now() - start);
    }
    const why = this.hasTimestamps ? "timestamp queries rounded to 0" : "no timestamp queries";
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: `performance.now() from submit to queue completion of ${what} (${why})` };
  }

  /** Whether `buffer` is one of this device's live buffers (for WebGpuSequence). */
  ownBuffer(buffer: DeviceBuffer): WebGpuBuffer {
    return this.own(buffer);
  }

  dispose(): void {
    if (this.buffers.dispose()) return;
    this.errorBuffer?.gpuBuffer.destroy();
    this.batcher.dispose();
    this.gpu.destroy();
  }
}
