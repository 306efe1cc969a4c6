/**
 * The types a kernel uses, against what each target does with them (ir/types.ts, `targetScalars`): where a
 * target refuses one (f64 on WGSL) the kernel fails to build for it with TSK3120, whose note suggests the
 * `targets` option, so backends never meet such a type; and the device features a target needs for a type it
 * computes natively only with one (WGSL's f16: `shader-f16`), which the manifest records for the runtime.
 */

import type { Kernel } from "../ir/ir.ts";
import { targetScalars, type TargetName } from "../ir/types.ts";
import { typesUsed, type TypeUse } from "../ir/types-used.ts";

/** The first type the kernel uses that `target` refuses, with the reason. */
export function firstRefusedType(kernel: Kernel, target: TargetName): (TypeUse & { readonly why: string }) | undefined {
  for (const use of typesUsed(kernel)) {
    const support = targetScalars[target][use.type].support;
    if (support.level === "refused") return { ...use, why: support.why };
  }
  return undefined;
}

/** The device features `target` needs for the kernel's types (WGSL: `shader-f16` for f16), sorted. */
export function featuresRequired(kernel: Kernel, target: TargetName): string[] {
  const features = new Set<string>();
  for (const use of typesUsed(kernel)) {
    const support = targetScalars[target][use.type].support;
    if (support.level === "native" && support.requires) features.add(support.requires);
  }
  return [...features].sort();
}
