/**
 * mbarriers and warpgroup roles on CUDA. `shared.barriers(n)` is an array of n 8-byte words in shared memory;
 * `initBarrier` is `mbarrier.init` followed by `fence.mbarrier_init` (so that the async proxy, which completes
 * `cp.async` arrivals, sees the initialized barrier), `arriveBarrier` is `mbarrier.arrive`,
 * `arriveAfterCopies` is `cp.async.mbarrier.arrive.noinc` (the arrival happens once this thread's earlier
 * `cp.async` copies land, and counts against the phase's expected arrivals), and `waitBarrier` spins on
 * `mbarrier.try_wait.parity` (sm_90: the hardware suspends the thread for a while inside each try). In a
 * kernel whose wgmmas read shared memory that `cp.async` writes, each wait is followed by `fence.proxy.async`:
 * the copies land after the arrival that counts them (the generic proxy), and the tensor cores read through
 * the async proxy; ordinary stores into wgmma operands are published by their writers (storeFences). `warpgroupIdx` is the linear thread index over 128, broadcast from lane 0 by `__shfl_sync` so that
 * the compiler knows it is the same across the warp (a role branch then needs no divergence handling).
 * `arriveExpectBytes` is `mbarrier.arrive.expect_tx`, and `copyTile` is `cp.async.bulk.tensor.2d` from the
 * tensor map in global memory (the runtime wrote it with cuTensorMapEncodeTiled, 128-byte swizzle), completing
 * its bytes on the barrier; `storeTile` is `cp.async.bulk.tensor.2d` the other way (a bulk group of its own),
 * and `waitTileStores(n)` is `cp.async.bulk.wait_group.read n`. Shared memory written by ordinary stores and
 * read by the copy engine (a tile store's source) must be published to the async proxy by its writers: in a
 * kernel that stores tiles, a barrier arrival (or syncThreads, or the tile store itself) is preceded by
 * `fence.proxy.async` where this thread may have written shared memory through the generic proxy since its
 * last such fence (storeFences). An arrival that only releases a stage that the tensor cores or the copy
 * engine read, as a consumer's of a TMA pipeline, needs none: only writes must be published, not reads.
 * Below sm_90 the operations trap: the runtime builds such modules for sm_90a only (they use wgmma) and
 * nvcc acceptance compiles them for it.
 */

import type { ArrayRef, BarrierOpStmt, Expr, HelperFunction, SetMaxRegistersStmt, Stmt, TileCopyStmt, TileStoreStmt, TileStoreWaitStmt } from "../ir/ir.ts";
import { exprsOf, firstClusterOperation, walkExpr, walkStmts } from "../ir/rewrite.ts";

/** The helper functions for the bodies' mbarrier operations and warpgroupIdx, as lines (none if unused). */
export function barrierHelpers(bodies: readonly (readonly Stmt[])[]): string[] {
  let barriers = false;
  let roles = false;
  let registers = false;
  let stores = false;
  let clusters = false;
  for (const body of bodies) {
    if (firstClusterOperation(body)) clusters = true;
    walkStmts(body, (stmt) => {
      if (stmt.kind === "barrierOp") barriers = true;
      if (stmt.kind === "setMaxRegisters") registers = true;
      if (stmt.kind === "tileCopy") barriers = true;
      if (stmt.kind === "tileStore" || stmt.kind === "tileStoreWait") stores = true;
      // syncWarpgroup() names its warpgroup's barrier.
      if (stmt.kind === "barrier" && stmt.scope === "warpgroup") roles = true;
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "subgroupBuiltin" && e.builtin === "warpgroupIdx" && (roles = true));
    });
  }
  const lines: string[] = [];
  if (clusters) lines.push(...clusterHelpers);
  if (roles) lines.push(...roleHelper);
  if (barriers) lines.push(...mbarrierHelpers);
  if (registers) lines.push(...registerHelpers);
  if (stores) lines.push(...tileStoreHelpers);
  return lines;
}

/** True when a body stores tiles: its barrier arrivals then publish shared memory to the async proxy first. */
export function storesTiles(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => stmt.kind === "tileStore" && (found = true));
  return found;
}

