/**
 * Bindings to the CUDA driver API (libcuda.so.1), NVRTC (libnvrtc.so.13) and cuBLAS (libcublas.so.13)
 * through koffi, loaded lazily: nothing is opened until a CUDA device is asked for, and a machine without
 * a driver gets a BackendUnavailable that says which library is missing, never a crash. Every call's
 * status is checked and turned into a CudaError with the API's own error name.
 */

import { createRequire } from "node:module";
import { BackendUnavailable } from "../device.ts";

type KoffiFunction = (...args: unknown[]) => unknown;
interface KoffiLib {
  func(signature: string): KoffiFunction;
}
interface Koffi {
  load(path: string): KoffiLib;
  alloc(type: string, length: number): bigint;
  encode(pointer: bigint, offset: number, type: string, value: unknown): void;
  free(pointer: bigint): void;
  address(value: unknown): bigint;
  view(pointer: unknown, length: number): ArrayBuffer;
}

export class CudaError extends Error {
  constructor(
    readonly call: string,
    readonly code: number,
    readonly codeName: string,
  ) {
    super(`tskernel: ${call} failed with ${codeName} (${code})`);
  }
}

let koffiModule: Koffi | undefined;

export function koffi(): Koffi {
  if (!koffiModule) {
    try {
      koffiModule = createRequire(import.meta.url)("koffi") as Koffi;
    } catch (error) {
      throw new BackendUnavailable(
        "cuda",
        `the 'koffi' package could not be loaded: ${(error as Error).message.split("\n")[0]}. It is an optional dependency of tskernel: install it with \`npm install koffi\``,
      );
    }
  }
  return koffiModule;
}

function open(names: readonly string[], what: string): KoffiLib {
  // Without koffi nothing can be opened: say that, not that each library is missing.
  const ffi = koffi();
  const errors: string[] = [];
  for (const name of names) {
    try {
      return ffi.load(name);
    } catch (error) {
      errors.push((error as Error).message.split("\n")[0]!);
    }
  }
  throw new BackendUnavailable("cuda", `${what} was not found (${errors.join("; ")})`);
}

export interface DriverApi {
  cuInit(flags: number): number;
  cuDriverGetVersion(out: number[]): number;
  cuDeviceGet(out: number[], ordinal: number): number;
  cuDeviceGetCount(out: number[]): number;
  cuDeviceGetName(out: Uint8Array, length: number, device: number): number;
  cuDeviceGetAttribute(out: number[], attribute: number, device: number): number;
  cuDevicePrimaryCtxRetain(out: unknown[], device: number): number;
  cuCtxSetCurrent(context: unknown): number;
  cuCtxSynchronize(): number;
  cuModuleLoadData(out: unknown[], image: Uint8Array): number;
  cuModuleGetFunction(out: unknown[], module: unknown, name: string): number;
  cuFuncGetAttribute(out: number[], attribute: number, fn: unknown): number;
  cuFuncSetAttribute(fn: unknown, attribute: number, value: number): number;
  cuMemAlloc_v2(out: bigint[], bytes: number): number;
  cuMemFree_v2(pointer: bigint): number;
  cuMemcpyHtoD_v2(device: bigint, host: ArrayBufferView, bytes: number): number;
  cuMemcpyDtoH_v2(host: ArrayBufferView, device: bigint, bytes: number): number;
  cuMemsetD32_v2(device: bigint, value: number, count: number): number;
  cuMemcpyDtoDAsync_v2(destination: bigint, source: bigint, bytes: number, stream: unknown): number;
  cuLaunchKernel(fn: unknown, gx: number, gy: number, gz: number, bx: number, by: number, bz: number, shared: number, stream: unknown, params: bigint, extra: unknown): number;
  cuEventCreate(out: unknown[], flags: number): number;
  cuEventRecord(event: unknown, stream: unknown): number;
  cuEventQuery(event: unknown): number;
  cuEventSynchronize(event: unknown): number;
  cuEventElapsedTime(out: number[], start: unknown, end: unknown): number;
  cuEventDestroy_v2(event: unknown): number;
  cuStreamCreate(out: unknown[], flags: number): number;
  cuStreamWaitEvent(stream: unknown, event: unknown, flags: number): number;
  cuStreamSynchronize(stream: unknown): number;
  cuStreamDestroy_v2(stream: unknown): number;
  cuGraphCreate(out: unknown[], flags: number): number;
  /** Node handles as integers (pointers on x86-64), so that they can be written into a dependency array. */
  cuGraphAddKernelNode_v2(out: bigint[], graph: unknown, dependencies: BigUint64Array | null, count: number, params: bigint): number;
  cuGraphInstantiateWithFlags(out: unknown[], graph: unknown, flags: number): number;
  cuGraphLaunch(exec: unknown, stream: unknown): number;
  cuGraphExecKernelNodeSetParams_v2(exec: unknown, node: bigint, params: bigint): number;
  cuGraphExecDestroy(exec: unknown): number;
  cuGraphDestroy(graph: unknown): number;
  cuGetErrorName(code: number, out: (string | null)[]): number;
  cuTensorMapEncodeTiled(map: bigint, dataType: number, rank: number, address: bigint, dims: BigUint64Array, strides: BigUint64Array, box: Uint32Array, elementStrides: Uint32Array, interleave: number, swizzle: number, l2Promotion: number, oobFill: number): number;
}

