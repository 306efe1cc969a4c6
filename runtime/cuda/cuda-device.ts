/**
 * The CUDA backend: the CUDA C backend's output compiled by NVRTC at run time (cubins cached on disk, see
 * module-cache.ts) and launched through the driver API, all through koffi. The device's primary context is
 * used, so cuBLAS (which uses it too) can run on the same buffers as the reference. Launches are checked
 * against the compiled function's own limits (max threads per block given its registers) and the device's,
 * enqueued without waiting (cuda-launch.ts: one native call per launch) on CUDA's legacy default stream or a
 * stream of the device's (cuda-streams.ts), and timed with CUDA events. A fault found when the device next
 * waits (synchronize, read, write) goes through the ledger, naming the launches that were in flight; memory
 * freed while launches may still use it is released once they are done. Recorded sequences are CUDA graphs
 * (cuda-graph.ts).
 */

import { performance } from "node:perf_hooks";
import { bufferShape, elementBytes, fromStorage, storageConstructors, writeStorage } from "../element-types.ts";
import { checkCopy, median, type BufferValues, type ReadOptions, type Device, type DeviceBuffer, type KernelHandle, type ReferenceGemm, type ElementType, type LaunchOptions, type LaunchSequence, type CopyTimingOptions, type LaunchStep, type Stream, type Timing, type TimingOptions, type TypedArray } from "../device.ts";
import { BufferRegistry } from "../buffer-registry.ts";
import { checkLaunch, kernelName, LaunchError, notBuiltFor, type CheckedLaunch, type LaunchLimits } from "../launch-check.ts";
import { LaunchLedger } from "../launch-ledger.ts";
import { checkStream } from "../streams.ts";
import { check, cublasApi, CudaError, driverApi, koffi, nvrtcApi, type DriverApi } from "./cuda-api.ts";
import { CudaSequence } from "./cuda-graph.ts";
import { ArgumentBlock, argumentKinds, argumentLayouts, type CudaBuffer, type CudaLaunchPlan } from "./cuda-launch.ts";
import { CudaStream } from "./cuda-streams.ts";
import type { ManifestLayout } from "../../compiler/lang/manifest.ts";
import { bufferBytes, layoutWriteBytes, structuredBytes, type LayoutValue } from "../layouts.ts";
import { ModuleCache } from "./module-cache.ts";
import { checksOf, CheckedLaunches, implicitArguments } from "../checked-build.ts";

/**
 * The line the CUDA backend prints into modules that use wgmma (compiler/backends/cuda-matrix.ts,
 * `warpgroupMarker`; tests/wgmma.test.ts checks that the two agree): such modules compile for sm_90a.
 */
export const warpgroupModuleMarker = "// tskernel: this module uses wgmma (sm_90a)";

/**
 * Errors that a kernel's execution leaves in the context, reported by the next call that waits for it:
 * illegal address, launch timeout, assert, hardware stack error, illegal instruction, misaligned address,
 * invalid address space, invalid PC, launch failed (cuda.h).
 */
const executionFaults = new Set([700, 702, 710, 714, 715, 716, 717, 718, 719]);
const CU_EVENT_DISABLE_TIMING = 2;
const CUDA_SUCCESS = 0;
const resolved = Promise.resolve();


// Driver enums used here (cuda.h).
const ATTR = { maxThreadsPerBlock: 1, maxBlockDimX: 2, maxBlockDimY: 3, maxBlockDimZ: 4, maxGridDimX: 5, maxGridDimY: 6, maxGridDimZ: 7, computeCapabilityMajor: 75, computeCapabilityMinor: 76, maxSharedPerBlockOptin: 97, l2CacheSize: 38, multiprocessorCount: 16 };
const FUNC_ATTR = { maxThreadsPerBlock: 0, sharedSizeBytes: 1, localSizeBytes: 3, numRegs: 4, maxDynamicSharedBytes: 8 };

export interface CudaCompileOptions {
  /** FMA contraction of a*b+c (NVRTC's --fmad); on by default, as in nvcc. */
  readonly fmad?: boolean;
  readonly cache?: ModuleCache;
  /**
   * Refuse kernels that are not checked builds (`compileKernelLibrary(…, { checked: true })`, `tskernel build
   * --checked`), so that every launch is checked. A checked build runs checked on any device.
   */
  readonly checked?: boolean;
}

/** Words of the error buffer every checked build of this version uses (compiler/passes/checks.ts). */
const errorBufferWords = 81;

export interface CompiledFunction {
  readonly fn: unknown;
  readonly registers: number;
  readonly maxThreadsPerBlock: number;
  readonly staticSharedBytes: number;
  /** Local memory per thread: register spills and private arrays the compiler could not keep in registers. */
  readonly localBytes: number;
  readonly fromCache: boolean;
  readonly compileMs: number;
}


