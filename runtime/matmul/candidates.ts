/**
 * The tuner's candidates: the settings of a rung's compile-time constants that its search space lists and
 * its rules accept, pruned by what the device offers (threads per block, shared memory) before anything is
 * compiled, then compiled in-process one specialization at a time through one shared ts-morph project.
 * Also the hash of a kernel's source file, which keys stored results to the code they measured.
 */

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createProject, packageRoot, targetLimits, type TargetName } from "../../compiler/index.ts";
import type { BackendName, Device, KernelHandle, LaunchLimits } from "../device.ts";
import { compileKernelLibrary } from "../kernels.ts";
import type { Constants, Rung, RungSearch } from "./rung.ts";

export function targetFor(backend: BackendName): TargetName {
  return backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
}

export function resolveKernelFile(file: string): string {
  return path.isAbsolute(file) ? file : path.join(packageRoot(), file);
}

/** Whether two settings give every constant the same value. */
export function sameConstants(a: Constants, b: Constants | undefined): boolean {
  return b !== undefined && Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((name) => a[name] === b[name]);
}

/**
 * Whether a setting of the search space is the kernel's defaults: every constant it sets has its default
 * value (a space need not name every constant; the others keep their defaults when compiled).
 */
export function isDefaults(c: Constants, defaults: Constants | undefined): boolean {
  return defaults !== undefined && Object.keys(c).every((name) => c[name] === defaults[name]);
}

export function formatConstants(c: Constants): string {
  return Object.entries(c).map(([name, value]) => `${name}=${value}`).join(" ");
}

const hashes = new Map<string, { stamp: string; hash: string }>();

/** "sha256:…" of a kernel source file as it is on disk now; undefined when it cannot be read. */
export function kernelSourceHash(file: string): string | undefined {
  const absolute = resolveKernelFile(file);
  try {
    const stat = fs.statSync(absolute);
    const stamp = `${stat.mtimeMs}:${stat.size}`;
    const cached = hashes.get(absolute);
    if (cached?.stamp === stamp) return cached.hash;
    const hash = `sha256:${crypto.createHash("sha256").update(fs.readFileSync(absolute)).digest("hex")}`;
    hashes.set(absolute, { stamp, hash });
    return hash;
  } catch {
    return undefined;
  }
}

/** Every setting of the search space, split into those the rung's rules accept and a count of the others by reason. */
export function enumerateSpace(search: RungSearch): { valid: Constants[]; invalid: Map<string, number> } {
  let settings: Record<string, number>[] = [{}];
  for (const [name, values] of Object.entries(search.space)) settings = settings.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  const valid: Constants[] = [];
  const invalid = new Map<string, number>();
  for (const c of settings) {
    const reason = search.invalid(c);
    if (reason === undefined) {
      valid.push(c);
      continue;
    }
    // Reasons quote the numbers of one setting; counted by rule, with the numbers left out.
    const rule = reason.replace(/\d+/g, "N");
    invalid.set(rule, (invalid.get(rule) ?? 0) + 1);
  }
  return { valid, invalid };
}

/** What a candidate may use on a device. */
export interface CandidateLimits extends LaunchLimits {
  readonly maxSharedBytes: number;
}

/**
 * Shared memory a block may use: the device's own limit where it states one (the opt-in maximum on CUDA,
 * 227 KiB on Hopper; the adapter's maxComputeWorkgroupStorageSize on WebGPU), otherwise what the compile
 * target allows.
 */
export function sharedMemoryLimit(device: Device): number {
  return device.limits.maxSharedBytes ?? targetLimits(targetFor(device.backend)).maxSharedBytes;
}

/** Why a candidate cannot run on a device with these limits (undefined: it can), from its constants alone. */
export function pruneReason(search: RungSearch, c: Constants, limits: CandidateLimits): string | undefined {
  const threads = search.threads(c);
  if (threads > limits.maxThreadsPerBlock || threads > limits.maxBlockDims[0]) {
    return `${threads} threads per block; the device allows ${Math.min(limits.maxThreadsPerBlock, limits.maxBlockDims[0])}`;
  }
  const shared = search.sharedBytes(c);
  if (shared > limits.maxSharedBytes) return `${shared} bytes of shared memory; the device allows ${limits.maxSharedBytes}`;
  return undefined;
}

