/**
 * The build manifest (`<out>/manifest.json`): for every kernel specialization, what a runtime or a build
 * script needs without parsing generated code: its name and entry point, source file, constant values,
 * parameters in order with types and access, the fixed block shape, shared-memory bytes, and for each
 * target the generated file and how to call into it (the CUDA function, the WGSL entry point and its
 * binding layout), the targets the kernel declares and those it was built for, and whether the kernel uses
 * subgroups, matrix operations (on warps or warpgroups) or atomics (which arrays), and the launch it declares
 * (its tensors' shapes, grid, requirements and backward kernel). Output file paths are relative to the
 * manifest's directory; `source` is the kernel file relative to the directory tskernel ran in. The format's
 * types are in lang/manifest.ts.
 */

import type { FileOutput } from "./driver.ts";
import type { Manifest, ManifestKernel, ManifestLayout, ManifestParam, ManifestScalarType, ManifestWgslLayout, ManifestWgslUniformField } from "./lang/manifest.ts";
import { layoutOf, structLayout, typeName, type LayoutRules, type StructType, type VectorType } from "./ir/types.ts";
import { atomicArrays, usesMatrixOperations, usesSubgroups, usesWarpgroupOperations } from "./ir/rewrite.ts";
import { wgslLayout } from "./backends/wgsl-layout.ts";

export type { Manifest, ManifestKernel, ManifestLayout, ManifestParam } from "./lang/manifest.ts";

export const manifestVersion = 1;

function manifestLayout(kernel: Pick<Parameters<typeof wgslLayout>[0], "params">): ManifestWgslLayout {
  const layout = wgslLayout(kernel);
  return {
    group: layout.group,
    bindings: layout.bindings.map((binding) => ({ ...binding, elementType: typeName(binding.elementType) })),
    uniform: layout.uniform
      ? {
          binding: layout.uniform.binding,
          size: layout.uniform.size,
          fields: layout.uniform.fields.map((field): ManifestWgslUniformField =>
            field.wgslType
              ? { param: field.param, type: field.type, wgslType: field.wgslType, offset: field.offset }
              : { param: field.param, type: field.type.name, offset: field.offset, layout: layoutDescription(field.type, "uniform") },
          ),
        }
      : null,
  };
}

/** A vector's or struct's layout as the manifest describes it (lang/manifest.ts). */
export function layoutDescription(type: VectorType | StructType, rules: LayoutRules = "storage"): ManifestLayout {
  const { size, align } = layoutOf(type, rules);
  const stride = Math.ceil(size / align) * align;
  if (type.kind === "vector") return { kind: "vector", name: type.name, element: type.element, lanes: type.size, size, align, stride };
  const { offsets } = structLayout(type, rules);
  return {
    kind: "struct",
    name: type.name,
    size,
    align,
    stride,
    fields: type.fields.map((field, index) => ({ name: field.name, offset: offsets[index]!, type: typeof field.type === "string" ? (field.type as ManifestScalarType) : layoutDescription(field.type, rules) })),
  };
}

function atomicsOf(kernel: FileOutput["specializations"][number]["kernel"]): { atomics?: ManifestKernel["atomics"] } {
  const arrays = atomicArrays(kernel.body);
  if (arrays.size === 0) return {};
  const names = (space: string) => [...arrays].filter((array) => array.space === space).map((array) => array.name);
  return { atomics: { buffers: names("global"), shared: names("shared") } };
}

