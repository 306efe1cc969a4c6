/**
 * Argument and launch-shape checks shared by every backend, run before anything is launched. Each error
 * names the kernel, the parameter (or the launch setting) and what was expected, so a misuse is found at
 * the call, not as garbage in the output or a hung GPU.
 */

import { roundToBf16, roundToF16 } from "../compiler/lang/float16.ts";
import type { ManifestKernel, ManifestParam } from "../compiler/lang/manifest.ts";
import type { DeviceBuffer, Dim3, KernelArg, LaunchLimits, LaunchOptions } from "./device.ts";
import { layoutValueProblem, sameLayout } from "./layouts.ts";

export type { LaunchLimits } from "./device.ts";

export class LaunchError extends Error {
  constructor(
    readonly kernel: string,
    message: string,
  ) {
    super(`tskernel: cannot launch '${kernel}': ${message}`);
  }
}

/** Which target's code each backend runs. */
export const backendTarget = { cpu: "js", webgpu: "wgsl", cuda: "cuda" } as const;
const targetBackend = { js: "cpu", wgsl: "webgpu", cuda: "cuda" } as const;

/**
 * Why a kernel is not for a backend: its `targets` option leaves out the target the backend runs (undefined
 * when it declares none, or that one). The kernel's declaration is the one place this is written: the
 * benchmarks and the launch errors read it from the description, which a library lists even for a kernel
 * its build skipped.
 */
export function targetsLeaveOut(description: Pick<ManifestKernel, "name" | "declaredTargets">, backend: keyof typeof backendTarget): string | undefined {
  const target = backendTarget[backend];
  const declared = description.declaredTargets;
  if (!declared || declared.includes(target)) return undefined;
  return `kernel '${description.name}' declares targets: [${declared.map((t) => JSON.stringify(t)).join(", ")}], so it was not built for ${target}, which the ${backend} backend runs`;
}

/**
 * The error for a launch on a backend the kernel has no code for. A kernel whose `targets` option leaves the
 * backend's target out was skipped there on purpose: the message names its declared targets and the
 * backends that run them. Otherwise the build (or the library's loading) left the target out.
 */
export function notBuiltFor(description: ManifestKernel, backend: keyof typeof backendTarget): LaunchError {
  const target = backendTarget[backend];
  const leftOut = targetsLeaveOut(description, backend);
  if (leftOut) {
    const elsewhere = description.declaredTargets!.map((t) => targetBackend[t]).join(" or ");
    return new LaunchError(description.entryName, `${leftOut}; launch it on a ${elsewhere} device`);
  }
  const built = (["cuda", "wgsl", "js"] as const).filter((t) => description.outputs[t] !== undefined);
  return new LaunchError(
    description.entryName,
    `it was not compiled for the ${target} target, which the ${backend} backend runs (the build has ${built.length > 0 ? built.join(", ") : "no target"} for it): build with --target ${target}`,
  );
}

/** The threads that share the fragments of each kind of matrix operation (docs/language.md §25). */
const matrixGroups = {
  warp: { threads: 32, operation: "matrix operations (mma on warp fragments)" },
  warpgroup: { threads: 128, operation: "warpgroup matrix operations (wgmma)" },
} as const;

export const defaultLimits: LaunchLimits = {
  maxThreadsPerBlock: 1024,
  maxBlockDims: [1024, 1024, 64],
  maxGridDims: [2147483647, 65535, 65535],
};

/** Whether a kernel's fixed block (null: chosen at launch) is within a device's limits. */
export function blockFits(block: readonly number[] | null | undefined, limits: LaunchLimits): boolean {
  if (!block) return true;
  return block[0]! * block[1]! * block[2]! <= limits.maxThreadsPerBlock && block.every((dim, axis) => dim <= limits.maxBlockDims[axis]!);
}

/** Whether a device with `limits` can run a compiled kernel: its fixed block and its shared memory. */
export function kernelFits(description: { readonly block?: readonly number[] | null; readonly sharedBytes: number }, limits: LaunchLimits): boolean {
  return blockFits(description.block, limits) && (limits.maxSharedBytes === undefined || description.sharedBytes <= limits.maxSharedBytes);
}

export interface CheckedLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  /** Run-time arguments in parameter order. */
  readonly args: readonly KernelArg[];
  readonly params: readonly ManifestParam[];
}

