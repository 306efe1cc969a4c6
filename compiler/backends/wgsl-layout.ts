/**
 * The WebGPU resource layout of a kernel, shared by the WGSL backend (which declares it) and the manifest
 * (which tells the runtime how to bind arguments). Group 0 holds, in parameter order, one storage buffer
 * per buffer parameter (`read-only-storage` for read-only ones), then, if the kernel has scalar parameters,
 * one uniform buffer with a struct of all of them: 4 bytes each in parameter order, bools stored as u32
 * (0 or 1), f16 and bf16 as the f32 of their value, the buffer's size rounded up to 16 bytes.
 */

import type { ElementScalar, Kernel, ScalarType, Variable } from "../ir/ir.ts";

/** The 4-byte type a scalar parameter has in the uniform struct (f64 never gets here: WGSL refuses it). */
const uniformTypes: Readonly<Record<ScalarType, "f32" | "i32" | "u32" | undefined>> = {
  f32: "f32", i32: "i32", u32: "u32", bool: "u32", f16: "f32", bf16: "f32", f64: undefined,
};

export interface WgslBinding {
  readonly binding: number;
  readonly param: string;
  readonly type: "storage" | "read-only-storage";
  readonly elementType: ElementScalar;
}

export interface WgslUniformField {
  readonly variable: Variable;
  readonly param: string;
  readonly type: ScalarType;
  /** The type in the WGSL struct: bools are stored as u32, f16 and bf16 as f32. */
  readonly wgslType: "f32" | "i32" | "u32";
  readonly offset: number;
}

export interface WgslLayout {
  readonly group: 0;
  readonly bindings: readonly WgslBinding[];
  readonly uniform?: { readonly binding: number; readonly size: number; readonly fields: readonly WgslUniformField[] };
}

export function wgslLayout(kernel: Kernel): WgslLayout {
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
      const wgslType = uniformTypes[type];
      if (!wgslType) throw new Error(`internal: a ${type} parameter reached the WGSL layout (the validator refuses it)`);
      fields.push({ variable: param.variable, param: param.variable.name, type, wgslType, offset: fields.length * 4 });
    }
  }
  if (fields.length === 0) return { group: 0, bindings };
  const size = Math.ceil((fields.length * 4) / 16) * 16;
  return { group: 0, bindings, uniform: { binding: bindings.length, size, fields } };
}
