/**
 * Which of WebGPU's default limits a kernel specialization stays within (every adapter offers at least these,
 * by the WebGPU specification's "Limits" table), and for each it passes, the value an adapter must allow
 * (requested with `requiredLimits` when the device is made), and the features it needs.
 */

import type { ManifestKernel } from "../../compiler/index.ts";

/** The WebGPU specification's default limits that a compute kernel's shape and bindings meet or not. */
export const webgpuDefaultLimits = {
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupSizeZ: 64,
  maxStorageBuffersPerShaderStage: 8,
} as const;

export type WebGpuLimitName = keyof typeof webgpuDefaultLimits;

export interface WebGpuFit {
  /** Threads of the fixed block, or undefined for a block chosen at launch (which then must meet the limits). */
  readonly threads?: number;
  readonly workgroupStorageBytes: number;
  readonly storageBuffers: number;
  /** The limits above their default that an adapter must allow, with the value needed. */
  readonly needs: readonly { readonly limit: WebGpuLimitName; readonly value: number; readonly default: number }[];
  /** Optional features the kernel needs (`subgroups`). */
  readonly features: readonly string[];
}

export function webgpuFit(kernel: ManifestKernel): WebGpuFit {
  const needs: { limit: WebGpuLimitName; value: number; default: number }[] = [];
  const need = (limit: WebGpuLimitName, value: number) => {
    if (value > webgpuDefaultLimits[limit]) needs.push({ limit, value, default: webgpuDefaultLimits[limit] });
  };
  const storageBuffers = kernel.params.filter((p) => p.kind === "buffer").length;
  need("maxComputeWorkgroupStorageSize", kernel.sharedBytes);
  const block = kernel.block;
  if (block) {
    need("maxComputeInvocationsPerWorkgroup", block[0] * block[1] * block[2]);
    need("maxComputeWorkgroupSizeX", block[0]);
    need("maxComputeWorkgroupSizeY", block[1]);
    need("maxComputeWorkgroupSizeZ", block[2]);
  }
  need("maxStorageBuffersPerShaderStage", storageBuffers);
  return {
    threads: block ? block[0] * block[1] * block[2] : undefined,
    workgroupStorageBytes: kernel.sharedBytes,
    storageBuffers,
    needs,
    features: kernel.subgroups ? ["subgroups"] : [],
  };
}

/** One line for the table: `defaults`, or what it needs (`maxComputeInvocationsPerWorkgroup ≥ 1024, subgroups`). */
export function describeFit(fit: WebGpuFit): string {
  const parts = [...fit.needs.map((n) => `${n.limit} ≥ ${n.value}`), ...fit.features.map((f) => `feature ${f}`)];
  return parts.length === 0 ? "defaults" : parts.join(", ");
}
