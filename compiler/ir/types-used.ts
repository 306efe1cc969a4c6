/**
 * Which scalar types a kernel uses (for a vector or struct, those of its lanes and fields), and where first:
 * its parameters, arrays, locals, every expression, and the helpers it calls. The validator holds them against
 * each target's support (validate/target-types.ts); backends ask it whether to print a type's support code
 * (the CPU's f16 rounding, CUDA's includes).
 */

import { declaredVariables, type HelperFunction, type Kernel, type Span, type Stmt } from "./ir.ts";
import { exprsOf, walkExpr, walkStmts } from "./rewrite.ts";
import type { AnyScalar, ElementType, Type } from "./types.ts";
import { leavesOf } from "./vectors.ts";

/** One use of a scalar type: the first place it appears, for the diagnostic. */
export interface TypeUse {
  readonly type: AnyScalar;
  readonly span: Span;
}

/** Every scalar type the kernel uses, each at its first place: parameters, arrays, locals, expressions, and the helpers it calls. */
export function typesUsed(kernel: Kernel): TypeUse[] {
  return typesUsedIn(kernel.params, [...kernel.shared, ...kernel.locals], [kernel.body]);
}

/** The same for any parameters, arrays and bodies (a module's helpers, say). */
export function typesUsedIn(params: Kernel["params"], arrays: Kernel["shared"], bodies: readonly (readonly Stmt[])[]): TypeUse[] {
  const found = new Map<AnyScalar, Span>();
  // A vector or struct uses the scalar types of its lanes and fields.
  const note = (type: Type | ElementType, span: Span) => {
    if (typeof type !== "string") for (const leaf of leavesOf(type)) note(leaf.type, span);
    else if (!found.has(type)) found.set(type, span);
  };
  for (const param of params) {
    if (param.kind === "buffer") note(param.array.elementType, param.array.span);
    else if (param.kind === "scalar") note(param.variable.type, param.variable.span);
  }
  for (const array of arrays) if (!array.barriers) note(array.elementType, array.span);
  const seenHelpers = new Set<HelperFunction>();
  const body = (stmts: readonly Stmt[]) =>
    walkStmts(stmts, (stmt) => {
      for (const variable of declaredVariables(stmt)) note(variable.type, variable.span);
      for (const expr of exprsOf(stmt)) {
        walkExpr(expr, (e) => {
          note(e.type, e.span);
          if (e.kind === "call" && !seenHelpers.has(e.callee)) {
            seenHelpers.add(e.callee);
            for (const param of e.callee.params) note(param.type, param.span);
            note(e.callee.returnType, e.callee.span);
            body(e.callee.body);
          }
        });
      }
    });
  for (const stmts of bodies) body(stmts);
  return [...found].map(([type, span]) => ({ type, span }));
}

