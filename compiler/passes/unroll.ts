/**
 * Unrolling of loops the user marked `unroll:`, for targets whose compilers have no unroll pragma (WGSL) or
 * gain from seeing straight-line code. A loop is unrolled only when its shape makes the trip count a
 * constant: `for (let i = A; i < B; i += S)` (or <=, >, >=, !=, and -=, ++, --) with literal A, B, S, a
 * body that never assigns `i` and never breaks or continues this loop. Each iteration becomes a block with
 * `i` replaced by its value, then folded. Other loops are left as they are; CUDA keeps them all and says
 * `#pragma unroll` instead.
 */

import { declaredVariables, type ForStmt, type LiteralExpr, type ScalarType, type Stmt, type Variable } from "../ir/ir.ts";
import { exprsOf, mapStmts, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { evalBinary } from "../ir/semantics.ts";
import { foldStmts } from "./fold.ts";

/** Loops longer than this stay loops: unrolling them would only bloat the code. */
const maxTrips = 64;

/**
 * A loop whose copies would hold more statements than this (its inner unrolled loops counted, so nested
 * loops multiply: 64 × 64 × 64 would be 262 144 copies) stays a loop, which keeps compile time and code size
 * bounded whatever the nesting.
 */
export const maxUnrolledStatements = 4096;

/**
 * `select`: only the `unroll:` loops it accepts (seen after the loops inside them were unrolled); `maxStatements`:
 * a smaller budget than `maxUnrolledStatements` (scalarize.ts unrolls only what lets it drop a private array);
 * `maxTrips`: only loops of at most that many iterations.
 */
export function unrollLoops(stmts: readonly Stmt[], options: { select?: (loop: ForStmt) => boolean; maxStatements?: number; maxTrips?: number } = {}): Stmt[] {
  const budget = options.maxStatements ?? maxUnrolledStatements;
  return mapStmts(stmts, {
    stmt: (stmt) => {
      if (stmt.kind !== "for" || !stmt.unroll || (options.select && !options.select(stmt))) return stmt;
      const trips = tripValues(stmt);
      if (!trips || trips.length * statementCount(stmt.body) > budget || trips.length > (options.maxTrips ?? maxTrips)) return stmt;
      const variable = (stmt.init[0] as { variable: Variable }).variable;
      // A body that declares nothing at its top level can be spliced in; otherwise each copy keeps a scope.
      const needsScope = stmt.body.some((s) => declaredVariables(s).length > 0);
      return trips.flatMap((value): Stmt[] => {
        // One walk makes the copy: the induction variable becomes its value (each use keeping its span) and the
        // copy folds. (A walk to substitute and another to fold took about a tenth of an editor compile.)
        const copy = foldStmts(stmt.body, new Map([[variable, { kind: "literal", type: variable.type as ScalarType, value, span: stmt.span } as LiteralExpr]]));
        return needsScope ? [{ kind: "block", body: copy, span: stmt.span }] : copy;
      });
    },
  });
}

/**
 * The CPU backend's unrolling: only innermost `unroll:` loops of at most `maxTrips` iterations, with no helper
 * call, barrier or collective inside, and at most `maxStatements` statements once copied. In V8 every iteration
 * of a loop ends at a back edge whose interrupt check forgets what the optimizer knew of each typed array (its
 * map, length and data pointer), so a loop of two iterations of one element each reloads and checks both arrays
 * per element; straight-line copies check them once (transpose-aligned.ts's 2-iteration column loops: 8.97 ms
 * looped, 7.13 unrolled, 1023 × 1022, bench/README.md). Longer loops and larger bodies stay loops: V8 gains
 * nothing from unrolling as such and slows down on large unrolled bodies (the targets table says more).
 */
export function unrollShortLoops(stmts: readonly Stmt[], limits: { readonly maxTrips: number; readonly maxStatements: number }): Stmt[] {
  const innermost = (loop: ForStmt) => {
    let simple = true;
    walkStmts(loop.body, (stmt) => {
      if (stmt.kind === "for" || stmt.kind === "while" || stmt.kind === "barrier" || stmt.kind === "collective" || stmt.kind === "mma" || stmt.kind === "wgmma") simple = false;
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "call" && (simple = false));
    });
    return simple;
  };
  return unrollLoops(stmts, { select: innermost, maxTrips: limits.maxTrips, maxStatements: limits.maxStatements });
}

/** The values the induction variable takes, or undefined when the loop does not have a constant shape. */
function tripValues(loop: ForStmt): number[] | undefined {
  if (loop.init.length !== 1 || loop.update.length !== 1 || !loop.condition) return undefined;
  const init = loop.init[0]!;
  const update = loop.update[0]!;
  const condition = loop.condition;
  if (init.kind !== "declare" || init.init?.kind !== "literal") return undefined;
  const variable = init.variable;
  if (variable.type !== "i32" && variable.type !== "u32") return undefined;
  if (update.kind !== "assign" || update.variable !== variable || (update.op !== "add" && update.op !== "sub")) return undefined;
  if (update.value.kind !== "literal") return undefined;
  if (condition.kind !== "binary" || condition.left.kind !== "variable" || condition.left.variable !== variable) return undefined;
  if (condition.right.kind !== "literal") return undefined;
  if (!bodyKeepsInductionVariable(loop.body, variable)) return undefined;

  const values: number[] = [];
  let value = init.init.value;
  while (evalBinary(condition.op, variable.type, value, condition.right.value) === 1) {
    values.push(value);
    if (values.length > maxTrips) return undefined;
    const next = evalBinary(update.op, variable.type, value, update.value.value);
    if (next === undefined || next === value) return undefined;
    value = next;
  }
  return values;
}

function statementCount(stmts: readonly Stmt[]): number {
  let count = 0;
  walkStmts(stmts, () => {
    count++;
  });
  return count;
}

/** No assignment to the induction variable, and no break/continue that leaves this loop's iteration. */
function bodyKeepsInductionVariable(body: readonly Stmt[], variable: Variable): boolean {
  let ok = true;
  walkStmts(body, (stmt) => {
    if (stmt.kind === "assign" && stmt.variable === variable) ok = false;
  });
  const exitsLoop = (stmts: readonly Stmt[]): boolean =>
    stmts.some((stmt) => {
      switch (stmt.kind) {
        case "break":
        case "continue":
          return true;
        case "if":
          return exitsLoop(stmt.then) || exitsLoop(stmt.else);
        case "block":
          return exitsLoop(stmt.body);
        default:
          return false; // a nested loop's break and continue stay inside it
      }
    });
  return ok && !exitsLoop(body);
}
