/**
 * Matrix operations on CUDA: `mma` becomes one `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` or, for
 * m16n8k16, `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}` on registers that pack two 16-bit elements (tensor
 * cores, sm_80 and later) through inline PTX, `loadMatrix` one `ldmatrix` per fragment, with the lane's fragment elements as its registers in the order
 * of the layout table (ir/matrix.ts is PTX's layout); the `roundTf32` that legalize puts into fragment loads is
 * `cvt.rna.tf32.f32`. Below sm_80 the rounding is done on the bits and `mma` traps: the instruction does not
 * exist there. `wgmma` becomes `wgmma.mma_async…tf32` (sm_90a only: the runtime compiles such modules for
 * sm_90a and refuses other GPUs) with A from the thread's registers and B through a matrix descriptor of the
 * shared array (128-byte swizzle); each is preceded by `wgmma.fence` (the registers it reads were written by
 * ordinary instructions). The 16-bit shapes read A through a descriptor too, or from a bf16 or f16 A fragment:
 * four .b32 registers of two elements each (`unsigned` arrays of half the IR's size: element i in half i & 1 of
 * register i >> 1, written by `tsk_a16_set_*`, which rounds an f32 to nearest even with `cvt.rn`, and read by
 * `tsk_a16_get_*`). `wgmmaWait(0)` is followed by an empty asm on every accumulator register, so that
 * no read of one moves above the wait; `wgmmaWait(n > 0)` by one that reads every A fragment register (as the
 * value wgmma was given), so that no other value takes an operand register of a group still in flight. (An
 * asm that "modified" A or the accumulators there would let the compiler move them to other registers while
 * the tensor cores still read or write the old ones: wrong results, measured on the H100.)
 * A kernel whose wgmma operands ordinary stores or cp.async write also publishes shared memory to the tensor
 * cores' (async) proxy (`fence.proxy.async`): its writers before they arrive, or after each wait for cp.async
 * (cuda-barriers.ts, storeFences).
 */

import { isFragmentOperand, type ArrayRef, type Expr, type MatrixLoadStmt, type MmaStmt, type Stmt, type WarpgroupShape, type WgmmaStmt, type WgmmaSyncStmt } from "../ir/ir.ts";
import { fragmentLayout, fragmentSlot, isWarpgroupShape, ldmatrixPlan, type LdmatrixPlan, mmaHalfRegisters, warpgroupColumns, warpgroupDepth } from "../ir/matrix.ts";
import { exprsOf, walkExpr, walkStmts } from "../ir/rewrite.ts";

/** The marker line of modules that use wgmma: the runtime compiles them for sm_90a (runtime/cuda/cuda-device.ts). */
export const warpgroupMarker = "// tskernel: this module uses wgmma (sm_90a)";

/** The helper functions the kernels' bodies need, as lines (none when they use no matrix operations). */
export function matrixHelpers(bodies: readonly (readonly Stmt[])[]): string[] {
  let rounds = false;
  let multiplies = false;
  const multiplies16 = new Set<"bf16" | "f16">();
  // Each kept loadMatrix's helper by name: its count of 8×8 matrices and whether it transposes.
  const loads = new Map<string, Ldmatrix>();
  const shapes = new Set<string>();
  let synchronizes = false;
  const halfA = new Set<string>();
  const isHalfA = (array: ArrayRef) => array.fragment?.role !== "accumulator" && (array.fragment?.element === "bf16" || array.fragment?.element === "f16");
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      if (stmt.kind === "store" && isHalfA(stmt.array)) halfA.add(stmt.array.fragment!.element);
      if (stmt.kind === "mma") {
        const element = stmt.a.array.fragment!.element;
        if (element === "bf16" || element === "f16") multiplies16.add(element);
        else multiplies = true;
      }
      if (stmt.kind === "matrixLoad" && stmt.ldmatrix?.laneRow) {
        const plan = ldmatrixOf(stmt);
        loads.set(ldmatrixName(plan), plan);
      }
      if (stmt.kind === "wgmma") shapes.add(wgmmaVariant(stmt));
      if (stmt.kind === "wgmmaSync") synchronizes = true;
      for (const expr of exprsOf(stmt)) {
        walkExpr(expr, (e) => {
          if (e.kind === "intrinsic" && e.name === "roundTf32") rounds = true;
          if (e.kind === "load" && isHalfA(e.array)) halfA.add(e.array.fragment!.element);
        });
      }
    });
  }
  const lines: string[] = [];
  if (rounds) lines.push(...roundHelper);
  if (multiplies) lines.push(...mmaHelper);
  for (const element of [...multiplies16].sort()) lines.push(...mma16Helper(element));
  for (const name of [...loads.keys()].sort()) lines.push(...ldmatrixHelper(name, loads.get(name)!));
  if (shapes.size > 0 || synchronizes) lines.push("", warpgroupMarker, ...warpgroupHelpers);
  if ([...shapes].some((variant) => !variant.endsWith("tf32 k"))) lines.push(...descriptor16Helpers);
  for (const element of [...halfA].sort()) lines.push(...fragment16Helpers(element as "bf16" | "f16"));
  for (const variant of [...shapes].sort()) {
    const [shape, element, major, a] = variant.split(" ") as [WarpgroupShape, string, string, string | undefined];
    const depth = warpgroupDepth(shape);
    lines.push(...(depth === 8 ? wgmmaHelper(shape) : depth === 32 ? wgmma8Helper(shape, element) : a === "r" ? wgmma16RegisterHelper(shape, element, major) : wgmma16Helper(shape, element, major)));
  }
  return lines;
}

