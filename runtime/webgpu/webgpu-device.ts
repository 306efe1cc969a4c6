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
import { BackendUnavailable, checkCopy, median, type BufferValues, type ReadOptions, type Device, type DeviceBuffer, type KernelHandle, type ElementType, type LaunchOptions, type CopyTimingOptions, type LaunchStep, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { BufferRegistry } from "../buffer-registry.ts";
import { checkLaunch, kernelName, LaunchError, notBuiltFor, type LaunchLimits } from "../launch-check.ts";

interface WebGpuBuffer extends DeviceBuffer {
  readonly gpuBuffer: GPUBuffer;
}

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
export async function requestWebGpuDevice(gpu: GPU, noAdapterHint: string): Promise<WebGpuDevice> {
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new BackendUnavailable("webgpu", `no WebGPU adapter was found. ${noAdapterHint}`);
  const requiredLimits: Record<string, number> = {};
  for (const name of raisedLimits) {
    const value = (adapter.limits as unknown as Record<string, number>)[name];
    if (typeof value === "number") requiredLimits[name] = value;
  }
  // Optional features a kernel may need: timestamps for timing, subgroups for kernels with subgroup operations.
  const requiredFeatures = (["timestamp-query", "subgroups"] as GPUFeatureName[]).filter((feature) => adapter.features.has(feature));
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(" ") || "WebGPU adapter";
  return new WebGpuDevice(device, name, gpu);
}

/** The command buffers of one timed run, and what to release once it has run. */
interface EncodedRun {
  readonly commands: GPUCommandBuffer[];
  release(): void;
}

interface PipelineEntry {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

export class WebGpuDevice implements Device {
  readonly backend = "webgpu" as const;
  private readonly modules = new Map<string, GPUShaderModule>();
  /** Pipelines per shader module (one per distinct WGSL source), then per entry point and block shape. */
  private readonly pipelines = new Map<GPUShaderModule, Map<string, PipelineEntry>>();
  readonly limits: LaunchLimits;
  private readonly buffers = new BufferRegistry("WebGPU", "webgpu");

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
  }

  /** Whether the device has the `subgroups` feature, which kernels with subgroup operations need. */
  get hasSubgroups(): boolean {
    return this.gpu.features.has("subgroups" as GPUFeatureName);
  }

  get hasTimestamps(): boolean {
    return this.gpu.features.has("timestamp-query");
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, lengthOrValues: number | BufferValues): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType, lengthOrValues?: number | BufferValues): DeviceBuffer {
    this.buffers.assertOpen();
    const { elementType, length: count, storage } = bufferShape(dataOrType, lengthOrValues);
    // Whole vec4s: WGSL binds buffers that a kernel only accesses four elements at a time as array<vec4<f32>>;
    // and whole u32 words, in which WGSL holds 8- and 16-bit elements.
    const bytes = Math.max(16, Math.ceil((count * elementBytes(elementType)) / 16) * 16);
    if (bytes > this.gpu.limits.maxStorageBufferBindingSize) {
      throw new RangeError(`tskernel: a buffer of ${bytes} bytes exceeds this adapter's maxStorageBufferBindingSize (${this.gpu.limits.maxStorageBufferBindingSize})`);
    }
    const gpuBuffer = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    if (storage && count > 0) this.writeBytes(gpuBuffer, storage);
    return this.buffers.add<WebGpuBuffer>({ kind: "tskernel.buffer", backend: "webgpu", elementType, length: count, gpuBuffer });
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

  /** Destroys a buffer's GPU memory now (instead of at garbage collection); any later use is refused. */
  free(buffer: DeviceBuffer): void {
    const own = this.own(buffer);
    this.buffers.free(own);
    own.gpuBuffer.destroy();
  }

  async write(buffer: DeviceBuffer, data: BufferValues): Promise<void> {
    const own = this.own(buffer);
    const storage = writeStorage(own, data);
    if (own.length > 0) this.writeBytes(own.gpuBuffer, storage);
  }

  async read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray> {
    const own = this.own(buffer);
    const size = own.length * elementBytes(own.elementType);
    const bytes = Math.max(4, Math.ceil(size / 4) * 4);
    const staging = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.gpu.createCommandEncoder();
    encoder.copyBufferToBuffer(own.gpuBuffer, 0, staging, 0, bytes);
    this.gpu.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const copy = fromStorage(own.elementType, new storageConstructors[own.elementType](staging.getMappedRange().slice(0, size)), options);
    staging.unmap();
    staging.destroy();
    return copy;
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

  private async pipeline(kernel: KernelHandle, block: readonly [number, number, number]): Promise<PipelineEntry> {
    const description = kernel.description;
    const wgsl = description.outputs.wgsl;
    if (!kernel.wgsl || !wgsl) throw notBuiltFor(description, "webgpu");
    const module = await this.module(kernel);
    let cache = this.pipelines.get(module);
    if (!cache) this.pipelines.set(module, (cache = new Map()));
    const key = `${wgsl.entryPoint}#${block.join("x")}`;
    const cached = cache.get(key);
    if (cached) return cached;

    const entries: GPUBindGroupLayoutEntry[] = wgsl.layout.bindings.map((binding) => ({
      binding: binding.binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: binding.type },
    }));
    if (wgsl.layout.uniform) entries.push({ binding: wgsl.layout.uniform.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } });
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
    const entry = { pipeline, layout };
    cache.set(key, entry);
    return entry;
  }

  private uniformData(kernel: KernelHandle, args: readonly unknown[]): ArrayBuffer | undefined {
    const uniform = kernel.description.outputs.wgsl!.layout.uniform;
    if (!uniform) return undefined;
    const runtimeParams = kernel.description.params.filter((p) => p.kind !== "const");
    const data = new ArrayBuffer(uniform.size);
    const view = new DataView(data);
    for (const field of uniform.fields) {
      const value = args[runtimeParams.findIndex((p) => p.name === field.param)];
      if (field.type === "bool") view.setUint32(field.offset, value ? 1 : 0, true);
      else if (field.wgslType === "f32") view.setFloat32(field.offset, value as number, true);
      else if (field.wgslType === "i32") view.setInt32(field.offset, value as number, true);
      else view.setUint32(field.offset, value as number, true);
    }
    return data;
  }

  /** Encodes one launch; returns the command buffer and what must be released after it ran. */
  private async encode(kernel: KernelHandle, options: LaunchOptions, timestamps?: GPUComputePassTimestampWrites): Promise<{ commands: GPUCommandBuffer; uniform?: GPUBuffer }> {
    this.buffers.assertOpen(kernelName(kernel));
    if (!kernel.wgsl || !kernel.description.outputs.wgsl) throw notBuiltFor(kernel.description, "webgpu");
    if (kernel.description.subgroups && !this.hasSubgroups) {
      throw new LaunchError(kernel.description.entryName, "it uses subgroup operations, which need the WebGPU feature 'subgroups', and this device does not have it (the adapter does not offer it)");
    }
    const checked = checkLaunch(kernel.description, options, "webgpu", this.limits);
    this.buffers.checkLaunch(kernel.description.entryName, checked);
    const shared = kernel.description.sharedBytes;
    if (shared > this.gpu.limits.maxComputeWorkgroupStorageSize) {
      throw new LaunchError(kernel.description.entryName, `it needs ${shared} bytes of workgroup memory; this adapter allows ${this.gpu.limits.maxComputeWorkgroupStorageSize}`);
    }
    const { pipeline, layout } = await this.pipeline(kernel, checked.block);
    const wgsl = kernel.description.outputs.wgsl!;
    const buffers = checked.args.filter((arg): arg is DeviceBuffer => typeof arg === "object");
    const entries: GPUBindGroupEntry[] = wgsl.layout.bindings.map((binding, index) => ({ binding: binding.binding, resource: { buffer: this.own(buffers[index]!).gpuBuffer } }));
    const uniformBytes = this.uniformData(kernel, checked.args);
    let uniform: GPUBuffer | undefined;
    if (uniformBytes) {
      uniform = this.gpu.createBuffer({ size: uniformBytes.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.gpu.queue.writeBuffer(uniform, 0, uniformBytes);
      entries.push({ binding: wgsl.layout.uniform!.binding, resource: { buffer: uniform } });
    }
    const bindGroup = this.gpu.createBindGroup({ layout, entries });
    const encoder = this.gpu.createCommandEncoder();
    const pass = encoder.beginComputePass(timestamps ? { timestampWrites: timestamps } : {});
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(...checked.grid);
    pass.end();
    return { commands: encoder.finish(), uniform };
  }

  async launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    const name = kernelName(kernel);
    this.buffers.assertOpen(name);
    this.gpu.pushErrorScope("validation");
    let encoded: Awaited<ReturnType<WebGpuDevice["encode"]>>;
    try {
      encoded = await this.encode(kernel, options);
    } catch (error) {
      // A refused launch must not leave its scope on the device's stack, where it would swallow later errors.
      await this.gpu.popErrorScope();
      throw error;
    }
    this.gpu.queue.submit([encoded.commands]);
    await this.gpu.queue.onSubmittedWorkDone();
    encoded.uniform?.destroy();
    const error = await this.gpu.popErrorScope();
    if (error) throw new LaunchError(name, `WebGPU reported: ${error.message}`);
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    return this.timeSequence([{ kernel, options }], timing);
  }

  /**
   * Each run is one submission of every step, one compute pass each; with timestamp queries, the first pass
   * writes the start and the last pass the end, so the time covers the steps and the gaps between them.
   */
  async timeSequence(steps: readonly LaunchStep[], timing: TimingOptions = {}): Promise<Timing> {
    const encodeRun = async (querySet?: GPUQuerySet): Promise<EncodedRun> => {
      const encoded: { commands: GPUCommandBuffer; uniform?: GPUBuffer }[] = [];
      for (const [index, step] of steps.entries()) {
        const first = index === 0;
        const last = index === steps.length - 1;
        const writes = querySet && (first || last) ? { querySet, ...(first ? { beginningOfPassWriteIndex: 0 } : {}), ...(last ? { endOfPassWriteIndex: 1 } : {}) } : undefined;
        encoded.push(await this.encode(step.kernel, step.options, writes));
      }
      return { commands: encoded.map((e) => e.commands), release: () => encoded.forEach((e) => e.uniform?.destroy()) };
    };
    const label = steps.map((step) => step.kernel.description.entryName).join(", ");
    return this.measure(encodeRun, timing, steps.length === 1 ? "the compute pass" : `the ${steps.length} compute passes (one per launch)`, label);
  }

  /**
   * copyBufferToBuffer of the whole source, between two empty compute passes that carry the timestamp
   * writes (a copy has none of its own); the end timestamp is written once the copy has finished.
   */
  async timeCopy(destination: DeviceBuffer, source: DeviceBuffer, timing: CopyTimingOptions = {}): Promise<Timing> {
    checkCopy(destination, source);
    const from = this.own(source).gpuBuffer;
    const to = this.own(destination).gpuBuffer;
    const repeat = timing.repeat ?? 1;
    const encodeRun = async (querySet?: GPUQuerySet): Promise<EncodedRun> => {
      const encoder = this.gpu.createCommandEncoder();
      if (querySet) encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0 } }).end();
      for (let i = 0; i < repeat; i++) encoder.copyBufferToBuffer(from, 0, to, 0, Math.min(from.size, to.size));
      if (querySet) encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 1 } }).end();
      return { commands: [encoder.finish()], release: () => {} };
    };
    const what = `empty compute passes before and after ${repeat > 1 ? `${repeat} copyBufferToBuffer calls` : "copyBufferToBuffer"}`;
    const timed = await this.measure(encodeRun, timing, what, "copyBufferToBuffer");
    return { ...timed, medianMs: timed.medianMs / repeat, minMs: timed.minMs / repeat, runsMs: timed.runsMs.map((ms) => ms / repeat) };
  }

  /**
   * Warm-up runs (validation errors there are reported, naming `label`), then each timed run: with timestamp
   * queries where the device has them, else by the host clock.
   */
  private async measure(encodeRun: (querySet?: GPUQuerySet) => Promise<EncodedRun>, timing: TimingOptions, what: string, label: string): Promise<Timing> {
    const warmup = timing.warmup ?? 1;
    const runs = timing.runs ?? 5;
    for (let i = 0; i < warmup; i++) {
      this.gpu.pushErrorScope("validation");
      const { commands, release } = await encodeRun();
      this.gpu.queue.submit(commands);
      await this.gpu.queue.onSubmittedWorkDone();
      release();
      const error = await this.gpu.popErrorScope();
      if (error) throw new LaunchError(label, `WebGPU reported: ${error.message}`);
    }
    const runsMs: number[] = [];
    if (this.hasTimestamps) {
      const querySet = this.gpu.createQuerySet({ type: "timestamp", count: 2 });
      const resolve = this.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      for (let i = 0; i < runs; i++) {
        const { commands, release } = await encodeRun(querySet);
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
        release();
      }
      querySet.destroy();
      resolve.destroy();
      // A browser rounds timestamps (Chromium to 100 µs) against timing attacks, so a short kernel can
      // measure 0: then the clock below times it instead (Dawn in Node gets full resolution, see dawn.ts).
      if (median(runsMs) > 0) return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: `timestamp queries at the start and end of ${what}` };
      runsMs.length = 0;
    }
    for (let i = 0; i < runs; i++) {
      const { commands, release } = await encodeRun();
      const start = performance.now();
      this.gpu.queue.submit(commands);
      await this.gpu.queue.onSubmittedWorkDone();
      runsMs.push(performance.now() - start);
      release();
    }
    const why = this.hasTimestamps ? "timestamp queries rounded to 0" : "no timestamp queries";
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: `performance.now() from submit to queue completion of ${what} (${why})` };
  }

  dispose(): void {
    if (this.buffers.dispose()) return;
    this.gpu.destroy();
  }
}
