/**
 * The package's own kernels: what `matmul(device, A, B, C, shape)`, `scaledMatmul(device, A, Bt, C, shape)` and
 * `attention(device, Q, K, V, O, shape)` run when no library is given. `npm pack` builds the matmul rungs', the fp8
 * rungs' and the attention kernels' files into `dist/kernels/` (cli/package-kernels.ts: the manifest, the
 * JavaScript, the WGSL, the CUDA C, and `sources.json` with each source file's sha256); here a process loads that build once per target, with no compiler run: the
 * CPU runs the shipped JavaScript, WebGPU the shipped WGSL, CUDA the shipped .cu (NVRTC compiles each module
 * once and the CUDA device keeps the cubin in its disk cache; a build made with cubins for the GPU's
 * architecture loads them as they are). A checkout without the build (tests, development), a build whose
 * sources no longer match the kernel files beside it, and checked devices (the build holds neither the CPU's
 * checked code nor checked GPU builds, which a checked CUDA or WebGPU device requires) compile the same files
 * in-process instead, checked for a GPU. A library passed explicitly still wins.
 */

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "../compiler/index.ts";
import type { Device } from "./device.ts";
import { compileKernelLibrary } from "./kernels.ts";
import type { KernelLibrary } from "./library.ts";
import { loadKernelLibrary } from "./load-library.ts";
import { targetFor } from "./matmul/candidates.ts";

/**
 * The forward kernel attention() launches: the register-P FlashAttention with the softmax's scale folded into
 * each exponential's fma, and at D 64 a build of three consumer warpgroups (bench/README.md, 2026-11-27 on the
 * H100: 94.1 / 96.9 / 98.2 / 97.9 % of cuDNN's forward on the four shapes of issue 22; on 2026-11-26 the
 * register-P kernel 79.5–91.4 % and the shared-P kernel of flash-attention.ts 68–77 %). All take the same
 * arguments and write log-sum-exps; this one's are within the float64 bound, not bit for bit the others' (one
 * rounding less), and its Q tensor map's boxes and grid follow its consumers (runtime/attention.ts).
 */
export const attentionForwardKernel = { name: "flashAttentionFold", file: "examples/flash-attention-fold.ts" } as const;

/**
 * The files the package builds for itself, relative to the package root: every matmul rung's file
 * (runtime/matmul/matmul.ts and matmul16.ts), every fp8 rung's (scaled-matmul.ts; a test checks that the lists
 * agree) and the attention kernels.
 */
export const packageKernelFiles: readonly string[] = [
  "examples/sgemm.ts",
  "examples/sgemm-blocktiling.ts",
  "examples/sgemm-vectorized.ts",
  "examples/sgemm-warptiling.ts",
  "examples/sgemm-multistage.ts",
  "examples/sgemm-streamk.ts",
  "examples/sgemm-tensorcore.ts",
  "examples/sgemm-wgmma.ts",
  "examples/sgemm-wgmma-ws.ts",
  "examples/sgemm-wgmma-cluster.ts",
  "examples/hgemm-tiled.ts",
  "examples/hgemm-mma-guarded.ts",
  "examples/hgemm-wgmma-ws.ts",
  "examples/hgemm-wgmma-small.ts",
  // scaledMatmul()'s fp8 rungs (runtime/matmul/scaled-matmul.ts).
  "examples/fp8gemm-wgmma-ws.ts",
  "examples/fp8gemm-tiled.ts",
  // attention()'s forward (runtime/attention.ts) and its backward.
  attentionForwardKernel.file,
  "examples/flash-attention-backward.ts",
];

/** Where `npm pack` puts the package's kernels (cli/package-kernels.ts writes them). */
export function packageKernelsDir(): string {
  return path.join(packageRoot(), "dist", "kernels");
}

/** The stamp of a package kernel build: the generator and each source file's sha256 at build time. */
export interface PackageKernelStamp {
  readonly format: "tskernel-package-kernels";
  readonly generator: string;
  readonly files: Readonly<Record<string, string>>;
}

export function sourceHash(absolute: string): string {
  return `sha256:${crypto.createHash("sha256").update(fs.readFileSync(absolute)).digest("hex")}`;
}

/** Where a device's package library came from: the shipped build, or an in-process compile (and why). */
export interface PackageKernelOrigin {
  readonly origin: "prebuilt" | "compiled";
  readonly reason?: string;
}

const libraries = new Map<string, { library: KernelLibrary } & PackageKernelOrigin>();

/**
 * Why the shipped build cannot serve (undefined: it can): it is missing, or it was made from other sources than
 * the kernel files beside it (a checkout whose examples changed since its last pack). A source file that is not
 * there to compare (an installation that left the examples out) does not make the build stale.
 */
function staleness(dir: string): string | undefined {
  let stamp: PackageKernelStamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(dir, "sources.json"), "utf8")) as PackageKernelStamp;
  } catch {
    return `no package kernel build in ${dir}`;
  }
  if (stamp.format !== "tskernel-package-kernels") return `${path.join(dir, "sources.json")} is not a package kernel stamp`;
  for (const file of packageKernelFiles) {
    const recorded = stamp.files[file];
    if (recorded === undefined) return `the build in ${dir} lacks ${file}`;
    const absolute = path.join(packageRoot(), file);
    if (fs.existsSync(absolute) && sourceHash(absolute) !== recorded) return `${file} changed since the build in ${dir}`;
  }
  return undefined;
}

/** Why a device needs an in-process compile whatever the shipped build holds: it is checked (undefined: it is not). */
function checkedReason(device: Pick<Device, "backend"> & { readonly checked?: boolean }): string | undefined {
  if (device.checked !== true) return undefined;
  return device.backend === "cpu" ? "checked mode needs the compiler's checked code" : "a checked device runs checked builds only (docs/language.md, \"Checked GPU builds\")";
}

/**
 * The package's kernels for a device's backend, loaded (or compiled) once per process and target. A checked
 * device gets an in-process compile: its checked code (the CPU's, or checked CUDA and WGSL) is not part of the build.
 */
export function packageKernelLibrary(device: Pick<Device, "backend"> & { readonly checked?: boolean }): KernelLibrary {
  return packageKernels(device).library;
}

/** packageKernelLibrary's library with where it came from (the tests ask: a shipped build must run no compiler). */
export function packageKernels(device: Pick<Device, "backend"> & { readonly checked?: boolean }): { library: KernelLibrary } & PackageKernelOrigin {
  const key = `${targetFor(device.backend)}${device.checked === true ? " checked" : ""}`;
  let entry = libraries.get(key);
  if (!entry) {
    entry = packageKernelsFrom(packageKernelsDir(), device);
    libraries.set(key, entry);
  }
  return entry;
}

/** The package's kernels from the build in `dir` where it serves (see `staleness`), else compiled in-process; not cached. */
export function packageKernelsFrom(dir: string, device: Pick<Device, "backend"> & { readonly checked?: boolean }): { library: KernelLibrary } & PackageKernelOrigin {
  const target = targetFor(device.backend);
  const reason = checkedReason(device) ?? staleness(dir);
  if (reason === undefined) return { library: loadKernelLibrary(dir, [target]), origin: "prebuilt" };
  const checkedGpu = device.checked === true && device.backend !== "cpu";
  return { library: compileKernelLibrary(packageKernelFiles.map((file) => path.join(packageRoot(), file)), [target], { baseDir: packageRoot(), ...(checkedGpu ? { checked: true } : {}) }), origin: "compiled", reason };
}
