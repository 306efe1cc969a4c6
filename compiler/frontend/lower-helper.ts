/**
 * Helper functions: plain `function` declarations in the user's files, called from kernels or from other
 * helpers. They take and return values (scalars, vectors, structs), have no side effects and may not recurse (GPUs have no call stack
 * to speak of). Each is lowered once per module, the first time a kernel calls it, and is emitted as a
 * function of its own on every target.
 */

import { Node, type Expression, type FunctionDeclaration } from "ts-morph";
import { fail, makeDiagnostic } from "../diagnostics/diagnostic.ts";
import type { Expr, HelperFunction, Span, Stmt, Variable } from "../ir/ir.ts";
import { resolveTypeNode, Scope, spanOf, type FunctionContext } from "./context.ts";

export function lowerHelperCall(
  context: FunctionContext,
  declaration: FunctionDeclaration,
  args: readonly Expression[],
  span: Span,
  calleeSpan: Span,
): Expr {
  const helper = helperFor(context, declaration, calleeSpan);
  if (args.length !== helper.params.length) {
    return fail("TSK2008", span, [`'${helper.name}'`, `${helper.params.length} argument(s)`, `${args.length}`]);
  }
  const lowered = args.map((arg, index) => {
    const param = helper.params[index]!;
    return context.module.lower.expected(context, arg, param.type, (found) =>
      fail("TSK2008", spanOf(arg), [`parameter '${param.name}' of '${helper.name}'`, param.type, found.type]),
    );
  });
  return { kind: "call", type: helper.returnType, callee: helper, args: lowered, span };
}

function helperFor(context: FunctionContext, declaration: FunctionDeclaration, calleeSpan: Span): HelperFunction {
  const state = context.module;
  const name = declaration.getName() ?? "(anonymous)";
  const onStack = state.helperStack.findIndex((entry) => entry.node === declaration);
  if (onStack >= 0) {
    const cycle = [...state.helperStack.slice(onStack).map((entry) => entry.name), name].join(" → ");
    return fail("TSK1007", calleeSpan, [name, cycle]);
  }
  const existing = state.helpers.get(declaration);
  if (existing) return existing;

  const helperSpan = spanOf(declaration.getNameNode() ?? declaration);
  if (declaration.isAsync() || declaration.isGenerator()) fail("TSK1017", helperSpan, [name, "async functions and generators are not supported"]);
  if (declaration.getTypeParameters().length > 0) fail("TSK1017", helperSpan, [name, "generic functions are not supported"]);
  const returnTypeNode = declaration.getReturnTypeNode();
  const returnType = returnTypeNode ? resolveTypeNode(returnTypeNode) : undefined;
  if (returnType?.kind !== "scalar") {
    fail("TSK1017", returnTypeNode ? spanOf(returnTypeNode) : helperSpan, [name, "it needs a return type annotation: f32, i32, u32, bool, a vector or a struct"]);
  }
  const scope = new Scope();
  const params: Variable[] = declaration.getParameters().map((param) => {
    const typeNode = param.getTypeNode();
    const resolved = typeNode ? resolveTypeNode(typeNode) : undefined;
    if (!Node.isIdentifier(param.getNameNode())) fail("TSK1001", spanOf(param), ["destructuring"]);
    if (resolved?.kind !== "scalar") {
      return fail("TSK1017", spanOf(param), [name, `parameter '${param.getName()}' must be f32, i32, u32, bool, a vector or a struct (array parameters are not supported yet)`]);
    }
    if (param.hasInitializer() || param.isOptional() || param.isRestParameter()) {
      fail("TSK1017", spanOf(param), [name, "optional, default and rest parameters are not supported"]);
    }
    const variable: Variable = { kind: "variable", name: param.getName(), type: resolved.type, mutable: false, span: spanOf(param.getNameNode()) };
    scope.declare(variable.name, { kind: "variable", variable, why: "function parameters are read-only" });
    return variable;
  });

  const helper: HelperFunction = { kind: "helper", name, params, returnType: returnType.type, body: [], span: helperSpan };
  state.helpers.set(declaration, helper);
  const helperContext: FunctionContext = {
    module: state,
    kind: "helper",
    name,
    returnType: returnType.type,
    shared: [],
    locals: [],
    scope,
    loopDepth: 0,
  };
  state.helperStack.push({ node: declaration, name });
  try {
    const errorsBefore = state.diagnostics.length;
    const bodyNode = declaration.getBody();
    const body = state.lower.block(helperContext, bodyNode && Node.isBlock(bodyNode) ? bodyNode.getStatements() : [], state.diagnostics);
    helper.body = body;
    // A return that failed to lower is already reported; a missing-return error on top would be noise.
    if (!definitelyReturns(body) && state.diagnostics.length === errorsBefore) state.diagnostics.push(
        makeDiagnostic("TSK1019", helperSpan, [name], {
          notes: ["a loop counts as possibly ending, even `while (true)` (WGSL rules the same): end the function with a return"],
        }),
      );
  } finally {
    state.helperStack.pop();
  }
  state.helperOrder.push(helper);
  return helper;
}

/** True when every path through `body` ends in a return (loops are assumed to possibly not run). */
export function definitelyReturns(body: readonly Stmt[]): boolean {
  return body.some((stmt) => {
    switch (stmt.kind) {
      case "return":
        return true;
      case "if":
        return definitelyReturns(stmt.then) && definitelyReturns(stmt.else);
      case "block":
        return definitelyReturns(stmt.body);
      default:
        return false;
    }
  });
}
