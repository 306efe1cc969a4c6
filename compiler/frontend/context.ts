/**
 * State shared by the lowering of one kernel or helper: the lexical scopes (block-scoped like TypeScript's
 * `let`/`const`), whether we are in a kernel or a helper, the shared arrays declared so far, and the
 * helpers lowered for the module. Also the mapping from ts-morph nodes to spans and from type annotations
 * to tskernel types.
 */

import { Node, SyntaxKind, type Expression, type Statement, type TypeNode } from "ts-morph";
import { fail, type Diagnostic } from "../diagnostics/diagnostic.ts";
import type { ArrayRef, ConstValue, ElementScalar, ElementType, Expr, HelperFunction, ScalarType, Span, Stmt, Type, Variable } from "../ir/ir.ts";
import { mapExpr } from "../ir/rewrite.ts";
import { annotationTypes, bufferTypeNames, elementScalars, valueTypeOf } from "../ir/types.ts";
import { resolveCompositeType } from "./composite-types.ts";
import { originOf } from "./program.ts";

export function spanOf(node: Node): Span {
  return { file: node.getSourceFile().getFilePath(), start: node.getStart(), end: node.getEnd() };
}

/** What a name in scope stands for. */
export type Binding =
  | { readonly kind: "variable"; readonly variable: Variable; readonly why?: string }
  | { readonly kind: "array"; readonly array: ArrayRef }
  | { readonly kind: "const"; readonly name: string; readonly type: ScalarType; readonly value?: ConstValue }
  /** A name whose declaration failed to lower: uses are abandoned silently (the error was reported). */
  | { readonly kind: "poisoned" };

export class Scope {
  private readonly names = new Map<string, Binding>();
  constructor(readonly parent?: Scope) {}

  lookup(name: string): Binding | undefined {
    return this.names.get(name) ?? this.parent?.lookup(name);
  }

  declare(name: string, binding: Binding): void {
    this.names.set(name, binding);
  }
}

/** Per-module state: helpers are lowered once and shared by every kernel of the module. */
export interface ModuleState {
  readonly helpers: Map<Node, HelperFunction>;
  /** Helpers in the order their lowering finished: callees before callers. */
  readonly helperOrder: HelperFunction[];
  /** The helpers being lowered right now, outermost first, to detect recursion. */
  readonly helperStack: { node: Node; name: string }[];
  /** Diagnostics from helper bodies, reported once however many kernels call the helper. */
  readonly diagnostics: Diagnostic[];
  /**
   * The expression and statement lowerers (lower-expr.ts, lower-stmt.ts), handed in by lower-kernel.ts, for
   * lower-helper.ts and lower-atomics-subgroups.ts: lowering a helper call lowers its arguments and, the
   * first time, its body, and an atomic or collective call its operands; lower-expr.ts imports both files,
   * so importing it back from them would make a circle.
   */
  readonly lower: {
    readonly expected: (context: FunctionContext, node: Expression, type: Type, mismatch: (found: Expr) => never) => Expr;
    readonly expr: (context: FunctionContext, node: Expression, hint?: Type) => Expr;
    readonly indexedArray: (
      context: FunctionContext,
      node: Expression,
      extraIndex: Expression | undefined,
      notAnArray: (name: string, written: number) => never,
      rankNotes?: (array: ArrayRef, rank: number) => string[],
    ) => { array: ArrayRef; indices: Expr[] };
    /** Whether a node is a numeric literal, possibly signed or parenthesized, or arithmetic of such. */
    readonly isLiteralLike: (node: Node) => boolean;
    readonly block: (context: FunctionContext, statements: readonly Statement[], diagnostics: Diagnostic[]) => Stmt[];
  };
}