/**
 * The statements before which CUDA prints `fence.proxy.async`, in a kernel that stores tiles or whose wgmmas
 * read shared memory that ordinary stores write (`needed`): each barrier arrival, syncThreads, tileStore and
 * wgmma that a path from the kernel's start reaches with a generic-proxy write to
 * shared memory (a store, atomic or matrix store; a helper call that writes any array; cp.async where the kernel
 * stores tiles: wgmma's reads of cp.async copies are fenced after the waits, since the copies land after the
 * arrival) after the last such fence on it. A forward pass in program order with one flag, "written since the
 * last fence": a branch joins its arms by or, a loop iterates its body to a fixed point over the back edge
 * (continue joins it, break the exit), and nothing follows break, continue or return. The writers publish, so that whoever
 * waits for their arrival (the thread that stores the tile, the warpgroup whose wgmma reads the operand) reads
 * through the async proxy what they wrote, as CUTLASS's fence_view_async_shared before a named barrier does.
 */
export function storeFences(body: readonly Stmt[], needed: boolean): ReadonlySet<Stmt> {
  if (!needed) return new Set();
  const tiles = storesTiles(body);
  return publishPoints(
    body,
    (stmt) => (stmt.kind === "store" || stmt.kind === "vectorStore" || stmt.kind === "atomic" ? stmt.array : (stmt.kind === "asyncCopy" && tiles) || stmt.kind === "matrixStore" ? stmt.target : undefined),
    (array, inHelper) => array.space === "shared" || (inHelper && array.space !== "private"),
    (stmt) => stmt.kind === "barrier" || stmt.kind === "tileStore" || stmt.kind === "wgmma" || (stmt.kind === "barrierOp" && (stmt.op === "arrive" || stmt.op === "arriveCopies" || stmt.op === "arriveExpect")),
  );
}

/**
 * The statements at which a thread must publish its ordinary writes to the async proxy (storeFences above, and
 * cuda-atomics.ts's global fences): each statement `point` accepts that a path from the kernel's start reaches
 * with a write (`target` of a statement, or a helper call, that `counts`) after the last such point on it. A
 * forward pass in program order with one flag, "written since the last fence": a branch joins its arms by or, a
 * loop iterates its body to a fixed point over the back edge (continue joins it, break the exit), and nothing
 * follows break, continue or return. Every point clears the flag (it is fenced there, or had nothing to fence).
 */
export function publishPoints(
  body: readonly Stmt[],
  target: (stmt: Stmt) => ArrayRef | undefined,
  counts: (array: ArrayRef, inHelper: boolean) => boolean,
  point: (stmt: Stmt) => boolean,
): ReadonlySet<Stmt> {
  const fenced = new Set<Stmt>();
  const writingHelpers = new Map<HelperFunction, boolean>();
  const helperWrites = (helper: HelperFunction): boolean => {
    let known = writingHelpers.get(helper);
    if (known === undefined) {
      writingHelpers.set(helper, false);
      known = writesAny(helper.body, true);
      writingHelpers.set(helper, known);
    }
    return known;
  };
  // Whether a statement writes a counted array itself, or through a helper it calls.
  const writesItself = (stmt: Stmt, inHelper: boolean): boolean => {
    const written = target(stmt);
    if (written && counts(written, inHelper)) return true;
    let calls = false;
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "call" && helperWrites(e.callee) && (calls = true));
    return calls;
  };
  const writesAny = (stmts: readonly Stmt[], inHelper: boolean): boolean => {
    let found = false;
    walkStmts(stmts, (stmt) => writesItself(stmt, inHelper) && (found = true));
    return found;
  };
  // The flag after `stmts`, given it before them (false after break, continue and return: no path goes on);
  // records the fenced statements on the way, and the flags at the innermost loop's breaks and continues.
  interface Exits {
    breaks: boolean;
    continues: boolean;
  }
  const pass = (stmts: readonly Stmt[], dirty: boolean, exits: Exits): boolean => {
    for (const stmt of stmts) {
      if (point(stmt)) {
        // A point that also writes (a release read-modify-write of a counted array) publishes what came before.
        if (dirty) fenced.add(stmt);
        dirty = writesItself(stmt, false);
        continue;
      }
      switch (stmt.kind) {
        case "if": {
          dirty = writesItself(stmt, false) || dirty;
          const afterThen = pass(stmt.then, dirty, exits);
          const afterElse = pass(stmt.else, dirty, exits);
          dirty = afterThen || afterElse;
          break;
        }
        case "for":
        case "while": {
          if (stmt.kind === "for") dirty = pass(stmt.init, dirty, exits);
          // To a fixed point over the back edge: the flag only grows, so two or three passes settle it.
          const before = dirty || writesItself(stmt, false);
          let entry = before;
          let inner: Exits;
          for (;;) {
            inner = { breaks: false, continues: false };
            const end = pass(stmt.body, entry, inner) || inner.continues;
            const back = (stmt.kind === "for" ? pass(stmt.update, end, inner) : end) || before;
            if (back === entry) break;
            entry = back;
          }
          dirty = entry || inner.breaks;
          break;
        }
        case "block":
          dirty = pass(stmt.body, dirty, exits);
          break;
        case "break":
          exits.breaks ||= dirty;
          dirty = false;
          break;
        case "continue":
          exits.continues ||= dirty;
          dirty = false;
          break;
        case "return":
          dirty = false;
          break;
        default:
          dirty = writesItself(stmt, false) || dirty;
      }
    }
    return dirty;
  };
  pass(body, false, { breaks: false, continues: false });
  return fenced;
}

