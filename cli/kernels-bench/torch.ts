/**
 * The PyTorch side of the suite. bench/torch-reference.py runs in the same GPU run as the Node bench: it
 * loads our nvcc-built cubins into the PyTorch process through the CUDA driver API, launches them on
 * PyTorch's tensors and stream exactly as the plan written here says (the same cases, shapes, buffers and
 * launches as cases.ts builds for CUDA), checks ours and PyTorch's result against float64, and times the two
 * alternately with CUDA events. This file writes that plan and joins the script's results (torch.json) with
 * the Node bench's rows.
 */

import fs from "node:fs";
import path from "node:path";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { LaunchLimits } from "../../runtime/launch-check.ts";
import type { CheckSpec } from "./checks.ts";
import { kernelCases, shapeLabel, type ArgSpec, type BufferSpec, type KernelCase, type Shape } from "./cases.ts";
import type { KernelBenchReport, KernelBenchRow, TorchCase } from "./bench.ts";

export type { TorchCase } from "./bench.ts";

export interface PlanStep {
  /** The cubin file, relative to the plan's kernelsDir, and the function in it. */
  readonly cubin: string;
  readonly function: string;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly dynamicSharedBytes: number;
  readonly args: readonly ArgSpec[];
}

export interface PlanCase {
  readonly id: string;
  /** The operation (the case's family, else its id): what torch-reference.py computes and compares with. */
  readonly family: string;
  readonly title: string;
  readonly label: string;
  readonly shape: Shape;
  readonly torch: string;
  readonly bytes: number;
  readonly parameters: Readonly<Record<string, number>>;
  readonly buffers: readonly BufferSpec[];
  readonly steps: readonly PlanStep[];
  readonly output: string;
  readonly check: CheckSpec;
}

export interface Plan {
  readonly version: 1;
  readonly date: string;
  /** Where the cubins are, relative to the plan file. */
  readonly kernelsDir: string;
  readonly cases: readonly PlanCase[];
}

/** A CUDA GPU's launch limits (compute capability 7.0 and later), for a plan made without the GPU. */
export const cudaLimits: LaunchLimits = { maxThreadsPerBlock: 1024, maxBlockDims: [1024, 1024, 64], maxGridDims: [2147483647, 65535, 65535], maxSharedBytes: 232448 };

/**
 * The plan for torch-reference.py: every case at its GPU shapes (or `shapes`), built for CUDA from a library
 * loaded from a `tskernel build --cubin` directory, so each step names a cubin and its function.
 */
export function makePlan(library: KernelLibrary, kernelsDir: string, options: { cases?: readonly KernelCase[]; shapes?: (c: KernelCase) => readonly Shape[] } = {}): Plan {
  const cases: PlanCase[] = [];
  for (const kernelCase of options.cases ?? kernelCases) {
    for (const shape of options.shapes?.(kernelCase) ?? kernelCase.gpuShapes) {
      if (kernelCase.unsupported(shape)) continue;
      const instance = kernelCase.build(shape, { library, limits: cudaLimits, backend: "cuda" });
      cases.push({
        id: kernelCase.id,
        family: kernelCase.family ?? kernelCase.id,
        title: kernelCase.title,
        label: shapeLabel(shape),
        shape,
        torch: kernelCase.torch,
        bytes: instance.bytes,
        parameters: instance.parameters,
        buffers: instance.buffers,
        steps: instance.steps.map((step) => {
          const cuda = step.kernel.description.outputs.cuda;
          if (!cuda?.cubin) throw new Error(`tskernel: ${step.kernel.description.entryName} has no cubin: build with --cubin`);
          return {
            cubin: cuda.cubin.file,
            function: cuda.function,
            grid: step.grid,
            block: step.kernel.description.block!,
            dynamicSharedBytes: cuda.dynamicSharedBytes,
            args: step.args,
          };
        }),
        output: instance.output,
        check: instance.check,
      });
    }
  }
  return { version: 1, date: new Date().toISOString(), kernelsDir, cases };
}

