/**
 * Writes the launch plan that bench/torch-matmul.py runs on the GPU machine, here (where Node and the rung
 * table are): for each of the shapes, what `matmul()` picks by its fixed rule on an H100, and what
 * `matmul(…, { precision: "tf32" })` picks (the tensor-core rung, where its tiles divide the shape), what
 * `matmul(…, { dtype: "bf16" | "f16" })` picks where the libraries hold the 16-bit rungs (the limits
 * below: 1024 threads per block, 227 KiB of shared memory per block), and every other build of a ladder rung
 * in the given `tskernel build --cubin` outputs that takes the shape, each with its cubin, function, grid,
 * block, dynamic shared memory and parameter list, so that the Python side needs no knowledge of the rungs.
 * Usage: node dist/bench/torch-matmul-plan.js --kernels <build dir> [--kernels <dir> …] --out plan.json
 *        [--shapes 4096x4096x4096,…]
 */

import fs from "node:fs";
import path from "node:path";
import type { Device, KernelHandle } from "../runtime/device.ts";
import { KernelLibrary } from "../runtime/library.ts";
import { loadKernelLibrary } from "../runtime/load-library.ts";
import { kernelFits, type LaunchLimits } from "../runtime/launch-check.ts";
import { belongsTo, chooseMatmul, matmulRungs, shapeFits, streamBlocksFor, streamKScratchLengths, type Constants } from "../runtime/matmul/matmul.ts";
import { persistentGrid, type TensorMapBox } from "../runtime/matmul/rung.ts";

/** The shapes (m×n×k): large and square, a short k, odd mid-sized, and no dimension a multiple of 4. */
export const torchShapes: readonly (readonly [number, number, number])[] = [
  [4096, 4096, 4096],
  [8192, 8192, 8192],
  [4096, 4096, 1024],
  [1000, 1000, 1000],
  [2048, 2048, 2048],
  [1023, 1021, 1019],
];

/**
 * The rungs timed by default: the fast ones, and the any-shape 2-D rung that odd shapes fell back on before
 * (the shared-memory and 1-D rungs would take seconds per launch at 8192³ and say nothing new).
 */
export const torchRungs: readonly string[] = [
  // bf16 and f16 (tensor cores), timed against torch.mm in the same type.
  "hgemm-wgmma-ws",
  "hgemm-wgmma-ws-f16",
  "hgemm-wgmma-small",
  "hgemm-wgmma-small-f16",
  "hgemm-mma-guarded",
  "hgemm-mma-guarded-f16",
  "hgemm-tiled",
  "hgemm-tiled-f16",
  // TF32 (tensor cores), timed against torch.mm with TF32 on.
  "sgemm-wgmma-cluster",
  "sgemm-wgmma-ws",
  "sgemm-wgmma",
  "sgemm-tensorcore",
  "sgemm-streamk",
  "sgemm-multistage",
  "sgemm-warptiling-double-buffered",
  "sgemm-multistage-guarded",
  "sgemm-warptiling-guarded",
  "sgemm-register-staged",
  "sgemm-2d-guarded",
];

/** The H100 SXM's multiprocessors, for the stream-k rung's grid (its blocks per multiprocessor times these). */
export const h100Multiprocessors = 132;

/** An H100 SXM as the CUDA driver describes it (cuDeviceGetAttribute). */
export const h100Limits: LaunchLimits = {
  maxThreadsPerBlock: 1024,
  maxBlockDims: [1024, 1024, 64],
  maxGridDims: [2147483647, 65535, 65535],
  maxSharedBytes: 232448,
};

export interface PlanCandidate {
  readonly id: string;
  readonly rung: string;
  /** "tf32" for tensor-core rungs (compared with torch.mm TF32 and held to TF32's tolerance), else "fp32". */
  readonly precision: "fp32" | "tf32";
  /** Index into the plan's kernelDirs. */
  readonly dir: number;
  readonly cubin: string;
  readonly function: string;
  readonly constants: Constants;
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly dynamicSharedBytes: number;
  readonly params: readonly { readonly name: string; readonly kind: string; readonly type?: string }[];
  /** A stream-k build: its streamBlocks argument and the lengths of the zeroed scratch buffers it takes. */
  readonly streamK?: { readonly blocks: number; readonly partials: number; readonly arrivals: number };
  /**
   * The rung takes A's tensor map as its parameter `param` (after C): the harness makes it, in boxes of this size
   * (with `roundToTf32`, of the driver's TFLOAT32 type, whose copies round to TF32).
   */
  readonly tensorMapA?: { readonly param: string } & TensorMapBox;
  /** A 16-bit rung: A, B and C hold this type (the harness rounds the inputs to it and compares with torch.mm in it). */
  readonly dtype?: "bf16" | "f16";
  /** The clustered TF32 rung takes B's tensor map after A's, as this parameter, in boxes of this size. */
  readonly tensorMapB?: { readonly param: string } & TensorMapBox;
  /** The 16-bit rungs take B's and C's tensor maps after A's, as these parameters, in boxes of these sizes. */
  readonly tensorMapsBC?: { readonly B: { readonly param: string } & TensorMapBox; readonly C: { readonly param: string } & TensorMapBox };
}

