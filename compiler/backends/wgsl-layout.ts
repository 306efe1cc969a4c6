/**
 * The WebGPU resource layout of a kernel, shared by the WGSL backend (which declares it) and the manifest
 * (which tells the runtime how to bind arguments). Group 0 holds, in parameter order, one storage buffer
 * per buffer parameter (`read-only-storage` for read-only ones), then, if the kernel has value parameters,
 * one uniform buffer with a struct of all of them in parameter order: a scalar in 4 bytes (bools stored as
 * u32 0 or 1, f16 and bf16 as the f32 of their value), a vector or struct as WGSL's uniform address space
 * lays it out (`layoutOf(type, "uniform")`: a struct aligned to 16, and 16-byte multiples apart from what
 * follows), the buffer's size rounded up to 16 bytes. A checked build's implicit parameters (passes/checks.ts)
 * come after the kernel's own, so they take the same places: the error buffer the binding after the kernel's
 * buffers (the uniform's binding moves one on), the launch tag and the buffers' lengths u32 fields at the end
 * of the uniform struct.
 */

import type { ElementType, Kernel, ScalarType, StructType, Variable, VectorType } from "../ir/ir.ts";
import { layoutOf } from "../ir/types.ts";
import { isComposite } from "../ir/vectors.ts";

/** The 4-byte type a scalar parameter has in the uniform struct (f64 never gets here: WGSL refuses it). */
const uniformTypes: Readonly<Record<ScalarType, "f32" | "i32" | "u32" | undefined>> = {
  f32: "f32", i32: "i32", u32: "u32", bool: "u32", f16: "f32", bf16: "f32", f64: undefined,
};

export interface WgslBinding {
  readonly binding: number;
  readonly param: string;
  readonly type: "storage" | "read-only-storage";
  readonly elementType: ElementType;
}

export type WgslUniformField =
  | {
      readonly variable: Variable;
      readonly param: string;
      readonly type: ScalarType;
      /** The type in the WGSL struct: bools are stored as u32, f16 and bf16 as f32. */
      readonly wgslType: "f32" | "i32" | "u32";
      readonly offset: number;
    }
  | {
      readonly variable: Variable;
      readonly param: string;
      /** A vector or struct, laid out by the uniform rules. */
      readonly type: VectorType | StructType;
      readonly wgslType?: undefined;
      readonly offset: number;
    };

export interface WgslLayout {
  readonly group: 0;
  readonly bindings: readonly WgslBinding[];
  readonly uniform?: { readonly binding: number; readonly size: number; readonly fields: readonly WgslUniformField[] };
}

export function wgslLayout(kernel: Pick<Kernel, "params">): WgslLayout {
  const bindings: WgslBinding[] = [];
  const fields: WgslUniformField[] = [];
  for (const param of kernel.params) {
    if (param.kind === "buffer") {
      bindings.push({
        binding: bindings.length,
        param: param.array.name,
        type: param.array.access === "read" ? "read-only-storage" : "storage",
        elementType: param.array.elementType,
      });
    } else if (param.kind === "scalar") {
      const type = param.variable.type;
      const previous = fields[fields.length - 1];
      // Where the previous member ends: a struct is followed 16-byte multiples later (see structLayout).
      const end = previous === undefined ? 0 : previous.offset + (previous.wgslType ? 4 : uniformSpan(previous.type));
      if (isComposite(type)) {
        const { align } = layoutOf(type, "uniform");
        const memberAlign = type.kind === "struct" ? Math.ceil(align / 16) * 16 : align;
        fields.push({ variable: param.variable, param: param.variable.name, type, offset: Math.ceil(end / memberAlign) * memberAlign });
        continue;
      }
      const wgslType = uniformTypes[type];
      if (!wgslType) throw new Error(`internal: a ${type} parameter reached the WGSL layout (the validator refuses it)`);
      fields.push({ variable: param.variable, param: param.variable.name, type, wgslType, offset: Math.ceil(end / 4) * 4 });
    }
  }
  if (fields.length === 0) return { group: 0, bindings };
  const last = fields[fields.length - 1]!;
  const size = Math.ceil((last.offset + (last.wgslType ? 4 : layoutOf(last.type, "uniform").size)) / 16) * 16;
  return { group: 0, bindings, uniform: { binding: bindings.length, size, fields } };
}

/** The bytes a vector or struct member takes before the next member of a uniform struct. */
function uniformSpan(type: VectorType | StructType): number {
  const { size } = layoutOf(type, "uniform");
  return type.kind === "struct" ? Math.ceil(size / 16) * 16 : size;
}
