/**
 * `tskernel report`: what each kernel specialization costs, per target. For CUDA, what ptxas made of it
 * (registers, spills, stack, static shared memory; nvcc with `-Xptxas -v` for the named GPU, ptxas.ts), the
 * dynamic shared memory its launches ask for, the largest block its registers allow and its occupancy on the
 * GPU (gpus.ts); where nvcc cannot run, a CUDA device's own figures for the function NVRTC compiled, when the
 * runtime has one. For WebGPU, which default limits it meets (webgpu-limits.ts). For both, the compiler's static
 * estimate of the global bytes and flops of one thread and their ratio (compiler/cost.ts). A table per part,
 * or all of it as JSON.
 */

import fs from "node:fs";
import path from "node:path";
import { buildManifest, compileFiles, estimateCost, formatPolynomial, intensity, makeDiagnostic, warpgroupMarker, type Diagnostic, type ManifestKernel, type Polynomial, type TargetName } from "../../compiler/index.ts";
import { formatTable } from "../table.ts";
import { bestBlock, gpuArchitecture, largestBlock, occupancy, type GpuArchitecture, type Occupancy } from "./gpus.ts";
import { ptxasInfo, type PtxasFunction } from "./ptxas.ts";
import { describeFit, webgpuFit, type WebGpuFit } from "./webgpu-limits.ts";

export interface ReportOptions {
  /** The CUDA architecture (`sm_90`): ptxas compiles for it, occupancy is computed on it. */
  readonly gpu: string;
  readonly targets: readonly TargetName[];
  readonly defines: ReadonlyMap<string, string>;
}

export interface CudaCost {
  /** Where the figures come from: `ptxas` (nvcc, for the named GPU) or `device` (NVRTC, for the GPU present). */
  readonly from: "ptxas" | "device";
  readonly arch: string;
  readonly registers: number;
  /** ptxas only: the device reports the local memory of spills and stack together, as `localBytes`. */
  readonly spillStoreBytes?: number;
  readonly spillLoadBytes?: number;
  readonly stackFrameBytes?: number;
  readonly localBytes?: number;
  readonly staticSharedBytes: number;
  readonly dynamicSharedBytes: number;
  readonly largestBlock: number;
  /** At the fixed block, or for a block chosen at launch at the block with the highest occupancy. */
  readonly occupancy: Occupancy & { readonly blockChosenAtLaunch: boolean };
}

export interface ThreadEstimate {
  readonly globalBytes: string;
  readonly flops: string;
  /** flops per global byte as the loops that move global memory grow (compiler/cost.ts); null when it moves none. */
  readonly flopsPerByte: number | null;
  readonly terms: { readonly globalBytes: Record<string, number>; readonly flops: Record<string, number> };
  /** The loop variables of the polynomials: `L12` is the trip count of the loop at line 12 of `file`. */
  readonly loops: readonly { readonly name: string; readonly file: string; readonly line: number }[];
  readonly notes: readonly string[];
}

export interface KernelReport {
  readonly file: string;
  readonly name: string;
  readonly entryName: string;
  readonly specialization: Readonly<Record<string, string | number | boolean>>;
  readonly block: readonly [number, number, number] | null;
  readonly builtFor: readonly string[];
  readonly cuda?: CudaCost;
  readonly webgpu?: WebGpuFit;
  readonly estimate: ThreadEstimate;
}

export interface Report {
  readonly gpu: string;
  /** What produced the CUDA figures (`nvcc release 13.0, V13.0.88`), or why there are none. */
  readonly cudaFigures: { readonly source: string } | { readonly unavailable: string };
  readonly kernels: readonly KernelReport[];
}

type CompiledFiles = ReturnType<typeof compileFiles>["files"];

/** `L<line>` for a loop in the kernel's own file, `<file>:L<line>` in another (a helper's). */
function loopNamer(kernelFile: string, lineOf: (file: string, offset: number) => number) {
  return (span: { file: string; start: number }) => {
    const line = lineOf(span.file, span.start);
    return path.resolve(span.file) === path.resolve(kernelFile) ? `L${line}` : `${path.basename(span.file)}:L${line}`;
  };
}