/**
 * The helper a wgmma calls: its shape, and for the 16-bit shapes the element type, B's major order and " r" for
 * A from registers; for the 8-bit shapes A's and B's types (`e4m3_e5m2`), both K-major.
 */
function wgmmaVariant(stmt: WgmmaStmt): string {
  const shape = stmt.accumulator.array.fragment!.shape as WarpgroupShape;
  const depth = warpgroupDepth(shape);
  if (depth === 8) return `${shape} tf32 k`;
  if (depth === 32) return `${shape} ${float8Pair(stmt)} k`;
  return `${shape} ${stmt.b.elementType} ${stmt.bMajor ?? "k"}${isFragmentOperand(stmt.a) ? " r" : ""}`;
}

/** The element types of an 8-bit wgmma's A and B, as its helper's name has them: `e4m3_e5m2`. */
function float8Pair(stmt: WgmmaStmt): string {
  if (isFragmentOperand(stmt.a)) throw new Error("internal: an 8-bit wgmma with A in registers; the frontend has no such fragments");
  return `${stmt.a.array.elementType}_${stmt.b.elementType}`;
}

/**
 * Element i of a 16-bit A fragment is half i & 1 of register i >> 1 (`half` 0: the low 16 bits, a(2i) of the
 * instruction's operand). The store rounds to nearest even (`cvt.rn.bf16.f32`, sm_80 and later, and on the
 * bits below that, where wgmma does not exist anyway; `cvt.rn.f16.f32`); the load widens exactly. The host
 * pass of nvcc never runs them (its branch only has to compile).
 */
function fragment16Helpers(element: "bf16" | "f16"): string[] {
  const round =
    element === "bf16"
      ? [
          "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
          '  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));',
          "#else",
          "  const unsigned u = __float_as_uint(v);",
          "  h = (unsigned short)((u & 0x7fffffffu) > 0x7f800000u ? 0x7fc0u : (u + 0x7fffu + ((u >> 16) & 1u)) >> 16);",
          "#endif",
        ]
      : ["#ifdef __CUDA_ARCH__", '  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));', "#else", "  h = 0;", "#endif"];
  const widen =
    element === "bf16"
      ? ["  return __uint_as_float(half ? r & 0xffff0000u : r << 16);"]
      : ["  float f = 0.0f;", "#ifdef __CUDA_ARCH__", '  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)(half ? r >> 16 : r & 0xffffu)));', "#endif", "  return f;"];
  return [
    "",
    `// Element \`half\` (0: the low 16 bits) of a register of a ${element} A fragment: set from an f32 rounded to nearest even, or read as an f32.`,
    `__device__ __forceinline__ void tsk_a16_set_${element}(unsigned& r, int half, float v) {`,
    "  unsigned short h;",
    ...round,
    "  r = half ? (r & 0xffffu) | ((unsigned)h << 16) : (r & 0xffff0000u) | h;",
    "}",
    `__device__ __forceinline__ float tsk_a16_get_${element}(unsigned r, int half) {`,
    ...widen,
    "}",
  ];
}