export interface NvrtcApi {
  nvrtcCreateProgram(out: unknown[], source: string, name: string, headers: number, headerSources: null, headerNames: null): number;
  nvrtcCompileProgram(program: unknown, count: number, options: string[]): number;
  nvrtcGetProgramLogSize(program: unknown, out: number[]): number;
  nvrtcGetProgramLog(program: unknown, out: Uint8Array): number;
  nvrtcGetCUBINSize(program: unknown, out: number[]): number;
  nvrtcGetCUBIN(program: unknown, out: Uint8Array): number;
  nvrtcDestroyProgram(program: unknown[]): number;
  nvrtcGetErrorString(code: number): string;
  nvrtcVersion(major: number[], minor: number[]): number;
}

export interface CublasApi {
  cublasCreate_v2(out: unknown[]): number;
  cublasSetMathMode(handle: unknown, mode: number): number;
  cublasSgemm_v2(handle: unknown, transa: number, transb: number, m: number, n: number, k: number, alpha: Float32Array, A: bigint, lda: number, B: bigint, ldb: number, beta: Float32Array, C: bigint, ldc: number): number;
  cublasGemmEx(handle: unknown, transa: number, transb: number, m: number, n: number, k: number, alpha: Float32Array, A: bigint, Atype: number, lda: number, B: bigint, Btype: number, ldb: number, beta: Float32Array, C: bigint, Ctype: number, ldc: number, computeType: number, algo: number): number;
}

const driverSignatures = [
  "int cuInit(unsigned int flags)",
  "int cuDriverGetVersion(_Out_ int *version)",
  "int cuDeviceGet(_Out_ int *device, int ordinal)",
  "int cuDeviceGetCount(_Out_ int *count)",
  "int cuDeviceGetName(void *name, int length, int device)",
  "int cuDeviceGetAttribute(_Out_ int *value, int attribute, int device)",
  "int cuDevicePrimaryCtxRetain(_Out_ void **context, int device)",
  "int cuCtxSetCurrent(void *context)",
  "int cuCtxSynchronize()",
  "int cuModuleLoadData(_Out_ void **module, const uint8_t *image)",
  "int cuModuleGetFunction(_Out_ void **fn, void *module, const char *name)",
  "int cuFuncGetAttribute(_Out_ int *value, int attribute, void *fn)",
  "int cuFuncSetAttribute(void *fn, int attribute, int value)",
  "int cuMemAlloc_v2(_Out_ uint64_t *pointer, size_t bytes)",
  "int cuMemFree_v2(uint64_t pointer)",
  "int cuMemcpyHtoD_v2(uint64_t device, const void *host, size_t bytes)",
  "int cuMemcpyDtoH_v2(void *host, uint64_t device, size_t bytes)",
  "int cuMemsetD32_v2(uint64_t device, unsigned int value, size_t count)",
  "int cuMemcpyDtoDAsync_v2(uint64_t destination, uint64_t source, size_t bytes, void *stream)",
  "int cuLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, void *stream, void *params, void *extra)",
  "int cuEventCreate(_Out_ void **event, unsigned int flags)",
  "int cuEventRecord(void *event, void *stream)",
  "int cuEventQuery(void *event)",
  "int cuEventSynchronize(void *event)",
  "int cuEventElapsedTime(_Out_ float *ms, void *start, void *end)",
  "int cuEventDestroy_v2(void *event)",
  "int cuStreamCreate(_Out_ void **stream, unsigned int flags)",
  "int cuStreamWaitEvent(void *stream, void *event, unsigned int flags)",
  "int cuStreamSynchronize(void *stream)",
  "int cuStreamDestroy_v2(void *stream)",
  // CUDA graphs: the _v2 entry points take CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h maps the plain names to them),
  // which the device writes into memory of its own and passes by address; node handles travel as integers.
  "int cuGraphCreate(_Out_ void **graph, unsigned int flags)",
  "int cuGraphAddKernelNode_v2(_Out_ uint64_t *node, void *graph, const uint64_t *dependencies, size_t count, uint64_t params)",
  "int cuGraphInstantiateWithFlags(_Out_ void **exec, void *graph, unsigned long long flags)",
  "int cuGraphLaunch(void *exec, void *stream)",
  "int cuGraphExecKernelNodeSetParams_v2(void *exec, uint64_t node, uint64_t params)",
  "int cuGraphExecDestroy(void *exec)",
  "int cuGraphDestroy(void *graph)",
  "int cuGetErrorName(int code, _Out_ const char **name)",
  // The map's address as an integer: the driver wants it 64-byte aligned, which only memory we align can promise.
  "int cuTensorMapEncodeTiled(uint64_t map, int dataType, unsigned int rank, uint64_t address, const uint64_t *dims, const uint64_t *strides, const uint32_t *box, const uint32_t *elementStrides, int interleave, int swizzle, int l2Promotion, int oobFill)",
];

