/**
 * Warp-level matrix operations on CUDA: `mma` becomes one `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`
 * (tensor cores, sm_80 and later) through inline PTX, with the lane's fragment elements as its registers in
 * the order of the layout table (ir/matrix.ts is PTX's layout); the `roundTf32` that legalize puts into
 * fragment loads is `cvt.rna.tf32.f32`. Below sm_80 the rounding is done on the bits and `mma` traps: the
 * instruction does not exist there.
 */

import type { ArrayRef, Expr, MmaStmt, Stmt } from "../ir/ir.ts";
import { fragmentLayouts, fragmentSlot } from "../ir/matrix.ts";
import { exprsOf, walkExpr, walkStmts } from "../ir/rewrite.ts";

/** The helper functions the kernels' bodies need, as lines (none when they use no matrix operations). */
export function matrixHelpers(bodies: readonly (readonly Stmt[])[]): string[] {
  let rounds = false;
  let multiplies = false;
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      if (stmt.kind === "mma") multiplies = true;
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "intrinsic" && e.name === "roundTf32" && (rounds = true));
    });
  }
  const lines: string[] = [];
  if (rounds) lines.push(...roundHelper);
  if (multiplies) lines.push(...mmaHelper);
  return lines;
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

/** `mma(acc[i], a[j], b[k])` as a call of the helper with each fragment's elements in order. */
export function cudaMma(stmt: MmaStmt, element: (array: ArrayRef, index: Expr) => string): string {
  const elements = (ref: MmaStmt["a"]) => {
    const layout = fragmentLayouts[ref.array.fragment!.shape][ref.array.fragment!.role];
    return layout.rowE.map((_, e) => element(ref.array, fragmentSlot(ref.index, layout.perLane, e, stmt.span)));
  };
  return `tsk_mma_m16n8k8_tf32(${[...elements(stmt.accumulator), ...elements(stmt.a), ...elements(stmt.b)].join(", ")});`;
}