const tileStoreHelpers = [
  "",
  "// A box of shared memory at src into the tensor that map (in global memory) describes, at column x and row y:",
  "// the tensor memory accelerator's store, in a bulk group of its own. The wait lets at most `pending` of this",
  "// thread's groups still read their shared source.",
  "__device__ __forceinline__ void tsk_store_tile(const unsigned* map, int x, int y, const void* src) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" :: "l"(map), "r"(x), "r"(y), "r"((unsigned)__cvta_generic_to_shared(src)) : "memory");',
  '  asm volatile("cp.async.bulk.commit_group;" ::: "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "template <int pending> __device__ __forceinline__ void tsk_wait_tile_stores() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(pending) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "// Makes this thread's ordinary writes to shared memory visible to the copy engine's reads (the async proxy).",
  "__device__ __forceinline__ void tsk_fence_proxy_async_store() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
  "#endif",
  "}",
];

const roleHelper = [
  "",
  "// The thread's warpgroup (linear index / 128), the same in every lane of a warp as far as the compiler knows.",
  "__device__ __forceinline__ int tsk_warpgroup_idx() {",
  "  return __shfl_sync(0xffffffffu, (int)((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >> 7), 0);",
  "}",
];

const mbarrierHelpers = [
  "",
  "// mbarriers in shared memory (sm_90): init, arrive, arrive once this thread's cp.async copies land, wait on a phase's parity.",
  "__device__ __forceinline__ void tsk_mbarrier_init(unsigned long long* bar, int count) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(count) : "memory");',
  '  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_mbarrier_arrive(unsigned long long* bar) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_mbarrier_arrive_copies(unsigned long long* bar) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_mbarrier_arrive_expect(unsigned long long* bar, int bytes) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(bytes) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "// A box of the tensor that map (in global memory) describes, from column x and row y, into shared memory at dst.",
  "__device__ __forceinline__ void tsk_copy_tile(void* dst, const unsigned* map, int x, int y, unsigned long long* bar) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  "  asm volatile(",
  '      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"',
  '      :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(map), "r"(x), "r"(y), "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_mbarrier_wait(unsigned long long* bar, int parity) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  "  asm volatile(",
  '      "{\\n.reg .pred done;\\ntsk_wait_%=:\\n"',
  '      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n"',
  '      "@!done bra tsk_wait_%=;\\n}\\n" :: "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(parity) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
];

const clusterHelpers = [
  "",
  "// Thread block clusters (sm_90): the block's rank in its cluster, the cluster-wide barrier, an arrival on the",
  "// mbarrier at the same offset in another block of the cluster (mapa: that block's address of it), and a tile",
  "// copy delivered to every block of the cluster in the mask, each counting its bytes on its own barrier.",
  "__device__ __forceinline__ int tsk_cluster_rank() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  "  unsigned rank;",
  '  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));',
  "  return (int)rank;",
  "#else",
  "  return 0;",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_cluster_sync() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  '  asm volatile("barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_mbarrier_arrive_cluster(unsigned long long* bar, int rank) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  "  asm volatile(",
  '      "{\\n.reg .b32 remote;\\nmapa.shared::cluster.u32 remote, %0, %1;\\nmbarrier.arrive.shared::cluster.b64 _, [remote];\\n}"',
  '      :: "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(rank) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_copy_tile_multicast(void* dst, const unsigned* map, int x, int y, unsigned long long* bar, int mask) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900",
  "  asm volatile(",
  '      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"',
  '      :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(map), "r"(x), "r"(y), "r"((unsigned)__cvta_generic_to_shared(bar)), "h"((unsigned short)mask) : "memory");',
  "#else",
  "  __trap();",
  "#endif",
  "}",
];

const registerHelpers = [
  "",
  "// setmaxnreg (sm_90a): the warpgroup's registers a thread from here on, fewer than the block's share (dec) or more (inc).",
  "template <int count> __device__ __forceinline__ void tsk_setmaxnreg_dec() {",
  "#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)",
  '  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(count));',
  "#endif",
  "}",
  "template <int count> __device__ __forceinline__ void tsk_setmaxnreg_inc() {",
  "#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)",
  '  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(count));',
  "#endif",
  "}",
];

/**
 * `setMaxRegisters(count)`: an increase from the block's share of the register file (65536 / threads, in
 * steps of 8: what `__launch_bounds__` lets ptxas give each thread), or a decrease below it.
 */
export function cudaSetMaxRegisters(stmt: SetMaxRegistersStmt, threads: number): string {
  const share = Math.floor(65536 / threads / 8) * 8;
  return stmt.count < share ? `tsk_setmaxnreg_dec<${stmt.count}>();` : `tsk_setmaxnreg_inc<${stmt.count}>();`;
}

/**
 * Where a kernel's barrier operations need a proxy fence: after each wait when wgmma reads shared memory that
 * cp.async wrote (the generic proxy, landing after the arrival that counts it), before the arrivals (and tile
 * stores and wgmmas) of storeFences.
 */
export interface ProxyFences {
  /** After each wait and before each syncThreads: cp.async copies into wgmma operands land after their arrival. */
  readonly afterWait: boolean;
  readonly beforeArrive: ReadonlySet<Stmt>;
  /** The helper that prints the fence before an arrival: the tile stores' own, or wgmma's where none stores tiles. */
  readonly publish: "tsk_fence_proxy_async_store" | "tsk_fence_proxy_async";
}

/** The statement of an mbarrier operation, with the proxy fences the kernel needs. */
export function cudaBarrierOp(stmt: BarrierOpStmt, barrier: string, print: (expr: Expr) => string, fences: ProxyFences): string {
  const at = `&${barrier}[${print(stmt.index)}]`;
  const before = fences.beforeArrive.has(stmt) ? `${fences.publish}(); ` : "";
  switch (stmt.op) {
    case "init":
      return `tsk_mbarrier_init(${at}, ${print(stmt.value!)});`;
    case "arrive":
      return stmt.block ? `${before}tsk_mbarrier_arrive_cluster(${at}, ${print(stmt.block)});` : `${before}tsk_mbarrier_arrive(${at});`;
    case "arriveCopies":
      return `${before}tsk_mbarrier_arrive_copies(${at});`;
    case "arriveExpect":
      return `${before}tsk_mbarrier_arrive_expect(${at}, ${print(stmt.value!)});`;
    case "wait":
      return `tsk_mbarrier_wait(${at}, ${print(stmt.value!)});${fences.afterWait ? " tsk_fence_proxy_async();" : ""}`;
  }
}

/** `storeTile` and `waitTileStores`; a store after this thread's own unfenced writes publishes them first. */
export function cudaTileStore(stmt: TileStoreStmt | TileStoreWaitStmt, name: (array: TileStoreStmt["source"]) => string, print: (expr: Expr) => string, fences: ProxyFences): string {
  if (stmt.kind === "tileStoreWait") return `tsk_wait_tile_stores<${stmt.pending}>();`;
  return `${fences.beforeArrive.has(stmt) ? `${fences.publish}(); ` : ""}tsk_store_tile(${name(stmt.map)}, ${print(stmt.x)}, ${print(stmt.y)}, &${name(stmt.source)}[${print(stmt.offset)}]);`;
}

/** `copyTile`: the tensor memory accelerator's 2-D box copy into shared memory, completing on the barrier. */
export function cudaTileCopy(stmt: TileCopyStmt, name: (array: TileCopyStmt["target"]) => string, print: (expr: Expr) => string): string {
  if (stmt.multicast) {
    return `tsk_copy_tile_multicast(&${name(stmt.target)}[${print(stmt.offset)}], ${name(stmt.map)}, ${print(stmt.x)}, ${print(stmt.y)}, &${name(stmt.barriers)}[${print(stmt.index)}], ${print(stmt.multicast)});`;
  }
  return `tsk_copy_tile(&${name(stmt.target)}[${print(stmt.offset)}], ${name(stmt.map)}, ${print(stmt.x)}, ${print(stmt.y)}, &${name(stmt.barriers)}[${print(stmt.index)}]);`;
}