const roundHelper = [
  "",
  "// f32 to tf32 (10 mantissa bits), to nearest with ties away from zero, in an f32 register.",
  "__device__ __forceinline__ float tsk_tf32(float x) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
  "  unsigned r;",
  '  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));',
  "  return __uint_as_float(r);",
  "#else",
  "  const unsigned bits = __float_as_uint(x);",
  "  return (bits & 0x7f800000u) == 0x7f800000u ? x : __uint_as_float((bits + 0x1000u) & 0xffffe000u);",
  "#endif",
  "}",
];

const mmaHelper = [
  "",
  "// d = a·b + d for one m16n8k8 tile of the warp: tf32 inputs, f32 accumulators (tensor cores).",
  "__device__ __forceinline__ void tsk_mma_m16n8k8_tf32(float& d0, float& d1, float& d2, float& d3, float a0, float a1, float a2, float a3, float b0, float b1) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
  '  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"',
  '      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)',
  '      : "r"(__float_as_uint(a0)), "r"(__float_as_uint(a1)), "r"(__float_as_uint(a2)), "r"(__float_as_uint(a3)), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));',
  "#else",
  "  __trap();",
  "#endif",
  "}",
];

/**
 * d = a·b + d for one m16n8k16 tile of the warp with 16-bit inputs (bf16 or f16) and f32 accumulators, one
 * `mma.sync.aligned.m16n8k16.row.col.f32.<e>.<e>.f32` (sm_80 and later). A comes as four .b32 registers and B
 * as two, each packing two elements as ir/matrix.ts's mmaHalfRegisters says (element 2i in the low half), the
 * layouts ir/matrix.ts's mmaM16n8k16Layouts; the 16-bit A fragments' registers (fragment16Helpers) are already
 * in this form, and so are m16n8k16's B fragments and what ldmatrix gives (cudaLdmatrix).
 */