/** `files` maps each compiled source file to the output file names written for it (relative paths). */
export function buildManifest(
  outputs: readonly FileOutput[],
  fileNames: ReadonlyMap<FileOutput, { cu?: string; cuh?: string; wgsl?: string; wgslMap?: string; js?: string; cubin?: { file: string; arch: string }; ptx?: { file: string; arch: string } }>,
  generator: string,
): Manifest {
  const kernels: ManifestKernel[] = [];
  for (const file of outputs) {
    const names = fileNames.get(file) ?? {};
    file.specializations.forEach((spec, index) => {
      const kernel = spec.kernel;
      const wgslEntry = file.wgsl?.entries[index];
      const cudaFunction = file.cuda?.functions[index];
      const jsFunction = file.js?.functions[index];
      // Only the targets this specialization was built for: a kernel's `targets` may skip some of the file's.
      const outputs: ManifestKernel["outputs"] = {
        ...(file.cuda && cudaFunction !== undefined && names.cu && names.cuh
          ? {
              cuda: {
                file: names.cu,
                header: names.cuh,
                function: cudaFunction,
                dynamicSharedBytes: file.cuda.dynamicSharedBytes[index]!,
                ...(names.cubin ? { cubin: names.cubin } : {}),
                ...(names.ptx ? { ptx: names.ptx } : {}),
                ...(file.cuda.checks?.[index] ? { checks: file.cuda.checks[index] } : {}),
              },
            }
          : {}),
        ...(jsFunction !== undefined && names.js ? { js: { file: names.js, function: jsFunction } } : {}),
        ...(wgslEntry && names.wgsl
          ? {
              wgsl: {
                file: names.wgsl,
                entryPoint: wgslEntry.entryPoint,
                workgroupSizeOverrides: wgslEntry.workgroupSizeOverrides ?? null,
                ...(names.wgslMap ? { lineMap: names.wgslMap } : {}),
                // A checked build binds its error buffer and passes its implicit scalars too (wgsl-layout.ts).
                layout: manifestLayout(file.wgsl!.checkedParams?.[index] ? { params: file.wgsl!.checkedParams[index]! } : kernel),
                // The device features the module's types need (shader-f16 for f16, enabled for the whole module).
                ...(file.wgsl!.features.length > 0 ? { features: file.wgsl!.features } : {}),
                ...(file.wgsl!.checks?.[index] ? { checks: file.wgsl!.checks[index] } : {}),
              },
            }
          : {}),
      };
      kernels.push({
        name: kernel.name,
        entryName: spec.entryName,
        source: file.displayPath,
        // A kernel written over element types names them first (`{ T: "bf16", BLOCK: 256 }`).
        specialization: { ...Object.fromEntries(kernel.typeArgs ?? []), ...Object.fromEntries(kernel.constValues) },
        params: kernel.params.map((param): ManifestParam => {
          switch (param.kind) {
            case "buffer": {
              const element = param.array.elementType;
              if (typeof element === "string") return { name: param.array.name, kind: "buffer", elementType: element, access: param.array.access };
              return { name: param.array.name, kind: "buffer", elementType: element.name, access: param.array.access, layout: layoutDescription(element) };
            }
            case "scalar": {
              const type = param.variable.type;
              if (typeof type === "string") return { name: param.variable.name, kind: "scalar", type };
              return { name: param.variable.name, kind: "scalar", type: type.name, layout: layoutDescription(type) };
            }
            case "const":
              return { name: param.name, kind: "const", type: param.type };
          }
        }),
        block: spec.facts.block ?? null,
        ...(kernel.cluster ? { cluster: kernel.cluster } : {}),
        sharedBytes: spec.facts.sharedBytes,
        ...(usesSubgroups(kernel.body) ? { subgroups: true as const } : {}),
        ...(usesWarpgroupOperations(kernel.body) ? { matrix: "warpgroup" as const } : usesMatrixOperations(kernel.body) ? { matrix: "warp" as const } : {}),
        ...atomicsOf(kernel),
        ...(kernel.targets ? { declaredTargets: kernel.targets } : {}),
        builtFor: (["cuda", "wgsl", "js"] as const).filter((target) => outputs[target] !== undefined),
        ...(kernel.signature ? { signature: kernel.signature } : {}),
        outputs,
      });
    });
  }
  return { version: manifestVersion, generator, kernels };
}