const nvrtcSignatures = [
  "int nvrtcCreateProgram(_Out_ void **program, const char *source, const char *name, int headers, const char **headerSources, const char **headerNames)",
  "int nvrtcCompileProgram(void *program, int count, const char **options)",
  "int nvrtcGetProgramLogSize(void *program, _Out_ size_t *size)",
  "int nvrtcGetProgramLog(void *program, void *log)",
  "int nvrtcGetCUBINSize(void *program, _Out_ size_t *size)",
  "int nvrtcGetCUBIN(void *program, void *cubin)",
  "int nvrtcDestroyProgram(_Inout_ void **program)",
  "const char *nvrtcGetErrorString(int code)",
  "int nvrtcVersion(_Out_ int *major, _Out_ int *minor)",
];

const cublasSignatures = [
  "int cublasCreate_v2(_Out_ void **handle)",
  "int cublasSetMathMode(void *handle, int mode)",
  "int cublasSgemm_v2(void *handle, int transa, int transb, int m, int n, int k, const float *alpha, uint64_t A, int lda, uint64_t B, int ldb, const float *beta, uint64_t C, int ldc)",
  "int cublasGemmEx(void *handle, int transa, int transb, int m, int n, int k, const float *alpha, uint64_t A, int Atype, int lda, uint64_t B, int Btype, int ldb, const float *beta, uint64_t C, int Ctype, int ldc, int computeType, int algo)",
];

function bind<T>(lib: KoffiLib, signatures: readonly string[]): T {
  const api: Record<string, KoffiFunction> = {};
  for (const signature of signatures) {
    const name = /\s\**(\w+)\(/.exec(signature)![1]!;
    api[name] = lib.func(signature);
  }
  return api as T;
}

let driver: DriverApi | undefined;
let nvrtc: NvrtcApi | undefined;
let cublas: CublasApi | undefined;

export function driverApi(): DriverApi {
  driver ??= bind<DriverApi>(open(["libcuda.so.1", "libcuda.so"], "the CUDA driver (libcuda.so.1)"), driverSignatures);
  return driver;
}

export function nvrtcApi(): NvrtcApi {
  nvrtc ??= bind<NvrtcApi>(open(["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"], "NVRTC (libnvrtc.so.13)"), nvrtcSignatures);
  return nvrtc;
}

export function cublasApi(): CublasApi {
  cublas ??= bind<CublasApi>(
    open(["libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so.12", "libcublas.so"], "cuBLAS (libcublas.so.13)"),
    cublasSignatures,
  );
  return cublas;
}

/** Throws a CudaError unless a driver call returned CUDA_SUCCESS. */
export function check(call: string, code: number): void {
  if (code === 0) return;
  const name: (string | null)[] = [null];
  let codeName = `error ${code}`;
  try {
    if (driver && driver.cuGetErrorName(code, name) === 0 && name[0]) codeName = name[0];
  } catch {
    // The name is a nicety; the code is enough.
  }
  throw new CudaError(call, code, codeName);
}