function lineCounter(): (file: string, offset: number) => number {
  const texts = new Map<string, string>();
  return (file, offset) => {
    if (!texts.has(file)) texts.set(file, fs.readFileSync(file, "utf8"));
    return texts.get(file)!.slice(0, offset).split("\n").length;
  };
}

const asRecord = (p: Polynomial) => Object.fromEntries(p);

/** The CUDA figures per function name, from ptxas, or why there are none (and the diagnostic of a failed nvcc). */
function ptxasFigures(files: CompiledFiles, gpu: string): { functions: Map<string, PtxasFunction>; source?: string; unavailable?: string; error?: Diagnostic } {
  const functions = new Map<string, PtxasFunction>();
  let source: string | undefined;
  for (const file of files) {
    if (!file.cuda) continue;
    // wgmma exists on sm_90a only, as in `build --cubin`.
    const arch = gpu === "sm_90" && file.cuda.source.includes(warpgroupMarker) ? "sm_90a" : gpu;
    const name = `${path.basename(file.displayPath).replace(/\.[cm]?ts$/, "")}.cu`;
    const result = ptxasInfo(file.cuda.source, name, arch);
    if (!result.ok) {
      if (result.missing) return { functions, unavailable: `nvcc could not be run (${result.message}); set $NVCC, or run on a machine with a CUDA GPU` };
      return { functions, error: makeDiagnostic("TSK4008", undefined, [name, result.message]) };
    }
    source = `ptxas of ${result.nvcc}`;
    for (const [fn, info] of result.functions) functions.set(fn, info);
  }
  return { functions, source };
}

/**
 * Where nvcc is missing: the runtime's CUDA device, if this machine has one, compiles each function with
 * NVRTC for its own GPU and reports its registers, local memory and static shared memory.
 */
async function deviceFigures(files: readonly string[], options: ReportOptions): Promise<{ functions: Map<string, { registers: number; localBytes: number; staticSharedBytes: number; arch: string }>; source?: string; unavailable?: string }> {
  const { createDevice, BackendUnavailable, compileKernelLibrary } = await import("../../runtime/index.ts");
  let device;
  try {
    device = await createDevice({ backend: "cuda" });
  } catch (error) {
    if (error instanceof BackendUnavailable) return { functions: new Map(), unavailable: error.message.replace(/^tskernel: /, "") };
    throw error;
  }
  const cuda = device as import("../../runtime/cuda/cuda-device.ts").CudaDevice;
  const library = compileKernelLibrary(files, ["cuda"], { defines: options.defines });
  const functions = new Map<string, { registers: number; localBytes: number; staticSharedBytes: number; arch: string }>();
  for (const handle of library.kernels) {
    if (!handle.cuda) continue;
    const compiled = cuda.compiled(handle);
    functions.set(handle.cuda.function, { registers: compiled.registers, localBytes: compiled.localBytes, staticSharedBytes: compiled.staticSharedBytes, arch: cuda.arch });
  }
  return { functions, source: `NVRTC on ${cuda.name} (${cuda.arch})` };
}

function cudaCost(gpu: GpuArchitecture, kernel: ManifestKernel, figures: { registers: number; staticSharedBytes: number; arch: string }, from: "ptxas" | "device"): Omit<CudaCost, "spillStoreBytes" | "spillLoadBytes" | "stackFrameBytes" | "localBytes"> {
  const dynamicSharedBytes = kernel.outputs.cuda?.dynamicSharedBytes ?? 0;
  const resources = { registers: figures.registers, staticSharedBytes: figures.staticSharedBytes, dynamicSharedBytes };
  const block = kernel.block;
  const fixed = block ? occupancy(gpu, resources, block[0] * block[1] * block[2]) : undefined;
  return {
    from,
    arch: figures.arch,
    registers: figures.registers,
    staticSharedBytes: figures.staticSharedBytes,
    dynamicSharedBytes,
    largestBlock: largestBlock(gpu, figures.registers),
    occupancy: fixed ? { ...fixed, blockChosenAtLaunch: false } : { ...bestBlock(gpu, resources), blockChosenAtLaunch: true },
  };
}

