/**
 * Integer semantics for targets whose C++ leaves them undefined (CUDA; legalize.ts applies this where the
 * target's `wrapSignedArithmetic` and `maskShiftAmounts` say so). The language wraps i32 `+`, `-`, `*`,
 * `<<` and negation modulo 2³² and takes shift amounts modulo 32 (docs/language.md §6); in C++ signed
 * overflow and shifts by 32 or more are undefined behaviour, and nvcc optimizes on that: it assumes
 * `x * x >= 0` and divides it as unsigned, turns `a + b >= c` into `a >= c - b`, and so on (the differential
 * fuzzer's CUDA leg found 44 such programs in 2800 on the H100). So:
 *
 * - an i32 `+`, `-`, `*`, `<<` is computed on the u32 bits, where C++ wraps, and converted back once at the
 *   top of a chain: `a + b * c` → `(int)((unsigned int)a + (unsigned int)b * (unsigned int)c)` (i32 literals
 *   become u32 literals, and a conversion of a conversion back drops out); `-x` is `0u - x`;
 * - compound assignments with those operators become plain ones (`x += v` → `x = x + v`, wrapped as above);
 * - a shift amount that is not a literal is masked: `x << (n & 31)` (literal amounts are 0..31: TSK3010).
 *
 * One exception keeps loops fast: the step of a counted `for` (`i < e; i += s`) stays a signed `+=`
 * (keepLoopStep below; exact for steps of 1, and documented as a difference for larger ones).
 */

import type { BinaryExpr, Expr, ForStmt, LiteralExpr, ScalarType, Stmt, Variable } from "../ir/ir.ts";
import { mapStmts, walkStmts } from "../ir/rewrite.ts";
import { placeRead, placeType } from "../ir/vectors.ts";

export interface WrapOptions {
  readonly wrapSignedArithmetic: boolean;
  readonly maskShiftAmounts: boolean;
}

/** i32 operators whose overflow C++ leaves undefined, and that give the same bits computed as u32. */
const wrapping = new Set<BinaryExpr["op"]>(["add", "sub", "mul", "shl"]);

export function wrapIntegers(stmts: readonly Stmt[], options: WrapOptions): Stmt[] {
  const expr = (node: Expr): Expr => rewriteExpr(node, options);
  return mapStmts(stmts, {
    expr,
    stmt: (stmt) => {
      switch (stmt.kind) {
        case "assign":
        case "store":
          return compoundAssignment(stmt, options);
        case "for":
          return options.wrapSignedArithmetic ? keepLoopStep(stmt) : stmt;
        default:
          return stmt;
      }
    },
  });
}

function rewriteExpr(node: Expr, options: WrapOptions): Expr {
  if (node.kind === "binary" && (node.op === "shl" || node.op === "shr") && options.maskShiftAmounts) {
    const right = maskedAmount(node.right);
    if (right !== node.right) node = { ...node, right };
  }
  if (!options.wrapSignedArithmetic || node.type !== "i32") return node;
  if (node.kind === "binary" && wrapping.has(node.op)) {
    const right = node.op === "shl" ? node.right : asBits(node.right);
    return asSigned({ ...node, type: "u32", left: asBits(node.left), right });
  }
  if (node.kind === "unary" && node.op === "neg") {
    const zero: LiteralExpr = { kind: "literal", type: "u32", value: 0, span: node.span };
    return asSigned({ kind: "binary", op: "sub", type: "u32", left: zero, right: asBits(node.operand), span: node.span });
  }
  return node;
}