function toDim3(kernel: string, what: string, value: Dim3): [number, number, number] {
  if (typeof value !== "number" && !Array.isArray(value)) throw new LaunchError(kernel, `${what} must be a number or [x, y?, z?], got ${describe(value)}`);
  const list = typeof value === "number" ? [value] : [...value];
  if (list.length < 1 || list.length > 3) throw new LaunchError(kernel, `${what} must have 1 to 3 dimensions`);
  const dims = [list[0], list[1] ?? 1, list[2] ?? 1] as number[];
  if (!dims.every((d) => Number.isInteger(d) && d >= 1)) {
    throw new LaunchError(kernel, `${what} must be positive integers, got [${list.join(", ")}]`);
  }
  return dims as [number, number, number];
}

function isBuffer(value: unknown): value is DeviceBuffer {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "tskernel.buffer";
}

function describe(value: unknown): string {
  if (isBuffer(value)) return `a ${value.elementType} buffer of ${value.length} elements`;
  if (Array.isArray(value)) return "an array (allocate a buffer with device.createBuffer)";
  if (ArrayBuffer.isView(value)) return "a typed array (allocate a buffer with device.createBuffer)";
  if (value === undefined || value === null) return String(value);
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return `${typeof value} ${String(value)}`;
}

/** The rounding of a float scalar argument to its type. */
const floatRounding = { f32: Math.fround, f16: roundToF16, bf16: roundToBf16 } as const;

function checkArg(kernel: string, param: ManifestParam, value: unknown, backend: string): void {
  const where = `parameter '${param.name}'`;
  if (param.kind === "buffer") {
    const expected = `a ${param.elementType} buffer (${param.access === "read" ? "read-only" : "writable"})`;
    if (!isBuffer(value)) throw new LaunchError(kernel, `${where} expects ${expected}, got ${describe(value)}`);
    if (value.backend !== backend) throw new LaunchError(kernel, `${where}: the buffer belongs to the ${value.backend} backend, not ${backend}`);
    if (value.elementType !== param.elementType) throw new LaunchError(kernel, `${where} expects ${expected}, got ${describe(value)}`);
    // The same name is not enough for vectors and structs: two files may declare different structs of one name.
    if ((param.layout || value.layout) && !(param.layout && value.layout && sameLayout(param.layout, value.layout))) {
      throw new LaunchError(kernel, `${where} expects ${expected} laid out as the kernel declares it; this buffer's ${value.elementType} has another layout`);
    }
    return;
  }
  if (param.kind !== "scalar") return;
  if (param.layout) {
    const problem = layoutValueProblem(param.layout, value);
    if (problem) throw new LaunchError(kernel, `${where} ${problem}`);
    return;
  }
  switch (param.type) {
    case "bool":
      if (typeof value !== "boolean") throw new LaunchError(kernel, `${where} expects a bool, got ${describe(value)}`);
      return;
    case "f32":
    case "f16":
    case "bf16":
    case "f64":
      if (typeof value !== "number") throw new LaunchError(kernel, `${where} expects an ${param.type} number, got ${describe(value)}`);
      return;
    case "i32":
      if (typeof value !== "number" || !Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
        throw new LaunchError(kernel, `${where} expects an i32 (an integer from -2147483648 to 2147483647), got ${describe(value)}`);
      }
      return;
    case "u32":
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 4294967295) {
        throw new LaunchError(kernel, `${where} expects a u32 (an integer from 0 to 4294967295), got ${describe(value)}`);
      }
      return;
  }
}

/** The entry name of a kernel handle; anything else given as the kernel is a TypeError that says what it was. */
export function kernelName(kernel: unknown): string {
  const name = (kernel as { description?: { entryName?: unknown } } | null | undefined)?.description?.entryName;
  if (typeof name !== "string") throw new TypeError(`tskernel: launch expects a kernel from library.get(name), got ${describe(kernel)}`);
  return name;
}