export function writePlan(file: string, plan: Plan): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`);
}

/** What torch-reference.py measured for one case and shape. */
interface TorchResults {
  readonly device?: string;
  readonly torch?: string;
  readonly date?: string;
  /** The copies measured in the PyTorch process (cuMemcpyDtoDAsync, torch copy_). */
  readonly copy?: Readonly<Record<string, { readonly bytes: number; readonly ms: number; readonly gbps: number }>>;
  readonly cases: readonly {
    readonly id: string;
    readonly label: string;
    readonly rounds: number;
    readonly torchExpression?: string;
    readonly shape?: Shape;
    readonly bytes?: number;
    readonly ours: { readonly ms: number; readonly gbps?: number; readonly check?: { readonly pass: boolean } };
    /** Absent where the case has no PyTorch counterpart (the blur). */
    readonly torch?: { readonly ms: number; readonly gbps: number; readonly check?: { readonly pass: boolean } };
    /** Triton's counterpart, timed in the same rounds (the bf16 cases). */
    readonly triton?: { readonly ms: number; readonly gbps: number; readonly check?: { readonly pass: boolean } };
  }[];
}

export function readTorchResults(file: string): TorchResults {
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as TorchResults;
  if (!Array.isArray(parsed.cases)) throw new Error(`tskernel: ${file} has no 'cases' list (expected torch-reference.py's output)`);
  return parsed;
}

/** The CUDA rows with PyTorch's figures added, where the script measured the same case and shape. */
export function joinTorch(report: KernelBenchReport, results: TorchResults): KernelBenchReport {
  const rows = report.rows.map((row): KernelBenchRow => {
    if (row.backend !== "cuda") return row;
    const match = results.cases.find((c) => c.id === row.kernel && c.label === row.label);
    if (!match?.torch) return row;
    const triton = match.triton;
    return {
      ...row,
      torch: {
        ms: match.torch.ms,
        oursMs: match.ours.ms,
        speedup: match.torch.ms / match.ours.ms,
        rounds: match.rounds,
        gbps: match.torch.gbps,
        oursPass: match.ours.check?.pass,
        torchPass: match.torch.check?.pass,
        expression: match.torchExpression ?? kernelCases.find((c) => c.id === row.kernel)?.torch ?? "",
        ...(triton ? { triton: { ms: triton.ms, gbps: triton.gbps, speedup: triton.ms / match.ours.ms, pass: triton.check?.pass } } : {}),
      },
    };
  });
  return { ...report, rows };
}

/**
 * The PyTorch process's figures alone as a CUDA report (ours, PyTorch's and Triton's, each against the copy
 * measured in that process, cuMemcpyDtoDAsync), for a chart where the Node bench did not run.
 */
export function reportFromTorch(results: TorchResults): KernelBenchReport {
  const copy = results.copy?.["cuMemcpyDtoDAsync"];
  const base: KernelBenchReport = {
    backend: "cuda",
    device: results.device ?? "CUDA",
    date: results.date ?? "",
    ...(copy ? { copy: { elements: copy.bytes / 8, bytes: copy.bytes, ms: copy.ms, gbps: copy.gbps, method: "cuMemcpyDtoDAsync in the PyTorch process, CUDA events" } } : {}),
    rows: results.cases
      .filter((c) => c.ours?.gbps !== undefined)
      .map((c): KernelBenchRow => ({
        backend: "cuda",
        kernel: c.id,
        title: kernelCases.find((k) => k.id === c.id)?.title ?? c.id,
        shape: c.shape ?? [],
        label: c.label,
        ms: c.ours.ms,
        gbps: c.ours.gbps,
        ...(c.bytes !== undefined ? { bytes: c.bytes } : {}),
        ...(copy ? { percentOfCopy: (100 * c.ours.gbps!) / copy.gbps } : {}),
      })),
  };
  return joinTorch(base, results);
}
