/**
 * The WebGPU backend: runs the WGSL backend's output through a `GPUDevice` — Dawn (the `webgpu` package) in
 * Node, or `navigator.gpu` where one exists. Bind group layouts come from the manifest's layout (storage
 * buffers in parameter order, then one uniform buffer of scalars), pipelines are cached per kernel
 * specialization and block shape (the workgroup size is an override constant when the kernel does not fix
 * it), results come back through mapped staging buffers, and launches are timed with timestamp queries when
 * the adapter has them, otherwise by waiting for the queue.
 *
 * Device limits are raised as far as the adapter allows, so big workgroups and big matrices work on real
 * GPUs; a launch that needs more than the device offers is refused with the numbers.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { KernelHandle } from "../kernels.ts";
import { BackendUnavailable, bufferShape, checkWrite, median, typedArrayConstructors, type Device, type DeviceBuffer, type ElementType, type LaunchOptions, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { checkLaunch, LaunchError, type LaunchLimits } from "../launch-check.ts";

interface WebGpuBuffer extends DeviceBuffer {
  readonly gpuBuffer: GPUBuffer;
}



/** Where Debian's chromium package puts SwiftShader's Vulkan driver, a CPU implementation Dawn can use. */
const swiftShaderIcds = ["/usr/lib/chromium/vk_swiftshader_icd.json", "/usr/lib/chromium-browser/vk_swiftshader_icd.json"];

export interface WebGpuDeviceOptions {
  /** Extra Dawn options for `create()` in Node, e.g. ["enable-dawn-features=disable_robustness"]. */
  readonly dawnOptions?: readonly string[];
  /** Use SwiftShader (CPU Vulkan) when no other Vulkan driver is configured. Default: true on Linux. */
  readonly swiftShaderFallback?: boolean;
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

export async function createWebGpuDevice(options: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  let gpu: GPU | undefined = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) {
    if ((options.swiftShaderFallback ?? process.platform === "linux") && !process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES) {
      const icd = swiftShaderIcds.find((file) => fs.existsSync(file));
      // Only on machines without a GPU device node: a real GPU always wins over the CPU fallback.
      if (icd && !hasGpuDeviceNode()) {
        process.env.VK_ICD_FILENAMES = icd;
        // SwiftShader complains on every start when XDG_RUNTIME_DIR is unset (headless machines, CI).
        process.env.XDG_RUNTIME_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-xdg-"));
      }
    }
    let webgpu: typeof import("webgpu");
    try {
      webgpu = await import("webgpu");
    } catch (error) {
      throw new BackendUnavailable("webgpu", `the 'webgpu' package (Dawn for Node) could not be loaded: ${(error as Error).message}`);
    }
    const globals = globalThis as Record<string, unknown>;
    for (const [key, value] of Object.entries(webgpu.globals)) if (!(key in globals)) globals[key] = value;
    // Dawn rounds timestamps to 100 µs by default (a browser's defence against timing attacks), which
    // makes kernel times meaningless; in Node the caller is trusted, so full resolution is asked for.
    gpu = webgpu.create(["disable-dawn-features=timestamp_quantization", ...(options.dawnOptions ?? [])]);
  }
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) {
    throw new BackendUnavailable(
      "webgpu",
      "no WebGPU adapter was found. On Linux without a GPU, install Debian's chromium package, which ships SwiftShader " +
        "(tskernel then finds its vk_swiftshader_icd.json), or set VK_ICD_FILENAMES to a Vulkan driver's ICD file",
    );
  }
  const requiredLimits: Record<string, number> = {};
  for (const name of raisedLimits) {
    const value = (adapter.limits as unknown as Record<string, number>)[name];
    if (typeof value === "number") requiredLimits[name] = value;
  }
  const requiredFeatures: GPUFeatureName[] = adapter.features.has("timestamp-query") ? ["timestamp-query"] : [];
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.device, info?.description].filter(Boolean).join(" ") || "WebGPU adapter";
  return new WebGpuDevice(device, name, gpu);
}

