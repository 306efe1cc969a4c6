/**
 * The build manifest (`<out>/manifest.json`): for every kernel specialization, what a runtime or a build
 * script needs without parsing generated code: its name and entry point, source file, constant values,
 * parameters in order with types and access, the fixed block shape, shared-memory bytes, and for each
 * target the generated file and how to call into it (the CUDA function, the WGSL entry point and its
 * binding layout). Output file paths are relative to the manifest's directory; `source` is the kernel file
 * relative to the directory tskernel ran in.
 */

import type { FileOutput } from "./driver.ts";
import type { ConstValue, ScalarType } from "./ir/ir.ts";
import { wgslLayout } from "./backends/wgsl-layout.ts";

export const manifestVersion = 1;

export type ManifestParam =
  | { readonly name: string; readonly kind: "buffer"; readonly elementType: ScalarType; readonly access: "read" | "read_write" }
  | { readonly name: string; readonly kind: "scalar"; readonly type: ScalarType }
  | { readonly name: string; readonly kind: "const"; readonly type: ScalarType };

export interface ManifestKernel {
  readonly name: string;
  readonly entryName: string;
  readonly source: string;
  readonly specialization: Readonly<Record<string, ConstValue>>;
  readonly params: readonly ManifestParam[];
  readonly block: readonly [number, number, number] | null;
  readonly sharedBytes: number;
  readonly outputs: {
    readonly cuda?: {
      readonly file: string;
      readonly header: string;
      readonly function: string;
      /** Bytes of dynamic shared memory each launch needs (the kernel's shared arrays above 48 KB), else 0. */
      readonly dynamicSharedBytes: number;
      /** A cubin nvcc built from `file` at build time (`--cubin`), loadable with no NVRTC present. */
      readonly cubin?: { readonly file: string; readonly arch: string };
    };
    readonly js?: { readonly file: string; readonly function: string };
    readonly wgsl?: {
      readonly file: string;
      readonly entryPoint: string;
      readonly workgroupSizeOverrides: readonly string[] | null;
      /** A JSON array: for each WGSL line, the TypeScript `file:line:column` it came from (or null). */
      readonly lineMap?: string;
      readonly layout: ReturnType<typeof manifestLayout>;
    };
  };
}

export interface Manifest {
  readonly version: number;
  readonly generator: string;
  readonly kernels: readonly ManifestKernel[];
}

function manifestLayout(kernel: Parameters<typeof wgslLayout>[0]) {
  const layout = wgslLayout(kernel);
  return {
    group: layout.group,
    bindings: layout.bindings,
    uniform: layout.uniform
      ? {
          binding: layout.uniform.binding,
          size: layout.uniform.size,
          fields: layout.uniform.fields.map(({ param, type, wgslType, offset }) => ({ param, type, wgslType, offset })),
        }
      : null,
  };
}

/** `files` maps each compiled source file to the output file names written for it (relative paths). */
export function buildManifest(
  outputs: readonly FileOutput[],
  fileNames: ReadonlyMap<FileOutput, { cu?: string; cuh?: string; wgsl?: string; wgslMap?: string; js?: string; cubin?: { file: string; arch: string } }>,
  generator: string,
): Manifest {
  const kernels: ManifestKernel[] = [];
  for (const file of outputs) {
    const names = fileNames.get(file) ?? {};
    file.specializations.forEach((spec, index) => {
      const kernel = spec.kernel;
      const wgslEntry = file.wgsl?.entries[index];
      kernels.push({
        name: kernel.name,
        entryName: spec.entryName,
        source: file.displayPath,
        specialization: Object.fromEntries(kernel.constValues),
        params: kernel.params.map((param): ManifestParam => {
          switch (param.kind) {
            case "buffer":
              return { name: param.array.name, kind: "buffer", elementType: param.array.elementType, access: param.array.access };
            case "scalar":
              return { name: param.variable.name, kind: "scalar", type: param.variable.type };
            case "const":
              return { name: param.name, kind: "const", type: param.type };
          }
        }),
        block: spec.facts.block ?? null,
        sharedBytes: spec.facts.sharedBytes,
        outputs: {
          ...(file.cuda && names.cu && names.cuh ? { cuda: { file: names.cu, header: names.cuh, function: file.cuda.functions[index]!, dynamicSharedBytes: file.cuda.dynamicSharedBytes[index]!, ...(names.cubin ? { cubin: names.cubin } : {}) } } : {}),
          ...(file.js && names.js ? { js: { file: names.js, function: file.js.functions[index]! } } : {}),
          ...(wgslEntry && names.wgsl
            ? {
                wgsl: {
                  file: names.wgsl,
                  entryPoint: wgslEntry.entryPoint,
                  workgroupSizeOverrides: wgslEntry.workgroupSizeOverrides ?? null,
                  ...(names.wgslMap ? { lineMap: names.wgslMap } : {}),
                  layout: manifestLayout(kernel),
                },
              }
            : {}),
        },
      });
    });
  }
  return { version: manifestVersion, generator, kernels };
}
