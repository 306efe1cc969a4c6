/**
 * How deeply a kernel's code nests as the C-like targets print it, for the targets whose compilers stop at a
 * fixed depth (WGSL: Tint parses at most 128 nested expressions and braces, counted together, and accepts
 * 127 nested statements; the WGSL specification guarantees 127). Levels are counted as Tint counts what the
 * printers write: the body of an `if` or a loop adds two (the statement and its block), a plain block one,
 * each link of an `else if` chain one; each expression node adds one, a unary operator two (`-(-x)` needs
 * parentheses). Helpers are functions of their own: each starts again at the top, and each one the kernel
 * calls is measured too. The walk keeps its own stack, so a deep IR cannot exhaust JavaScript's.
 */

import type { Expr, HelperFunction, Span, Stmt } from "../ir/ir.ts";
import { childExprs, exprsOf } from "../ir/rewrite.ts";

export interface CodeDepth {
  /** Levels at the deepest point: 1 for a statement at the top of a function body. */
  readonly depth: number;
  /** Where that point is. */
  readonly span: Span;
}

type Item = { readonly stmts: readonly Stmt[]; readonly depth: number } | { readonly expr: Expr; readonly depth: number };

/** The deepest point of a kernel body and of every helper it calls, directly or not. */
export function codeDepth(body: readonly Stmt[], span: Span): CodeDepth {
  let deepest: CodeDepth = { depth: 0, span };
  const helpers = new Set<HelperFunction>();
  const functions: (readonly Stmt[])[] = [body];
  while (functions.length > 0) {
    const stack: Item[] = [{ stmts: functions.pop()!, depth: 1 }];
    while (stack.length > 0) {
      const item = stack.pop()!;
      if ("expr" in item) {
        const { expr, depth } = item;
        if (depth > deepest.depth) deepest = { depth, span: expr.span };
        const step = expr.kind === "unary" ? 2 : 1;
        for (const child of childExprs(expr)) stack.push({ expr: child, depth: depth + step });
        if (expr.kind === "call" && !helpers.has(expr.callee)) {
          helpers.add(expr.callee);
          functions.push(expr.callee.body);
        }
        continue;
      }
      for (const stmt of item.stmts) {
        const depth = item.depth;
        if (depth > deepest.depth) deepest = { depth, span: stmt.span };
        for (const expr of stmtExprs(stmt)) stack.push({ expr, depth: depth + 1 });
        if (stmt.kind === "block") stack.push({ stmts: stmt.body, depth: depth + 1 });
        if (stmt.kind === "for" || stmt.kind === "while" || stmt.kind === "if") stack.push({ stmts: stmt.kind === "if" ? stmt.then : stmt.body, depth: depth + 2 });
        if (stmt.kind === "if" && stmt.else.length > 0) {
          // `} else if (…) {` continues the chain one level down; any other else is a block of its own.
          const chained = stmt.else.length === 1 && stmt.else[0]!.kind === "if";
          stack.push({ stmts: stmt.else, depth: depth + (chained ? 1 : 2) });
        }
      }
    }
  }
  return deepest;
}

/** The expressions a statement holds itself, its header's included (a `for`'s init and update). */
function stmtExprs(stmt: Stmt): readonly Expr[] {
  // exprsOf leaves out a `for`'s init and update, which are statements of the header; a matrix statement's
  // operands count although WebGPU has none (TSK3048), for the other targets' sake.
  if (stmt.kind === "for") return [...(stmt.condition ? [stmt.condition] : []), ...stmt.init.flatMap(stmtExprs), ...stmt.update.flatMap(stmtExprs)];
  return exprsOf(stmt);
}
