/**
 * The one runtime API over every backend: create a device, allocate typed buffers, launch a compiled kernel
 * with a grid, a block and arguments, read results back, time launches. Every launch is checked first
 * (launch-check.ts) and a bad argument is an error naming the kernel and the parameter; nothing runs. A launch
 * enqueues: it does not wait for the kernel to run; `synchronize` and `read` wait for the work before them and
 * raise the errors it met (docs/runtime.md, "Launches are asynchronous").
 * This file holds the types every other runtime file shares (devices, buffers, compiled kernels, limits),
 * so it imports nothing of the runtime: imports run one way, towards it.
 */

import type { ManifestKernel, ManifestLayout } from "../compiler/lang/manifest.ts";

/**
 * A vector's lanes (an array, a typed array, or `{ x, y, z }`), or a struct's fields by name (any object: an
 * interface of the user's describes one as well as a literal): a kernel argument of a vector or struct
 * parameter, or an element given to `createBuffer(layout, values)`. layouts.ts checks it against the layout.
 */
export type LayoutValue = object;

export type BackendName = "cpu" | "webgpu" | "cuda";
/** The element types of buffers (element-types.ts says how each lies in memory). */
export type ElementType = "f32" | "i32" | "u32" | "f16" | "bf16" | "f64" | "i8" | "u8" | "i16" | "u16" | "e4m3" | "e5m2";
export type TypedArray = Float32Array | Int32Array | Uint32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array;
/** Values a buffer is made from or written with: a typed array, or plain numbers. */
export type BufferValues = TypedArray | readonly number[];

/** `read`'s options: `bits` gives an f16 or bf16 buffer's 16-bit encodings (a Uint16Array), an e4m3 or e5m2 buffer's codes (a Uint8Array), instead of its values. */
export interface ReadOptions {
  readonly bits?: boolean;
}

/** The JS of one kernel: runs a whole block. */
export type JsBlockFunction = (
  args: readonly unknown[],
  blockIdx: readonly number[],
  blockDim: readonly number[],
  gridDim: readonly number[],
  checker?: unknown,
  /** Lanes per subgroup, for kernels that use subgroups (default 32). */
  subgroupSize?: number,
) => void;

/** One compiled kernel specialization: its manifest description and the code of each target it was built for. */
export interface KernelHandle {
  readonly description: ManifestKernel;
  readonly js?: JsBlockFunction;
  /**
   * Where `js` came from: the factory body (code that returns every kernel function of its file) and this
   * kernel's name in it, so that worker threads can instantiate the same function.
   */
  readonly jsSource?: { readonly factoryBody: string; readonly function: string };
  /** The checked-mode build: takes a Checker as a fifth argument. */
  readonly jsChecked?: JsBlockFunction;
  /** `lineSources[i]`: the TypeScript location WGSL line i + 1 came from, to map shader errors back. */
  readonly wgsl?: { readonly source: string; readonly entryPoint: string; readonly lineSources?: readonly (string | undefined)[] };
  /** `cubin` (with its architecture) when the build made one: the CUDA backend then needs no NVRTC. */
  readonly cuda?: {
    readonly source: string;
    readonly function: string;
    /** Dynamic shared memory each launch asks for (kernels with more than 48 KB of shared arrays). */
    readonly dynamicSharedBytes: number;
    readonly cubin?: { readonly data: Uint8Array; readonly arch: string };
  };
}

/** What a launch may ask for on a device. */
export interface LaunchLimits {
  readonly maxThreadsPerBlock: number;
  readonly maxBlockDims: readonly [number, number, number];
  readonly maxGridDims: readonly [number, number, number];
  /** Shared (workgroup) memory one block may use, in bytes; undefined: not limited below what kernels can declare. */
  readonly maxSharedBytes?: number;
  /**
   * Lanes of a subgroup (CUDA's warp: 32; WebGPU: the adapter's largest subgroup size; the CPU: its setting).
   * Blocks of kernels that use subgroups must be a multiple of it.
   */
  readonly subgroupSize?: number;
}

export interface DeviceBuffer {
  readonly kind: "tskernel.buffer";
  readonly backend: BackendName;
  /** One of ElementType; for a buffer of vectors or structs (`layout` set), the layout's name: `vec3f`, `Particle`. */
  readonly elementType: ElementType | (string & {});
  /** Elements: numbers, or vectors or structs of `layout.stride` bytes each. */
  readonly length: number;
  /** A buffer of vectors or structs: how each element lies in memory (runtime/layouts.ts packs and unpacks it). */
  readonly layout?: ManifestLayout;
}

/** `16`, `[16, 16]` or `[16, 16, 1]`; missing entries are 1. */
export type Dim3 = number | readonly [number, number?, number?];

