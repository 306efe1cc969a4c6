/**
 * Per-target legalization: small IR→IR rewrites for what one target spells differently or does not allow,
 * chosen by the target's capabilities (backends/targets.ts) so that backends only print.
 *
 * - WGSL takes shift amounts as u32 only: an i32 amount is converted (a literal is retyped).
 * - CUDA has no unambiguous `abs` for unsigned ints, and the absolute value of a u32 is the value itself.
 */

import type { Expr, Stmt } from "../ir/ir.ts";
import { mapStmts } from "../ir/rewrite.ts";

export interface LegalizeOptions {
  readonly shiftAmountU32: boolean;
  readonly dropUnsignedAbs: boolean;
}

export function legalize(stmts: readonly Stmt[], options: LegalizeOptions): Stmt[] {
  const expr = (node: Expr): Expr => {
    if (options.shiftAmountU32 && node.kind === "binary" && (node.op === "shl" || node.op === "shr") && node.right.type !== "u32") {
      return { ...node, right: asU32(node.right) };
    }
    if (options.dropUnsignedAbs && node.kind === "intrinsic" && node.name === "abs" && node.type === "u32") return node.args[0]!;
    return node;
  };
  return mapStmts(stmts, {
    expr,
    stmt: (stmt) =>
      options.shiftAmountU32 && stmt.kind === "assign" && (stmt.op === "shl" || stmt.op === "shr") && stmt.value.type !== "u32"
        ? { ...stmt, value: asU32(stmt.value) }
        : options.shiftAmountU32 && stmt.kind === "store" && (stmt.op === "shl" || stmt.op === "shr") && stmt.value.type !== "u32"
          ? { ...stmt, value: asU32(stmt.value) }
          : stmt,
  });
}

function asU32(value: Expr): Expr {
  if (value.kind === "literal" && value.value >= 0) return { ...value, type: "u32" };
  return { kind: "convert", type: "u32", value, span: value.span };
}
