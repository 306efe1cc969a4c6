/**
 * The CUDA device's launch path, made cheap: what a kernel's launches need is worked out once per kernel
 * handle (its compiled function, its limits given the function's registers, the type of each argument), and
 * the arguments are written into native memory through a DataView over it, so that a launch crosses into
 * native code once, for cuLaunchKernel itself. cuLaunchKernel and the graph calls want an array of pointers,
 * one per argument, each to the argument's value; here every value has an 8-byte slot and the pointers are
 * written once, when the block is made. A vector or struct argument takes as many slots as its bytes need,
 * packed in its layout (the .cu's struct has the same, static_asserted); a kernel with one writes the
 * pointers at each launch.
 */

import { bf16Bits, f16Bits } from "../../compiler/lang/float16.ts";
import type { ManifestLayout, ManifestParam } from "../../compiler/lang/manifest.ts";
import type { DeviceBuffer, KernelArg } from "../device.ts";
import { packValue, type LayoutValue } from "../layouts.ts";
import type { LaunchLimits } from "../launch-check.ts";
import { koffi } from "./cuda-api.ts";

export interface CudaBuffer extends DeviceBuffer {
  readonly pointer: bigint;
}

/** How each run-time argument is written into its slot. */
const enum ArgKind {
  Buffer,
  F32,
  I32,
  U32,
  Bool,
  F64,
  F16,
  BF16,
  /** A vector or struct, in its layout (`CudaLaunchPlan.layouts`). */
  Value,
}

/** A kernel's launches, worked out once. */
export interface CudaLaunchPlan {
  readonly name: string;
  /** The CUfunction, as koffi passes it, and its address (for graph nodes' parameter blocks). */
  readonly fn: unknown;
  readonly fnAddress: bigint;
  /** The device's limits, with the function's own maximum of threads per block. */
  readonly limits: LaunchLimits;
  readonly dynamicSharedBytes: number;
  readonly kinds: Uint8Array;
  /** The layouts of vector and struct arguments, by argument index; undefined when the kernel takes none. */
  readonly layouts?: readonly (ManifestLayout | undefined)[];
  /** The 8-byte slots its arguments take (one each, more for a vector or struct). */
  readonly slotCount: number;
}

export function argumentKinds(params: readonly ManifestParam[]): Uint8Array {
  const runtime = params.filter((p) => p.kind !== "const");
  return Uint8Array.from(runtime, (param) => {
    if (param.kind === "buffer") return ArgKind.Buffer;
    if (param.layout) return ArgKind.Value;
    if (param.type === "f32") return ArgKind.F32;
    if (param.type === "f64") return ArgKind.F64;
    if (param.type === "f16") return ArgKind.F16;
    if (param.type === "bf16") return ArgKind.BF16;
    if (param.type === "i32") return ArgKind.I32;
    if (param.type === "u32") return ArgKind.U32;
    return ArgKind.Bool;
  });
}

/** The layouts of a kernel's vector and struct arguments (undefined when it has none) and the slots its arguments take. */
export function argumentLayouts(params: readonly ManifestParam[]): { layouts?: (ManifestLayout | undefined)[]; slotCount: number } {
  const runtime = params.filter((p) => p.kind !== "const");
  const layouts = runtime.map((param) => (param.kind === "scalar" ? param.layout : undefined));
  const slotCount = layouts.reduce((sum, layout) => sum + (layout ? Math.ceil(layout.size / 8) : 1), 0);
  return { layouts: layouts.some(Boolean) ? layouts : undefined, slotCount };
}

/**
 * Native memory for one launch's arguments: `count` 8-byte value slots and the array of pointers to them
 * (`pointers`, what cuLaunchKernel's kernelParams takes). The device reuses one block for every launch, as
 * cuLaunchKernel copies the values before it returns; each node of a recorded graph has its own.
 */
export class ArgumentBlock {
  readonly values: bigint;
  readonly pointers: bigint;
  private readonly view: DataView;
  private readonly pointerView: DataView;
  /** Whether the pointers were moved for vector or struct arguments (and must be put back for others). */
  private shifted = false;
  private released = false;