/** A buffer, a scalar, or a vector or struct passed by value (a vector's lanes, a struct's fields: layouts.ts). */
export type KernelArg = DeviceBuffer | number | boolean | LayoutValue;

export interface LaunchOptions {
  readonly grid: Dim3;
  /** Required unless the kernel fixes its block shape (then it may be omitted, or must match). */
  readonly block?: Dim3;
  /** Run-time arguments in parameter order, or by parameter name. Compile-time constants are not passed. */
  readonly args: readonly KernelArg[] | Readonly<Record<string, KernelArg>>;
  /** The stream to enqueue on (device.createStream()); default the device's own queue. */
  readonly stream?: Stream;
}

export interface TimingOptions {
  readonly warmup?: number;
  readonly runs?: number;
}

export interface CopyTimingOptions extends TimingOptions {
  /** Copies back to back in each timed run (default 1); the time reported is per copy. */
  readonly repeat?: number;
}

export interface Timing {
  readonly medianMs: number;
  readonly minMs: number;
  readonly runsMs: readonly number[];
  /** How the time was taken, e.g. "performance.now around each launch". */
  readonly method: string;
}

/** One launch of a sequence that is timed as a whole (the launches of a multi-pass algorithm). */
export interface LaunchStep {
  readonly kernel: KernelHandle;
  readonly options: LaunchOptions;
}

/**
 * An ordered queue of work on a device. On CUDA each is a CUDA stream: launches on different streams may
 * overlap, and events order them where they depend on each other. The device's own queue (launches without a
 * `stream`) is CUDA's legacy default stream, which waits for every other stream's earlier work and makes their
 * later work wait for it. WebGPU and the CPU have one queue: their streams are names for it, every event is
 * already in order, and code written for streams runs unchanged there.
 */
export interface Stream {
  readonly kind: "tskernel.stream";
  readonly backend: BackendName;
  /** A point in this stream: it completes once everything enqueued on the stream before it has run. */
  recordEvent(): StreamEvent;
  /** Work enqueued on this stream from now on waits for `event` (recorded on any stream of the same device). */
  waitEvent(event: StreamEvent): void;
  /** Waits for everything enqueued on this stream so far; raises the errors it met, as device.synchronize does. */
  synchronize(): Promise<void>;
  /** Releases the stream once its work is done; enqueueing on it afterwards is refused. */
  dispose(): void;
}

export interface StreamEvent {
  readonly kind: "tskernel.event";
  /** Whether the work before the event has run (it does not wait). */
  done(): boolean;
  /** Waits until the work before the event has run; raises the errors it met, as device.synchronize does. */
  synchronize(): Promise<void>;
}

/**
 * Launches recorded once and replayed cheaply: their arguments checked and their launch data prepared when
 * recorded, so a replay only enqueues (CUDA: an instantiated CUDA graph; WebGPU: the dispatches encoded again
 * from cached pipelines and bind groups, scalars in the sequence's own uniform buffer; CPU: the checked steps).
 */
export interface LaunchSequence {
  /** The number of launches. */
  readonly length: number;
  /** Enqueues every launch in order, on `stream` where given, like that many launch() calls without their checks. */
  replay(options?: { readonly stream?: Stream }): Promise<void>;
  /**
   * Replaces launch `index`'s options (the same kernel: new scalars, buffers, grid or block), checked as a
   * launch is. Replays enqueued before keep the old ones; later replays use the new ones.
   */
  update(index: number, options: LaunchOptions): void;
  /** Releases what the sequence holds once its enqueued replays are done; replaying it afterwards is refused. */
  dispose(): void;
}