export interface PlanShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** The id of the candidate matmul() runs for this shape (fixed rule, H100 limits). */
  readonly matmul: string;
  /** The id of the candidate matmul(…, { precision: "tf32" }) runs, when it is a TF32 rung (absent: it falls back to FP32). */
  readonly matmulTf32?: string;
  /** The ids of the candidates matmul(…, { dtype: "bf16" }) and (…, { dtype: "f16" }) run, where the library holds 16-bit rungs. */
  readonly matmulBf16?: string;
  readonly matmulF16?: string;
  readonly candidates: readonly PlanCandidate[];
}

export interface Plan {
  readonly generator: string;
  readonly kernelDirs: readonly string[];
  readonly shapes: readonly PlanShape[];
}

function candidate(handle: KernelHandle, dir: number, rungName: string, grid: readonly [number, number], streamBlocks: number): PlanCandidate {
  const d = handle.description;
  const rung = matmulRungs.find((r) => r.name === rungName);
  // The tensor maps are the kernel's last parameters: A's, then B's (the clustered TF32 rung) or B's and C's (16-bit
  // rungs).
  const buffers = d.params.filter((p) => p.kind !== "const").map((p) => p.name);
  const maps = rung?.tensorMapsBC ? buffers.slice(-3) : rung?.tensorMapB ? buffers.slice(-2) : buffers.slice(-1);
  const cuda = d.outputs.cuda!;
  const block = d.block as readonly number[] | null | undefined;
  if (!block) throw new Error(`${d.entryName} has no fixed block`);
  return {
    id: `${rungName} ${d.entryName}`,
    rung: rungName,
    precision: matmulRungs.find((r) => r.name === rungName)?.precision ?? "fp32",
    dir,
    cubin: cuda.cubin!.file,
    function: cuda.function,
    constants: d.specialization as Constants,
    grid: [grid[0], grid[1], 1],
    block: [block[0]!, block[1] ?? 1, block[2] ?? 1],
    dynamicSharedBytes: cuda.dynamicSharedBytes,
    params: d.params.filter((p) => p.kind !== "const").map((p) => ({ name: p.name, kind: p.kind, ...("type" in p ? { type: p.type as string } : {}) })),
    ...(streamBlocks > 0 ? { streamK: { blocks: streamBlocks, ...streamKScratchLengths(d.specialization as Constants, streamBlocks) } } : {}),
    ...(rung?.tensorMapA ? { tensorMapA: { param: maps[0]!, ...rung.tensorMapA } } : {}),
    ...(rung?.tensorMapB ? { tensorMapB: { param: maps[1]!, ...rung.tensorMapB } } : {}),
    ...(rung?.dtype ? { dtype: rung.dtype } : {}),
    ...(rung?.tensorMapsBC ? { tensorMapsBC: { B: { param: maps[1]!, ...rung.tensorMapsBC.B }, C: { param: maps[2]!, ...rung.tensorMapsBC.C } } } : {}),
  };
}

