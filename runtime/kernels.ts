/**
 * Compiled kernels as the runtime sees them: each kernel specialization with its manifest description
 * (parameters, block shape, shared memory) and the code of every target it was compiled for. This file makes
 * a library by compiling TypeScript in-process (`compileKernelLibrary`), through the compiler's public entry;
 * load-library.ts loads one from a `tskernel build` output directory, without the compiler.
 */

import fs from "node:fs";
import { buildManifest, compileFiles, renderDiagnostics, type CompileOptions, type TargetName } from "../compiler/index.ts";
import type { KernelHandle } from "./device.ts";
import { instantiateJs, KernelLibrary } from "./library.ts";

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
      // Each target's code where this specialization was built for it (a kernel's `targets` may skip some).
      const jsFunction = file.js?.functions[i];
      const wgslEntry = file.wgsl?.entries[i];
      const cudaFunction = file.cuda?.functions[i];
      handles.push({
        description,
        js: jsFunction !== undefined ? jsFunctions?.[jsFunction] : undefined,
        jsSource: file.js && jsFunction !== undefined ? { factoryBody: file.js.factoryBody, function: jsFunction } : undefined,
        jsChecked: jsFunction !== undefined ? jsChecked?.[jsFunction] : undefined,
        wgsl: file.wgsl && wgslEntry ? { source: file.wgsl.source, entryPoint: wgslEntry.entryPoint, lineSources: file.wgsl.lineSources } : undefined,
        cuda: file.cuda && cudaFunction !== undefined ? { source: file.cuda.source, function: cudaFunction, dynamicSharedBytes: file.cuda.dynamicSharedBytes[i]! } : undefined,
      });
    });
  }
  return new KernelLibrary(handles);
}

