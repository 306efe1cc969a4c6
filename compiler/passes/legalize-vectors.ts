/**
 * The vector legalizations (legalize.ts applies them where the target's options say so):
 *
 * - `splitSwizzleStores` (WGSL, CUDA): an assignment to several lanes (`v.xy = e`) becomes one per lane, from
 *   a local holding `e`: WGSL assigns one component at a time, and CUDA's multi-lane swizzles are helper
 *   calls, not places.
 * - `laneConversions` (WGSL): a float vector converted to an integer vector converts lane by lane, through
 *   the saturating scalar conversions the language defines (WGSL's own saturates at other bounds).
 * - `expandFunctions` (CUDA): WGSL's functions on scalars that the target has no function for (`clamp`,
 *   `mix`, `fract`, `smoothstep`, …) are written out by their definitions (ir/vector-functions.ts); on
 *   vectors they are the target's helpers. The functions in `nativeF32Functions` stay calls on f32 (the target
 *   has an instruction for them: CUDA's `inverseSqrt`), and so do the lanes of its vector helpers.
 */

import type { Access, Expr, IntrinsicName, ScalarType, Stmt, Variable } from "../ir/ir.ts";
import { isFloat, isInteger, type VectorType } from "../ir/types.ts";
import { definedIntrinsics, expandIntrinsic } from "../ir/vector-functions.ts";
import { elementOf, laneCount, laneOf } from "../ir/vectors.ts";
import { mapStmts } from "../ir/rewrite.ts";

export interface VectorLegalizeOptions {
  readonly splitSwizzleStores?: boolean;
  readonly laneConversions?: boolean;
  readonly expandFunctions?: boolean;
  /** With `expandFunctions`: the functions the target computes itself on f32, which are not expanded there. */
  readonly nativeF32Functions?: ReadonlySet<IntrinsicName>;
}

export function legalizeVectors(stmts: readonly Stmt[], options: VectorLegalizeOptions): Stmt[] {
  if (!options.splitSwizzleStores && !options.laneConversions && !options.expandFunctions) return [...stmts];
  return mapStmts(stmts, {
    expr: (expr) => {
      if (options.laneConversions && expr.kind === "convert" && laneCount(expr.type) > 1 && isFloat(elementOf(expr.value.type)) && isInteger(elementOf(expr.type))) {
        const lanes = Array.from({ length: laneCount(expr.type) }, (_, lane): Expr => ({ kind: "convert", type: elementOf(expr.type), value: laneOf(expr.value, lane), span: expr.span }));
        return { kind: "construct", type: expr.type as VectorType, args: lanes, span: expr.span };
      }
      if (options.expandFunctions && expr.kind === "intrinsic" && definedIntrinsics.has(expr.name) && laneCount(expr.type) === 1 && expr.args.every((arg) => laneCount(arg.type) === 1)) {
        if (expr.type === "f32" && options.nativeF32Functions?.has(expr.name)) return expr;
        return expandIntrinsic(expr.name, expr.type as ScalarType, expr.args.map((arg) => [arg]), expr.span, (e) => e)[0]!;
      }
      return expr;
    },
    stmt: (stmt) => (options.splitSwizzleStores && (stmt.kind === "assign" || stmt.kind === "store") ? splitSwizzleStore(stmt) : stmt),
  });
}

/** `v.xy = e` → `const lanes = e; v.x = lanes.x; v.y = lanes.y;` (no local where `e` is a plain variable other than `v`). */
function splitSwizzleStore(stmt: Stmt & { kind: "assign" | "store" }): Stmt | Stmt[] {
  const path = stmt.path ?? [];
  const last = path[path.length - 1];
  if (last?.kind !== "swizzle" || last.lanes.length === 1) return stmt;
  const before: Stmt[] = [];
  let value = stmt.value;
  const plain = value.kind === "variable" && !(stmt.kind === "assign" && value.variable === stmt.variable);
  if (!plain) {
    const temp: Variable = { kind: "variable", name: "lanes", type: value.type, mutable: false, span: value.span };
    before.push({ kind: "declare", variable: temp, init: value, span: stmt.span });
    value = { kind: "variable", type: value.type, variable: temp, span: value.span };
  }
  const lanes = last.lanes.map((lane, index): Stmt => {
    const lanePath: Access[] = [...path.slice(0, -1), { kind: "swizzle", lanes: [lane] }];
    return { ...stmt, path: lanePath, value: laneOf(value, index), span: stmt.span };
  });
  return [...before, ...lanes];
}
