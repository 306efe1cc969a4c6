/**
 * A library of compiled kernels, and loading one from a `tskernel build` output directory (manifest.json and
 * the generated files) with no compiler present: what a deployment or a GPU machine without the TypeScript
 * toolchain uses. Each handle carries the kernel's manifest description and the code of each target.
 */

import fs from "node:fs";
import path from "node:path";
import type { ManifestKernel, Manifest } from "../compiler/manifest.ts";
import { kernelFits, type LaunchLimits } from "./launch-check.ts";

/** The JS of one kernel: runs a whole block. */
export type JsBlockFunction = (
  args: readonly unknown[],
  blockIdx: readonly number[],
  blockDim: readonly number[],
  gridDim: readonly number[],
  checker?: unknown,
) => void;

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

export class KernelLibrary {
  constructor(readonly kernels: readonly KernelHandle[]) {}

  /** The first of the given specializations (best first) that a device with `limits` can run (block and shared memory). */
  firstFitting(name: string, specializations: readonly Readonly<Record<string, number | boolean>>[] | undefined, limits: LaunchLimits): KernelHandle | undefined {
    return (specializations ?? [{}]).map((values) => this.get(name, values)).find((k) => kernelFits(k.description, limits));
  }

  /**
   * Finds a kernel by name, and by specialization values when it has several; with none given, the first
   * (the kernel's default specialization) is returned.
   */
  get(name: string, specialization: Readonly<Record<string, number | boolean>> = {}): KernelHandle {
    const candidates = this.kernels.filter((k) => k.description.name === name);
    if (candidates.length === 0) {
      const known = [...new Set(this.kernels.map((k) => k.description.name))].join(", ");
      throw new Error(`tskernel: no kernel named '${name}' (known: ${known || "none"})`);
    }
    const match = candidates.find((k) => Object.entries(specialization).every(([key, value]) => k.description.specialization[key] === value));
    if (!match) {
      const available = candidates.map((k) => JSON.stringify(k.description.specialization)).join(", ");
      throw new Error(`tskernel: kernel '${name}' has no specialization ${JSON.stringify(specialization)} (built: ${available})`);
    }
    return match;
  }
}


/** Turns the generated JS's factory body into its kernel functions. */
export function instantiateJs(factoryBody: string): Record<string, JsBlockFunction> {
  // The generated code is our own output, built from validated IR; it closes over nothing of ours.
  return new Function(factoryBody)() as Record<string, JsBlockFunction>;
}

/** Loads the kernels a `tskernel build --out dir` wrote. */
export function loadKernelLibrary(dir: string): KernelLibrary {
  const manifestPath = path.join(dir, "manifest.json");
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as Manifest;
  } catch (error) {
    throw new Error(`tskernel: cannot read ${manifestPath}: ${(error as Error).message}`);
  }
  const text = new Map<string, string>();
  const read = (file: string) => {
    if (!text.has(file)) text.set(file, fs.readFileSync(path.join(dir, file), "utf8"));
    return text.get(file)!;
  };
  const jsModules = new Map<string, { factoryBody: string; functions: Record<string, JsBlockFunction> }>();
  const handles = manifest.kernels.map((description): KernelHandle => {
    const { js, wgsl, cuda } = description.outputs;
    let jsFunction: JsBlockFunction | undefined;
    let jsSource: KernelHandle["jsSource"];
    if (js) {
      if (!jsModules.has(js.file)) {
        const source = read(js.file);
        const names = [...source.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]!);
        const factoryBody = `${source.replace(/^export function /gm, "function ")}return { ${names.join(", ")} };`;
        jsModules.set(js.file, { factoryBody, functions: instantiateJs(factoryBody) });
      }
      const module = jsModules.get(js.file)!;
      jsFunction = module.functions[js.function];
      jsSource = { factoryBody: module.factoryBody, function: js.function };
    }
    return {
      description,
      js: jsFunction,
      jsSource,
      wgsl: wgsl
        ? {
            source: read(wgsl.file),
            entryPoint: wgsl.entryPoint,
            lineSources: wgsl.lineMap ? (JSON.parse(read(wgsl.lineMap)) as (string | null)[]).map((s) => s ?? undefined) : undefined,
          }
        : undefined,
      cuda: cuda
        ? {
            source: read(cuda.file),
            function: cuda.function,
            // Manifests written before dynamic shared memory existed have no entry: they had none.
            dynamicSharedBytes: cuda.dynamicSharedBytes ?? 0,
            cubin: cuda.cubin ? { data: new Uint8Array(fs.readFileSync(path.join(dir, cuda.cubin.file))), arch: cuda.cubin.arch } : undefined,
          }
        : undefined,
    };
  });
  return new KernelLibrary(handles);
}
