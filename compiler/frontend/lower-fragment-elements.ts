/**
 * Fragment references and the element functions of fragments: `acc[i]` as the argument of a matrix function
 * (lower-matrix.ts uses it for every one of them), and `fragmentElement`, `fragmentRow`, `fragmentColumn`, which
 * are expressions (lower-expr.ts calls them). This file reaches the expression lowerer through the module state
 * (context.module.lower), as lower-atomics-subgroups.ts does, so that lower-expr.ts may import it without a circle.
 */

import { Node, type CallExpression, type Expression } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import type { Expr, FragmentRef, FragmentRole, Span } from "../ir/ir.ts";
import { fragmentLayout, fragmentPositionExpr, linearThreadIndex } from "../ir/matrix.ts";
import { spanOf, type FunctionContext } from "./context.ts";

const roleNames: Readonly<Record<FragmentRole, string>> = { a: "an A fragment (fragment.a)", b: "a B fragment (fragment.b)", accumulator: "an accumulator (fragment.accumulator)" };

/** `acc[i]`: one fragment of a fragment array, of `role` when one is required. */
export function lowerFragmentRef(context: FunctionContext, node: Expression, what: string, position: string, role?: FragmentRole): FragmentRef {
  const base = Node.isElementAccessExpression(node) ? node.getExpression() : undefined;
  const binding = base && Node.isIdentifier(base) ? context.scope.lookup(base.getText()) : undefined;
  if (!base || binding?.kind !== "array" || !binding.array.fragment) return fail("TSK1065", spanOf(node), [what, position, node.getText()]);
  const array = binding.array;
  if (role && array.fragment!.role !== role) return fail("TSK2020", spanOf(node), [what, roleNames[role], position, array.name, roleNames[array.fragment!.role]]);
  const indexNode = (node as import("ts-morph").ElementAccessExpression).getArgumentExpressionOrThrow();
  const index = context.module.lower.expected(context, indexNode, "i32", (found) => fail("TSK2006", spanOf(indexNode), [found.type], { notes: ["fragment indices are i32: convert with i32(…)"] }));
  return { array, index };
}

/** Element `e` of a fragment's slot in its array (index · perLane + e): an IR expression of both. */
export function elementSlot(fragment: FragmentRef, e: Expr, span: Span): Expr {
  const perLane = fragmentLayout(fragment.array.fragment!).perLane;
  const scaled: Expr = { kind: "binary", op: "mul", type: "i32", left: fragment.index, right: { kind: "literal", type: "i32", value: perLane, span }, span };
  return { kind: "binary", op: "add", type: "i32", left: scaled, right: e, span };
}

/** The element index argument of the fragment element functions: an i32 (a constant after unrolling keeps registers). */
export function elementIndex(context: FunctionContext, node: Expression, what: string): Expr {
  return context.module.lower.expected(context, node, "i32", (found) => fail("TSK2008", spanOf(node), [what, "an i32 element index", found.type]));
}

/**
 * `fragmentElement(frag, e)` (the f32 value of element e of the thread's part of a fragment), and
 * `fragmentRow(frag, e)` / `fragmentColumn(frag, e)` (where that element lies in the fragment's matrix, from the
 * layout table: ir/matrix.ts, fragmentPositionExpr); undefined for other names.
 */
export function lowerFragmentElementExpr(context: FunctionContext, name: string, call: CallExpression): Expr | undefined {
  if (name !== "fragmentElement" && name !== "fragmentRow" && name !== "fragmentColumn") return undefined;
  const span = spanOf(call);
  const what = `${name}()`;
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 2) return fail("TSK2008", span, [what, "2 arguments (a fragment and an element index)", `${args.length} argument(s)`]);
  const fragment = lowerFragmentRef(context, args[0]!, what, "first argument");
  const e = elementIndex(context, args[1]!, what);
  if (name === "fragmentElement") return { kind: "load", type: "f32", array: fragment.array, indices: [elementSlot(fragment, e, span)], span };
  return fragmentPositionExpr(fragmentLayout(fragment.array.fragment!), linearThreadIndex(span), e, name === "fragmentRow" ? "row" : "col", span);
}