/** The plan for these shapes from these libraries: the first library is the one matmul() is given. */
export function makePlan(
  libraries: readonly KernelLibrary[],
  kernelDirs: readonly string[],
  shapes: readonly (readonly [number, number, number])[],
  rungs: readonly string[] = torchRungs,
): Plan {
  const device = { backend: "cuda", arch: "sm_90", limits: h100Limits, multiprocessors: h100Multiprocessors } as unknown as Device;
  const planned: PlanShape[] = [];
  for (const [m, n, k] of shapes) {
    const choice = chooseMatmul(device, libraries[0]!, { m, n, k, tuning: false });
    const candidates: PlanCandidate[] = [];
    const seen = new Set<string>();
    libraries.forEach((library, dir) => {
      for (const handle of library.kernels) {
        const c = handle.description.specialization as Constants;
        for (const rung of matmulRungs) {
          if (!rungs.includes(rung.name) || rung.kernel !== handle.description.name || !belongsTo(rung, c) || !handle.description.outputs.cuda?.cubin) continue;
          if (!shapeFits(rung, c, m, n, k) || !kernelFits(handle.description, h100Limits)) continue;
          const streamBlocks = streamBlocksFor(device, rung, c);
          // A persistent rung's grid is what matmulLaunch gives it: at most one block a multiprocessor, whole clusters.
          const grid = rung.grid(m, n, c, streamBlocks);
          const entry = candidate(handle, dir, rung.name, rung.persistent ? persistentGrid(rung, grid[0], h100Multiprocessors) : grid, streamBlocks);
          if (seen.has(entry.function)) continue;
          seen.add(entry.function);
          candidates.push(entry);
        }
      }
    });
    if (!rungs.includes(choice.rung.name)) throw new Error(`matmul() picks ${choice.rung.name} for ${m}×${n}×${k}, which is not among the timed rungs`);
    const chosen = candidates.find((c) => c.dir === 0 && c.function === choice.kernel.description.outputs.cuda?.function && c.rung === choice.rung.name);
    if (!chosen) throw new Error(`matmul() picks ${choice.rung.name} ${choice.kernel.description.entryName} for ${m}×${n}×${k}, which has no cubin in ${kernelDirs[0]} (build with --cubin)`);
    const tf32 = chooseMatmul(device, libraries[0]!, { m, n, k, tuning: false, precision: "tf32" });
    const chosenTf32 = candidates.find((c) => c.dir === 0 && c.precision === "tf32" && c.function === tf32.kernel.description.outputs.cuda?.function && c.rung === tf32.rung.name);
    // matmul(…, { dtype }) for the 16-bit types, where the library holds their rungs (the tiled rung takes any shape).
    const half = (dtype: "bf16" | "f16"): string | undefined => {
      if (!libraries[0]!.kernels.some((h) => matmulRungs.some((r) => r.dtype === dtype && r.kernel === h.description.name))) return undefined;
      const choice16 = chooseMatmul(device, libraries[0]!, { m, n, k, tuning: false, dtype });
      const found = candidates.find((c) => c.dir === 0 && c.dtype === dtype && c.function === choice16.kernel.description.outputs.cuda?.function && c.rung === choice16.rung.name);
      if (!found) throw new Error(`matmul(…, { dtype: "${dtype}" }) picks ${choice16.rung.name} for ${m}×${n}×${k}, which is not among the planned candidates`);
      return found.id;
    };
    const [bf16, f16] = [half("bf16"), half("f16")];
    planned.push({ m, n, k, matmul: chosen.id, ...(chosenTf32 ? { matmulTf32: chosenTf32.id } : {}), ...(bf16 ? { matmulBf16: bf16 } : {}), ...(f16 ? { matmulF16: f16 } : {}), candidates });
  }
  return { generator: "bench/torch-matmul-plan.ts", kernelDirs, shapes: planned };
}

function main(): void {
  const args = process.argv.slice(2);
  const dirs: string[] = [];
  let out = "torch-plan.json";
  let shapes = torchShapes;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--kernels") dirs.push(args[++i]!);
    else if (args[i] === "--out") out = args[++i]!;
    else if (args[i] === "--shapes") shapes = args[++i]!.split(",").map((s) => s.split("x").map(Number) as [number, number, number]);
    else throw new Error(`unknown argument ${args[i]}`);
  }
  if (dirs.length === 0) throw new Error("usage: torch-matmul-plan --kernels <dir> [--kernels <dir> …] --out plan.json");
  const plan = makePlan(dirs.map((dir) => loadKernelLibrary(dir)), dirs.map((d) => path.relative(path.dirname(path.resolve(out)), path.resolve(d))), shapes);
  fs.writeFileSync(out, `${JSON.stringify(plan, null, 1)}\n`);
  for (const s of plan.shapes) console.log(`${s.m}×${s.n}×${s.k}: ${s.candidates.length} candidates; matmul() runs ${s.matmul}`);
}

// Run as a script (not when a test imports it).
if (process.argv[1] && path.basename(process.argv[1]).startsWith("torch-matmul-plan")) main();
