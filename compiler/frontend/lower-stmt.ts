/**
 * Lowers TypeScript statements to IR statements. Each statement is lowered on its own: a diagnostic raised
 * inside one is recorded and lowering goes on with the next, so a file with several mistakes reports them
 * all. Side effects live here: declarations, assignments (`=`, `op=`, `++`, `--`), stores into arrays,
 * `syncThreads()`, and control flow. Shared arrays are declared here too, and only at the top level of a
 * kernel body.
 */

import { Node, SyntaxKind, type Expression, type Statement } from "ts-morph";
import { AlreadyReported, DiagnosticError, fail, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { isInteger, type Access, type ArrayRef, type BinaryOp, type ElementType, type Expr, type Stmt, type Variable } from "../ir/ir.ts";
import { allocatorTypes, elementScalars, isStruct, scalars, takesVectorAccess, typeName, vectorElementTypes, vectorTypes, type ElementScalar } from "../ir/types.ts";
import { isComposite, laneCount, loadType, readPart } from "../ir/vectors.ts";
import { collectPending, elementTypeArgument, inlineCompileTimeConsts, isCompileTimeExpr, resolveTypeNode, resolveValueAnnotation, spanOf, withoutPending, withScope, type FunctionContext } from "./context.ts";
import { fieldIndex } from "./lower-struct.ts";
import { lowerSwizzle } from "./lower-vector.ts";
import { adoptHoisted, lowerAtomicStatement } from "./lower-atomics-subgroups.ts";
import {
  compoundAssignments,
  isLiteralLike,
  lowerBinary,
  lowerCondition,
  lowerElementAccess,
  lowerExpected,
  lowerExpr,
  lowerVectorOperand,
  makeLiteral,
} from "./lower-expr.ts";
import { isFragmentAllocation, lowerBarrierOperation, lowerFragmentAllocation, lowerMatrixOperation } from "./lower-matrix.ts";
import { originOf } from "./program.ts";
import { describeSyntax } from "./syntax-names.ts";

export function lowerBlock(context: FunctionContext, statements: readonly Statement[], diagnostics: Diagnostic[], topLevel = false): Stmt[] {
  const out: Stmt[] = [];
  for (const statement of statements) {
    try {
      out.push(...lowerStatement(context, statement, diagnostics, topLevel));
    } catch (error) {
      if (error instanceof AlreadyReported) continue;
      if (!(error instanceof DiagnosticError)) throw error;
      diagnostics.push(error.diagnostic);
    }
  }
  return out;
}

function lowerNested(context: FunctionContext, statement: Statement, diagnostics: Diagnostic[]): Stmt[] {
  return withScope(context, () =>
    Node.isBlock(statement) ? lowerBlock(context, statement.getStatements(), diagnostics) : lowerBlock(context, [statement], diagnostics),
  );
}

/** Lowers a statement whose expressions may hold atomics or collectives: those run first, in source order. */
function withPending(context: FunctionContext, lower: () => Stmt[]): Stmt[] {
  const [pending, stmts] = collectPending(context, lower);
  return [...pending, ...stmts];
}

function lowerStatement(context: FunctionContext, node: Statement, diagnostics: Diagnostic[], topLevel: boolean): Stmt[] {
  const span = spanOf(node);
  if (Node.isVariableStatement(node)) return withPending(context, () => lowerVariableStatement(context, node, topLevel));
  if (Node.isExpressionStatement(node)) return withPending(context, () => lowerExpressionStatement(context, node.getExpression()));
  if (Node.isIfStatement(node)) {
    const [pending, condition] = collectPending(context, () => lowerCondition(context, node.getExpression(), "the condition of 'if'"));
    const thenBody = lowerNested(context, node.getThenStatement(), diagnostics);
    const elseNode = node.getElseStatement();
    const elseBody = elseNode ? lowerNested(context, elseNode, diagnostics) : [];
    return [...pending, { kind: "if", condition, then: thenBody, else: elseBody, span }];
  }
  if (Node.isForStatement(node)) return lowerFor(context, node, diagnostics, false);
  if (Node.isWhileStatement(node)) {
    const [pending, condition] = collectPending(context, () => lowerCondition(context, node.getExpression(), "the condition of 'while'"));
    context.loopDepth++;
    try {
      const body = lowerNested(context, node.getStatement(), diagnostics);
      if (pending.length === 0) return [{ kind: "while", condition, body, span }];
      // The calls in the condition run before each test: `while (true) { calls; if (!c) break; body }`.
      const always: Expr = { kind: "literal", type: "bool", value: 1, span: condition.span };
      return [{ kind: "while", condition: always, body: [...pending, exitUnless(condition), ...body], span }];
    } finally {
      context.loopDepth--;
    }
  }
  if (Node.isBlock(node)) return [{ kind: "block", body: lowerNested(context, node, diagnostics), span }];
  if (Node.isBreakStatement(node) || Node.isContinueStatement(node)) {
    if (node.getLabel()) return fail("TSK1001", span, ["a labelled break or continue"]);
    if (context.loopDepth === 0) return fail("TSK1001", span, [`'${node.getText()}' outside a loop`]);
    return [{ kind: Node.isBreakStatement(node) ? "break" : "continue", span }];
  }
  if (Node.isReturnStatement(node)) return withPending(context, () => [lowerReturn(context, node)]);
  if (Node.isLabeledStatement(node)) {
    const label = node.getLabel().getText();
    const inner = node.getStatement();
    // TypeScript forbids a label inside a loop of the same label, so nested loops use unrollI:, unrollJ:, …
    if (!/^unroll\w*$/.test(label)) {
      return fail("TSK1001", spanOf(node.getLabel()), [`the label '${label}'`], { notes: ["the only labels kernels know are `unroll:` and others starting with unroll (`unrollInner:`)"] });
    }
    if (!Node.isForStatement(inner)) return fail("TSK1015", spanOf(node.getLabel()));
    return lowerFor(context, inner, diagnostics, true);
  }
  if (Node.isEmptyStatement(node)) return [];
  return fail("TSK1001", span, [describeSyntax(node)]);
}

// ---------------------------------------------------------------------------------------------------------
// Declarations

function lowerVariableStatement(context: FunctionContext, node: import("ts-morph").VariableStatement, topLevel: boolean): Stmt[] {
  const kind = node.getDeclarationKind();
  if (kind !== "let" && kind !== "const") {
    for (const declaration of node.getDeclarations()) {
      const nameNode = declaration.getNameNode();
      if (Node.isIdentifier(nameNode)) context.scope.declare(nameNode.getText(), { kind: "poisoned" });
    }
    return fail("TSK1001", spanOf(node), ["'var'"], { notes: ["use let or const"] });
  }
  return node.getDeclarations().flatMap((declaration) => lowerDeclaration(context, declaration, kind === "const", topLevel));
}

function lowerDeclaration(
  context: FunctionContext,
  declaration: import("ts-morph").VariableDeclaration,
  isConst: boolean,
  topLevel: boolean,
): Stmt[] {
  try {
    return lowerDeclarationOrFail(context, declaration, isConst, topLevel);
  } catch (error) {
    // Later uses of the names would only repeat this error in a misleading way.
    const nameNode = declaration.getNameNode();
    if (Node.isIdentifier(nameNode)) context.scope.declare(nameNode.getText(), { kind: "poisoned" });
    if (Node.isArrayBindingPattern(nameNode)) {
      for (const element of nameNode.getElements()) {
        if (Node.isBindingElement(element) && Node.isIdentifier(element.getNameNode())) context.scope.declare(element.getName(), { kind: "poisoned" });
      }
    }
    throw error;
  }
}

function lowerDeclarationOrFail(
  context: FunctionContext,
  declaration: import("ts-morph").VariableDeclaration,
  isConst: boolean,
  topLevel: boolean,
): Stmt[] {
  const span = spanOf(declaration);
  const nameNode = declaration.getNameNode();
  if (Node.isArrayBindingPattern(nameNode)) return lowerVectorLoad(context, declaration, nameNode, isConst);
  if (!Node.isIdentifier(nameNode)) return fail("TSK1001", spanOf(nameNode), [describeSyntax(nameNode)]);
  const name = nameNode.getText();
  const init = declaration.getInitializer();

  if (init && isFragmentAllocation(init)) {
    if (!(isConst && topLevel && context.kind === "kernel")) return fail("TSK1010", spanOf(init), ["fragment"]);
    const array = lowerFragmentAllocation(context, name, init, span);
    context.locals.push(array);
    context.scope.declare(name, { kind: "array", array });
    return [];
  }
  const allocation = init ? arrayAllocation(init) : undefined;
  if (init && allocation) {
    if (!(isConst && topLevel && context.kind === "kernel")) return fail("TSK1010", spanOf(init), [allocation === "shared" ? "shared" : "private (local.…)"]);
    const array = lowerSharedAllocation(context, name, init as import("ts-morph").CallExpression, span, allocation);
    (allocation === "shared" ? context.shared : context.locals).push(array);
    context.scope.declare(name, { kind: "array", array });
    return [];
  }

  const typeNode = declaration.getTypeNode();
  const declared = typeNode ? resolveValueAnnotation(typeNode, name, context.typeArgs) : undefined;
  if (!init && !declared) return fail("TSK1024", span, [name]);
  const value = init
    ? declared
      ? lowerExpected(context, init, declared, (found) => fail("TSK2002", spanOf(init), [found.type, name, declared]))
      : lowerExpr(context, init)
    : undefined;
  const variable: Variable = { kind: "variable", name, type: declared ?? value!.type, mutable: !isConst, span: spanOf(nameNode) };
  context.scope.declare(name, { kind: "variable", variable, why: isConst ? "it is a const" : undefined });
  // A const of literals and Const parameters may size arrays and count waits (inlineCompileTimeConsts).
  if (isConst && value && isCompileTimeExpr(context, value)) (context.compileTimeConsts ??= new Map()).set(variable, inlineCompileTimeConsts(context, value));
  // `const old = atomicAdd(…)`: the atomic declares `old` itself rather than a temporary copied into it.
  const adopted = value ? adoptHoisted(context, value, variable) : undefined;
  if (adopted) return [adopted];
  return [{ kind: "declare", variable, init: value, span }];
}

/** The tskernel function a call expression calls, if it calls one directly. */
function tskernelCallee(context: FunctionContext, node: Expression | undefined): string | undefined {
  if (!node || !Node.isCallExpression(node)) return undefined;
  const callee = node.getExpression();
  if (!Node.isIdentifier(callee) || context.scope.lookup(callee.getText())) return undefined;
  const origin = originOf(callee);
  return origin.kind === "tskernel" ? origin.name : undefined;
}

/** The vector loads and stores, by name, with the elements each moves (ir/types.ts, vectorAccessBytes). */
const vectorLoads: Readonly<Record<string, 4 | 8 | 16>> = { load4: 4, load8: 8, load16: 16 };
const vectorStores: Readonly<Record<string, 4 | 8 | 16>> = { store4: 4, store8: 8, store16: 16 };
/** The asynchronous copies and the elements each moves (16 bytes of 32-, 16- or 8-bit elements). */
const asyncCopies: Readonly<Record<string, 4 | 8 | 16>> = { copyAsync4: 4, copyAsync8: 8, copyAsync16: 16 };

/** `const [x, y, z, w] = load4(array, index)` (and `load8`, `load16`): the only place they may stand. */
function lowerVectorLoad(
  context: FunctionContext,
  declaration: import("ts-morph").VariableDeclaration,
  pattern: import("ts-morph").ArrayBindingPattern,
  isConst: boolean,
): Stmt[] {
  const init = declaration.getInitializer();
  const callee = tskernelCallee(context, init) ?? "";
  const lanes = Object.hasOwn(vectorLoads, callee) ? vectorLoads[callee]! : undefined;
  if (!lanes) return fail("TSK1001", spanOf(pattern), [describeSyntax(pattern)], { notes: ["the one destructuring kernels know is `const [x, y, z, w] = load4(array, index)` (and load8, load16)"] });
  const call = init as import("ts-morph").CallExpression;
  const names = pattern.getElements().map((element) => (Node.isBindingElement(element) && !element.getDotDotDotToken() && !element.getInitializer() && Node.isIdentifier(element.getNameNode()) ? element.getName() : undefined));
  if (names.length !== lanes || names.some((name) => name === undefined)) {
    if (lanes === 4) return fail("TSK1028", spanOf(pattern));
    return fail("TSK2008", spanOf(pattern), [`${callee}()`, `${lanes} names to declare`, `${names.length}`]);
  }
  const args = call.getArguments() as Expression[];
  if (args.length !== 2) return fail("TSK2008", spanOf(call), [callee, "2 arguments (an array and an index)", `${args.length}`]);
  const { array, indices } = lowerVectorOperand(context, args[0]!, args[1]!, callee);
  checkVectorElement(callee, lanes, array, args[0]!);
  const targets = names.map((name, lane): Variable => {
    const element = pattern.getElements()[lane]!;
    return { kind: "variable", name: name!, type: loadType(array.elementType), mutable: !isConst, span: spanOf(element) };
  });
  for (const variable of targets) context.scope.declare(variable.name, { kind: "variable", variable, why: isConst ? "it is a const" : undefined });
  return [{ kind: "vectorLoad", targets, array, indices, span: spanOf(declaration) }];
}

/** `store4`, `copyAsync4` (`8`, `16`), `commitAsync()` and `waitAsync(n)`: statements, like `syncThreads()`. */
function lowerMemoryOperation(context: FunctionContext, name: string, call: import("ts-morph").CallExpression): Stmt[] | undefined {
  const span = spanOf(call);
  const args = call.getArguments() as Expression[];
  const expectCount = (count: number, what: string) => {
    if (args.length !== count) fail("TSK2008", span, [`${name}()`, what, `${args.length} argument(s)`]);
  };
  switch (name) {
    case "store4":
    case "store8":
    case "store16": {
      const lanes = vectorStores[name]!;
      expectCount(lanes + 2, `${lanes + 2} arguments (an array, an index and ${lanes} values)`);
      const { array, indices } = lowerVectorOperand(context, args[0]!, args[1]!, name);
      checkVectorElement(name, lanes, array, args[0]!);
      if (array.access === "read") {
        return fail("TSK1014", spanOf(args[0]!), [args[0]!.getText(), `'${array.name}' is a read-only buffer`], {
          notes: ["declare the parameter as Float32Array (not ReadonlyFloat32Array) to write to it"],
        });
      }
      const values = args.slice(2).map((arg) =>
        lowerExpected(context, arg, loadType(array.elementType), (found) => fail("TSK2002", spanOf(arg), [found.type, `an element of '${array.name}'`, loadType(array.elementType)])),
      );
      return [{ kind: "vectorStore", array, indices, values, span }];
    }
    case "copyAsync4":
    case "copyAsync8":
    case "copyAsync16": {
      expectCount(4, "4 arguments (a shared array, its index, a global buffer, its index)");
      const target = lowerVectorOperand(context, args[0]!, args[1]!, name);
      const source = lowerVectorOperand(context, args[2]!, args[3]!, name);
      // Always 16 bytes (one cp.async): four 32-bit elements, eight 16-bit ones or sixteen 8-bit ones.
      const lanes = asyncCopies[name]!;
      const element = target.array.elementType;
      if (isComposite(element) || scalars[element as ElementScalar].bytes * lanes !== 16) {
        const fitting = isComposite(element) ? undefined : Object.entries(asyncCopies).find(([, n]) => scalars[element as ElementScalar].bytes * n === 16)?.[0];
        fail("TSK2011", spanOf(args[0]!), [`${name}()`, typeName(element)], {
          notes: [`${name}() copies 16 bytes: ${lanes} elements of ${128 / lanes} bits${fitting ? `; ${element} arrays take ${fitting}()` : ""}`],
        });
      }
      const describe = (space: string) => (space === "private" ? "a private array" : space === "shared" ? "a shared array" : "a global buffer");
      if (target.array.space !== "shared") return fail("TSK1029", spanOf(args[0]!), [name, target.array.name, describe(target.array.space)]);
      if (source.array.space !== "global") return fail("TSK1029", spanOf(args[2]!), [name, source.array.name, describe(source.array.space)]);
      if (source.array.elementType !== target.array.elementType) {
        return fail("TSK2008", spanOf(args[2]!), [name, `a buffer of ${typeName(target.array.elementType)} like '${target.array.name}'`, typeName(source.array.elementType)]);
      }
      return [{ kind: "asyncCopy", target: target.array, targetIndices: target.indices, source: source.array, sourceIndices: source.indices, span }];
    }
    case "commitAsync":
      expectCount(0, "no arguments");
      return [{ kind: "asyncCommit", span }];
    case "waitAsync": {
      expectCount(1, "1 argument (how many committed groups may still be in flight)");
      const pending = lowerExpr(context, args[0]!, "i32");
      const expected = ["waitAsync()", "a whole number from 0 to 7 known at compile time (a literal, or an expression of Const parameters)", `'${args[0]!.getText()}'`];
      if (!isInteger(pending.type)) return fail("TSK2008", spanOf(args[0]!), expected);
      if (pending.kind === "literal") {
        if (pending.value < 0 || pending.value > 7) return fail("TSK2008", spanOf(args[0]!), expected);
        return [{ kind: "asyncWait", pending: pending.value, span }];
      }
      // An expression of Const parameters (waitAsync(STAGES - 2)) is folded when the kernel is specialized.
      if (!isCompileTimeExpr(context, pending)) return fail("TSK2008", spanOf(args[0]!), expected);
      return [{ kind: "asyncWait", pending: 0, pendingExpr: inlineCompileTimeConsts(context, pending), span }];
    }
    default:
      return undefined;
  }
}

/** Each vector access takes the element sizes of ir/types.ts's vectorAccessBytes: others are TSK2011. */
function checkVectorElement(what: string, lanes: 4 | 8 | 16, array: ArrayRef, node: Expression): void {
  const element = array.elementType;
  // lowerVectorOperand refused vector and struct elements already.
  if (isComposite(element) || takesVectorAccess(lanes, element)) return;
  const fits = ([4, 8, 16] as const).filter((n) => takesVectorAccess(n, element)).map((n) => `${what.replace(/\d+$/, "")}${n}`);
  fail("TSK2011", spanOf(node), [`${what}()`, element], {
    notes: [fits.length > 0 ? `${element} arrays take ${fits.join(" and ")}: 16 bytes are ${16 / Math.max(1, scalars[element].bytes)} elements` : `${element} arrays have no vector accesses`],
  });
}

/** `shared.f32(…)` or `local.f32(…)`: which kind of array a declaration allocates, if any. */
function arrayAllocation(node: Expression): "shared" | "local" | undefined {
  if (!Node.isCallExpression(node)) return undefined;
  const callee = node.getExpression();
  if (!Node.isPropertyAccessExpression(callee)) return undefined;
  const object = callee.getExpression();
  if (!Node.isIdentifier(object)) return undefined;
  const origin = originOf(object);
  return origin.kind === "tskernel" && (origin.name === "shared" || origin.name === "local") ? origin.name : undefined;
}

function lowerSharedAllocation(
  context: FunctionContext,
  name: string,
  call: import("ts-morph").CallExpression,
  span: import("../ir/ir.ts").Span,
  allocation: "shared" | "local",
): ArrayRef {
  const callee = call.getExpression() as import("ts-morph").PropertyAccessExpression;
  const allocator = callee.getName();
  if (allocation === "shared" && allocator === "barriers") return lowerBarrierAllocation(context, name, call, span);
  const elementType = allocatedElement(context, allocation, callee, call);
  const args = call.getArguments() as Expression[];
  const maxDims = allocation === "shared" ? 2 : 1;
  if (args.length < 1 || args.length > maxDims) {
    return fail("TSK2008", spanOf(call), [`${allocation}.${allocator}`, maxDims === 2 ? "1 or 2 sizes" : "1 size", `${args.length}`]);
  }
  // Sizes stay expressions here; the validator requires them to be constant once specialized (TSK3003).
  const dims = args.map((arg) => {
    const dim = lowerExpr(context, arg, isLiteralLike(arg) ? "i32" : undefined);
    if (dim.type !== "i32" && dim.type !== "u32") fail("TSK2008", spanOf(arg), ["a shared array size", "i32", dim.type]);
    return inlineCompileTimeConsts(context, dim);
  });
  return { kind: "array", name, elementType, space: allocation === "shared" ? "shared" : "private", access: "read_write", dims, span };
}

/**
 * The element type of `shared.f32(…)`, `shared.vec3f(…)` or `shared.array<Particle>(…)` (and `local.…`): a
 * scalar's or a vector's allocator, or the type argument of `array` (any type with a memory layout).
 */
function allocatedElement(context: FunctionContext, allocation: "shared" | "local", callee: import("ts-morph").PropertyAccessExpression, call: import("ts-morph").CallExpression): ElementType {
  const allocator = callee.getName();
  const scalar = allocatorTypes.get(allocator);
  if (scalar) return scalar;
  const vector = vectorTypes.get(allocator);
  if (vector && vector.element !== "bool") return vector;
  const typeArgs = call.getTypeArguments();
  if (allocator === "of" && typeArgs.length === 1) {
    // shared.of<T>(n): T is the kernel's type parameter (bound in this instance) or an element type's name.
    const element = elementTypeArgument(typeArgs[0]!, context.typeArgs ?? new Map());
    if (element) return element;
    return fail("TSK1141", spanOf(typeArgs[0]!), [typeArgs[0]!.getText(), `${allocation}.of<T>`, elementScalars.map((t) => `"${t}"`).join(", ")]);
  }
  if (allocator === "array" && typeArgs.length === 1) {
    const resolved = resolveTypeNode(typeArgs[0]!, context.typeArgs);
    if (resolved?.kind === "scalar" && hasLayout(resolved.type)) return resolved.type as ElementType;
    return fail("TSK1159", spanOf(typeArgs[0]!), [typeArgs[0]!.getText(), `the element of ${allocation === "shared" ? "a shared" : "a private"} array`]);
  }
  return fail("TSK1001", spanOf(callee), [`${allocation}.${allocator}`], {
    notes: [`${allocation} arrays are ${[...allocatorTypes.keys()].map((m) => `${allocation}.${m}`).join(", ")}, ${allocation}.vec4f and the other vectors of numbers, or ${allocation}.array<T>(…) of a struct T`],
  });
}

/** Whether values of a type can lie in memory: every type but bool and the bool vectors. */
function hasLayout(type: import("../ir/ir.ts").Type): boolean {
  return laneCount(type) === 0 || (typeof type === "string" ? type !== "bool" : type.kind === "vector" && type.element !== "bool");
}

/** `shared.barriers(count)`: a shared u32 array of `count` mbarriers, marked as such (ir.ts, `ArrayRef.barriers`). */
function lowerBarrierAllocation(context: FunctionContext, name: string, call: import("ts-morph").CallExpression, span: import("../ir/ir.ts").Span): ArrayRef {
  const args = call.getArguments() as Expression[];
  if (args.length !== 1) return fail("TSK2008", spanOf(call), ["shared.barriers", "1 count", `${args.length}`]);
  const count = lowerExpr(context, args[0]!, isLiteralLike(args[0]!) ? "i32" : undefined);
  if (!isInteger(count.type)) return fail("TSK2008", spanOf(args[0]!), ["shared.barriers", "an i32 count", count.type]);
  return { kind: "array", name, elementType: "u32", space: "shared", access: "read_write", dims: [count], barriers: true, span };
}

// ---------------------------------------------------------------------------------------------------------
// Assignments and calls

function lowerExpressionStatement(context: FunctionContext, expression: Expression): Stmt[] {
  const span = spanOf(expression);
  if (Node.isCallExpression(expression)) {
    const callee = expression.getExpression();
    if (Node.isIdentifier(callee) && !context.scope.lookup(callee.getText())) {
      const origin = originOf(callee);
      if (origin.kind === "tskernel" && origin.name === "syncThreads") {
        if (context.kind === "helper") return fail("TSK1018", span, [context.name]);
        if (expression.getArguments().length !== 0) return fail("TSK2008", span, ["syncThreads()", "no arguments", `${expression.getArguments().length}`]);
        return [{ kind: "barrier", span }];
      }
      if (origin.kind === "tskernel" && origin.name === "syncCluster") {
        if (context.kind === "helper") return fail("TSK1018", span, [context.name]);
        if (expression.getArguments().length !== 0) return fail("TSK2008", span, ["syncCluster()", "no arguments", `${expression.getArguments().length}`]);
        return [{ kind: "barrier", scope: "cluster", span }];
      }
      if (origin.kind === "tskernel" && origin.name === "syncWarpgroup") {
        if (context.kind === "helper") return fail("TSK1031", span, ["syncWarpgroup()", context.name]);
        if (expression.getArguments().length !== 0) return fail("TSK2008", span, ["syncWarpgroup()", "no arguments", `${expression.getArguments().length}`]);
        return [{ kind: "barrier", scope: "warpgroup", span }];
      }
      if (origin.kind === "tskernel" && origin.name === "threadFence") {
        if (context.kind === "helper") return fail("TSK1031", span, ["threadFence()", context.name], { notes: ["helper functions cannot reach arrays, so there is nothing for a fence to order there: fence in the kernel"] });
        if (expression.getArguments().length !== 0) return fail("TSK2008", span, ["threadFence()", "no arguments", `${expression.getArguments().length}`]);
        return [{ kind: "fence", span }];
      }
      if (origin.kind === "tskernel") {
        const lowered =
          lowerMemoryOperation(context, origin.name, expression) ??
          lowerMatrixOperation(context, origin.name, expression) ??
          lowerBarrierOperation(context, origin.name, expression) ??
          lowerAtomicStatement(context, origin.name, expression);
        if (lowered) return lowered;
      }
    }
    // Anything else a call could be is a pure function; calling it for nothing is a mistake.
    lowerExpr(context, expression);
    return fail("TSK1001", span, ["a call whose result is unused"], { notes: ["helper functions have no side effects"] });
  }
  if (Node.isBinaryExpression(expression)) {
    const token = expression.getOperatorToken().getKind();
    if (token === SyntaxKind.EqualsToken) return [lowerAssignment(context, expression.getLeft(), undefined, expression.getRight(), span)];
    const op = compoundAssignments.get(token);
    if (op) return [lowerAssignment(context, expression.getLeft(), op, expression.getRight(), span)];
    if (/^(\*\*|&&|\|\||\?\?)=$/.test(expression.getOperatorToken().getText())) {
      const operator = expression.getOperatorToken();
      return fail("TSK1001", spanOf(operator), [`the '${operator.getText()}' operator`], {
        notes: operator.getText() === "**=" ? ["write x = x ** y (f32), or Math.pow"] : ["write the assignment out with an if"],
      });
    }
  }
  if (Node.isPrefixUnaryExpression(expression) || Node.isPostfixUnaryExpression(expression)) {
    const token = expression.getOperatorToken();
    if (token === SyntaxKind.PlusPlusToken || token === SyntaxKind.MinusMinusToken) {
      return [lowerIncrement(context, expression.getOperand(), token === SyntaxKind.PlusPlusToken ? "add" : "sub", span)];
    }
  }
  lowerExpr(context, expression);
  return fail("TSK1001", span, ["an expression statement that does nothing"]);
}

/**
 * The place an assignment writes: a mutable local or an element of a writable array, or with `path` a part
 * of either (`v.x`, `p.pos.xy`, `particles[i].mass`); `read` reads the place.
 */
type Target =
  | { readonly kind: "variable"; readonly variable: Variable; readonly path: readonly Access[]; readonly read: Expr }
  | { readonly kind: "element"; readonly array: ArrayRef; readonly indices: Expr[]; readonly path: readonly Access[]; readonly read: Expr };

function lowerTarget(context: FunctionContext, node: Expression): Target {
  const span = spanOf(node);
  if (Node.isParenthesizedExpression(node)) return lowerTarget(context, node.getExpression());
  if (Node.isIdentifier(node)) {
    const name = node.getText();
    const binding = context.scope.lookup(name);
    if (binding?.kind === "poisoned") throw new AlreadyReported();
    if (binding?.kind === "variable") {
      if (!binding.variable.mutable) return fail("TSK1014", span, [name, binding.why ?? "it is read-only"]);
      return { kind: "variable", variable: binding.variable, path: [], read: { kind: "variable", type: binding.variable.type, variable: binding.variable, span } };
    }
    if (binding?.kind === "const") return fail("TSK1014", span, [name, "it is a compile-time constant"]);
    if (binding?.kind === "array") return fail("TSK1014", span, [name, "arrays are assigned element by element"]);
    return fail("TSK1006", span, [name]);
  }
  if (Node.isElementAccessExpression(node)) {
    const { array, indices } = lowerElementAccess(context, node);
    if (array.access === "read") {
      return fail("TSK1014", span, [node.getText(), `'${array.name}' is a read-only buffer`], {
        notes: ["declare the parameter as Float32Array (not ReadonlyFloat32Array) to write to it"],
      });
    }
    return { kind: "element", array, indices, path: [], read: { kind: "load", type: loadType(array.elementType), array, indices, span } };
  }
  if (Node.isPropertyAccessExpression(node) && isPlace(context, node.getExpression())) return lowerPartTarget(context, node);
  return fail("TSK1001", span, [`assigning to ${describeSyntax(node)}`]);
}

/** Whether a node names a place a part of which may be assigned: a local, an array element, or a part of one. */
function isPlace(context: FunctionContext, node: Expression): boolean {
  if (Node.isParenthesizedExpression(node)) return isPlace(context, node.getExpression());
  if (Node.isIdentifier(node)) return ["variable", "poisoned"].includes(context.scope.lookup(node.getText())?.kind ?? "");
  return Node.isElementAccessExpression(node) || (Node.isPropertyAccessExpression(node) && isPlace(context, node.getExpression()));
}

/**
 * `base.name` as a place: a field of a struct, or lanes of a vector, which must be distinct (`v.xy = …`, not
 * `v.xx = …`). A swizzle of a swizzle is one step, its lanes composed.
 */
function lowerPartTarget(context: FunctionContext, node: import("ts-morph").PropertyAccessExpression): Target {
  const span = spanOf(node);
  const base = lowerTarget(context, node.getExpression());
  const name = node.getName();
  const nameSpan = spanOf(node.getNameNode());
  const type = base.read.type;
  let path: Access[];
  if (isStruct(type)) {
    path = [...base.path, { kind: "field", field: fieldIndex(type, name, nameSpan) }];
  } else if (laneCount(type) > 1) {
    const lanes = (lowerSwizzle(base.read, name, nameSpan, span) as Expr & { kind: "swizzle" }).lanes;
    if (new Set(lanes).size !== lanes.length) return fail("TSK1156", nameSpan, [node.getText(), "the lanes of an assigned swizzle must be distinct"]);
    const last = base.path[base.path.length - 1];
    path = last?.kind === "swizzle" ? [...base.path.slice(0, -1), { kind: "swizzle", lanes: lanes.map((lane) => last.lanes[lane]!) }] : [...base.path, { kind: "swizzle", lanes }];
  } else {
    return fail("TSK1001", span, [`assigning to ${describeSyntax(node)}`]);
  }
  const whole = base.kind === "variable" ? { kind: "variable" as const, type: base.variable.type, variable: base.variable, span } : { kind: "load" as const, type: loadType(base.array.elementType), array: base.array, indices: base.indices, span };
  return { ...base, path, read: readPart(whole, path, span) };
}

function lowerAssignment(
  context: FunctionContext,
  targetNode: Expression,
  op: BinaryOp | "ushr" | undefined,
  valueNode: Expression,
  span: import("../ir/ir.ts").Span,
): Stmt {
  const target = lowerTarget(context, targetNode);
  const type = target.read.type;
  let assignOp: BinaryOp | undefined;
  let value: Expr;
  if (op === undefined) {
    value = lowerExpected(context, valueNode, type, (found) => fail("TSK2002", spanOf(valueNode), [found.type, targetNode.getText(), type]));
  } else {
    // Type `target op value` as the binary expression it abbreviates; keep the short form when it is one.
    const combined = lowerBinary(context, op, targetNode, valueNode, type, span, target.read);
    if (combined.type !== type) return fail("TSK2002", span, [combined.type, targetNode.getText(), type]);
    if (combined.kind === "binary" && combined.left === target.read) {
      assignOp = combined.op;
      value = combined.right;
    } else {
      value = combined;
    }
  }
  return makeAssign(target, assignOp, value, span);
}

function lowerIncrement(context: FunctionContext, operand: Expression, op: "add" | "sub", span: import("../ir/ir.ts").Span): Stmt {
  const target = lowerTarget(context, operand);
  const type = target.read.type;
  if (type === "bool" || isComposite(type)) return fail("TSK2005", span, [op === "add" ? "++" : "--", type]);
  return makeAssign(target, op, makeLiteral(1, type, span, "1"), span);
}

function makeAssign(target: Target, op: BinaryOp | undefined, value: Expr, span: import("../ir/ir.ts").Span): Stmt {
  const path = target.path.length > 0 ? { path: target.path } : {};
  return target.kind === "variable"
    ? { kind: "assign", variable: target.variable, ...path, op, value, span }
    : { kind: "store", array: target.array, indices: target.indices, ...path, op, value, span };
}

// ---------------------------------------------------------------------------------------------------------
// Loops and returns

function lowerFor(context: FunctionContext, node: import("ts-morph").ForStatement, diagnostics: Diagnostic[], unroll: boolean): Stmt[] {
  const span = spanOf(node);
  return withScope(context, () => {
    const initializer = node.getInitializer();
    let init: Stmt[] = [];
    // Calls hoisted from the initializer run once, before the loop.
    const [initPending] = collectPending(context, () => {
      if (!initializer) return;
      if (Node.isVariableDeclarationList(initializer)) {
        const kind = initializer.getDeclarationKind();
        if (kind !== "let" && kind !== "const") fail("TSK1001", spanOf(initializer), ["'var'"], { notes: ["use let"] });
        init = initializer.getDeclarations().flatMap((d) => lowerDeclaration(context, d, kind === "const", false));
      } else {
        init = lowerExpressionStatement(context, initializer as Expression);
      }
    });
    const conditionNode = node.getCondition();
    const [conditionPending, condition] = collectPending(context, () => (conditionNode ? lowerCondition(context, conditionNode, "the condition of 'for'") : undefined));
    const incrementor = node.getIncrementor();
    const update = incrementor ? withoutPending(context, "in the update of a 'for' loop", () => lowerExpressionStatement(context, incrementor)) : [];
    context.loopDepth++;
    try {
      const body = lowerNested(context, node.getStatement(), diagnostics);
      // As for `while`: calls in the condition run before each test, at the top of the body.
      const loop: Stmt =
        conditionPending.length === 0
          ? { kind: "for", init, condition, update, body, unroll, span }
          : { kind: "for", init, condition: undefined, update, body: [...conditionPending, exitUnless(condition!), ...body], unroll, span };
      return initPending.length === 0 ? [loop] : [{ kind: "block", body: [...initPending, loop], span }];
    } finally {
      context.loopDepth--;
    }
  });
}

/** `if (!condition) break;` */
function exitUnless(condition: Expr): Stmt {
  const negated: Expr = { kind: "unary", op: "not", type: "bool", operand: condition, span: condition.span };
  return { kind: "if", condition: negated, then: [{ kind: "break", span: condition.span }], else: [], span: condition.span };
}

function lowerReturn(context: FunctionContext, node: import("ts-morph").ReturnStatement): Stmt {
  const span = spanOf(node);
  const valueNode = node.getExpression();
  if (context.kind === "kernel") {
    if (valueNode) return fail("TSK1021", spanOf(valueNode), [valueNode.getText()]);
    return { kind: "return", span };
  }
  const returnType = context.returnType!;
  if (!valueNode) return fail("TSK2009", span, [context.name, returnType, "nothing"]);
  const value = lowerExpected(context, valueNode, returnType, (found) => fail("TSK2009", spanOf(valueNode), [context.name, returnType, found.type]));
  return { kind: "return", value, span };
}