/** An NVIDIA device or a DRM render node: some GPU a Vulkan driver could drive. */
function hasGpuDeviceNode(): boolean {
  if (fs.existsSync("/dev/nvidia0")) return true;
  try {
    return fs.readdirSync("/dev/dri").some((name) => name.startsWith("renderD"));
  } catch {
    return false;
  }
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

  constructor(
    readonly gpu: GPUDevice,
    readonly name: string,
    /**
     * The GPU instance the device came from. Dawn for Node destroys its native instance when this object is
     * garbage-collected, even with devices still in use, and the next wait on the queue then aborts the
     * process ("The futex facility returned an unexpected error code", or std::system_error "Invalid
     * argument"): the device must keep it alive.
     */
    private readonly instance: GPU,
  ) {
    const l = gpu.limits;
    this.limits = {
      maxThreadsPerBlock: l.maxComputeInvocationsPerWorkgroup,
      maxBlockDims: [l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY, l.maxComputeWorkgroupSizeZ],
      maxGridDims: [l.maxComputeWorkgroupsPerDimension, l.maxComputeWorkgroupsPerDimension, l.maxComputeWorkgroupsPerDimension],
      maxSharedBytes: l.maxComputeWorkgroupStorageSize,
    };
  }

  get hasTimestamps(): boolean {
    return this.gpu.features.has("timestamp-query");
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, length: number): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType, length?: number): DeviceBuffer {
    const { elementType, length: count } = bufferShape(dataOrType, length);
    // Whole vec4s: WGSL binds buffers that a kernel only accesses four elements at a time as array<vec4<f32>>.
    const bytes = Math.max(16, Math.ceil((count * 4) / 16) * 16);
    if (bytes > this.gpu.limits.maxStorageBufferBindingSize) {
      throw new RangeError(`tskernel: a buffer of ${bytes} bytes exceeds this adapter's maxStorageBufferBindingSize (${this.gpu.limits.maxStorageBufferBindingSize})`);
    }
    const gpuBuffer = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    if (typeof dataOrType !== "string" && count > 0) this.gpu.queue.writeBuffer(gpuBuffer, 0, dataOrType.buffer, dataOrType.byteOffset, dataOrType.byteLength);
    const buffer: WebGpuBuffer = { kind: "tskernel.buffer", backend: "webgpu", elementType, length: count, gpuBuffer };
    return buffer;
  }

  private own(buffer: DeviceBuffer): WebGpuBuffer {
    if (buffer.backend !== "webgpu" || !("gpuBuffer" in buffer)) throw new TypeError("tskernel: this buffer does not belong to the WebGPU device");
    return buffer as WebGpuBuffer;
  }

  async write(buffer: DeviceBuffer, data: TypedArray): Promise<void> {
    const own = this.own(buffer);
    checkWrite(own, data);
    this.gpu.queue.writeBuffer(own.gpuBuffer, 0, data.buffer, data.byteOffset, data.byteLength);
  }

  async read(buffer: DeviceBuffer): Promise<TypedArray> {
    const own = this.own(buffer);
    const bytes = Math.max(4, own.length * 4);
    const staging = this.gpu.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.gpu.createCommandEncoder();
    encoder.copyBufferToBuffer(own.gpuBuffer, 0, staging, 0, bytes);
    this.gpu.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const copy = new typedArrayConstructors[own.elementType](staging.getMappedRange().slice(0, own.length * 4));
    staging.unmap();
    staging.destroy();
    return copy;
  }

  private module(kernel: KernelHandle): GPUShaderModule {
    const source = kernel.wgsl!.source;
    let module = this.modules.get(source);
    if (!module) {
      module = this.gpu.createShaderModule({ code: source, label: kernel.description.source });
      this.modules.set(source, module);
    }
    return module;
  }

  private async pipeline(kernel: KernelHandle, block: readonly [number, number, number]): Promise<PipelineEntry> {
    const description = kernel.description;
    const wgsl = description.outputs.wgsl;
    if (!kernel.wgsl || !wgsl) throw new LaunchError(description.entryName, "it was not compiled for the wgsl target");
    const module = this.module(kernel);
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
    if (error) {
      const info = await module.getCompilationInfo();
      // Point at the TypeScript the WGSL line came from, where the compiler recorded it.
      const where = (line: number) => kernel.wgsl?.lineSources?.[line - 1];
      const messages = info.messages
        .map((m) => `  ${m.type} at ${where(m.lineNum) ? `${where(m.lineNum)} (WGSL line ${m.lineNum})` : `WGSL ${m.lineNum}:${m.linePos}`}: ${m.message}`)
        .join("\n");
      throw new LaunchError(description.entryName, `WebGPU rejected the pipeline: ${error.message}${messages ? `\n${messages}` : ""}`);
    }
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
    const checked = checkLaunch(kernel.description, options, "webgpu", this.limits);
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
    this.gpu.pushErrorScope("validation");
    const { commands, uniform } = await this.encode(kernel, options);
    this.gpu.queue.submit([commands]);
    await this.gpu.queue.onSubmittedWorkDone();
    uniform?.destroy();
    const error = await this.gpu.popErrorScope();
    if (error) throw new LaunchError(kernel.description.entryName, `WebGPU reported: ${error.message}`);
  }

  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    const warmup = timing.warmup ?? 1;
    const runs = timing.runs ?? 5;
    for (let i = 0; i < warmup; i++) await this.launch(kernel, options);
    const runsMs: number[] = [];
    if (this.hasTimestamps) {
      const querySet = this.gpu.createQuerySet({ type: "timestamp", count: 2 });
      const resolve = this.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      for (let i = 0; i < runs; i++) {
        const { commands, uniform } = await this.encode(kernel, options, { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 });
        const encoder = this.gpu.createCommandEncoder();
        encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
        const staging = this.gpu.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        encoder.copyBufferToBuffer(resolve, 0, staging, 0, 16);
        this.gpu.queue.submit([commands, encoder.finish()]);
        await staging.mapAsync(GPUMapMode.READ);
        const [begin, end] = new BigUint64Array(staging.getMappedRange());
        runsMs.push(Number(end! - begin!) / 1e6);
        staging.unmap();
        staging.destroy();
        uniform?.destroy();
      }
      querySet.destroy();
      resolve.destroy();
      return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: "timestamp queries at the start and end of the compute pass" };
    }
    for (let i = 0; i < runs; i++) {
      const { commands, uniform } = await this.encode(kernel, options);
      const start = performance.now();
      this.gpu.queue.submit([commands]);
      await this.gpu.queue.onSubmittedWorkDone();
      runsMs.push(performance.now() - start);
      uniform?.destroy();
    }
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: "performance.now() from submit to queue completion (no timestamp queries)" };
  }

  dispose(): void {
    this.gpu.destroy();
  }
}