  constructor(readonly count: number) {
    const ffi = koffi();
    this.values = ffi.alloc("uint64_t", Math.max(1, count));
    this.pointers = ffi.alloc("uint64_t", Math.max(1, count));
    this.view = new DataView(ffi.view(this.values, Math.max(1, count) * 8));
    this.pointerView = new DataView(ffi.view(this.pointers, Math.max(1, count) * 8));
    this.pointAtSlots(undefined);
  }

  /** Points argument i at its slot: slot i, or after the slots of the vectors and structs before it. */
  private pointAtSlots(layouts: readonly (ManifestLayout | undefined)[] | undefined): number[] {
    const offsets: number[] = [];
    let slot = 0;
    for (let i = 0; i < (layouts?.length ?? this.count); i++) {
      offsets.push(slot * 8);
      this.pointerView.setBigUint64(i * 8, this.values + BigInt(slot * 8), true);
      const layout = layouts?.[i];
      slot += layout ? Math.ceil(layout.size / 8) : 1;
    }
    this.shifted = layouts !== undefined;
    return offsets;
  }

  /**
   * Writes checked arguments (buffers already known to be the device's live ones); `layouts`: those of the
   * vector and struct arguments (the plan's), which take more than one slot.
   */
  write(kinds: Uint8Array, args: readonly KernelArg[], layouts?: readonly (ManifestLayout | undefined)[]): void {
    const view = this.view;
    const offsets = layouts ? this.pointAtSlots(layouts) : this.shifted ? this.pointAtSlots(undefined) : undefined;
    for (let i = 0; i < kinds.length; i++) {
      const value = args[i];
      const offset = offsets ? offsets[i]! : i * 8;
      switch (kinds[i]) {
        case ArgKind.Value:
          packValue(layouts![i]!, value as LayoutValue, view, offset);
          break;
        case ArgKind.Buffer:
          view.setBigUint64(offset, (value as CudaBuffer).pointer, true);
          break;
        case ArgKind.F32:
          view.setFloat32(offset, value as number, true);
          break;
        case ArgKind.F64:
          view.setFloat64(offset, value as number, true);
          break;
        // tsk_f16 and tsk_bf16 (cuda-halves.ts) are passed as their 16-bit encodings; the value is of the type already (launch-check.ts).
        case ArgKind.F16:
          view.setUint16(offset, f16Bits(value as number), true);
          break;
        case ArgKind.BF16:
          view.setUint16(offset, bf16Bits(value as number), true);
          break;
        case ArgKind.I32:
          view.setInt32(offset, value as number, true);
          break;
        case ArgKind.U32:
          view.setUint32(offset, value as number, true);
          break;
        default:
          view.setUint8(offset, value ? 1 : 0);
      }
    }
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    koffi().free(this.values);
    koffi().free(this.pointers);
  }
}

/** Bytes of CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h): func, grid and block (6 × u32), shared bytes, kernelParams, extra, kern, ctx. */
const nodeParamsBytes = 72;

/** Native memory holding one CUDA_KERNEL_NODE_PARAMS_v2, for cuGraphAddKernelNode_v2 and cuGraphExecKernelNodeSetParams_v2. */
export class NodeParams {
  readonly address: bigint;
  private readonly view: DataView;

  constructor() {
    const ffi = koffi();
    this.address = ffi.alloc("uint8_t", nodeParamsBytes);
    this.view = new DataView(ffi.view(this.address, nodeParamsBytes));
  }

  write(fnAddress: bigint, grid: readonly number[], block: readonly number[], sharedBytes: number, kernelParams: bigint): void {
    const v = this.view;
    v.setBigUint64(0, fnAddress, true);
    grid.forEach((dim, i) => v.setUint32(8 + 4 * i, dim, true));
    block.forEach((dim, i) => v.setUint32(20 + 4 * i, dim, true));
    v.setUint32(32, sharedBytes, true);
    v.setUint32(36, 0, true);
    v.setBigUint64(40, kernelParams, true);
    // extra, kern and ctx: none (func names the kernel; the current context runs it).
    v.setBigUint64(48, 0n, true);
    v.setBigUint64(56, 0n, true);
    v.setBigUint64(64, 0n, true);
  }

  release(): void {
    koffi().free(this.address);
  }
}