export function createCudaDevice(options: CudaCompileOptions = {}): CudaDevice {
  const cu = driverApi();
  check("cuInit", cu.cuInit(0));
  const count = [0];
  check("cuDeviceGetCount", cu.cuDeviceGetCount(count));
  if (count[0] === 0) throw new LaunchError("(device)", "the CUDA driver reports no GPU");
  const device = [0];
  check("cuDeviceGet", cu.cuDeviceGet(device, 0));
  const context: unknown[] = [null];
  check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(context, device[0]!));
  check("cuCtxSetCurrent", cu.cuCtxSetCurrent(context[0]));
  return new CudaDevice(cu, device[0]!, options);
}

export class CudaDevice implements Device {
  readonly backend = "cuda" as const;
  readonly name: string;
  readonly limits: LaunchLimits;
  readonly arch: string;
  readonly driverVersion: number;
  /** Bytes of L2 cache: benchmarks rotate inputs that would otherwise stay in it between launches. */
  readonly l2Bytes: number;
  readonly multiprocessors: number;
  private readonly cache: ModuleCache;
  private readonly functions = new Map<string, CompiledFunction>();
  private readonly modules = new Map<string, unknown>();
  private readonly fmad: boolean;

  constructor(
    readonly cu: DriverApi,
    ordinal: number,
    options: CudaCompileOptions,
  ) {
    const name = new Uint8Array(256);
    check("cuDeviceGetName", cu.cuDeviceGetName(name, name.length, ordinal));
    this.name = new TextDecoder().decode(name.subarray(0, name.indexOf(0)));
    const attribute = (id: number) => {
      const out = [0];
      check("cuDeviceGetAttribute", cu.cuDeviceGetAttribute(out, id, ordinal));
      return out[0]!;
    };
    this.limits = {
      maxThreadsPerBlock: attribute(ATTR.maxThreadsPerBlock),
      maxBlockDims: [attribute(ATTR.maxBlockDimX), attribute(ATTR.maxBlockDimY), attribute(ATTR.maxBlockDimZ)],
      maxGridDims: [attribute(ATTR.maxGridDimX), attribute(ATTR.maxGridDimY), attribute(ATTR.maxGridDimZ)],
      // What a block may opt in to (227 KB on Hopper); kernels above 48 KB use dynamic shared memory.
      maxSharedBytes: attribute(ATTR.maxSharedPerBlockOptin),
      // Subgroups are warps: 32 lanes on every CUDA GPU.
      subgroupSize: 32,
    };
    this.arch = `sm_${attribute(ATTR.computeCapabilityMajor)}${attribute(ATTR.computeCapabilityMinor)}`;
    this.l2Bytes = attribute(ATTR.l2CacheSize);
    this.multiprocessors = attribute(ATTR.multiprocessorCount);
    const version = [0];
    check("cuDriverGetVersion", cu.cuDriverGetVersion(version));
    this.driverVersion = version[0]!;
    this.cache = options.cache ?? new ModuleCache();
    this.fmad = options.fmad ?? true;
    this.checked = options.checked ?? false;
  }

  /** Whether the device refuses kernels that are not checked builds. */
  readonly checked: boolean;
  /** Checked launches since the error buffer was last read, and the buffer (made on the first). */
  private readonly checkedLaunches = new CheckedLaunches();
  private errorBuffer?: CudaBuffer;

  /** The error buffer of the device's checked launches (zeroed when made, and after each reading). */
  private errors(): CudaBuffer {
    if (!this.errorBuffer) {
      const pointer: bigint[] = [0n];
      check("cuMemAlloc", this.cu.cuMemAlloc_v2(pointer, errorBufferWords * 4));
      const buffer: CudaBuffer = { kind: "tskernel.buffer", backend: "cuda", elementType: "u32", length: errorBufferWords, pointer: BigInt(pointer[0]!) };
      check("cuMemsetD32", this.cu.cuMemsetD32_v2(buffer.pointer, 0, errorBufferWords));
      this.errorBuffer = buffer;
    }
    return this.errorBuffer;
  }

  /** A launch's arguments: a checked build's implicit ones after its own (the error buffer, `tag`, its buffers' lengths). */
  launchArgs(kernel: KernelHandle, args: CheckedLaunch["args"], tag: () => number): CheckedLaunch["args"] {
    const checks = checksOf(kernel.description, "cuda");
    if (!checks) return args;
    return [...args, ...implicitArguments(checks, kernel.description, args, this.errors(), tag())];
  }

  /** For CudaSequence: the tag of a recorded checked node (its records are reported as its latest replay's). */
  sequenceTag(kernel: KernelHandle): number {
    const checks = checksOf(kernel.description, "cuda");
    return checks ? this.checkedLaunches.step(kernel.description, checks) : 0;
  }

