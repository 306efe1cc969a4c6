/**
 * Compiled kernels as the runtime sees them: each kernel specialization with its manifest description
 * (parameters, block shape, shared memory) and the code of every target it was compiled for. A library is
 * made by compiling TypeScript in-process (`compileKernelLibrary`); the GPU backends will also load one from
 * a `tskernel build` output directory.
 */

import { compileFiles, type CompileOptions } from "../compiler/driver.ts";
import { renderDiagnostics } from "../compiler/diagnostics/render.ts";
import { buildManifest, type ManifestKernel } from "../compiler/manifest.ts";
import type { TargetName } from "../compiler/backends/targets.ts";
import fs from "node:fs";

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
  /** The checked-mode build: takes a Checker as a fifth argument. */
  readonly jsChecked?: JsBlockFunction;
  readonly wgsl?: { readonly source: string; readonly entryPoint: string };
  readonly cuda?: { readonly source: string; readonly function: string };
}

export class KernelLibrary {
  constructor(readonly kernels: readonly KernelHandle[]) {}

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

export class CompileFailure extends Error {
  constructor(readonly rendered: string) {
    super(`tskernel: kernels failed to compile:\n${rendered}`);
  }
}

/** Compiles kernel files in-process for the given targets; throws CompileFailure with rendered diagnostics. */
export function compileKernelLibrary(
  files: readonly string[],
  targets: readonly TargetName[] = ["js"],
  options: Partial<CompileOptions> = {},
): KernelLibrary {
  const result = compileFiles(files, { targets, ...options });
  if (!result.ok) {
    throw new CompileFailure(renderDiagnostics(result.diagnostics, { readFile: (f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined) }));
  }
  // Compiled in memory: the outputs have no files, but the manifest still describes each target's entry.
  const inMemory = { cu: "(in memory)", cuh: "(in memory)", wgsl: "(in memory)", js: "(in memory)" };
  const manifest = buildManifest(result.files, new Map(result.files.map((file) => [file, inMemory])), "tskernel (in-process)");
  const handles: KernelHandle[] = [];
  let index = 0;
  for (const file of result.files) {
    const jsFunctions = file.js ? instantiateJs(file.js.factoryBody) : undefined;
    const jsChecked = file.js ? instantiateJs(file.js.checkedFactoryBody) : undefined;
    file.specializations.forEach((_, i) => {
      const description = manifest.kernels[index++]!;
      handles.push({
        description,
        js: jsFunctions?.[file.js!.functions[i]!],
        jsChecked: jsChecked?.[file.js!.functions[i]!],
        wgsl: file.wgsl ? { source: file.wgsl.source, entryPoint: file.wgsl.entries[i]!.entryPoint } : undefined,
        cuda: file.cuda ? { source: file.cuda.source, function: file.cuda.functions[i]! } : undefined,
      });
    });
  }
  return new KernelLibrary(handles);
}

function instantiateJs(factoryBody: string): Record<string, JsBlockFunction> {
  // The generated code is our own output, built from validated IR; it closes over nothing of ours.
  return new Function(factoryBody)() as Record<string, JsBlockFunction>;
}