/** `x op= v` with a wrapping i32 operator becomes `x = x op v`, rewritten as an expression; `x >>= (n & 31)`. */
function compoundAssignment(stmt: Stmt & { kind: "assign" | "store" }, options: WrapOptions): Stmt {
  const op = stmt.op;
  if (op === undefined) return stmt;
  // The place may be a part of a vector or struct (`v.x += 1`): its own type decides.
  const target = placeType(stmt);
  const masks = options.maskShiftAmounts && (op === "shl" || op === "shr") && stmt.value.kind !== "literal";
  const wraps = options.wrapSignedArithmetic && target === "i32" && wrapping.has(op);
  if (!wraps) return masks ? { ...stmt, value: maskedAmount(stmt.value) } : stmt;
  const current = placeRead(stmt);
  const value = rewriteExpr({ kind: "binary", op, type: target, left: current, right: stmt.value, span: stmt.span }, options);
  return { ...stmt, op: undefined, value };
}

/** A non-literal shift amount `n` as `n & 31`, unless it is already masked to 0..31. */
function maskedAmount(amount: Expr): Expr {
  if (amount.kind === "literal") return amount;
  if (amount.kind === "binary" && amount.op === "and" && amount.right.kind === "literal" && amount.right.value >= 0 && amount.right.value <= 31) return amount;
  const mask: LiteralExpr = { kind: "literal", type: amount.type as ScalarType, value: 31, span: amount.span };
  return { kind: "binary", op: "and", type: amount.type, left: amount, right: mask, span: amount.span };
}

/** The u32 with the bits of an i32 expression: a literal retyped, a conversion back from u32 dropped. */
function asBits(value: Expr): Expr {
  if (value.kind === "literal") return { ...value, type: "u32", value: value.value >>> 0 };
  if (value.kind === "convert" && value.value.type === "u32") return value.value;
  return { kind: "convert", type: "u32", value, span: value.span };
}

function asSigned(value: Expr): Expr {
  return { kind: "convert", type: "i32", value, span: value.span };
}

/**
 * `for (…; i < e; i += s)` (or `i > e; i -= s`) with no other assignment to `i` in the loop keeps the signed
 * `i += s`, so that nvcc knows the trip count and can unroll and strength-reduce the loop (the grid-stride
 * loops of the reductions lost their unrolling otherwise). For a step of 1 this is exact: the condition held
 * before the update, so `i` is below the largest i32 (above the smallest) and `i + 1` cannot overflow. For
 * other steps it is not: a step past 2³¹ - 1 is undefined on CUDA (docs/language.md §22).
 */
function keepLoopStep(stmt: ForStmt): ForStmt {
  const update = stmt.update.length === 1 ? stmt.update[0]! : undefined;
  if (update?.kind !== "assign" || update.variable.type !== "i32") return stmt;
  const step = wrappedStep(update);
  if (!step || !stmt.condition || stmt.condition.kind !== "binary") return stmt;
  const { op, left, right } = stmt.condition;
  const isVariable = (e: Expr) => e.kind === "variable" && e.variable === update.variable;
  const bounded = step.op === "add" ? (op === "lt" && isVariable(left)) || (op === "gt" && isVariable(right)) : (op === "gt" && isVariable(left)) || (op === "lt" && isVariable(right));
  if (!bounded || assigns(stmt.body, update.variable)) return stmt;
  return { ...stmt, update: [{ ...update, op: step.op, value: step.value }] };
}

/** The operator and i32 step of `i = (int)((unsigned int)i + s)` (or `-`), as rewritten above. */
function wrappedStep(update: Stmt & { kind: "assign" }): { op: "add" | "sub"; value: Expr } | undefined {
  const value = update.value;
  if (value.kind !== "convert" || value.value.kind !== "binary") return undefined;
  const { op, left, right } = value.value;
  if (op !== "add" && op !== "sub") return undefined;
  const isSelf = left.kind === "convert" && left.value.kind === "variable" && left.value.variable === update.variable;
  if (!isSelf) return undefined;
  const step = right.kind === "literal" ? { ...right, type: "i32" as const, value: right.value | 0 } : right.kind === "convert" && right.value.type === "i32" ? right.value : asSigned(right);
  return { op, value: step };
}

function assigns(body: readonly Stmt[], variable: Variable): boolean {
  let found = false;
  walkStmts(body, (stmt) => {
    if (stmt.kind === "assign" && stmt.variable === variable) found = true;
  });
  return found;
}