export interface FunctionContext {
  readonly module: ModuleState;
  readonly kind: "kernel" | "helper";
  readonly name: string;
  /** For helpers: the declared return type. */
  readonly returnType?: Type;
  /** In a kernel with type parameters (`<T extends DType>`): the element type each stands for in this instance. */
  readonly typeArgs?: TypeArgs;
  /** Shared arrays of a kernel, in declaration order. */
  readonly shared: ArrayRef[];
  /** Private arrays of a kernel, in declaration order. */
  readonly locals: ArrayRef[];
  scope: Scope;
  /** The `unroll:` label applies to the next loop only. */
  loopDepth: number;
  /**
   * Statements that calls inside the expression being lowered must run first: atomics and collectives are
   * statements in the IR, so `a + subgroupAdd(x)` becomes `const sum = subgroupAdd(x);` before `a + sum`.
   * Undefined where nothing can run before the expression (the right operand of `&&`), with the reason in
   * `hoistBlocked`.
   */
  pending?: Stmt[];
  hoistBlocked?: string;
  /** The shared words of the kernel's warpgroupBroadcast calls (one a warpgroup), declared at the first call. */
  broadcastWords?: ArrayRef;
  /**
   * `const`s whose value is an expression of literals and Const parameters (`const PA = (BM * BK / 8) / THREADS`),
   * with that expression (other such consts already written in): where a size or count must be known at compile
   * time, a name of one stands for its expression (`inlineCompileTimeConsts` below).
   */
  compileTimeConsts?: Map<Variable, Expr>;
}

/** Runs `body` with a fresh list of pending statements; returns them and its result. */
export function collectPending<T>(context: FunctionContext, body: () => T): [Stmt[], T] {
  const saved = { pending: context.pending, blocked: context.hoistBlocked };
  const pending: Stmt[] = [];
  context.pending = pending;
  context.hoistBlocked = undefined;
  try {
    const result = body();
    return [pending, result];
  } finally {
    context.pending = saved.pending;
    context.hoistBlocked = saved.blocked;
  }
}

/** Runs `body` where no statement may run before the expression: a call that needs one is `TSK1032`, saying `where`. */
export function withoutPending<T>(context: FunctionContext, where: string, body: () => T): T {
  const saved = { pending: context.pending, blocked: context.hoistBlocked };
  context.pending = undefined;
  context.hoistBlocked = where;
  try {
    return body();
  } finally {
    context.pending = saved.pending;
    context.hoistBlocked = saved.blocked;
  }
}

