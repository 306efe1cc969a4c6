/**
 * What the WebGPU device works out once per kernel and keeps, for launches and recorded sequences alike: the
 * pipeline of a kernel and block with its bind group layout, and the kernel's plan, which says which argument
 * each storage binding takes and where each scalar goes in the uniform buffer (the manifest's layout, with a
 * checked build's implicit parameters after the kernel's own); and
 * the writing of a launch's scalars (and vectors and structs, in WGSL's uniform layout) in that layout.
 */

import type { ManifestLayout } from "../../compiler/lang/manifest.ts";
import type { DeviceBuffer, KernelHandle } from "../device.ts";
import { packValue, type LayoutValue } from "../layouts.ts";

export interface WebGpuBuffer extends DeviceBuffer {
  readonly gpuBuffer: GPUBuffer;
}

export interface PipelineEntry {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

export interface KernelPlan {
  readonly name: string;
  /** The storage bindings, and the argument (index among the run-time arguments) that each takes. */
  readonly bindings: readonly number[];
  readonly bindingArgs: readonly number[];
  readonly uniform?: {
    readonly binding: number;
    readonly size: number;
    /** A scalar's type, or "value" for a vector or struct in `layout` (WGSL's uniform rules). */
    readonly fields: readonly { readonly arg: number; readonly offset: number; readonly type: "f32" | "i32" | "u32" | "bool" | "value"; readonly layout?: ManifestLayout }[];
  };
}

/** The plan of a kernel that has WGSL. */
export function kernelPlan(kernel: KernelHandle): KernelPlan {
  const description = kernel.description;
  const layout = description.outputs.wgsl!.layout;
  const runtimeParams = description.params.filter((p) => p.kind !== "const");
  // A checked build's implicit parameters (its error buffer, launch tag and buffer lengths) come after the
  // run-time arguments, in the manifest's order (checked-build.ts, implicitArguments).
  const implicit = description.outputs.wgsl!.checks?.implicit ?? [];
  const argOf = (param: string) => {
    const own = runtimeParams.findIndex((p) => p.name === param);
    return own >= 0 ? own : runtimeParams.length + implicit.findIndex((p) => p.name === param);
  };
  const uniform = layout.uniform;
  return {
    name: description.entryName,
    bindings: layout.bindings.map((b) => b.binding),
    bindingArgs: layout.bindings.map((b) => argOf(b.param)),
    ...(uniform
      ? {
          uniform: {
            binding: uniform.binding,
            size: uniform.size,
            fields: uniform.fields.map((f) => (f.layout ? { arg: argOf(f.param), offset: f.offset, type: "value" as const, layout: f.layout } : { arg: argOf(f.param), offset: f.offset, type: f.type === "bool" ? ("bool" as const) : f.wgslType })),
          },
        }
      : {}),
  };
}

/** Writes a launch's scalars (`args`, the run-time arguments in order) at `base` as the uniform buffer lays them out. */
export function writeScalars(plan: KernelPlan, args: readonly unknown[], view: DataView, base: number): void {
  for (const field of plan.uniform!.fields) {
    const value = args[field.arg];
    const at = base + field.offset;
    if (field.layout) packValue(field.layout, value as LayoutValue, view, at);
    else if (field.type === "bool") view.setUint32(at, value ? 1 : 0, true);
    else if (field.type === "f32") view.setFloat32(at, value as number, true);
    else if (field.type === "i32") view.setInt32(at, value as number, true);
    else view.setUint32(at, value as number, true);
  }
}
