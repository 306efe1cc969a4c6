/**
 * Constant folding: operators, conversions and selects over literals become literals, an `if` on a
 * constant keeps only the branch that runs, and a `const` local whose value folds to a literal is replaced
 * by that literal wherever it is used (so `const WMITER = (WM * WN) / (32 * TM * TN)` bounds a loop that
 * can be unrolled). This is what makes specializations cheap: once the
 * specialization pass has put a tile size in, `TILE * TILE` is a number and `if (TILE > 16)` disappears.
 * Folding follows the 32-bit semantics in ir/semantics.ts and leaves alone anything whose result is
 * target-defined (integer division by zero) or not finite. Integer `Math.min`/`Math.max` of literals fold too,
 * so that `Math.max(SWIZZLE, 1)` is a number for what reads constants after this (unrolling, shared sizes).
 */

import type { Expr, LiteralExpr, Stmt, Variable } from "../ir/ir.ts";
import { mapExpr, mapStmts } from "../ir/rewrite.ts";
import { evalBinary, evalConvert, evalUnary } from "../ir/semantics.ts";

function literal(of: Expr, value: number): LiteralExpr | undefined {
  // Only scalar operations fold (vectors are constructs of their lanes, never literals).
  if (!Number.isFinite(value) || typeof of.type !== "string") return undefined;
  return { kind: "literal", type: of.type, value, span: of.span };
}

export function foldExprNode(expr: Expr): Expr {
  switch (expr.kind) {
    case "unary":
      if (expr.operand.kind === "literal") return literal(expr, evalUnary(expr.op, expr.operand.type, expr.operand.value)) ?? expr;
      return expr;
    case "binary": {
      const { left, right } = expr;
      if (left.kind === "literal" && right.kind === "literal") {
        const value = evalBinary(expr.op, left.type, left.value, right.value);
        return (value !== undefined && literal(expr, value)) || expr;
      }
      // `false && x`, `true || x` are decided by their left side; expressions are pure, so x can go.
      if (left.kind === "literal" && (expr.op === "logand" || expr.op === "logor")) {
        const decided = expr.op === "logand" ? left.value === 0 : left.value !== 0;
        return decided ? left : right;
      }
      return expr;
    }
    case "convert":
      if (expr.value.kind === "literal" && typeof expr.type === "string") return literal(expr, evalConvert(expr.value.type, expr.type, expr.value.value)) ?? expr;
      return expr;
    case "select":
      if (expr.condition.kind === "literal") return expr.condition.value ? expr.whenTrue : expr.whenFalse;
      return expr;
    case "intrinsic":
      if ((expr.name === "min" || expr.name === "max") && expr.type !== "f32" && expr.args.every((arg) => arg.kind === "literal")) {
        const values = expr.args.map((arg) => (arg as LiteralExpr).value);
        return literal(expr, expr.name === "min" ? Math.min(...values) : Math.max(...values)) ?? expr;
      }
      return expr;
    default:
      return expr;
  }
}

export function foldExpr(expr: Expr): Expr {
  return mapExpr(expr, foldExprNode);
}

/**
 * `known`: variables whose value is given (unrolling's induction variable in one copy of the body), replaced by
 * their literal in the same pass that folds, so that a copy is made and folded in one walk.
 */
export function foldStmts(stmts: readonly Stmt[], known?: ReadonlyMap<Variable, LiteralExpr>): Stmt[] {
  // Statements are mapped in program order, so a constant is known before any use of it is mapped.
  const constants = new Map<Variable, LiteralExpr>(known);
  return mapStmts(stmts, {
    expr: (expr) => {
      const constant = expr.kind === "variable" ? constants.get(expr.variable) : undefined;
      return constant ? { ...constant, span: expr.span } : foldExprNode(expr);
    },
    stmt: (stmt) => {
      if (stmt.kind === "declare" && !stmt.variable.mutable && stmt.init?.kind === "literal") {
        constants.set(stmt.variable, stmt.init);
        return [];
      }
      if (stmt.kind === "if" && stmt.condition.kind === "literal") {
        const taken = stmt.condition.value ? stmt.then : stmt.else;
        // The branch keeps its own scope: its declarations must not meet the enclosing block's.
        return taken.length === 0 ? [] : [{ kind: "block", body: taken, span: stmt.span }];
      }
      if (stmt.kind === "while" && stmt.condition.kind === "literal" && stmt.condition.value === 0) return [];
      return stmt;
    },
  });
}