export function withScope<T>(context: FunctionContext, body: () => T): T {
  const saved = context.scope;
  context.scope = new Scope(saved);
  try {
    return body();
  } finally {
    context.scope = saved;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Type annotations

export type ParamType =
  /** A value: a scalar, or a vector or struct (composite-types.ts). */
  | { readonly kind: "scalar"; readonly type: Type }
  | { readonly kind: "buffer"; readonly elementType: ElementType; readonly access: "read" | "read_write" }
  | { readonly kind: "const"; readonly type: ScalarType };

/**
 * Resolves a type annotation through the type table's TypeScript spellings (ir/types.ts). Buffer types are
 * tskernel's declarations (`ReadonlyFloat32Array`, `BFloat16Array`…) or TypeScript's globals (`Uint8Array`,
 * and `Float16Array` where the user's library has it). Returns undefined for anything that is not a kernel type.
 */
export function resolveTypeNode(typeNode: TypeNode, typeArguments?: TypeArgs): ParamType | undefined {
  if (typeNode.getKind() === SyntaxKind.BooleanKeyword) return { kind: "scalar", type: "bool" };
  const composite = resolveCompositeType(typeNode);
  if (composite) return composite.kind === "value" ? { kind: "scalar", type: composite.type } : composite;
  if (!Node.isTypeReference(typeNode)) return undefined;
  const nameNode = typeNode.getTypeName();
  if (!Node.isIdentifier(nameNode)) return undefined;
  const origin = originOf(nameNode);
  const typeArgs = typeNode.getTypeArguments();
  if (origin.kind !== "tskernel" && origin.kind !== "global") return undefined;
  if (origin.kind === "tskernel" && Object.hasOwn(genericTypes, origin.name) && typeArgs.length === 1) {
    const element = elementTypeArgument(typeArgs[0]!, typeArguments ?? new Map());
    if (!element) return undefined;
    const generic = genericTypes[origin.name]!;
    return generic === "value" ? { kind: "scalar", type: valueTypeOf(element) } : { kind: "buffer", elementType: element, access: generic };
  }
  if (origin.kind === "tskernel") {
    const scalar = annotationTypes.get(origin.name);
    if (scalar && typeArgs.length === 0) return { kind: "scalar", type: scalar };
    if (origin.name === "Const" && typeArgs.length === 1) {
      const inner = resolveTypeNode(typeArgs[0]!, typeArguments);
      return inner?.kind === "scalar" && typeof inner.type === "string" ? { kind: "const", type: inner.type } : undefined;
    }
  }
  if (origin.kind === "global" && origin.name === "Readonly" && typeArgs.length === 1) {
    const inner = resolveTypeNode(typeArgs[0]!, typeArguments);
    return inner?.kind === "buffer" ? { ...inner, access: "read" } : undefined;
  }
  const buffer = bufferTypeNames.get(origin.name);
  if (buffer && typeArgs.length === 0) return { kind: "buffer", ...buffer };
  return undefined;
}

/** The element types a kernel's type parameters stand for in the instance being lowered, by name. */
export type TypeArgs = ReadonlyMap<string, ElementScalar>;

/** The generic types of "tskernel" over an element type: a buffer of it, a read-only one, its value. */
const genericTypes: Readonly<Record<string, "read_write" | "read" | "value">> = { BufferOf: "read_write", ReadonlyBufferOf: "read", Elem: "value" };

/** The element type an argument of `BufferOf<…>` names: a type parameter bound here, or a literal (`"bf16"`). */
export function elementTypeArgument(node: TypeNode, typeArgs: TypeArgs): ElementScalar | undefined {
  if (Node.isTypeReference(node)) {
    const name = node.getTypeName();
    return Node.isIdentifier(name) && node.getTypeArguments().length === 0 ? typeArgs.get(name.getText()) : undefined;
  }
  if (Node.isLiteralTypeNode(node)) {
    const literal = node.getLiteral();
    if (Node.isStringLiteral(literal)) {
      const name = literal.getLiteralValue();
      return (elementScalars as readonly string[]).includes(name) ? (name as ElementScalar) : undefined;
    }
  }
  return undefined;
}

/** A local's annotation: a scalar, vector or struct type. */
export function resolveValueAnnotation(typeNode: TypeNode, what: string, typeArgs?: TypeArgs): Type {
  const resolved = resolveTypeNode(typeNode, typeArgs);
  if (resolved?.kind === "scalar") return resolved.type;
  return fail("TSK1026", spanOf(typeNode), [what, typeNode.getText()], {
    notes: typeNode.getKind() === SyntaxKind.NumberKeyword ? ["`number` is ambiguous in a kernel: write f32, i32 or u32"] : [],
  });
}

/**
 * Whether an expression is made of literals, Const parameters and consts of those only (known once the kernel is
 * specialized).
 */
export function isCompileTimeExpr(context: FunctionContext, expr: Expr): boolean {
  switch (expr.kind) {
    case "literal":
    case "constRef":
      return true;
    case "variable":
      return context.compileTimeConsts?.has(expr.variable) ?? false;
    case "unary":
      return isCompileTimeExpr(context, expr.operand);
    case "binary":
      return isCompileTimeExpr(context, expr.left) && isCompileTimeExpr(context, expr.right);
    case "select":
      return isCompileTimeExpr(context, expr.condition) && isCompileTimeExpr(context, expr.whenTrue) && isCompileTimeExpr(context, expr.whenFalse);
    case "convert":
      return isCompileTimeExpr(context, expr.value);
    default:
      return false;
  }
}

/**
 * The expression with each const of literals and Const parameters written in (`local.f32(8 * PA)` with `const PA =
 * BM / 32` sizes its array by `8 * (BM / 32)`), where a value must be known when the kernel is specialized.
 */
export function inlineCompileTimeConsts(context: FunctionContext, expr: Expr): Expr {
  const consts = context.compileTimeConsts;
  if (!consts) return expr;
  return mapExpr(expr, (e) => (e.kind === "variable" && consts.has(e.variable) ? consts.get(e.variable)! : e));
}