/** Compiles the files and measures every specialization; diagnostics as `check` reports them. */
export async function buildReport(files: readonly string[], options: ReportOptions): Promise<{ report?: Report; diagnostics: readonly Diagnostic[] }> {
  const gpu = gpuArchitecture(options.gpu)!;
  const result = compileFiles(files, { targets: options.targets, defines: options.defines });
  if (!result.ok) return { diagnostics: result.diagnostics };
  const inMemory = { cu: "(in memory)", cuh: "(in memory)", wgsl: "(in memory)", js: "(in memory)" };
  const manifest = buildManifest(result.files, new Map(result.files.map((file) => [file, inMemory])), "tskernel report");
  const wantsCuda = options.targets.includes("cuda") && result.files.some((f) => f.cuda);
  const ptxas = wantsCuda ? ptxasFigures(result.files, options.gpu) : { functions: new Map<string, PtxasFunction>() };
  if (ptxas.error) return { diagnostics: [...result.diagnostics, ptxas.error] };
  const device = wantsCuda && ptxas.unavailable ? await deviceFigures(files, options) : undefined;
  const lineOf = lineCounter();
  const kernels: KernelReport[] = [];
  let index = 0;
  for (const file of result.files) {
    for (const spec of file.specializations) {
      const description = manifest.kernels[index++]!;
      const estimate = estimateCost(spec.kernel, loopNamer(file.sourceFile, lineOf));
      const ratio = intensity(estimate);
      const fn = description.outputs.cuda?.function;
      const fromPtxas = fn ? ptxas.functions.get(fn) : undefined;
      const fromDevice = fn ? device?.functions.get(fn) : undefined;
      const cuda: CudaCost | undefined = fromPtxas
        ? { ...cudaCost(gpu, description, fromPtxas, "ptxas"), spillStoreBytes: fromPtxas.spillStoreBytes, spillLoadBytes: fromPtxas.spillLoadBytes, stackFrameBytes: fromPtxas.stackFrameBytes }
        : fromDevice
          ? { ...cudaCost(gpu, description, fromDevice, "device"), localBytes: fromDevice.localBytes }
          : undefined;
      kernels.push({
        file: description.source,
        name: description.name,
        entryName: description.entryName,
        specialization: description.specialization,
        block: description.block,
        builtFor: description.builtFor,
        cuda,
        webgpu: description.builtFor.includes("wgsl") ? webgpuFit(description) : undefined,
        estimate: {
          globalBytes: formatPolynomial(estimate.globalBytes),
          flops: formatPolynomial(estimate.flops),
          flopsPerByte: ratio === undefined || !Number.isFinite(ratio) ? null : ratio,
          terms: { globalBytes: asRecord(estimate.globalBytes), flops: asRecord(estimate.flops) },
          loops: estimate.loops.map((loop) => ({ name: loop.name, file: path.relative(process.cwd(), loop.span.file).split(path.sep).join("/"), line: lineOf(loop.span.file, loop.span.start) })),
          notes: estimate.notes,
        },
      });
    }
  }
  const cudaFigures = !wantsCuda
    ? { unavailable: "no kernel was built for cuda" }
    : ptxas.source
      ? { source: ptxas.source }
      : device?.source
        ? { source: device.source }
        : { unavailable: [ptxas.unavailable, device?.unavailable].filter(Boolean).join("; ") };
  return { report: { gpu: options.gpu, cudaFigures, kernels }, diagnostics: result.diagnostics };
}

/** `16×16` for [16, 16, 1], `256` for [256, 1, 1]; `at launch` for a block the launch chooses. */
function blockText(block: readonly number[] | null): string {
  if (!block) return "at launch";
  const dims = [...block];
  while (dims.length > 1 && dims.at(-1) === 1) dims.pop();
  return dims.join("×");
}
const percent = (x: number) => `${Math.round(x * 100)}%`;