  /** For CudaSequence: a replay of the node `tag` is launch `launch`. */
  replayed(tag: number, launch: number): void {
    if (tag) this.checkedLaunches.replayed(tag, launch);
  }

  /** After every launch so far has finished: the error buffer's records into the ledger, and the buffer zeroed. */
  private readErrors(): void {
    if (!this.checkedLaunches.pending || !this.errorBuffer) return;
    const words = new Uint32Array(errorBufferWords);
    check("cuMemcpyDtoH", this.cu.cuMemcpyDtoH_v2(words, this.errorBuffer.pointer, words.byteLength));
    if (words[0] !== 0) check("cuMemsetD32", this.cu.cuMemsetD32_v2(this.errorBuffer.pointer, 0, errorBufferWords));
    this.checkedLaunches.report(words, this.ledger);
  }

  /**
   * NVRTC options for this device: its architecture, line info for profilers, FMA contraction as chosen. A
   * module that uses wgmma (the CUDA backend marks it) is compiled for sm_90a, the one architecture that has
   * the instruction; `compiled` has already refused it on any other GPU.
   */
  compileOptions(source: string): string[] {
    const arch = source.includes(warpgroupModuleMarker) ? "sm_90a" : this.arch;
    return [`--gpu-architecture=${arch}`, "-lineinfo", `--fmad=${this.fmad}`, "-std=c++17"];
  }

  private compileModule(source: string, label: string): { module: unknown; fromCache: boolean; compileMs: number } {
    const cached = this.modules.get(source);
    if (cached) return { module: cached, fromCache: true, compileMs: 0 };
    const start = performance.now();
    const nv = nvrtcApi();
    const major = [0];
    const minor = [0];
    check("nvrtcVersion", nv.nvrtcVersion(major, minor));
    const options = this.compileOptions(source);
    const key = { source, options, arch: this.arch, driverVersion: this.driverVersion, compilerVersion: `${major[0]}.${minor[0]}` };
    let cubin = this.cache.get(key);
    const fromCache = cubin !== undefined;
    if (!cubin) {
      const program: unknown[] = [null];
      nvrtcCheck(nv, "nvrtcCreateProgram", nv.nvrtcCreateProgram(program, source, label, 0, null, null));
      try {
        const status = nv.nvrtcCompileProgram(program[0], options.length, options);
        if (status !== 0) {
          const size = [0];
          nv.nvrtcGetProgramLogSize(program[0], size);
          const log = new Uint8Array(Number(size[0]));
          nv.nvrtcGetProgramLog(program[0], log);
          // The source carries #line directives, so NVRTC's messages already name the TypeScript lines.
          throw new LaunchError(label, `NVRTC failed to compile the generated CUDA:\n${new TextDecoder().decode(log).replace(/\0+$/, "")}`);
        }
        const size = [0];
        nvrtcCheck(nv, "nvrtcGetCUBINSize", nv.nvrtcGetCUBINSize(program[0], size));
        cubin = new Uint8Array(Number(size[0]));
        nvrtcCheck(nv, "nvrtcGetCUBIN", nv.nvrtcGetCUBIN(program[0], cubin));
        this.cache.put(key, cubin);
      } finally {
        nv.nvrtcDestroyProgram(program);
      }
    }
    const module: unknown[] = [null];
    check("cuModuleLoadData", this.cu.cuModuleLoadData(module, cubin));
    this.modules.set(source, module[0]);
    return { module: module[0], fromCache, compileMs: performance.now() - start };
  }

  private loadCubin(source: string, cubin: Uint8Array): { module: unknown; fromCache: boolean; compileMs: number } {
    const cached = this.modules.get(source);
    if (cached) return { module: cached, fromCache: true, compileMs: 0 };
    const module: unknown[] = [null];
    check("cuModuleLoadData", this.cu.cuModuleLoadData(module, cubin));
    this.modules.set(source, module[0]);
    this.prebuiltLoads++;
    return { module: module[0], fromCache: false, compileMs: 0 };
  }

  /** How many modules came from build-time cubins (for tests and the GPU report). */
  prebuiltLoads = 0;

