/**
 * CUDA's spelling of atomics with a memory order (`atomicLoad(flags, i, "acquire")`, `atomicStore(…, "release")`,
 * `atomicAdd(…, "acqRel")`) and of `waitFlag`, and the proxy fences a kernel needs when it copies tiles (TMA)
 * from a global buffer that its own threads write. Loads and stores are `ld.acquire.gpu` / `st.release.gpu`;
 * a read-modify-write keeps CUDA's relaxed `atomicAdd` and friends between `fence.acq_rel.gpu`s, which is the
 * PTX memory model's release pattern before it and acquire pattern after it. The tensor memory accelerator
 * reads global memory through the async proxy, which ordinary stores (the generic proxy) do not reach without
 * `fence.proxy.async.global`: in such a kernel each writer fences before the barriers and releases that follow
 * its stores (so that whoever it synchronizes with publishes them too), and each reader after its acquires and
 * waits, before its copies (bench/README.md, "Rounding A").
 */

import type { AtomicStmt, ArrayRef, Stmt } from "../ir/ir.ts";
import { walkStmts } from "../ir/rewrite.ts";
import { publishPoints } from "./cuda-barriers.ts";

/** The helpers of ordered atomics, `waitFlag` and the global proxy fence, printed once when a module uses them. */
export const orderedAtomicHelpers = [
  "// GPU-scope acquire loads and release stores of 32-bit words, and the fences of ordered read-modify-writes.",
  "__device__ __forceinline__ unsigned tsk_load_acquire(const void* p) {",
  "  unsigned v;",
  '  asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");',
  "  return v;",
  "}",
  "__device__ __forceinline__ void tsk_store_release(void* p, unsigned v) {",
  '  asm volatile("st.release.gpu.b32 [%0], %1;" :: "l"(p), "r"(v) : "memory");',
  "}",
  "__device__ __forceinline__ void tsk_fence_acq_rel() {",
  '  asm volatile("fence.acq_rel.gpu;" ::: "memory");',
  "}",
  "// waitFlag(): spins on an acquire load until the word holds the value.",
  "__device__ __forceinline__ void tsk_wait_flag(const void* p, unsigned v) {",
  "  while (tsk_load_acquire(p) != v) {",
  "  }",
  "}",
  "// Makes this thread's ordinary writes to global memory visible to the tensor memory accelerator's reads.",
  "__device__ __forceinline__ void tsk_fence_proxy_async_global() {",
  '  asm volatile("fence.proxy.async.global;" ::: "memory");',
  "}",
];

/** Whether a body has an atomic with a memory order or a waitFlag: the module then needs the helpers above. */
export function usesOrderedAtomics(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => stmt.kind === "atomic" && stmt.order !== undefined && (found = true));
  return found;
}

/** The global buffers a kernel copies tiles from and also writes with ordinary stores (or atomics). */
function writtenTileSources(body: readonly Stmt[]): ReadonlySet<ArrayRef> {
  const sources = new Set<ArrayRef>();
  const written = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    if (stmt.kind === "tileCopy") sources.add(stmt.source);
    if (stmt.kind === "store" || stmt.kind === "vectorStore" || stmt.kind === "atomic") written.add(stmt.array);
  });
  return new Set([...sources].filter((array) => written.has(array)));
}

/** True when the kernel copies tiles from a global buffer that it also writes (the module then needs the helpers). */
export function publishesToTileCopies(body: readonly Stmt[]): boolean {
  return writtenTileSources(body).size > 0;
}

/**
 * Where a kernel that copies tiles from a global buffer it writes publishes those writes (undefined in other
 * kernels): `fence.proxy.async.global` before each barrier and release that a path reaches with such a write
 * since the last one (cuda-barriers.ts's publishPoints), and after every acquire and wait.
 */
export function globalPublishPoints(body: readonly Stmt[]): ReadonlySet<Stmt> | undefined {
  const sources = writtenTileSources(body);
  if (sources.size === 0) return undefined;
  return publishPoints(
    body,
    (stmt) => (stmt.kind === "store" || stmt.kind === "vectorStore" || stmt.kind === "atomic" ? stmt.array : undefined),
    (array) => sources.has(array),
    (stmt) => stmt.kind === "barrier" || (stmt.kind === "atomic" && (stmt.order === "release" || stmt.order === "acqRel")),
  );
}

/** The bits of a 32-bit value as `unsigned`, for the helpers' operand. */
function bitsOf(type: string, value: string): string {
  return type === "f32" ? `__float_as_uint(${value})` : `(unsigned)(${value})`;
}

/** A word the helpers loaded, as the element type. */
function valueOf(type: string, bits: string): string {
  return type === "f32" ? `__uint_as_float(${bits})` : type === "i32" ? `(int)${bits}` : bits;
}

/**
 * The lines of an ordered load, store or wait (`text` is the declaration or expression the caller wraps), or
 * of the fences around a relaxed read-modify-write (`call`, printed by the caller); `publish`, the kernel's
 * globalPublishPoints, adds the global proxy fences.
 */
export function orderedAtomic(stmt: AtomicStmt, address: string, value: string | undefined, publish: ReadonlySet<Stmt> | undefined, declare: (text: string) => string, call: () => string): string[] {
  const type = String(stmt.array.elementType);
  const proxy = ["tsk_fence_proxy_async_global();"];
  const releases = stmt.order === "release" || stmt.order === "acqRel";
  const acquires = stmt.order === "acquire" || stmt.order === "acqRel";
  const before = releases && publish?.has(stmt) ? proxy : [];
  const after = acquires && publish ? proxy : [];
  switch (stmt.op) {
    case "wait":
      return [`tsk_wait_flag(${address}, ${bitsOf(type, value!)});`, ...after];
    case "load":
      return [declare(valueOf(type, `tsk_load_acquire(${address})`)), ...after];
    case "store":
      return [...before, `tsk_store_release(${address}, ${bitsOf(type, value!)});`];
    default:
      return [...before, ...(releases ? ["tsk_fence_acq_rel();"] : []), call(), ...(acquires ? ["tsk_fence_acq_rel();"] : []), ...after];
  }
}