export function mma16Helper(element: "bf16" | "f16"): string[] {
  return [
    "",
    `// d = a·b + d for one m16n8k16 tile of the warp: ${element} inputs packed in pairs, f32 accumulators (tensor cores).`,
    `__device__ __forceinline__ void tsk_mma_m16n8k16_${element}(float& d0, float& d1, float& d2, float& d3, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {`,
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
    `  asm("mma.sync.aligned.m16n8k16.row.col.f32.${element}.${element}.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"`,
    '      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)',
    '      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/**
 * `mma(acc[i], a[j], b[k])` as a call of the helper with each fragment's elements in order; for m16n8k16 the
 * 16-bit fragments' registers (two elements each, perLane/2 a fragment: cuda.ts declares them so).
 */
export function cudaMma(stmt: MmaStmt, element: (array: ArrayRef, index: Expr) => string): string {
  const elements = (ref: MmaStmt["a"]) => {
    const layout = fragmentLayout(ref.array.fragment!);
    return layout.rowE.map((_, e) => element(ref.array, fragmentSlot(ref.index, layout.perLane, e, stmt.span)));
  };
  const registers = (ref: MmaStmt["a"]) => {
    const perLane = fragmentLayout(ref.array.fragment!).perLane;
    return mmaHalfRegisters(perLane).map((_, r) => element(ref.array, fragmentSlot(ref.index, perLane / 2, r, stmt.span)));
  };
  const input = stmt.a.array.fragment!.element;
  if (input === "bf16" || input === "f16") return `tsk_mma_m16n8k16_${input}(${[...elements(stmt.accumulator), ...registers(stmt.a), ...registers(stmt.b)].join(", ")});`;
  return `tsk_mma_m16n8k8_tf32(${[...elements(stmt.accumulator), ...elements(stmt.a), ...elements(stmt.b)].join(", ")});`;
}

/** What names an ldmatrix helper: its count of 8×8 matrices and whether it transposes. */
type Ldmatrix = Pick<LdmatrixPlan, "count" | "transpose">;

/** What a kept `loadMatrix` is for ldmatrix: its count of 8×8 matrices and whether it transposes (ldmatrixPlan). */
function ldmatrixOf(stmt: MatrixLoadStmt): Ldmatrix {
  return ldmatrixPlan(fragmentLayout(stmt.fragment.array.fragment!), stmt.colStride ? "row" : "col");
}

/** The helper of an ldmatrix of `count` matrices, transposed or not. */
function ldmatrixName(plan: Ldmatrix): string {
  return `tsk_ldmatrix_x${plan.count}${plan.transpose ? "_trans" : ""}`;
}

/**
 * `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` (sm_75 and later): each lane names one 16-byte row
 * (a generic pointer into shared memory, converted to the shared window) and receives its register per matrix.
 * Volatile with a memory clobber, so that it stays between the barriers that order the shared tile around it.
 */
function ldmatrixHelper(name: string, { count, transpose: trans }: Ldmatrix): string[] {
  const outs = Array.from({ length: count }, (_, i) => `%${i}`).join(", ");
  return [
    "",
    `// ${count} 8×8 matrices of 16-bit elements from shared memory, ${trans ? "transposed, " : ""}one register each; p: the row this lane names.`,
    `__device__ __forceinline__ void ${name}(${Array.from({ length: count }, (_, i) => `unsigned& r${i}`).join(", ")}, const void* p) {`,
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750",
    "  const unsigned address = (unsigned)__cvta_generic_to_shared(p);",
    `  asm volatile("ldmatrix.sync.aligned.m8n8.x${count}${trans ? ".trans" : ""}.shared.b16 {${outs}}, [%${count}];"`,
    `      : ${Array.from({ length: count }, (_, i) => `"=r"(r${i})`).join(", ")}`,
    '      : "r"(address) : "memory");',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/** A `loadMatrix` kept whole: the fragment's registers and the address of the lane's row (legalize's laneRow). */
export function cudaLdmatrix(stmt: MatrixLoadStmt, element: (array: ArrayRef, index: Expr) => string, print: (expr: Expr) => string, name: (array: ArrayRef) => string): string {
  const perLane = fragmentLayout(stmt.fragment.array.fragment!).perLane;
  const registers = mmaHalfRegisters(perLane).map((_, r) => element(stmt.fragment.array, fragmentSlot(stmt.fragment.index, perLane / 2, r, stmt.span)));
  return `${ldmatrixName(ldmatrixOf(stmt))}(${registers.join(", ")}, &${name(stmt.source)}[${print(stmt.ldmatrix!.laneRow!)}]);`;
}

/** True when a kernel body uses wgmma: its barriers then publish shared memory to the async proxy first. */
export function usesWgmma(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => stmt.kind === "wgmma" && (found = true));
  return found;
}

// sm_90a is where wgmma exists; __CUDA_ARCH_FEAT_SM90_ALL says the compile targets it (nvcc -arch=sm_90a).
const warpgroupHelpers = [
  "#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)",
  "#define TSK_WGMMA 1",
  "#endif",
  "// The matrix descriptor of a K-major operand in the 128-byte swizzle at p: address >> 4, leading offset unused",
  "// (1), 1024 bytes between groups of 8 rows, swizzle mode 1 (128B) in bits 62-63.",
  "__device__ __forceinline__ unsigned long long tsk_wgmma_desc(const float* p) {",
  "  const unsigned address = (unsigned)__cvta_generic_to_shared(p);",
  "  return (unsigned long long)((address & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);",
  "}",
  "__device__ __forceinline__ void tsk_wgmma_fence() {",
  "#ifdef TSK_WGMMA",
  '  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");',
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_wgmma_commit() {",
  "#ifdef TSK_WGMMA",
  '  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");',
  "#endif",
  "}",
  "template <int pending> __device__ __forceinline__ void tsk_wgmma_wait() {",
  "#ifdef TSK_WGMMA",
  '  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(pending) : "memory");',
  "#endif",
  "}",
  "// After wgmmaWait(0): the accumulators' values are final here, so no read of them moves above this point.",
  "template <int count> __device__ __forceinline__ void tsk_wgmma_keep(float* r) {",
  "#pragma unroll",
  '  for (int i = 0; i < count; i++) asm volatile("" : "+f"(r[i]) :: "memory");',
  "}",
  "// After wgmmaWait(n > 0): a group still in flight reads its A registers, so they stay live (as the very values",
  "// wgmma was given) until the next wait; the accumulators are left alone, since a group still writes them.",
  "template <int count> __device__ __forceinline__ void tsk_wgmma_hold(const unsigned* r) {",
  "#pragma unroll",
  '  for (int i = 0; i < count; i++) asm volatile("" :: "r"(r[i]) : "memory");',
  "}",
  "// Makes this thread's ordinary writes to shared memory visible to the tensor cores' reads (the async proxy).",
  "__device__ __forceinline__ void tsk_fence_proxy_async() {",
  "#ifdef TSK_WGMMA",
  '  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");',
  "#endif",
  "}",
];

// The descriptors of 16-bit operands: K-major as tsk_wgmma_desc for any element type, and N-major, whose 64-column
// boxes lie `box_bytes` apart (the leading byte offset) and groups of 8 rows 1024 bytes apart.
const descriptor16Helpers = [
  "",
  "// The matrix descriptor of a K-major operand of any element type, and of an N-major one whose boxes of 128-byte",
  "// rows lie box_bytes apart (the leading byte offset); 1024 bytes between groups of 8 rows, 128-byte swizzle.",
  "__device__ __forceinline__ unsigned long long tsk_wgmma_desc_k(const void* p) {",
  "  const unsigned address = (unsigned)__cvta_generic_to_shared(p);",
  "  return (unsigned long long)((address & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);",
  "}",
  "__device__ __forceinline__ unsigned long long tsk_wgmma_desc_n(const void* p, unsigned box_bytes) {",
  "  const unsigned address = (unsigned)__cvta_generic_to_shared(p);",
  "  return (unsigned long long)((address & 0x3FFFF) >> 4) | ((unsigned long long)((box_bytes >> 4) & 0x3FFF) << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);",
  "}",
];

/** d (64×n) += a (64×8, registers) · B (8×n, descriptor), TF32 inputs and f32 accumulators. */
function wgmmaHelper(shape: WarpgroupShape): string[] {
  const n = warpgroupColumns(shape);
  const count = n / 2;
  const outs = Array.from({ length: count }, (_, i) => `%${i}`);
  const rows: string[] = [];
  for (let i = 0; i < count; i += 16) rows.push(`      "${outs.slice(i, i + 16).join(", ")}${i + 16 < count ? "," : ""}"`);
  const operands = Array.from({ length: count }, (_, i) => `"+f"(d[${i}])`);
  const operandRows: string[] = [];
  for (let i = 0; i < count; i += 8) operandRows.push(operands.slice(i, i + 8).join(", "));
  return [
    "",
    `// d (64×${n} over the warpgroup) += a·B: a (64×8) from the threads' registers (tf32), B (8×${n}) through a descriptor.`,
    `__device__ __forceinline__ void tsk_wgmma_${shape}_tf32(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b) {`,
    "#ifdef TSK_WGMMA",
    "  asm volatile(",
    // scale-d is a predicate: 1 (d = a·B + d).
    `      "{\\n.reg .pred p;\\nsetp.ne.b32 p, %${count + 5}, 0;\\n"`,
    `      "wgmma.mma_async.sync.aligned.${shape}.f32.tf32.tf32 {"`,
    ...rows,
    `      "}, {%${count}, %${count + 1}, %${count + 2}, %${count + 3}}, %${count + 4}, p, 1, 1;\\n}\\n"`,
    `      : ${operandRows.join(",\n        ")}`,
    // A goes in as the fragment array's own (unsigned) registers: the very registers tsk_wgmma_hold keeps
    // live while the group is in flight. A copy made for the operand would be dead after the issue, and its
    // register could be reused while the tensor cores still read it (ptxas does not track that).
    '      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/**
 * d (64×n) += A·B with 16-bit inputs (bf16 or f16) and f32 accumulators, both operands through descriptors:
 * A K-major, B K-major or N-major (wgmma's imm-trans-b, a constant of the instruction, hence one helper each).
 */
function wgmma16Helper(shape: WarpgroupShape, element: string, major: string): string[] {
  const n = warpgroupColumns(shape);
  const count = n / 2;
  const outs = Array.from({ length: count }, (_, i) => `%${i}`);
  const rows: string[] = [];
  for (let i = 0; i < count; i += 16) rows.push(`      "${outs.slice(i, i + 16).join(", ")}${i + 16 < count ? "," : ""}"`);
  const operands = Array.from({ length: count }, (_, i) => `"+f"(d[${i}])`);
  const operandRows: string[] = [];
  for (let i = 0; i < count; i += 8) operandRows.push(operands.slice(i, i + 8).join(", "));
  return [
    "",
    `// d (64×${n} over the warpgroup) += A·B: A (64×16, K-major) and B (16×${n}, ${major === "n" ? "N" : "K"}-major) ${element} through descriptors.`,
    `__device__ __forceinline__ void tsk_wgmma_${shape}_${element}_${major}(float* d, unsigned long long a, unsigned long long b) {`,
    "#ifdef TSK_WGMMA",
    "  asm volatile(",
    `      "{\\n.reg .pred p;\\nsetp.ne.b32 p, %${count + 2}, 0;\\n"`,
    `      "wgmma.mma_async.sync.aligned.${shape}.f32.${element}.${element} {"`,
    ...rows,
    // scale-d 1 (d = A·B + d), scale-a and scale-b 1, A not transposed (K-major), B transposed when N-major.
    `      "}, %${count}, %${count + 1}, p, 1, 1, 0, ${major === "n" ? 1 : 0};\\n}\\n"`,
    `      : ${operandRows.join(",\n        ")}`,
    '      : "l"(a), "l"(b), "r"(1));',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/**
 * d (64×n) += A·B with 8-bit float inputs (e4m3 or e5m2, A and B each of either: `pair` is `e4m3_e5m2`) and f32
 * accumulators, both operands K-major through descriptors of the 128-byte swizzle (32 bytes of k a step, as the
 * 16-bit shapes': the same descriptors). PTX has no transpose operands for 8-bit types, hence no major order.
 */
function wgmma8Helper(shape: WarpgroupShape, pair: string): string[] {
  const [aType, bType] = pair.split("_") as [string, string];
  const n = warpgroupColumns(shape);
  const count = n / 2;
  const outs = Array.from({ length: count }, (_, i) => `%${i}`);
  const rows: string[] = [];
  for (let i = 0; i < count; i += 16) rows.push(`      "${outs.slice(i, i + 16).join(", ")}${i + 16 < count ? "," : ""}"`);
  const operands = Array.from({ length: count }, (_, i) => `"+f"(d[${i}])`);
  const operandRows: string[] = [];
  for (let i = 0; i < count; i += 8) operandRows.push(operands.slice(i, i + 8).join(", "));
  return [
    "",
    `// d (64×${n} over the warpgroup) += A·B: A (64×32 ${aType}) and B (32×${n} ${bType}), both K-major, through descriptors.`,
    `__device__ __forceinline__ void tsk_wgmma_${shape}_${pair}(float* d, unsigned long long a, unsigned long long b) {`,
    "#ifdef TSK_WGMMA",
    "  asm volatile(",
    `      "{\\n.reg .pred p;\\nsetp.ne.b32 p, %${count + 2}, 0;\\n"`,
    `      "wgmma.mma_async.sync.aligned.${shape}.f32.${aType}.${bType} {"`,
    ...rows,
    // scale-d 1 (d = A·B + d), scale-a and scale-b 1.
    `      "}, %${count}, %${count + 1}, p, 1, 1;\\n}\\n"`,
    `      : ${operandRows.join(",\n        ")}`,
    '      : "l"(a), "l"(b), "r"(1));',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/**
 * d (64×n) += a·B with 16-bit inputs, a (64×16) from the threads' registers (four .b32 of two elements each,
 * the A fragment's own registers, as for TF32) and B (16×n) through a descriptor, K-major or N-major.
 */
function wgmma16RegisterHelper(shape: WarpgroupShape, element: string, major: string): string[] {
  const n = warpgroupColumns(shape);
  const count = n / 2;
  const outs = Array.from({ length: count }, (_, i) => `%${i}`);
  const rows: string[] = [];
  for (let i = 0; i < count; i += 16) rows.push(`      "${outs.slice(i, i + 16).join(", ")}${i + 16 < count ? "," : ""}"`);
  const operands = Array.from({ length: count }, (_, i) => `"+f"(d[${i}])`);
  const operandRows: string[] = [];
  for (let i = 0; i < count; i += 8) operandRows.push(operands.slice(i, i + 8).join(", "));
  return [
    "",
    `// d (64×${n} over the warpgroup) += a·B: a (64×16) ${element} from the threads' registers, B (16×${n}, ${major === "n" ? "N" : "K"}-major) through a descriptor.`,
    `__device__ __forceinline__ void tsk_wgmma_${shape}_${element}_${major}_r(float* d, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long b) {`,
    "#ifdef TSK_WGMMA",
    "  asm volatile(",
    `      "{\\n.reg .pred p;\\nsetp.ne.b32 p, %${count + 5}, 0;\\n"`,
    `      "wgmma.mma_async.sync.aligned.${shape}.f32.${element}.${element} {"`,
    ...rows,
    // scale-d 1 (d = a·B + d), scale-a and scale-b 1, B transposed when N-major (no imm-trans-a with A in registers).
    `      "}, {%${count}, %${count + 1}, %${count + 2}, %${count + 3}}, %${count + 4}, p, 1, 1, ${major === "n" ? 1 : 0};\\n}\\n"`,
    `      : ${operandRows.join(",\n        ")}`,
    '      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(b), "r"(1));',
    "#else",
    "  __trap();",
    "#endif",
    "}",
  ];
}

/** The warpgroup fragment arrays of a kernel and their sizes in elements, for the keep after each wait. */
export interface WarpgroupFragment {
  readonly name: string;
  readonly size: number;
  readonly role: "a" | "accumulator";
}

/**
 * Where a body needs `wgmma.fence`: before a wgmma whose registers other instructions may have touched since
 * the last wgmma. PTX exempts accumulator accesses between wgmmas, so a wgmma right after another (in one
 * statement list) needs none, nor do the wgmmas of a loop whose body is only wgmmas: the fence goes before the
 * loop instead. Returns the wgmmas that need none and the loops that get one (measured on the H100: one fence
 * per group instead of one per wgmma, 83.1 % of torch.mm TF32 against 81.8 % at 4096³,
 * bench/results/2026-11-23-wgmma-ws-variants-h100.json).
 */
export function wgmmaFences(body: readonly Stmt[]): { unfenced: Set<Stmt>; fencedLoops: Set<Stmt> } {
  const unfenced = new Set<Stmt>();
  const fencedLoops = new Set<Stmt>();
  const onlyWgmma = (stmt: Stmt) => stmt.kind === "for" && stmt.body.length > 0 && stmt.body.every((inner) => inner.kind === "wgmma");
  const visit = (stmts: readonly Stmt[]) => {
    let previous: Stmt | undefined;
    for (const stmt of stmts) {
      const follows = previous !== undefined && (previous.kind === "wgmma" || onlyWgmma(previous));
      if (stmt.kind === "wgmma" && follows) unfenced.add(stmt);
      if (onlyWgmma(stmt)) {
        if (!follows) fencedLoops.add(stmt);
        for (const inner of (stmt as Stmt & { kind: "for" }).body) unfenced.add(inner);
      }
      previous = stmt;
    }
  };
  walkStmts(body, (stmt) => {
    if (stmt.kind === "if") {
      visit(stmt.then);
      visit(stmt.else);
    } else if (stmt.kind === "for" || stmt.kind === "while" || stmt.kind === "block") {
      visit(stmt.body);
    }
  });
  visit(body);
  return { unfenced, fencedLoops };
}

/**
 * The accumulator arrays that a `wgmmaWait(n > 0)` leaves final: where the wait's statement list itself commits
 * more than n groups before it, every wgmma outside the last n groups is done (groups complete in order), so
 * every accumulator array that none of the wgmmas of those n groups (in the list, after the commit that opens
 * them) writes is final there, and gets the keep that `wgmmaWait(0)` gives every accumulator: no read of it moves
 * above the wait. The accumulators of the pending groups are left alone, as before (a group still writes them).
 * This is what lets a kernel read S = Q·Kᵀ while P·V, issued after it into other accumulators, still runs
 * (examples/flash-attention-overlap.ts); where the list does not show the groups, nothing more is kept.
 */
export function wgmmaSettled(body: readonly Stmt[]): Map<Stmt, Set<ArrayRef>> {
  const accumulators = new Set<ArrayRef>();
  walkStmts(body, (stmt) => stmt.kind === "wgmma" && accumulators.add(stmt.accumulator.array));
  const settled = new Map<Stmt, Set<ArrayRef>>();
  const visit = (stmts: readonly Stmt[]) => {
    stmts.forEach((stmt, i) => {
      if (stmt.kind !== "wgmmaSync" || stmt.op !== "wait" || stmt.pending === 0) return;
      const commits = stmts.slice(0, i).flatMap((other, j) => (other.kind === "wgmmaSync" && other.op === "commit" ? [j] : []));
      if (commits.length <= stmt.pending) return;
      const pending = new Set<ArrayRef>();
      walkStmts(stmts.slice(commits[commits.length - stmt.pending - 1]! + 1, i), (inner) => inner.kind === "wgmma" && pending.add(inner.accumulator.array));
      const done = new Set([...accumulators].filter((array) => !pending.has(array)));
      if (done.size > 0) settled.set(stmt, done);
    });
  };
  walkStmts(body, (stmt) => {
    if (stmt.kind === "if") {
      visit(stmt.then);
      visit(stmt.else);
    } else if (stmt.kind === "for" || stmt.kind === "while" || stmt.kind === "block") {
      visit(stmt.body);
    }
  });
  visit(body);
  return settled;
}

/**
 * `wgmma(acc[i], a[j], B, offset)`, and the commits and waits; `fence`: whether a wgmma needs its wgmma.fence;
 * `settled`: the accumulators' names that a `wgmmaWait(n > 0)` leaves final (wgmmaSettled).
 */
export function cudaWarpgroup(
  stmt: WgmmaStmt | WgmmaSyncStmt,
  element: (array: ArrayRef, index: Expr) => string,
  print: (expr: Expr) => string,
  name: (array: ArrayRef) => string,
  fragments: readonly WarpgroupFragment[],
  fence = true,
  settled: ReadonlySet<string> = new Set(),
): string[] {
  if (stmt.kind === "wgmmaSync") {
    if (stmt.op === "commit") return ["tsk_wgmma_commit();"];
    const pinned =
      stmt.pending === 0
        ? fragments.filter((f) => f.role === "accumulator").map((f) => `tsk_wgmma_keep<${f.size}>(${f.name});`)
        : [...fragments.filter((f) => f.role === "a").map((f) => `tsk_wgmma_hold<${f.size}>(${f.name});`), ...fragments.filter((f) => f.role === "accumulator" && settled.has(f.name)).map((f) => `tsk_wgmma_keep<${f.size}>(${f.name});`)];
    return [`tsk_wgmma_wait<${stmt.pending}>();`, ...pinned];
  }
  const shape = stmt.accumulator.array.fragment!.shape;
  if (!isWarpgroupShape(shape)) throw new Error("internal: wgmma of a warp shape; the frontend rejects it (TSK2035)");
  const accLayout = fragmentLayout(stmt.accumulator.array.fragment!);
  const first = element(stmt.accumulator.array, fragmentSlot(stmt.accumulator.index, accLayout.perLane, 0, stmt.span));
  const fenced = fence ? ["tsk_wgmma_fence();"] : [];
  if (!isFragmentOperand(stmt.a)) {
    // 16-bit inputs: A and B through descriptors; an N-major B's boxes are bBoxRows rows of 128 bytes apart.
    const a = `tsk_wgmma_desc_k(&${name(stmt.a.array)}[${print(stmt.a.offset)}])`;
    const b = stmt.bMajor === "n" ? `tsk_wgmma_desc_n(&${name(stmt.b)}[${print(stmt.offset)}], (${print(stmt.bBoxRows!)}) * 128)` : `tsk_wgmma_desc_k(&${name(stmt.b)}[${print(stmt.offset)}])`;
    const helper = warpgroupDepth(shape) === 32 ? `tsk_wgmma_${shape}_${float8Pair(stmt)}` : `tsk_wgmma_${shape}_${stmt.b.elementType}_${stmt.bMajor ?? "k"}`;
    return [...fenced, `${helper}(&${first}, ${a}, ${b});`];
  }
  const aRef = stmt.a;
  if (warpgroupDepth(shape) === 16) {
    // A 16-bit A fragment: its four registers (two elements each), B through a descriptor as above.
    const registers = [0, 1, 2, 3].map((r) => element(aRef.array, fragmentSlot(aRef.index, 4, r, stmt.span)));
    const b = stmt.bMajor === "n" ? `tsk_wgmma_desc_n(&${name(stmt.b)}[${print(stmt.offset)}], (${print(stmt.bBoxRows!)}) * 128)` : `tsk_wgmma_desc_k(&${name(stmt.b)}[${print(stmt.offset)}])`;
    return [...fenced, `tsk_wgmma_${shape}_${stmt.b.elementType}_${stmt.bMajor ?? "k"}_r(&${first}, ${registers.join(", ")}, ${b});`];
  }
  const aLayout = fragmentLayout(aRef.array.fragment!);
  const a = aLayout.rowE.map((_, e) => element(aRef.array, fragmentSlot(aRef.index, aLayout.perLane, e, stmt.span)));
  return [...fenced, `tsk_wgmma_${shape}_tf32(&${first}, ${a.join(", ")}, tsk_wgmma_desc(&${name(stmt.b)}[${print(stmt.offset)}]));`];
}