export interface Device {
  readonly backend: BackendName;
  /** A human-readable description of the device, e.g. the adapter or GPU name. */
  readonly name: string;
  /** What a launch may ask for on this device. */
  readonly limits: LaunchLimits;
  /**
   * A buffer of a typed array's type and contents, or of `type` with `length` elements (contents undefined) or
   * with `values`: numbers rounded or converted to the type (for f16 and bf16, a Uint16Array is taken as the
   * encodings themselves; element-types.ts).
   */
  createBuffer(data: TypedArray): DeviceBuffer;
  createBuffer(type: ElementType, lengthOrValues: number | BufferValues): DeviceBuffer;
  /**
   * A buffer of vectors or structs of `layout` (a kernel parameter's, from the manifest: `library.layout(name)`):
   * `length` zeroed elements, or the elements given as values (packed by layouts.ts) or as their bytes.
   */
  createBuffer(layout: ManifestLayout, data: number | Uint8Array | readonly LayoutValue[]): DeviceBuffer;
  /**
   * Writes after the work enqueued before it (a kernel still reading the buffer sees the old contents): values
   * of the buffer's element type, or the bytes (a Uint8Array) of a buffer of vectors or structs.
   */
  write(buffer: DeviceBuffer, data: BufferValues): Promise<void>;
  /**
   * Waits for the work enqueued before it and returns a copy of the buffer: an f16 or bf16 buffer as a
   * Float32Array of its values (exact), or with `bits` its encodings; a buffer of vectors or structs as its
   * bytes (a Uint8Array: unpackStructs reads them). Raises the first error that work met (a LaunchFailure
   * naming the kernel and the launch), instead of returning what it left behind.
   */
  read(buffer: DeviceBuffer, options?: ReadOptions): Promise<TypedArray>;
  /**
   * Checks the launch and enqueues it, in order, on the device's queue (or `options.stream`); it does not wait
   * for the kernel to run. The promise resolves once the launch is enqueued and rejects, with nothing
   * enqueued, when the launch is refused (a LaunchError: a bad argument, a kernel the backend cannot run or
   * compile). Errors the kernel meets while it runs are raised by the next synchronize() or read().
   */
  launch(kernel: KernelHandle, options: LaunchOptions): Promise<void>;
  /** Waits for everything enqueued so far, on every stream; raises the first error it met (LaunchFailure). */
  synchronize(): Promise<void>;
  /** A new stream of this device (see Stream). */
  createStream(): Stream;
  /** Checks and prepares `steps` once, for replaying them cheaply (see LaunchSequence); nothing runs yet. */
  record(steps: readonly LaunchStep[]): Promise<LaunchSequence>;
  /**
   * Times the kernel on the device's clock (CUDA events, WebGPU timestamp queries; the CPU's performance.now()
   * around launches that have run). Waits for the work enqueued before it first, so only its own launches are
   * measured, and raises errors as synchronize() does.
   */
  time(kernel: KernelHandle, options: LaunchOptions, timing?: TimingOptions): Promise<Timing>;
  /**
   * Times launches that run one after another as one unit (each run: from the start of the first launch to
   * the end of the last), with the same clock as `time`: the time of a two- or three-launch algorithm.
   */
  timeSequence(steps: readonly LaunchStep[], timing?: TimingOptions): Promise<Timing>;
  /**
   * Times a device-to-device copy of all of `source` into `destination` (same element count): the memory
   * bandwidth roofline of the device, as bytes read plus bytes written over this time.
   */
  timeCopy(destination: DeviceBuffer, source: DeviceBuffer, timing?: CopyTimingOptions): Promise<Timing>;
  /**
   * Releases a buffer's memory once the work enqueued before has finished with it (at once when none is
   * pending); any later use of it (a second free included) is refused at once.
   */
  free(buffer: DeviceBuffer): void;
  /** Releases the device; any later use of it or its buffers is refused. */
  dispose(): void;
}

/** A vendor GEMM the benchmark can time (cuBLAS on CUDA): enqueue C = A·B on the device's buffers. */
export interface ReferenceGemm {
  readonly name: string;
  /** The element type of A, B and C (a 16-bit reference times the 16-bit rows); absent: f32. */
  readonly dtype?: "bf16" | "f16";
  enqueue(n: number, A: DeviceBuffer, B: DeviceBuffer, C: DeviceBuffer): () => void;
  time(enqueue: () => void, runs: number): Timing;
}

export class BackendUnavailable extends Error {
  constructor(
    readonly backend: BackendName,
    readonly reason: string,
  ) {
    super(`tskernel: the ${backend} backend is unavailable: ${reason}`);
  }
}

export interface DeviceOptions {
  readonly backend?: BackendName | "auto";
  /**
   * Check every access and barrier and report misuse with the kernel's TS location: on the CPU, its checked
   * mode; on CUDA and WebGPU, the device refuses kernels that are not checked builds (compileKernelLibrary(files,
   * targets, { checked: true }), `tskernel build --checked`), whose failed checks the next synchronize() or
   * read() raises (docs/runtime.md, "Checked mode").
   */
  readonly checked?: boolean;
  /** CPU only: threads that share each launch's blocks, the calling one and N − 1 workers (default 1: the calling thread). */
  readonly workers?: number;
  /** CPU only: lanes per subgroup, a power of two from 1 to 128 (default 32, CUDA's warp). */
  readonly subgroupSize?: number;
  /**
   * CPU only: a launch that runs longer is stopped with a LaunchError naming the kernel (in checked mode a
   * KernelFault naming the loop). Unchecked launches then run on worker threads, which can be stopped.
   */
  readonly timeLimitMs?: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A device-to-device copy needs two buffers of one element type and length. */
export function checkCopy(destination: DeviceBuffer, source: DeviceBuffer): void {
  if (destination.length !== source.length || destination.elementType !== source.elementType || destination.layout?.stride !== source.layout?.stride) {
    throw new RangeError(`tskernel: copy of ${source.length} ${source.elementType} elements into a buffer of ${destination.length} ${destination.elementType}`);
  }
}