/** The report as tables (CUDA, WebGPU, the estimate), each fitting `width` when given. */
export function formatReport(report: Report, width?: number): string {
  const out: string[] = [];
  const cudaRows = report.kernels.filter((k) => k.builtFor.includes("cuda"));
  if (cudaRows.length > 0) {
    const gpu = gpuArchitecture(report.gpu)!;
    if ("unavailable" in report.cudaFigures) {
      out.push(`CUDA: no registers or occupancy: ${report.cudaFigures.unavailable}`, "");
    } else {
      out.push(`CUDA on ${report.gpu} (${gpu.examples}), from the ${report.cudaFigures.source}:`);
      const rows = cudaRows.map((k) => {
        const c = k.cuda;
        if (!c) return [k.file, k.entryName, blockText(k.block), "-", "-", "-", "-", "-", "-", "-", "-"];
        const spills = c.spillStoreBytes !== undefined ? `${c.spillStoreBytes}/${c.spillLoadBytes}` : `local ${c.localBytes}`;
        const o = c.occupancy;
        const block = o.blockChosenAtLaunch ? `at launch (best ${o.threads})` : blockText(k.block);
        const fits = o.blocksPerSM > 0;
        return [k.file, k.entryName, block, String(c.registers), spills, String(c.staticSharedBytes), String(c.dynamicSharedBytes), String(c.largestBlock), String(o.blocksPerSM), fits ? percent(o.occupancy) : "-", fits ? o.limitedBy.join(", ") : "does not fit"];
      });
      out.push(
        formatTable(
          [
            { header: "file", align: "left", wrap: true },
            { header: "kernel", align: "left", wrap: true },
            { header: "block", align: "left", wrap: true },
            { header: "regs", align: "right" },
            { header: "spill st/ld B", align: "right", wrap: true },
            { header: "smem B", align: "right" },
            { header: "dyn smem B", align: "right" },
            { header: "max block", align: "right" },
            { header: "blocks/SM", align: "right" },
            { header: "occupancy", align: "right" },
            { header: "limited by", align: "left", wrap: true },
          ],
          rows,
          width,
        ),
        "",
      );
    }
  }
  const webgpuRows = report.kernels.filter((k) => k.webgpu);
  if (webgpuRows.length > 0) {
    out.push("WebGPU, against the default limits every adapter has:");
    const rows = webgpuRows.map((k) => [k.file, k.entryName, blockText(k.block), String(k.webgpu!.workgroupStorageBytes), String(k.webgpu!.storageBuffers), describeFit(k.webgpu!)]);
    out.push(
      formatTable(
        [
          { header: "file", align: "left", wrap: true },
          { header: "kernel", align: "left", wrap: true },
          { header: "block", align: "left", wrap: true },
          { header: "workgroup storage (B)", align: "right" },
          { header: "storage buffers", align: "right" },
          { header: "runs with", align: "left", wrap: true },
        ],
        rows,
        width,
      ),
      "",
    );
  }
  out.push("One thread, estimated from the source (flop/B as the loops over memory grow):");
  out.push(
    formatTable(
      [
        { header: "file", align: "left", wrap: true },
        { header: "kernel", align: "left", wrap: true },
        { header: "global bytes", align: "left", wrap: true },
        { header: "flops", align: "left", wrap: true },
        { header: "flop/B", align: "right" },
      ],
      report.kernels.map((k) => [k.file, k.entryName, k.estimate.globalBytes, k.estimate.flops, k.estimate.flopsPerByte === null ? "-" : formatRatio(k.estimate.flopsPerByte)]),
      width,
    ),
  );
  const loops = new Map<string, string>();
  for (const k of report.kernels) for (const loop of k.estimate.loops) loops.set(`${k.file}#${loop.name}`, `${loop.name}: the trip count of the loop at ${loop.file}:${loop.line}`);
  if (loops.size > 0) out.push("", ...[...new Set(loops.values())]);
  const notes = new Set(report.kernels.flatMap((k) => k.estimate.notes));
  for (const note of notes) out.push(`note: ${note}`);
  return out.join("\n");
}

function formatRatio(x: number): string {
  return x >= 10 ? x.toFixed(1) : x >= 0.1 ? x.toFixed(2) : x.toPrecision(2);
}
