/**
 * Where a kernel's shared arrays lie, as CUDA allocates them, and so how many bytes the kernel's shared memory
 * really takes: the number the manifest reports as `sharedBytes` and the launch checks compare with a device's
 * limit. The validator computes it once per specialization and the CUDA backend prints it (the offsets into
 * the dynamic buffer, the alignment of each static array), so the two cannot disagree (issue 12: the backend
 * used to pad every array to 16 bytes in the dynamic buffer while the count left the padding out).
 *
 * Each array starts at the alignment its accesses need, and no more: 1024 bytes for a wgmma operand or a
 * copyTile target (the 128-byte swizzle repeats every 8 rows of 128 bytes, and the descriptor's address and
 * the tensor memory accelerator's writes must sit on that pattern), 16 for an array read or written 16 bytes
 * at a time (load4/store4, cp.async), whose vector indices the validator checks relative to the array's
 * start, 8 for mbarriers (`shared.barriers`: 8 bytes each, whatever element type sizes them in the IR), and
 * its element's alignment otherwise (a scalar's size; a vector's or struct's WGSL alignment). Above 48 KB, which CUDA
 * declares statically, the arrays are carved in declaration order out of one dynamic buffer whose start is
 * only 16-byte aligned: a kernel with a wgmma operand asks for 1024 bytes more, so that the arrays can start
 * at the next 1024-byte boundary.
 */

import { arrayStride, isFragmentOperand, type ArrayRef, type Stmt } from "../ir/ir.ts";
import { layoutOf } from "../ir/types.ts";
import { walkStmts } from "../ir/rewrite.ts";
import { cudaStaticSharedLimit } from "../backends/targets.ts";

export interface SharedLayout {
  /** Each shared array's byte offset in the dynamic buffer (used where `dynamic`). */
  readonly offsets: ReadonlyMap<ArrayRef, number>;
  /** Each shared array's alignment in bytes: 1024, 16, or its element's size. */
  readonly alignments: ReadonlyMap<ArrayRef, number>;
  /** The end of the last array: the arrays and the padding between them. */
  readonly bytes: number;
  /** More than CUDA declares statically: the arrays live in one dynamic buffer. */
  readonly dynamic: boolean;
  /** Bytes of dynamic shared memory each launch asks for: `bytes` (plus 1024 to align wgmma operands), or 0. */
  readonly dynamicBytes: number;
  /** What the kernel's shared memory takes: `dynamicBytes` when dynamic, else `bytes`. */
  readonly allocatedBytes: number;
}

/** Alignment of a wgmma operand: the 128-byte swizzle's 8-row groups. */
const swizzleAlignment = 1024;
/** Alignment of an array with 16-byte accesses. */
const vectorAlignment = 16;
/** Size and alignment of an mbarrier (PTX's .b64). */
const mbarrierBytes = 8;

export function layOutShared(shared: readonly ArrayRef[], sizes: ReadonlyMap<ArrayRef, readonly number[]>, body: readonly Stmt[]): SharedLayout {
  const swizzled = wgmmaOperands(body);
  const vectors = vectorAccessedArrays(body);
  const offsets = new Map<ArrayRef, number>();
  const alignments = new Map<ArrayRef, number>();
  let bytes = 0;
  for (const array of shared) {
    const element = array.barriers ? mbarrierBytes : arrayStride(array.elementType);
    // An element's own alignment: its size for scalars, WGSL's for vectors and structs (a struct of 80 bytes aligns to 16).
    const alignment = swizzled.has(array) ? swizzleAlignment : vectors.has(array) ? vectorAlignment : array.barriers ? mbarrierBytes : layoutOf(array.elementType).align;
    alignments.set(array, alignment);
    bytes = Math.ceil(bytes / alignment) * alignment;
    offsets.set(array, bytes);
    bytes += (sizes.get(array) ?? []).reduce((a, b) => a * b, 1) * element;
  }
  const dynamic = bytes > cudaStaticSharedLimit;
  const dynamicBytes = dynamic ? bytes + (swizzled.size > 0 ? swizzleAlignment : 0) : 0;
  return { offsets, alignments, bytes, dynamic, dynamicBytes, allocatedBytes: dynamic ? dynamicBytes : bytes };
}

/**
 * The shared arrays in the 128-byte swizzle (1024-byte aligned): those wgmma reads its shared operands from,
 * copyTile fills, storeTile reads, and storeFragment writes in the swizzled box layout.
 */
function wgmmaOperands(body: readonly Stmt[]): Set<ArrayRef> {
  const found = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    if (stmt.kind === "wgmma") {
      found.add(stmt.b);
      if (!isFragmentOperand(stmt.a)) found.add(stmt.a.array);
    }
    if (stmt.kind === "tileCopy") found.add(stmt.target);
    if (stmt.kind === "tileStore") found.add(stmt.source);
    if (stmt.kind === "matrixStore" && stmt.boxRows) found.add(stmt.target);
  });
  return found;
}

/** The arrays read or written 16 bytes at a time: vector loads and stores, and cp.async targets. */
function vectorAccessedArrays(body: readonly Stmt[]): Set<ArrayRef> {
  const arrays = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    if (stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") arrays.add(stmt.array);
    if (stmt.kind === "asyncCopy") arrays.add(stmt.target);
  });
  return arrays;
}