export function checkLaunch(description: ManifestKernel, options: LaunchOptions, backend: string, limits: LaunchLimits = defaultLimits): CheckedLaunch {
  const kernel = description.entryName;
  const params = description.params.filter((p) => p.kind !== "const");
  if (typeof options !== "object" || options === null) throw new LaunchError(kernel, `expects launch options { grid, block?, args }, got ${describe(options)}`);
  if (typeof options.args !== "object" || options.args === null) {
    throw new LaunchError(kernel, `args must be an array of arguments or an object of them by parameter name, got ${describe(options.args)}`);
  }
  if (options.grid === undefined) throw new LaunchError(kernel, "the launch needs a grid (a number or [x, y?, z?])");
  let args: KernelArg[];
  if (Array.isArray(options.args)) {
    args = [...options.args];
    if (args.length !== params.length) {
      throw new LaunchError(kernel, `expects ${params.length} argument(s) (${params.map((p) => p.name).join(", ")}), got ${args.length}`);
    }
  } else {
    const named = options.args as Readonly<Record<string, KernelArg>>;
    const unknown = Object.keys(named).filter((key) => !params.some((p) => p.name === key));
    if (unknown.length > 0) {
      const constants = unknown.filter((key) => description.params.some((p) => p.kind === "const" && p.name === key));
      const hint = constants.length > 0 ? ` ('${constants[0]}' is a compile-time constant: pick the specialization instead)` : "";
      throw new LaunchError(kernel, `unknown argument(s) ${unknown.map((u) => `'${u}'`).join(", ")}${hint}`);
    }
    args = params.map((p) => {
      if (!(p.name in named)) throw new LaunchError(kernel, `missing argument for parameter '${p.name}'`);
      return named[p.name]!;
    });
  }
  params.forEach((param, index) => checkArg(kernel, param, args[index], backend));
  // A float argument is the value of its type that the number rounds to, as a kernel's own values are:
  // every backend then starts from the same value (the CPU's kernels would otherwise compute with the double).
  args = args.map((arg, index) => {
    const param = params[index]!;
    return param.kind === "scalar" && typeof arg === "number" && param.type in floatRounding ? floatRounding[param.type as keyof typeof floatRounding](arg) : arg;
  });

  const grid = toDim3(kernel, "grid", options.grid);
  grid.forEach((dim, axis) => {
    if (dim > limits.maxGridDims[axis]!) throw new LaunchError(kernel, `grid ${"xyz"[axis]} = ${dim} exceeds the limit ${limits.maxGridDims[axis]}`);
  });
  // Blocks of a cluster start together (CUDA's __cluster_dims__ refuses another grid; the CPU runs each cluster
  // from its first block).
  if (description.cluster && grid.some((dim, axis) => dim % description.cluster![axis]! !== 0)) {
    throw new LaunchError(kernel, `it runs in clusters of [${description.cluster.join(", ")}] blocks, so its grid must be a multiple of that; [${grid.join(", ")}] is not`);
  }
  let block: [number, number, number];
  if (description.block) {
    block = [...description.block] as [number, number, number];
    if (options.block !== undefined) {
      const given = toDim3(kernel, "block", options.block);
      if (given.some((d, i) => d !== block[i])) {
        throw new LaunchError(kernel, `the kernel fixes its block to [${block.join(", ")}], but the launch asks for [${given.join(", ")}]`);
      }
    }
  } else {
    if (options.block === undefined) throw new LaunchError(kernel, "the kernel does not fix its block shape, so the launch must give one");
    block = toDim3(kernel, "block", options.block);
  }
  const threads = block[0] * block[1] * block[2];
  if (threads > limits.maxThreadsPerBlock) throw new LaunchError(kernel, `a block of ${threads} threads exceeds the limit of ${limits.maxThreadsPerBlock}`);
  block.forEach((dim, axis) => {
    if (dim > limits.maxBlockDims[axis]!) throw new LaunchError(kernel, `block ${"xyz"[axis]} = ${dim} exceeds the limit ${limits.maxBlockDims[axis]}`);
  });
  // Fragments belong to warps (and wgmma's to warpgroups) formed along the linear thread index on every
  // backend: a partial one would leave lanes that the operation reads missing (CUDA: undefined results or a
  // trap; the CPU's emulation throws in the middle of the launch). The validator checks a fixed block.
  if (description.matrix) {
    const group = matrixGroups[description.matrix];
    if (threads % group.threads !== 0) {
      throw new LaunchError(kernel, `it uses ${group.operation}, so its block must be a whole number of ${description.matrix}s (${group.threads} threads); [${block.join(", ")}] is ${threads} threads`);
    }
  }
  const lanes = limits.subgroupSize ?? 32;
  if (description.subgroups && threads % lanes !== 0) {
    throw new LaunchError(kernel, `it uses subgroup operations, so its block must be a whole number of subgroups (${lanes} threads on this device); [${block.join(", ")}] is ${threads} threads`);
  }
  return { grid, block, args, params };
}
