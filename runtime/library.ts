/**
 * A library of compiled kernels, and making one from a `tskernel build` output (manifest.json and the
 * generated files) with no compiler present: what a deployment, a browser page or a GPU machine without the
 * TypeScript toolchain uses. Each handle carries the kernel's manifest description and the code of each
 * target. Nothing here touches the file system (load-library.ts reads a build directory in Node; the browser
 * entry fetches one), so the browser runtime shares this file.
 */

import type { Manifest, ManifestLayout } from "../compiler/lang/manifest.ts";
import type { JsBlockFunction, KernelHandle, LaunchLimits } from "./device.ts";
import { kernelFits } from "./launch-check.ts";

export class KernelLibrary {
  constructor(readonly kernels: readonly KernelHandle[]) {}

  /** The first of the given specializations (best first) that a device with `limits` can run (block and shared memory). */
  firstFitting(name: string, specializations: readonly Readonly<Record<string, number | boolean | string>>[] | undefined, limits: LaunchLimits): KernelHandle | undefined {
    return (specializations ?? [{}]).map((values) => this.get(name, values)).find((k) => kernelFits(k.description, limits));
  }

  /**
   * Finds a kernel by name, and by specialization values when it has several; with none given, the first
   * (the kernel's default specialization) is returned.
   */
  get(name: string, specialization: Readonly<Record<string, number | boolean | string>> = {}): KernelHandle {
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

  /**
   * The layout of a vector or struct type that the library's kernels take (`library.layout("Particle")`): for
   * `device.createBuffer(layout, …)` and packStructs/unpackStructs. Vectors are found by their names
   * (`vec3f`) too. An error where no kernel has it, or where two kernels' types of that name differ.
   */
  layout(name: string): ManifestLayout {
    const found = new Map<string, ManifestLayout>();
    const visit = (layout: ManifestLayout) => {
      found.set(`${layout.name}#${JSON.stringify(layout)}`, layout);
      if (layout.kind === "struct") for (const field of layout.fields) if (typeof field.type === "object") visit(field.type);
    };
    for (const kernel of this.kernels) for (const param of kernel.description.params) if (param.kind !== "const" && param.layout) visit(param.layout);
    const matches = [...found.values()].filter((layout) => layout.name === name);
    if (matches.length === 0) {
      const known = [...new Set([...found.values()].map((layout) => layout.name))].join(", ");
      throw new Error(`tskernel: no kernel of this library takes a '${name}' (vectors and structs it knows: ${known || "none"})`);
    }
    if (matches.length > 1) throw new Error(`tskernel: kernels of this library declare '${name}' differently; take the layout from a kernel's parameter (kernel.description.params)`);
    return matches[0]!;
  }
}


/** Turns the generated JS's factory body into its kernel functions. */
export function instantiateJs(factoryBody: string): Record<string, JsBlockFunction> {
  // The generated code is our own output, built from validated IR; it closes over nothing of ours.
  return new Function(factoryBody)() as Record<string, JsBlockFunction>;
}

/** The targets a build can hold, as the manifest's `outputs` names them. */
export type OutputTarget = "cuda" | "wgsl" | "js";

/** The files of a build, by their path relative to its manifest. */
export interface BuildFiles {
  text(file: string): string;
  bytes(file: string): Uint8Array;
}

/**
 * The files of a build that a library for these targets reads (generated code, WGSL line maps, cubins),
 * so that a caller that fetches them (a browser page) fetches only those.
 */
export function filesToRead(manifest: Manifest, targets: readonly OutputTarget[] = ["cuda", "wgsl", "js"]): { text: string[]; bytes: string[] } {
  const text = new Set<string>();
  const bytes = new Set<string>();
  for (const { outputs } of manifest.kernels) {
    if (targets.includes("js") && outputs.js) text.add(outputs.js.file);
    if (targets.includes("wgsl") && outputs.wgsl) {
      text.add(outputs.wgsl.file);
      if (outputs.wgsl.lineMap) text.add(outputs.wgsl.lineMap);
    }
    if (targets.includes("cuda") && outputs.cuda) {
      text.add(outputs.cuda.file);
      if (outputs.cuda.cubin) bytes.add(outputs.cuda.cubin.file);
    }
  }
  return { text: [...text], bytes: [...bytes] };
}

/** The kernels of a build, with the code of the given targets (default: every target the build has). */
export function libraryFromManifest(manifest: Manifest, files: BuildFiles, targets: readonly OutputTarget[] = ["cuda", "wgsl", "js"]): KernelLibrary {
  const text = new Map<string, string>();
  const read = (file: string) => {
    if (!text.has(file)) text.set(file, files.text(file));
    return text.get(file)!;
  };
  const jsModules = new Map<string, { factoryBody: string; functions: Record<string, JsBlockFunction> }>();
  const handles = manifest.kernels.map((description): KernelHandle => {
    const js = targets.includes("js") ? description.outputs.js : undefined;
    const wgsl = targets.includes("wgsl") ? description.outputs.wgsl : undefined;
    const cuda = targets.includes("cuda") ? description.outputs.cuda : undefined;
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
            cubin: cuda.cubin ? { data: files.bytes(cuda.cubin.file), arch: cuda.cubin.arch } : undefined,
          }
        : undefined,
    };
  });
  return new KernelLibrary(handles);
}