  /** The compiled function of a kernel, compiling (or loading from the cache) on first use. */
  compiled(kernel: KernelHandle): CompiledFunction {
    const cuda = kernel.cuda;
    if (!cuda) throw notBuiltFor(kernel.description, "cuda");
    const key = `${kernel.description.source}#${cuda.function}`;
    const existing = this.functions.get(key);
    if (existing) return existing;
    // wgmma exists on sm_90a only: refused here rather than left to fail in NVRTC or trap.
    if (cuda.source.includes(warpgroupModuleMarker) && this.arch !== "sm_90") {
      throw new LaunchError(kernel.description.entryName, `it uses wgmma (warpgroup matrix operations), which only sm_90 GPUs (Hopper, compiled for sm_90a) have; this GPU is ${this.arch}`);
    }
    // Thread block clusters (__cluster_dims__) start at sm_90: NVRTC would refuse the module elsewhere.
    if (kernel.description.cluster && Number(this.arch.replace(/^sm_(\d+).*$/, "$1")) < 90) {
      throw new LaunchError(kernel.description.entryName, `it runs in clusters of [${kernel.description.cluster.join(", ")}] blocks, which GPUs have from sm_90 (Hopper); this GPU is ${this.arch}`);
    }
    // A cubin built for this GPU at build time is loaded as it is: no NVRTC, no cache.
    const prebuilt = cuda.cubin?.arch === this.arch ? this.loadCubin(cuda.source, cuda.cubin.data) : undefined;
    const { module, fromCache, compileMs } = prebuilt ?? this.compileModule(cuda.source, kernel.description.source);
    const fn: unknown[] = [null];
    check("cuModuleGetFunction", this.cu.cuModuleGetFunction(fn, module, cuda.function));
    const attribute = (id: number) => {
      const out = [0];
      check("cuFuncGetAttribute", this.cu.cuFuncGetAttribute(out, id, fn[0]));
      return out[0]!;
    };
    // Launches may only ask for more than 48 KB of dynamic shared memory once the function allows it.
    if (cuda.dynamicSharedBytes > 0 && cuda.dynamicSharedBytes <= this.limits.maxSharedBytes!) {
      check("cuFuncSetAttribute", this.cu.cuFuncSetAttribute(fn[0], FUNC_ATTR.maxDynamicSharedBytes, cuda.dynamicSharedBytes));
    }
    const compiled = {
      fn: fn[0],
      registers: attribute(FUNC_ATTR.numRegs),
      maxThreadsPerBlock: attribute(FUNC_ATTR.maxThreadsPerBlock),
      staticSharedBytes: attribute(FUNC_ATTR.sharedSizeBytes),
      localBytes: attribute(FUNC_ATTR.localSizeBytes),
      fromCache,
      compileMs,
    };
    this.functions.set(key, compiled);
    return compiled;
  }

  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, lengthOrValues: number | BufferValues): DeviceBuffer;
  createBuffer(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): DeviceBuffer;
  createBuffer(dataOrType: TypedArray | ElementType | ManifestLayout, lengthOrValues?: number | BufferValues | readonly LayoutValue[]): DeviceBuffer {
    this.buffers.assertOpen();
    if (typeof dataOrType === "object" && !ArrayBuffer.isView(dataOrType)) {
      // A buffer of vectors or structs: the .cu's structs have WGSL's layout (static_asserted), so the bytes go as they are.
      const { bytes, length: count } = structuredBytes(dataOrType, lengthOrValues as number | Uint8Array | readonly LayoutValue[]);
      const pointer: bigint[] = [0n];
      check("cuMemAlloc", this.cu.cuMemAlloc_v2(pointer, Math.max(4, bytes.byteLength)));
      const buffer = this.buffers.add<CudaBuffer>({ kind: "tskernel.buffer", backend: "cuda", elementType: dataOrType.name, length: count, layout: dataOrType, pointer: BigInt(pointer[0]!) });
      if (bytes.byteLength > 0) check("cuMemcpyHtoD", this.cu.cuMemcpyHtoD_v2(buffer.pointer, bytes, bytes.byteLength));
      return buffer;
    }
    const { elementType, length: count, storage } = bufferShape(dataOrType, lengthOrValues as number | BufferValues | undefined);
    const bytes = count * elementBytes(elementType);
    const pointer: bigint[] = [0n];
    check("cuMemAlloc", this.cu.cuMemAlloc_v2(pointer, Math.max(4, bytes)));
    const buffer = this.buffers.add<CudaBuffer>({ kind: "tskernel.buffer", backend: "cuda", elementType, length: count, pointer: BigInt(pointer[0]!) });
    if (storage && count > 0) check("cuMemcpyHtoD", this.cu.cuMemcpyHtoD_v2(buffer.pointer, storage, bytes));
    return buffer;
  }

  /**
   * Buffers this device made and has not freed (buffer-registry.ts): a freed buffer's pointer may already
   * belong to another allocation, so handing it to the driver would read or corrupt someone else's memory.
   */
  private readonly buffers = new BufferRegistry("CUDA", "cuda");

  /**
   * The 128 bytes of a tensor map of `source` (runtime/tensor-map.ts): elements of `type` (f32: code 7, 4
   * bytes, unless given), 2-D (cols × rows, rows cols·bytes apart), boxes of boxCols × boxRows, 128-byte
   * swizzle, 256-byte L2 promotion, zeros outside.
   */
  encodeTensorMap(source: DeviceBuffer, shape: { rows: number; cols: number; boxRows: number; boxCols: number }, type = { code: 7, bytes: 4 }): Uint32Array {
    const own = this.own(source);
    const ffi = koffi();
    const memory = ffi.alloc("uint8", 256);
    try {
      const base = ffi.address(memory);
      const skip = Number((64n - (base % 64n)) % 64n);
      const status = this.cu.cuTensorMapEncodeTiled(
        base + BigInt(skip), type.code, 2, own.pointer,
        BigUint64Array.of(BigInt(shape.cols), BigInt(shape.rows)), BigUint64Array.of(BigInt(shape.cols * type.bytes)),
        Uint32Array.of(shape.boxCols, shape.boxRows), Uint32Array.of(1, 1),
        0, 3, 3, 0, // no interleave, 128-byte swizzle, 256-byte L2 promotion, zero fill
      );
      check("cuTensorMapEncodeTiled", status);
      return new Uint32Array(ffi.view(memory, 256).slice(skip, skip + 128));
    } finally {
      ffi.free(memory);
    }
  }

  own(buffer: DeviceBuffer): CudaBuffer {
    this.buffers.own(buffer);
    return buffer as CudaBuffer;
  }

  /** cuMemcpyHtoD: the legacy default stream waits for earlier work on every stream before the copy starts. */
  async write(buffer: DeviceBuffer, data: BufferValues): Promise<void> {
    const own = this.own(buffer);
    const storage = own.layout ? layoutWriteBytes(own, own.layout, data) : writeStorage(own as { elementType: ElementType; length: number }, data);
    if (storage.length > 0) this.settleWait("cuMemcpyHtoD", this.cu.cuMemcpyHtoD_v2(own.pointer, storage, storage.byteLength), true);
    this.ledger.raise();
  }

  /** cuMemcpyDtoH waits for the earlier work of every stream (the legacy default stream's rule), then copies. */
  async read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray> {
    const own = this.own(buffer);
    // A buffer of vectors or structs comes back as its bytes (unpackStructs reads them).
    const out = own.layout ? new Uint8Array(bufferBytes(own)) : new storageConstructors[own.elementType as ElementType](own.length);
    if (own.length > 0) this.settleWait("cuMemcpyDtoH", this.cu.cuMemcpyDtoH_v2(out, own.pointer, out.byteLength), true);
    else this.waitIdle();
    this.ledger.raise();
    return own.layout ? out : fromStorage(own.elementType as ElementType, out, options);
  }

  /** Refuses later uses at once; cuMemFree once the launches enqueued so far are done (at once when none is pending). */
  free(buffer: DeviceBuffer): void {
    const own = this.own(buffer);
    this.buffers.free(own);
    this.releaseWhenDone(() => check("cuMemFree", this.cu.cuMemFree_v2(own.pointer)));
  }

  private readonly ledger = new LaunchLedger();
  /** Releases waiting for the work before them: an event recorded on the legacy default stream marks that point. */
  private readonly deferred: { readonly event: unknown; readonly release: () => void }[] = [];

  /** Runs `release` now if nothing is in flight, else once the event recorded now has completed. */
  releaseWhenDone(release: () => void): void {
    if (!this.ledger.unsettled) {
      release();
      return;
    }
    const event: unknown[] = [null];
    check("cuEventCreate", this.cu.cuEventCreate(event, CU_EVENT_DISABLE_TIMING));
    // On the legacy default stream, the event completes after the earlier work of every blocking stream.
    check("cuEventRecord", this.cu.cuEventRecord(event[0], null));
    this.deferred.push({ event: event[0], release });
    this.releaseCompleted(false);
  }

  /** The releases whose events have completed (all, after the device was found idle), oldest first. */
  private releaseCompleted(idle: boolean): void {
    while (this.deferred.length > 0) {
      const first = this.deferred[0]!;
      if (!idle && this.cu.cuEventQuery(first.event) !== CUDA_SUCCESS) return;
      this.deferred.shift();
      this.cu.cuEventDestroy_v2(first.event);
      first.release();
    }
  }

  /**
   * The status of a call that waited for earlier work (`everything`: of every stream, so that every launch
   * so far is done). Success settles the ledger; an execution fault is recorded for the launches that may
   * have run and raised; any other error is thrown as it is.
   */
  settleWait(call: string, status: number, everything: boolean): void {
    if (status === CUDA_SUCCESS) {
      if (everything) {
        this.ledger.settle();
        this.releaseCompleted(true);
        this.readErrors();
      }
      this.ledger.raise();
      return;
    }
    let error: unknown;
    try {
      check(call, status);
    } catch (thrown) {
      error = thrown;
    }
    if (!executionFaults.has(status)) throw error;
    this.ledger.failUnsettled(error, "CUDA reports a fault for the whole context, not for a launch: synchronize after each launch to find it");
    this.ledger.raise();
  }

  /** Waits for everything enqueued on every stream (cuCtxSynchronize blocks the thread meanwhile). */
  waitIdle(): void {
    this.settleWait("cuCtxSynchronize", this.cu.cuCtxSynchronize(), true);
  }

  async synchronize(): Promise<void> {
    this.waitIdle();
  }

  /** Argument slots reused by every launch: cuLaunchKernel copies the values before it returns. */
  private slots = new ArgumentBlock(32);
  private readonly plans = new WeakMap<KernelHandle, CudaLaunchPlan>();

  /** What a kernel's launches need, worked out on its first launch (compiling it if need be). */
  private plan(kernel: KernelHandle): CudaLaunchPlan {
    const known = this.plans.get(kernel);
    if (known) return known;
    const name = kernelName(kernel);
    this.buffers.assertOpen(name);
    const compiled = this.compiled(kernel);
    const limits: LaunchLimits = { ...this.limits, maxThreadsPerBlock: Math.min(this.limits.maxThreadsPerBlock, compiled.maxThreadsPerBlock) };
    // A dynamic layout aligns each array to 16 bytes, so it may ask for a little more than the arrays hold.
    const sharedBytes = Math.max(kernel.description.sharedBytes, kernel.cuda!.dynamicSharedBytes);
    if (sharedBytes > limits.maxSharedBytes!) {
      throw new LaunchError(name, `it needs ${sharedBytes} bytes of shared memory; this GPU allows ${limits.maxSharedBytes} per block`);
    }
    // A checked build's implicit arguments follow the kernel's own (checked-build.ts): its error buffer, then u32s.
    const implicit = checksOf(kernel.description, "cuda")?.implicit ?? [];
    const own = argumentLayouts(kernel.description.params);
    const kinds = Uint8Array.from([...argumentKinds(kernel.description.params), ...implicitKinds(implicit)]);
    const layouts = own.layouts ? [...own.layouts, ...implicit.map(() => undefined)] : undefined;
    const slotCount = own.slotCount + implicit.length;
    if (slotCount > this.slots.count) this.slots = new ArgumentBlock(slotCount);
    const plan: CudaLaunchPlan = { name, fn: compiled.fn, fnAddress: koffi().address(compiled.fn), limits, dynamicSharedBytes: kernel.cuda!.dynamicSharedBytes, kinds, layouts, slotCount };
    this.plans.set(kernel, plan);
    return plan;
  }

  /** Every check a launch gets (arguments, block, buffers, the device open); for launches and graph nodes. */
  prepare(kernel: KernelHandle, options: LaunchOptions): { plan: CudaLaunchPlan; checked: CheckedLaunch } {
    if (this.checked && !checksOf(kernel.description, "cuda")) {
      throw new LaunchError(kernelName(kernel), "the device runs checked builds only (checked: true), and this kernel was built without checks: compile it with compileKernelLibrary(files, targets, { checked: true }) or tskernel build --checked");
    }
    const plan = this.plan(kernel);
    this.buffers.assertOpen(plan.name);
    const checked = checkLaunch(kernel.description, options, "cuda", plan.limits);
    this.buffers.checkLaunch(plan.name, checked);
    return { plan, checked };
  }

  /** The CUstream of a launch's stream option (null: the legacy default stream). */
  streamHandle(stream: Stream | undefined, kernel: string): unknown {
    if (stream === undefined) return null;
    checkStream(stream, this, kernel, (s) => (s as CudaStream).disposed);
    return (stream as CudaStream).handle;
  }

  /** For CUDA graphs: a freed buffer refuses a replay. */
  checkBuffers(name: string, checked: CheckedLaunch): void {
    this.buffers.checkLaunch(name, checked);
  }

  numberLaunch(kernel: string): number {
    return this.ledger.next(kernel);
  }

  /**
   * Checks a launch and enqueues it on its stream (default: the legacy default stream) without waiting;
   * returns its number in the ledger. Throws what launch() rejects with.
   */
  enqueue(kernel: KernelHandle, options: LaunchOptions): number {
    const { plan, checked } = this.prepare(kernel, options);
    const stream = options.stream === undefined ? null : this.streamHandle(options.stream, plan.name);
    const launch = this.ledger.last + 1;
    const args = this.launchArgs(kernel, checked.args, () => this.checkedLaunches.launched(launch, kernel.description, checksOf(kernel.description, "cuda")!));
    this.slots.write(plan.kinds, args, plan.layouts);
    const [gx, gy, gz] = checked.grid;
    const [bx, by, bz] = checked.block;
    const status = this.cu.cuLaunchKernel(plan.fn, gx, gy, gz, bx, by, bz, plan.dynamicSharedBytes, stream, this.slots.pointers, null);
    if (status !== CUDA_SUCCESS) check(`cuLaunchKernel(${plan.name})`, status);
    return this.ledger.next(plan.name);
  }

  launch(kernel: KernelHandle, options: LaunchOptions): Promise<void> {
    try {
      this.enqueue(kernel, options);
    } catch (error) {
      return Promise.reject(error);
    }
    return resolved;
  }

  createStream(): Stream {
    this.buffers.assertOpen();
    return new CudaStream(this, this);
  }

  /** A CUDA graph of the steps (cuda-graph.ts). */
  async record(steps: readonly LaunchStep[]): Promise<LaunchSequence> {
    this.buffers.assertOpen();
    return CudaSequence.create(this, steps);
  }

  /** Times `runs` launches between CUDA events, each launch measured on its own. */
  async time(kernel: KernelHandle, options: LaunchOptions, timing: TimingOptions = {}): Promise<Timing> {
    return this.timeEnqueued(() => this.enqueue(kernel, options), timing);
  }

  async timeSequence(steps: readonly LaunchStep[], timing: TimingOptions = {}): Promise<Timing> {
    return this.timeEnqueued(() => {
      for (const step of steps) this.enqueue(step.kernel, step.options);
    }, timing);
  }

  /** Enqueues a copy of all of `source` into `destination` on the default stream (cuMemcpyDtoDAsync). */
  enqueueCopy(destination: DeviceBuffer, source: DeviceBuffer): void {
    checkCopy(destination, source);
    check("cuMemcpyDtoDAsync", this.cu.cuMemcpyDtoDAsync_v2(this.own(destination).pointer, this.own(source).pointer, bufferBytes(source), null));
  }

  async timeCopy(destination: DeviceBuffer, source: DeviceBuffer, timing: CopyTimingOptions = {}): Promise<Timing> {
    const repeat = timing.repeat ?? 1;
    const result = this.timeEnqueued(() => {
      for (let i = 0; i < repeat; i++) this.enqueueCopy(destination, source);
    }, timing);
    return { ...perCopy(result, repeat), method: `CUDA events around ${repeat > 1 ? `${repeat} back-to-back cuMemcpyDtoDAsync calls` : "each cuMemcpyDtoDAsync"} on the default stream` };
  }

  /**
   * Times `enqueue` between two CUDA events on the legacy default stream, after waiting for the earlier work
   * (whose errors it raises) and the warm-up runs.
   */
  timeEnqueued(enqueue: () => void, timing: TimingOptions = {}): Timing {
    const warmup = timing.warmup ?? 2;
    const runs = timing.runs ?? 10;
    this.waitIdle();
    for (let i = 0; i < warmup; i++) enqueue();
    this.waitIdle();
    const start: unknown[] = [null];
    const end: unknown[] = [null];
    check("cuEventCreate", this.cu.cuEventCreate(start, 0));
    check("cuEventCreate", this.cu.cuEventCreate(end, 0));
    const runsMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      check("cuEventRecord", this.cu.cuEventRecord(start[0], null));
      enqueue();
      check("cuEventRecord", this.cu.cuEventRecord(end[0], null));
      this.settleWait("cuEventSynchronize", this.cu.cuEventSynchronize(end[0]), true);
      const ms = [0];
      check("cuEventElapsedTime", this.cu.cuEventElapsedTime(ms, start[0], end[0]));
      runsMs.push(ms[0]!);
    }
    this.cu.cuEventDestroy_v2(start[0]);
    this.cu.cuEventDestroy_v2(end[0]);
    return { medianMs: median(runsMs), minMs: Math.min(...runsMs), runsMs, method: "CUDA events around each launch (cuEventElapsedTime)" };
  }

  /**
   * cuBLAS SGEMM on row-major matrices: C = alpha·A·B + beta·C, A m×k, B k×n. cuBLAS is column-major, so
   * this computes Cᵀ = Bᵀ·Aᵀ. `tf32` selects TF32 tensor-core math; otherwise true FP32.
   */
  cublasSgemm(m: number, n: number, k: number, alpha: number, A: DeviceBuffer, B: DeviceBuffer, beta: number, C: DeviceBuffer, tf32 = false): () => void {
    const blas = cublasApi();
    this.cublasHandle ??= (() => {
      const handle: unknown[] = [null];
      cublasCheck("cublasCreate", blas.cublasCreate_v2(handle));
      return handle[0];
    })();
    const handle = this.cublasHandle;
    // CUBLAS_DEFAULT_MATH = 0 (FP32 with no tensor cores for SGEMM), CUBLAS_TF32_TENSOR_OP_MATH = 3.
    const a = this.own(A).pointer;
    const b = this.own(B).pointer;
    const c = this.own(C).pointer;
    const alphaArray = new Float32Array([alpha]);
    const betaArray = new Float32Array([beta]);
    return () => {
      cublasCheck("cublasSetMathMode", blas.cublasSetMathMode(handle, tf32 ? 3 : 0));
      cublasCheck("cublasSgemm", blas.cublasSgemm_v2(handle, 0, 0, n, m, k, alphaArray, b, n, a, k, betaArray, c, n));
    };
  }

  /**
   * cuBLAS's 16-bit GEMM (cublasGemmEx) on row-major bf16 or f16 matrices: C = alpha·A·B + beta·C with f32
   * accumulation (CUBLAS_COMPUTE_32F) and C rounded to the type, as torch.mm does in that type.
   */
  cublasGemm16(dtype: "bf16" | "f16", m: number, n: number, k: number, alpha: number, A: DeviceBuffer, B: DeviceBuffer, beta: number, C: DeviceBuffer): () => void {
    const blas = cublasApi();
    this.cublasHandle ??= (() => {
      const handle: unknown[] = [null];
      cublasCheck("cublasCreate", blas.cublasCreate_v2(handle));
      return handle[0];
    })();
    const handle = this.cublasHandle;
    // cudaDataType: CUDA_R_16F = 2, CUDA_R_16BF = 14; CUBLAS_COMPUTE_32F = 68; CUBLAS_GEMM_DEFAULT = -1.
    const type = dtype === "bf16" ? 14 : 2;
    const a = this.own(A).pointer;
    const b = this.own(B).pointer;
    const c = this.own(C).pointer;
    const alphaArray = new Float32Array([alpha]);
    const betaArray = new Float32Array([beta]);
    return () => {
      cublasCheck("cublasSetMathMode", blas.cublasSetMathMode(handle, 0));
      cublasCheck("cublasGemmEx", blas.cublasGemmEx(handle, 0, 0, n, m, k, alphaArray, b, type, n, a, type, k, betaArray, c, type, n, 68, -1));
    };
  }

  private cublasHandle: unknown;

  /** cuBLAS's GEMM in a 16-bit type (f32 accumulation) as the reference of the benchmark's 16-bit rows. */
  cublasReference16(dtype: "bf16" | "f16"): ReferenceGemm {
    return {
      name: `cuBLAS GEMM (${dtype})`,
      dtype,
      enqueue: (n, A, B, C) => this.cublasGemm16(dtype, n, n, n, 1, A, B, 0, C),
      time: (enqueue, runs) => this.timeEnqueued(enqueue, { warmup: 2, runs }),
    };
  }

  /** cuBLAS SGEMM as the benchmark's reference column: FP32, or TF32 tensor cores. */
  cublasReference(tf32: boolean): ReferenceGemm {
    return {
      name: tf32 ? "cuBLAS SGEMM (TF32)" : "cuBLAS SGEMM (FP32)",
      enqueue: (n, A, B, C) => this.cublasSgemm(n, n, n, 1, A, B, 0, C, tf32),
      time: (enqueue, runs) => this.timeEnqueued(enqueue, { warmup: 2, runs }),
    };
  }

  /**
   * Marks the device disposed: later uses are refused. The primary context stays retained (cuBLAS and other
   * devices of the process share it), and buffers not freed stay allocated until the process ends.
   */
  dispose(): void {
    if (this.buffers.dispose()) return;
    const errors = this.errorBuffer;
    this.errorBuffer = undefined;
    if (errors) this.releaseWhenDone(() => check("cuMemFree", this.cu.cuMemFree_v2(errors.pointer)));
  }
}

/** How a checked build's implicit arguments are written: the error buffer's pointer, then u32 values. */
function implicitKinds(implicit: readonly { readonly kind: string }[]): number[] {
  return implicit.map((param) => (param.kind === "errors" ? argumentKinds([{ name: "errors", kind: "buffer", elementType: "u32", access: "read_write" }])[0]! : argumentKinds([{ name: "value", kind: "scalar", type: "u32" }])[0]!));
}

/** A timing of `repeat` copies per run, as the time of one. */
function perCopy(timing: Timing, repeat: number): Timing {
  const runsMs = timing.runsMs.map((ms) => ms / repeat);
  return { ...timing, runsMs, medianMs: timing.medianMs / repeat, minMs: timing.minMs / repeat };
}

function nvrtcCheck(nv: ReturnType<typeof nvrtcApi>, call: string, code: number): void {
  if (code !== 0) throw new Error(`tskernel: ${call} failed: ${nv.nvrtcGetErrorString(code)} (${code})`);
}

function cublasCheck(call: string, code: number): void {
  if (code !== 0) throw new Error(`tskernel: ${call} failed with cuBLAS status ${code}`);
}