/**
 * Search order, for when only the first few candidates are measured: the kernel's own defaults first (what
 * the fixed rule runs, so a bounded search never does worse), then one candidate per block-tile area
 * (BM·BN) in turn, largest area first. Which area wins depends most on the size (few large tiles leave
 * multiprocessors idle at n = 1024, many small ones waste bandwidth at 4096), so a short search should try
 * each. Within an area: blocks nearest 256 threads first (enough warps to hide latency, few enough to keep
 * several blocks per multiprocessor), then larger register tiles (more reuse per shared-memory load).
 */
export function searchOrder(search: RungSearch, candidates: readonly Constants[], defaults: Constants | undefined): Constants[] {
  const registerTile = (c: Constants) => Object.entries(c).filter(([name]) => /^T[A-Z]$/.test(name)).reduce((product, [, value]) => product * value, 1);
  const area = (c: Constants) => (c.BM ?? 1) * (c.BN ?? 1);
  const ranked = candidates
    .filter((c) => !isDefaults(c, defaults))
    .map((c, index) => ({ c, index, closeness: Math.abs(Math.log2(search.threads(c) / 256)), reuse: registerTile(c) }))
    .sort((a, b) => a.closeness - b.closeness || b.reuse - a.reuse || a.index - b.index);
  const groups = new Map<number, Constants[]>();
  for (const { c } of ranked) {
    if (!groups.has(area(c))) groups.set(area(c), []);
    groups.get(area(c))!.push(c);
  }
  const queues = [...groups.entries()].sort((a, b) => b[0] - a[0]).map(([, list]) => list);
  const ordered = candidates.filter((c) => isDefaults(c, defaults));
  while (queues.some((q) => q.length > 0)) for (const queue of queues) if (queue.length > 0) ordered.push(queue.shift()!);
  return ordered;
}

let sharedProject: ReturnType<typeof createProject> | undefined;
const compiled = new Map<string, KernelHandle>();

/**
 * One specialization of a rung's kernel for a target (`constants` undefined: the kernel's own defaults),
 * compiled once per process; throws CompileFailure with the rendered diagnostics.
 */
export function compileCandidate(rung: Rung, constants: Constants | undefined, target: TargetName): KernelHandle {
  const keyOf = (c: Constants | null) => JSON.stringify([target, resolveKernelFile(rung.file), kernelSourceHash(rung.file), rung.kernel, c && Object.entries(c).sort()]);
  const cached = compiled.get(keyOf(constants ?? null));
  if (cached) return cached;
  // One project for every compile: the checker's view of the language declarations is built once.
  sharedProject ??= createProject();
  const defines = new Map(Object.entries(constants ?? {}).map(([name, value]) => [name, String(value)]));
  // Only this kernel: the constants reach every kernel of the file that has one by that name, and a
  // setting that suits this kernel can break a sibling (2-D tile sizes give the 1-D kernel 2048 threads).
  const library = compileKernelLibrary([resolveKernelFile(rung.file)], [target], {
    defines,
    kernels: new Set([rung.kernel]),
    baseDir: packageRoot(),
    project: sharedProject,
  });
  // A kernel with a specializations list still yields several builds when the defines leave some constant
  // free; the one asked for has every given constant (with none given, the first: the kernel's defaults).
  const handle = library.kernels.find((h) => h.description.name === rung.kernel && Object.entries(constants ?? {}).every(([name, value]) => h.description.specialization[name] === value));
  if (!handle) throw new Error(`tskernel: compiling ${rung.file} gave no kernel '${rung.kernel}' with ${formatConstants(constants ?? {})}`);
  compiled.set(keyOf(constants ?? null), handle);
  // The defaults are also a candidate of the search, which then finds them compiled.
  compiled.set(keyOf(handle.description.specialization as Constants), handle);
  return handle;
}
