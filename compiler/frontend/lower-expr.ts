/**
 * Lowers TypeScript expressions to typed IR expressions, deciding every type on the way.
 *
 * The rules (docs/language.md, "Types"): a numeric literal takes the type its context needs (the other
 * operand of an operator, the declared type of the variable, the parameter it is passed to), or i32/f32 by
 * its spelling when nothing decides; no value changes type implicitly; conditions are bool. Anything that is
 * not a known expression form is a located TSK1001. Assignments and `++`/`--` are statements, so meeting one
 * here is TSK1011.
 */

import { Node, SyntaxKind, type Expression, type Identifier } from "ts-morph";
import { AlreadyReported, fail } from "../diagnostics/diagnostic.ts";
import {
  isInteger,
  isNumeric,
  type ArrayRef,
  type BinaryOp,
  type Expr,
  type IntrinsicName,
  type ScalarType,
  type Span,
  type Type,
  scalars,
} from "../ir/ir.ts";
import { wrap } from "../ir/semantics.ts";
import { conversionTypes, isFloat, isStruct, typeName, valueTypeOf } from "../ir/types.ts";
import { isComposite, laneCount, loadType } from "../ir/vectors.ts";
import { elementTypeArgument, spanOf, withoutPending, type FunctionContext } from "./context.ts";
import { lowerSpecialCall, lowerSubgroupBuiltin } from "./lower-atomics-subgroups.ts";
import { lowerHelperCall } from "./lower-helper.ts";
import { lowerMember, lowerStructLiteral, structLiteralWithoutType } from "./lower-struct.ts";
import { isVectorFunction, lowerVectorCall } from "./lower-vector.ts";
import { lowerFragmentElementExpr } from "./lower-fragment-elements.ts";
import { originOf } from "./program.ts";
import { describeSyntax } from "./syntax-names.ts";

// ---------------------------------------------------------------------------------------------------------
// Tables

export const binaryOperators: ReadonlyMap<SyntaxKind, BinaryOp | "ushr" | "pow"> = new Map<SyntaxKind, BinaryOp | "ushr" | "pow">([
  [SyntaxKind.PlusToken, "add"],
  [SyntaxKind.MinusToken, "sub"],
  [SyntaxKind.AsteriskToken, "mul"],
  [SyntaxKind.SlashToken, "div"],
  [SyntaxKind.PercentToken, "rem"],
  [SyntaxKind.AmpersandToken, "and"],
  [SyntaxKind.BarToken, "or"],
  [SyntaxKind.CaretToken, "xor"],
  [SyntaxKind.LessThanLessThanToken, "shl"],
  [SyntaxKind.GreaterThanGreaterThanToken, "shr"],
  [SyntaxKind.GreaterThanGreaterThanGreaterThanToken, "ushr"],
  [SyntaxKind.EqualsEqualsEqualsToken, "eq"],
  [SyntaxKind.EqualsEqualsToken, "eq"],
  [SyntaxKind.ExclamationEqualsEqualsToken, "ne"],
  [SyntaxKind.ExclamationEqualsToken, "ne"],
  [SyntaxKind.LessThanToken, "lt"],
  [SyntaxKind.LessThanEqualsToken, "le"],
  [SyntaxKind.GreaterThanToken, "gt"],
  [SyntaxKind.GreaterThanEqualsToken, "ge"],
  [SyntaxKind.AmpersandAmpersandToken, "logand"],
  [SyntaxKind.BarBarToken, "logor"],
  [SyntaxKind.AsteriskAsteriskToken, "pow"],
]);

export const compoundAssignments: ReadonlyMap<SyntaxKind, BinaryOp | "ushr"> = new Map<SyntaxKind, BinaryOp | "ushr">([
  [SyntaxKind.PlusEqualsToken, "add"],
  [SyntaxKind.MinusEqualsToken, "sub"],
  [SyntaxKind.AsteriskEqualsToken, "mul"],
  [SyntaxKind.SlashEqualsToken, "div"],
  [SyntaxKind.PercentEqualsToken, "rem"],
  [SyntaxKind.AmpersandEqualsToken, "and"],
  [SyntaxKind.BarEqualsToken, "or"],
  [SyntaxKind.CaretEqualsToken, "xor"],
  [SyntaxKind.LessThanLessThanEqualsToken, "shl"],
  [SyntaxKind.GreaterThanGreaterThanEqualsToken, "shr"],
  [SyntaxKind.GreaterThanGreaterThanGreaterThanEqualsToken, "ushr"],
]);

const assignmentTokens: ReadonlySet<SyntaxKind> = new Set([
  SyntaxKind.EqualsToken,
  ...compoundAssignments.keys(),
  SyntaxKind.AsteriskAsteriskEqualsToken,
  SyntaxKind.AmpersandAmpersandEqualsToken,
  SyntaxKind.BarBarEqualsToken,
  SyntaxKind.QuestionQuestionEqualsToken,
]);

/** Operator spellings for messages. */
export const operatorSpelling: Readonly<Record<BinaryOp | "ushr" | "pow", string>> = {
  add: "+", sub: "-", mul: "*", div: "/", rem: "%", and: "&", or: "|", xor: "^", shl: "<<", shr: ">>",
  ushr: ">>>", eq: "===", ne: "!==", lt: "<", le: "<=", gt: ">", ge: ">=", logand: "&&", logor: "||", pow: "**",
};

interface MathFunction {
  readonly intrinsic: IntrinsicName;
  readonly arity: number;
  /** `float`: f32 only; `numeric`: f32, i32 or u32, all arguments of one type. */
  readonly domain: "float" | "numeric";
  /** min and max take two or more arguments and fold left. */
  readonly variadic?: boolean;
}

const mathFunctions: Readonly<Record<string, MathFunction>> = {
  sqrt: { intrinsic: "sqrt", arity: 1, domain: "float" },
  abs: { intrinsic: "abs", arity: 1, domain: "numeric" },
  min: { intrinsic: "min", arity: 2, domain: "numeric", variadic: true },
  max: { intrinsic: "max", arity: 2, domain: "numeric", variadic: true },
  floor: { intrinsic: "floor", arity: 1, domain: "float" },
  ceil: { intrinsic: "ceil", arity: 1, domain: "float" },
  trunc: { intrinsic: "trunc", arity: 1, domain: "float" },
  exp: { intrinsic: "exp", arity: 1, domain: "float" },
  log: { intrinsic: "log", arity: 1, domain: "float" },
  log2: { intrinsic: "log2", arity: 1, domain: "float" },
  pow: { intrinsic: "pow", arity: 2, domain: "float" },
  sin: { intrinsic: "sin", arity: 1, domain: "float" },
  cos: { intrinsic: "cos", arity: 1, domain: "float" },
  tan: { intrinsic: "tan", arity: 1, domain: "float" },
  tanh: { intrinsic: "tanh", arity: 1, domain: "float" },
  atan2: { intrinsic: "atan2", arity: 2, domain: "float" },
  sign: { intrinsic: "sign", arity: 1, domain: "float" },
};

const mathConstants: Readonly<Record<string, number>> = {
  PI: Math.PI, E: Math.E, LN2: Math.LN2, LN10: Math.LN10, LOG2E: Math.LOG2E, LOG10E: Math.LOG10E,
  SQRT2: Math.SQRT2, SQRT1_2: Math.SQRT1_2,
};

/**
 * The note of a TSK2001 (operands of two types): the conversions that would make them meet. Between a float
 * narrower or wider than f32 and another type it names the conversion of each side, which is what such a
 * kernel usually misses: `f32(h)` widens an f16 or bf16 exactly, `f16(x)` rounds.
 */
export function mixedTypesNote(a: Type, b: Type): string {
  if (isComposite(a) || isComposite(b)) return "tskernel never converts implicitly: build the value of the type wanted";
  const involved = [a, b].filter((type) => type === "f16" || type === "bf16" || type === "f64");
  if (involved.length === 0) return "tskernel never converts implicitly: write f32(…), i32(…) or u32(…)";
  const [first, second] = [scalars[a].typescript.conversion, scalars[b].typescript.conversion];
  return `tskernel never converts implicitly: convert one side, ${first}(…) of the ${b} or ${second}(…) of the ${a}`;
}

// ---------------------------------------------------------------------------------------------------------
// Literals

const i32Min = -2147483648;
const i32Max = 2147483647;
const u32Max = 4294967295;

/**
 * True for expressions made only of numeric literals and module-level numeric constants (which stand for
 * their literal, docs/language.md section 14): their type comes from the context, the other operand included.
 */
export function isLiteralLike(node: Node): boolean {
  if (Node.isNumericLiteral(node)) return true;
  if (Node.isIdentifier(node)) {
    const init = moduleConstantInitializer(node);
    return init !== undefined && isPlainNumber(init);
  }
  if (Node.isParenthesizedExpression(node)) return isLiteralLike(node.getExpression());
  if (Node.isPrefixUnaryExpression(node)) {
    const op = node.getOperatorToken();
    return (op === SyntaxKind.MinusToken || op === SyntaxKind.PlusToken || op === SyntaxKind.TildeToken) && isLiteralLike(node.getOperand());
  }
  if (Node.isBinaryExpression(node)) {
    const op = binaryOperators.get(node.getOperatorToken().getKind());
    return op !== undefined && !["eq", "ne", "lt", "le", "gt", "ge", "logand", "logor"].includes(op)
      && isLiteralLike(node.getLeft()) && isLiteralLike(node.getRight());
  }
  return false;
}

export function makeLiteral(value: number, type: ScalarType, span: Span, spelling: string): Expr {
  switch (type) {
    case "bool":
      return fail("TSK2004", span, [spelling, "bool"], { notes: ["use true or false"] });
    case "f32":
      if (!Number.isFinite(Math.fround(value))) {
        return fail("TSK2004", span, [spelling, "f32"], { notes: ["an f32 holds magnitudes up to 3.4028235e38"] });
      }
      return { kind: "literal", type, value: Math.fround(value), span };
    case "i32":
      if (!Number.isInteger(value) || value < i32Min || value > i32Max) {
        return fail("TSK2004", span, [spelling, "i32"], {
          notes: Number.isInteger(value) ? ["an i32 holds -2147483648 to 2147483647"] : ["convert explicitly, e.g. i32(x), or write the variable as f32"],
        });
      }
      return { kind: "literal", type, value, span };
    case "u32":
      if (!Number.isInteger(value) || value < 0 || value > u32Max) {
        return fail("TSK2004", span, [spelling, "u32"], { notes: ["a u32 holds 0 to 4294967295"] });
      }
      return { kind: "literal", type, value, span };
    case "f16":
    case "bf16":
    case "f64": {
      // Rounded to the type, as every value of it is (ir/semantics.ts); one that rounds to infinity does not fit.
      const rounded = wrap(type, value);
      if (!Number.isFinite(rounded)) {
        return fail("TSK2004", span, [spelling, type], { notes: [`${type} values have magnitudes up to ${scalars[type].float!.maxFinite}`] });
      }
      return { kind: "literal", type, value: rounded, span };
    }
  }
}

/** The scalar a literal takes from a hint: the hint itself, or a vector's element (`add(v, 1)`). */
function scalarHint(hint: Type | undefined): ScalarType | undefined {
  if (hint === undefined || isStruct(hint)) return undefined;
  return typeof hint === "string" ? hint : hint.element;
}

function lowerNumericLiteral(text: string, negate: boolean, typeHint: Type | undefined, span: Span): Expr {
  const clean = text.replace(/_/g, "");
  const value = (negate ? -1 : 1) * Number(clean);
  const floatForm = !/^0[xXoObB]/.test(clean) && /[.eE]/.test(clean);
  const hint = scalarHint(typeHint);
  let type: ScalarType = hint ?? (floatForm ? "f32" : "i32");
  if (hint === undefined && type === "i32" && value > i32Max && value <= u32Max) type = "u32";
  return makeLiteral(value, type, span, negate ? `-${text}` : text);
}

// ---------------------------------------------------------------------------------------------------------
// Expressions

export function lowerExpr(context: FunctionContext, node: Expression, hint?: Type): Expr {
  const span = spanOf(node);
  switch (node.getKind()) {
    case SyntaxKind.NumericLiteral:
      return lowerNumericLiteral(node.getText(), false, hint, span);
    case SyntaxKind.TrueKeyword:
      return { kind: "literal", type: "bool", value: 1, span };
    case SyntaxKind.FalseKeyword:
      return { kind: "literal", type: "bool", value: 0, span };
    case SyntaxKind.ParenthesizedExpression:
      return lowerExpr(context, (node as import("ts-morph").ParenthesizedExpression).getExpression(), hint);
    case SyntaxKind.Identifier:
      return lowerIdentifier(context, node as Identifier, hint);
    case SyntaxKind.PrefixUnaryExpression:
      return lowerPrefixUnary(context, node as import("ts-morph").PrefixUnaryExpression, hint);
    case SyntaxKind.PostfixUnaryExpression:
      return fail("TSK1011", span, [`'${node.getText()}'`], { notes: ["write the increment as its own statement"] });
    case SyntaxKind.BinaryExpression:
      return lowerBinaryExpression(context, node as import("ts-morph").BinaryExpression, hint);
    case SyntaxKind.ConditionalExpression:
      return lowerConditional(context, node as import("ts-morph").ConditionalExpression, hint);
    case SyntaxKind.CallExpression:
      return lowerCall(context, node as import("ts-morph").CallExpression, hint);
    case SyntaxKind.ElementAccessExpression: {
      const { array, indices } = lowerElementAccess(context, node as import("ts-morph").ElementAccessExpression);
      return { kind: "load", type: loadType(array.elementType), array, indices, span };
    }
    case SyntaxKind.PropertyAccessExpression:
      return lowerPropertyAccess(context, node as import("ts-morph").PropertyAccessExpression);
    case SyntaxKind.ObjectLiteralExpression: {
      const literal = node as import("ts-morph").ObjectLiteralExpression;
      return hint !== undefined && isStruct(hint) ? lowerStructLiteral(context, literal, hint) : structLiteralWithoutType(literal, hint);
    }
    default:
      return fail("TSK1001", span, [describeSyntax(node)]);
  }
}

/** Lowers `node` and requires the result to have `type`; `mismatch` reports it otherwise. */
export function lowerExpected(
  context: FunctionContext,
  node: Expression,
  type: Type,
  mismatch: (found: Expr) => never,
): Expr {
  const expr = lowerExpr(context, node, type);
  return expr.type === type ? expr : mismatch(expr);
}

export function lowerCondition(context: FunctionContext, node: Expression, what: string): Expr {
  return lowerExpected(context, node, "bool", (found) =>
    fail("TSK2003", spanOf(node), [what, found.type], {
      notes: isNumeric(found.type) ? [`compare explicitly, e.g. \`${node.getText()} !== 0\``] : [],
    }),
  );
}

/**
 * Lowers the operands of one operator so that they share a type: operands that are not literal-like are
 * lowered first and decide the type; literals then take it. Reports TSK2001 when the types differ.
 */
export function lowerOperands(
  context: FunctionContext,
  nodes: readonly Expression[],
  hint: Type | undefined,
  operator: string,
  span: Span,
): Expr[] {
  const lowered: (Expr | undefined)[] = nodes.map((node) => (isLiteralLike(node) ? undefined : lowerExpr(context, node, hint)));
  const decided = lowered.find((expr) => expr !== undefined)?.type ?? hint;
  const all = nodes.map((node, index) => lowered[index] ?? lowerExpr(context, node, decided));
  const first = all[0]!;
  for (const other of all.slice(1)) {
    if (other.type !== first.type) {
      fail("TSK2001", span, [operator, first.type, other.type], { notes: [mixedTypesNote(first.type, other.type)] });
    }
  }
  return all;
}

function lowerIdentifier(context: FunctionContext, node: Identifier, hint: Type | undefined): Expr {
  const span = spanOf(node);
  const name = node.getText();
  const binding = context.scope.lookup(name);
  if (binding?.kind === "poisoned") throw new AlreadyReported();
  if (binding?.kind === "variable") return { kind: "variable", type: binding.variable.type, variable: binding.variable, span };
  if (binding?.kind === "const") {
    if (binding.value !== undefined) {
      return typeof binding.value === "boolean"
        ? { kind: "literal", type: "bool", value: binding.value ? 1 : 0, span }
        : makeLiteral(binding.value, binding.type, span, name);
    }
    return { kind: "constRef", type: binding.type, name: binding.name, span };
  }
  if (binding?.kind === "array") {
    return fail("TSK1025", span, [name, binding.array.space === "global" ? "a buffer" : `a ${binding.array.space === "shared" ? "shared" : "private"} array`], {
      notes: binding.array.space === "global" ? ["pass sizes as scalar parameters; a buffer's length is not available in kernels"] : [],
    });
  }
  if (binding === undefined) {
    const origin = originOf(node);
    const builtin = origin.kind === "tskernel" ? lowerSubgroupBuiltin(context, origin.name, node) : undefined;
    if (builtin) return builtin;
  }
  return lowerOuterName(node, hint, span);
}

/** A name not declared in the kernel: a module-level numeric constant, or an error that says what it is. */
function lowerOuterName(node: Identifier, hint: Type | undefined, span: Span): Expr {
  const origin = originOf(node);
  if (origin.kind === "user") {
    const declaration = origin.declaration;
    const statement = Node.isVariableDeclaration(declaration) ? declaration.getVariableStatement() : undefined;
    const local = Node.isVariableDeclaration(declaration) && statement?.getParent() !== declaration.getSourceFile();
    // A local of this function that is declared further down: TypeScript scopes it, tskernel lowers in order.
    if (local && declaration.getStart() > node.getStart() && declaration.getSourceFile() === node.getSourceFile()) {
      return fail("TSK1023", span, [node.getText()], { related: [{ span: spanOf(declaration), message: "declared here" }] });
    }
    const init = moduleConstantInitializer(node);
    if (init && (isLiteralLike(init) || Node.isTrueLiteral(init) || Node.isFalseLiteral(init))) {
      // A module-level `const TILE = 16` is a compile-time constant; its literal takes the context's type.
      const folded = foldLiteralLike(init, hint, spanOf(node));
      if (folded) return folded;
    }
  }
  const declaration = origin.kind === "user" ? origin.declaration : undefined;
  const moduleConstant =
    declaration && Node.isVariableDeclaration(declaration) && declaration.getVariableStatement()?.getDeclarationKind() === "const" &&
    declaration.getVariableStatement()?.getParent() === declaration.getSourceFile();
  const notes = moduleConstant
    ? ["a module-level constant used in a kernel must be a plain number or true/false literal (`const TILE = 16`); use a Const<…> parameter for anything computed"]
    : origin.kind === "user"
      ? ["kernels cannot capture variables from outside; pass the value as a parameter or a Const<…> parameter"]
      : origin.kind === "tskernel"
        ? [`'${node.getText()}' from tskernel cannot be used as a value here`]
        : [];
  return fail("TSK1006", span, [node.getText()], { notes });
}

/** The initializer of the top-level `const` (of any project file) that `node` names, if it names one. */
function moduleConstantInitializer(node: Identifier): Expression | undefined {
  const origin = originOf(node);
  if (origin.kind !== "user") return undefined;
  const declaration = origin.declaration;
  if (!Node.isVariableDeclaration(declaration)) return undefined;
  const statement = declaration.getVariableStatement();
  if (statement?.getDeclarationKind() !== "const" || statement.getParent() !== declaration.getSourceFile()) return undefined;
  return declaration.getInitializer();
}

/** The initializers foldLiteralLike accepts as numbers: `16`, `-0.5`. */
function isPlainNumber(node: Expression): boolean {
  return Node.isNumericLiteral(node)
    || (Node.isPrefixUnaryExpression(node) && node.getOperatorToken() === SyntaxKind.MinusToken && Node.isNumericLiteral(node.getOperand()));
}

/** Evaluates a literal-like initializer of a module-level constant. */
function foldLiteralLike(node: Expression, hint: Type | undefined, span: Span): Expr | undefined {
  if (Node.isTrueLiteral(node)) return { kind: "literal", type: "bool", value: 1, span };
  if (Node.isFalseLiteral(node)) return { kind: "literal", type: "bool", value: 0, span };
  // Only plain (possibly negated) numeric literals are taken; arithmetic between module constants would
  // need a constant folder here and is left to Const<…> parameters.
  if (Node.isNumericLiteral(node)) return lowerNumericLiteral(node.getText(), false, hint, span);
  if (Node.isPrefixUnaryExpression(node) && node.getOperatorToken() === SyntaxKind.MinusToken && Node.isNumericLiteral(node.getOperand())) {
    return lowerNumericLiteral(node.getOperand().getText(), true, hint, span);
  }
  return undefined;
}

function lowerPrefixUnary(context: FunctionContext, node: import("ts-morph").PrefixUnaryExpression, hint: Type | undefined): Expr {
  const span = spanOf(node);
  const operand = node.getOperand();
  switch (node.getOperatorToken()) {
    case SyntaxKind.MinusToken: {
      if (Node.isNumericLiteral(operand)) return lowerNumericLiteral(operand.getText(), true, hint, span);
      const value = lowerExpr(context, operand, hint);
      if (!isFloat(value.type) && value.type !== "i32") {
        return fail("TSK2005", span, ["unary -", typeName(value.type)], { notes: value.type === "u32" ? ["negate a u32 with 0 - x, or convert it first"] : isComposite(value.type) ? ["negate a vector with neg(v)"] : [] });
      }
      return { kind: "unary", op: "neg", type: value.type, operand: value, span };
    }
    case SyntaxKind.PlusToken: {
      const value = lowerExpr(context, operand, hint);
      if (!isNumeric(value.type)) return fail("TSK2005", span, ["unary +", value.type]);
      return value;
    }
    case SyntaxKind.ExclamationToken: {
      const value = lowerCondition(context, operand, "the operand of '!'");
      return { kind: "unary", op: "not", type: "bool", operand: value, span };
    }
    case SyntaxKind.TildeToken: {
      const value = lowerExpr(context, operand, hint);
      if (!isInteger(value.type)) return fail("TSK2005", span, ["~", value.type]);
      return { kind: "unary", op: "bitnot", type: value.type, operand: value, span };
    }
    default:
      return fail("TSK1011", span, [`'${node.getText()}'`], { notes: ["write the increment as its own statement"] });
  }
}

function lowerBinaryExpression(context: FunctionContext, node: import("ts-morph").BinaryExpression, hint: Type | undefined): Expr {
  const span = spanOf(node);
  const token = node.getOperatorToken().getKind();
  if (assignmentTokens.has(token)) {
    return fail("TSK1011", span, ["an assignment"], { notes: ["assign in a statement of its own"] });
  }
  const op = binaryOperators.get(token);
  if (op === undefined) return fail("TSK1001", spanOf(node.getOperatorToken()), [`the '${node.getOperatorToken().getText()}' operator`]);
  return lowerBinary(context, op, node.getLeft(), node.getRight(), hint, span);
}

/** Types and builds `left op right`. Also used by compound assignments, with the target as `left`. */
export function lowerBinary(
  context: FunctionContext,
  op: BinaryOp | "ushr" | "pow",
  leftNode: Expression,
  rightNode: Expression,
  hint: Type | undefined,
  span: Span,
  loweredLeft?: Expr,
): Expr {
  const spelling = operatorSpelling[op];
  const isComparison = op === "eq" || op === "ne" || op === "lt" || op === "le" || op === "gt" || op === "ge";

  if (op === "logand" || op === "logor") {
    const left = loweredLeft ?? lowerCondition(context, leftNode, `the left operand of '${spelling}'`);
    // The right operand runs only when the left does not decide: nothing may be hoisted out of it.
    const right = withoutPending(context, `in the right operand of '${spelling}'`, () => lowerCondition(context, rightNode, `the right operand of '${spelling}'`));
    return { kind: "binary", op, type: "bool", left, right, span };
  }

  if (op === "shl" || op === "shr" || op === "ushr") {
    const left = loweredLeft ?? lowerExpr(context, leftNode, hint);
    if (!isInteger(left.type)) return fail("TSK2005", span, [spelling, left.type]);
    const right = lowerExpr(context, rightNode, isLiteralLike(rightNode) ? left.type : undefined);
    if (!isInteger(right.type)) return fail("TSK2005", span, [`${spelling} (shift amount)`, right.type]);
    if (op === "ushr" && left.type === "i32") {
      // A logical shift of an i32: shift its bits as a u32, then read them back as an i32.
      const asUnsigned: Expr = { kind: "convert", type: "u32", value: left, span: left.span };
      const shifted: Expr = { kind: "binary", op: "shr", type: "u32", left: asUnsigned, right, span };
      return { kind: "convert", type: "i32", value: shifted, span };
    }
    return { kind: "binary", op: op === "ushr" ? "shr" : op, type: left.type, left, right, span };
  }

  const [left, right] = loweredLeft
    ? [loweredLeft, lowerExpr(context, rightNode, loweredLeft.type)]
    : lowerOperands(context, [leftNode, rightNode], isComparison ? undefined : hint, spelling, span);
  if (left!.type !== right!.type) {
    return fail("TSK2001", span, [spelling, left!.type, right!.type], { notes: [mixedTypesNote(left!.type, right!.type)] });
  }
  const type = left!.type;
  // Vectors and structs are values, but JavaScript's operators would compare or combine references: the
  // functions say what is meant (TypeScript already refuses arithmetic on them).
  if (isComposite(type)) {
    const how = isComposite(type) && laneCount(type) > 1
      ? isComparison ? `compare lane by lane with ${({ eq: "eq", ne: "ne", lt: "lt", le: "le", gt: "gt", ge: "ge" } as Record<string, string>)[op]}(a, b), and reduce with all(…) or any(…)` : "use add, sub, mul, div"
      : "compare or combine their fields";
    return fail("TSK1158", span, [spelling, typeName(type), how]);
  }
  if (op === "pow") {
    if (!isFloat(type)) return fail("TSK2005", span, [spelling, type]);
    // `2 ** x` is exp2(x) (CUDA tsk_exp2f, WGSL exp2): JavaScript has no Math.exp2, and exponentials in base 2 are
    // what the hardware computes (an online softmax's, say); pow would be slower and no more exact there.
    if (left!.kind === "literal" && left!.value === 2) return { kind: "intrinsic", name: "exp2", type, args: [right!], span };
    return { kind: "intrinsic", name: "pow", type, args: [left!, right!], span };
  }
  if (isComparison) {
    if (type === "bool" && op !== "eq" && op !== "ne") return fail("TSK2005", span, [spelling, type]);
    return { kind: "binary", op, type: "bool", left: left!, right: right!, span };
  }
  if (op === "and" || op === "or" || op === "xor") {
    if (!isInteger(type)) {
      return fail("TSK2005", span, [spelling, type], { notes: type === "bool" ? [`for bools write '${op === "and" ? "&&" : op === "or" ? "||" : "!=="}'`] : [] });
    }
  } else if (!isNumeric(type)) {
    return fail("TSK2005", span, [spelling, type]);
  }
  return { kind: "binary", op, type, left: left!, right: right!, span };
}

function lowerConditional(context: FunctionContext, node: import("ts-morph").ConditionalExpression, hint: Type | undefined): Expr {
  const span = spanOf(node);
  const condition = lowerCondition(context, node.getCondition(), "the condition of '?:'");
  // Only one branch runs: nothing may be hoisted out of either.
  const [whenTrue, whenFalse] = withoutPending(context, "in a branch of '?:'", () => lowerOperands(context, [node.getWhenTrue(), node.getWhenFalse()], hint, "?:", span));
  return { kind: "select", type: whenTrue!.type, condition, whenTrue: whenTrue!, whenFalse: whenFalse!, span };
}

// ---------------------------------------------------------------------------------------------------------
// Calls

function lowerCall(context: FunctionContext, node: import("ts-morph").CallExpression, hint: Type | undefined): Expr {
  const span = spanOf(node);
  const callee = node.getExpression();
  const args = node.getArguments() as Expression[];

  if (Node.isPropertyAccessExpression(callee)) {
    const object = callee.getExpression();
    if (Node.isIdentifier(object) && object.getText() === "Math" && originOf(object).kind !== "user" && !context.scope.lookup("Math")) {
      return lowerMathCall(context, callee.getName(), args, hint, span, spanOf(callee));
    }
    const objectOrigin = Node.isIdentifier(object) ? originOf(object) : undefined;
    if (objectOrigin?.kind === "tskernel" && (objectOrigin.name === "shared" || objectOrigin.name === "local" || objectOrigin.name === "fragment")) {
      return fail("TSK1010", span, [objectOrigin.name === "shared" ? "shared" : objectOrigin.name === "fragment" ? "fragment" : "private (local.…)"]);
    }
    return fail("TSK1005", spanOf(callee), [callee.getText()]);
  }
  if (!Node.isIdentifier(callee)) return fail("TSK1001", span, [describeSyntax(node)]);

  const name = callee.getText();
  if (context.scope.lookup(name)) return fail("TSK1005", spanOf(callee), [name], { notes: [`'${name}' is a variable, not a function`] });
  const origin = originOf(callee);
  if (origin.kind === "tskernel") {
    const conversion = conversionTypes.get(origin.name);
    if (conversion) return lowerConversion(context, conversion, args, span);
    if (origin.name === "cast") {
      // cast<T>(x): the conversion to the value type of the element type T stands for (or names).
      const typeArgument = node.getTypeArguments()[0];
      const element = typeArgument ? elementTypeArgument(typeArgument, context.typeArgs ?? new Map()) : undefined;
      if (!element) return fail("TSK2008", span, ["cast<T>()", "a type argument that is the kernel's type parameter or an element type name, as in cast<T>(x)", node.getTypeArguments().map((t) => t.getText()).join(", ") || "none"]);
      return lowerConversion(context, valueTypeOf(element), args, span);
    }
    if (origin.name === "dtype") {
      return fail("TSK1001", span, ["dtype<T>() as a value"], { notes: ["dtype<T>() names an element type only as the second argument of fragment.a or fragment.b"] });
    }
    if (origin.name === "fma") {
      const lowered = expectArgs(context, "fma", args, ["f32", "f32", "f32"], span);
      return { kind: "intrinsic", name: "fma", type: "f32", args: lowered, span };
    }
    if (origin.name === "roundTf32") {
      // f32 to TF32 (cvt.rna.tf32.f32), for operands the tensor cores read from shared memory, which would
      // otherwise drop the low 13 bits (docs/language.md §25).
      const lowered = expectArgs(context, "roundTf32()", args, ["f32"], span);
      return { kind: "intrinsic", name: "roundTf32", type: "f32", args: lowered, span };
    }
    if (origin.name === "bitcastU32" || origin.name === "bitcastF32") {
      // Bits, not values: f32 → u32 or u32 → f32, with no conversion at all (docs/language.md §5).
      const toBits = origin.name === "bitcastU32";
      const lowered = expectArgs(context, `${origin.name}()`, args, [toBits ? "f32" : "u32"], span);
      return { kind: "intrinsic", name: origin.name, type: toBits ? "u32" : "f32", args: lowered, span };
    }
    if (origin.name === "syncThreads" || origin.name === "syncCluster" || origin.name === "threadFence") return fail("TSK1011", span, [`${origin.name}()`]);
    if (isVectorFunction(origin.name)) return lowerVectorCall(context, origin.name, node, hint)!;
    const special = lowerSpecialCall(context, origin.name, node, typeof hint === "string" ? hint : undefined) ?? lowerFragmentElementExpr(context, origin.name, node);
    if (special) return special;
    if (origin.name === "load4" || origin.name === "load8" || origin.name === "load16") return fail("TSK1028", span, [], { notes: [`destructure it where it is declared: \`const [x, y, z, w] = load4(array, index)\`${origin.name === "load4" ? "" : ` (${origin.name}: one name per element)`}`] });
    if (["store4", "store8", "store16", "copyAsync4", "copyAsync8", "copyAsync16", "commitAsync", "waitAsync", "loadFragment", "loadMatrix", "storeFragment", "fillFragment", "mma", "wgmma", "wgmmaCommit", "wgmmaWait"].includes(origin.name)) return fail("TSK1011", span, [`${origin.name}()`]);
    return fail("TSK1005", spanOf(callee), [name], { notes: [`'${name}' from tskernel is not a function that returns a value`] });
  }
  if (origin.kind === "user") {
    const declaration = origin.declaration;
    if (Node.isFunctionDeclaration(declaration)) return lowerHelperCall(context, declaration, args, span, spanOf(callee));
  }
  return fail("TSK1005", spanOf(callee), [name], {
    notes: ["kernels may call Math functions, tskernel's f32/i32/u32/fma/bitcastU32/bitcastF32/roundTf32, and functions declared in a project file"],
  });
}

function expectArgs(context: FunctionContext, what: string, args: readonly Expression[], types: readonly ScalarType[], span: Span): Expr[] {
  if (args.length !== types.length) {
    fail("TSK2008", span, [what, `${types.length} argument(s)`, `${args.length}`]);
  }
  return args.map((arg, index) =>
    lowerExpected(context, arg, types[index]!, (found) =>
      fail("TSK2008", spanOf(arg), [`argument ${index + 1} of ${what}`, types[index]!, found.type]),
    ),
  );
}

function lowerConversion(context: FunctionContext, to: ScalarType, args: readonly Expression[], span: Span): Expr {
  if (args.length !== 1) return fail("TSK2008", span, [`${to}()`, "1 argument", `${args.length}`]);
  const arg = args[0]!;
  // `f32(1)` is a literal of the target type, not a conversion at run time.
  const value = lowerExpr(context, arg, isLiteralLike(arg) ? to : undefined);
  if (value.type === to) return value;
  if (isComposite(value.type)) {
    return fail("TSK2008", spanOf(arg), [`${to}()`, "a scalar", typeName(value.type)], { notes: laneCount(value.type) > 1 ? [`a vector converts with its constructor: vec${laneCount(value.type)}${to.slice(0, 1)}(v)`] : [] });
  }
  return { kind: "convert", type: to, value, span };
}

function lowerMathCall(
  context: FunctionContext,
  name: string,
  args: readonly Expression[],
  hint: Type | undefined,
  span: Span,
  calleeSpan: Span,
): Expr {
  const fn = Object.hasOwn(mathFunctions, name) ? mathFunctions[name] : undefined;
  if (!fn) {
    return fail("TSK1012", calleeSpan, [name], {
      notes: name === "round"
        ? ["rounding of halves differs between CUDA, WGSL and JavaScript; write Math.floor(x + 0.5) or Math.trunc(x)"]
        : [`available: ${Object.keys(mathFunctions).join(", ")}, and fma(a, b, c) from tskernel`],
    });
  }
  const arityOk = fn.variadic ? args.length >= fn.arity : args.length === fn.arity;
  if (!arityOk) fail("TSK2008", span, [`Math.${name}`, `${fn.arity}${fn.variadic ? " or more" : ""} argument(s)`, `${args.length}`]);
  const lowered = fn.domain === "float" ? lowerFloatArguments(context, `Math.${name}`, args, typeof hint === "string" ? hint : undefined) : lowerOperands(context, args, hint, `Math.${name}`, span);
  const type = lowered[0]!.type;
  if (!isNumeric(type)) {
    return fail("TSK2008", span, [`Math.${name}`, "numbers", typeName(type)], { notes: isComposite(type) ? [`Math.${name} takes scalars: for vectors, ${name}(…) from "tskernel" works lane by lane`] : [] });
  }
  let result: Expr = { kind: "intrinsic", name: fn.intrinsic, type, args: lowered.slice(0, fn.arity), span };
  for (const extra of lowered.slice(fn.arity)) {
    result = { kind: "intrinsic", name: fn.intrinsic, type, args: [result, extra], span };
  }
  return result;
}

/**
 * The arguments of a float function (`Math.sqrt`, `Math.pow`…): all of one float type, which the first
 * argument that is not a literal decides (f16 in, f16 out: the f32 function rounded once), else the context's
 * float type, else f32. An argument of another type is TSK2008.
 */
function lowerFloatArguments(context: FunctionContext, what: string, args: readonly Expression[], hint: ScalarType | undefined): Expr[] {
  const lowered = new Map<number, Expr>();
  let type: ScalarType = hint !== undefined && isFloat(hint) ? hint : "f32";
  const deciding = args.findIndex((arg) => !isLiteralLike(arg));
  if (deciding >= 0) {
    const first = lowerExpr(context, args[deciding]!, type);
    if (isFloat(first.type)) type = first.type;
    lowered.set(deciding, first);
  }
  return args.map((arg, index) => {
    const value = lowered.get(index) ?? lowerExpr(context, arg, type);
    if (value.type === type) return value;
    return fail("TSK2008", spanOf(arg), [`argument ${index + 1} of ${what}`, type, value.type], {
      notes: isComposite(value.type) && what.startsWith("Math.") ? [`${what} takes scalars: for vectors, ${what.slice(5)}(…) from "tskernel" works lane by lane`] : [],
    });
  });
}

// ---------------------------------------------------------------------------------------------------------
// Arrays and properties

/**
 * An array and its indices, from `base[i][j]…` written as `node`, with `extraIndex` (a vector access's
 * start) after the written ones. `notAnArray` is the diagnostic when `base` names a scalar; `rankNotes`
 * explains a wrong number of indices.
 */
export function lowerIndexedArray(
  context: FunctionContext,
  node: Expression,
  extraIndex: Expression | undefined,
  notAnArray: (name: string, written: number) => never,
  rankNotes: (array: ArrayRef, rank: number) => string[] = () => [],
): { array: ArrayRef; indices: Expr[] } {
  const indexNodes: Expression[] = extraIndex ? [extraIndex] : [];
  let base: Expression = node;
  while (Node.isElementAccessExpression(base)) {
    indexNodes.unshift(base.getArgumentExpressionOrThrow());
    base = base.getExpression();
  }
  if (!Node.isIdentifier(base)) return fail("TSK1001", spanOf(base), [describeSyntax(base)]);
  const binding = context.scope.lookup(base.getText());
  if (binding?.kind === "poisoned") throw new AlreadyReported();
  if (binding?.kind !== "array") {
    if (binding) return notAnArray(base.getText(), indexNodes.length);
    lowerIdentifier(context, base, undefined); // reports what the name is
    return fail("TSK1006", spanOf(base), [base.getText()]);
  }
  const array = binding.array;
  if (array.fragment) return fail("TSK1066", spanOf(node), [array.name]);
  if (array.barriers) return fail("TSK1095", spanOf(node), [array.name]);
  const rank = array.space === "global" ? 1 : array.dims.length;
  if (array.space === "private" && context.kind === "helper") return fail("TSK1001", spanOf(node), ["private arrays in helper functions"]);
  if (indexNodes.length !== rank) return fail("TSK2007", spanOf(node), [array.name, rank, indexNodes.length], { notes: rankNotes(array, rank) });
  const indices = indexNodes.map((indexNode) => {
    const index = lowerExpr(context, indexNode, isLiteralLike(indexNode) ? "i32" : undefined);
    if (!isInteger(index.type)) fail("TSK2006", spanOf(indexNode), [index.type], { notes: ["convert with i32(…)"] });
    return index;
  });
  return { array, indices };
}

/**
 * The array and indices of a vector access's operands: `load4(A, i)` is A with [i]; `load4(tile[r], c)`
 * is the 2-D shared `tile` with [r, c]. `what` names the operation for messages.
 */
export function lowerVectorOperand(context: FunctionContext, arrayNode: Expression, indexNode: Expression, what: string): { array: ArrayRef; indices: Expr[] } {
  const operand = lowerIndexedArray(
    context,
    arrayNode,
    indexNode,
    (name) => fail("TSK2008", spanOf(arrayNode), [what, "an array as its first argument", `'${name}'`]),
    (array, rank) => (rank === 2 ? [`a vector access to a 2-D array takes a row: ${what}(${array.name}[row], column)`] : []),
  );
  // load4 and its siblings move four scalar elements; an element that is a vector or struct moves whole by itself.
  if (isComposite(operand.array.elementType)) return fail("TSK2011", spanOf(arrayNode), [what, operand.array.elementType], { notes: [`read or write the element itself: ${operand.array.name}[i]`] });
  return operand;
}

export function lowerElementAccess(context: FunctionContext, node: import("ts-morph").ElementAccessExpression): { array: ArrayRef; indices: Expr[] } {
  return lowerIndexedArray(context, node, undefined, (name, written) => fail("TSK2007", spanOf(node), [name, 0, written]));
}

function lowerPropertyAccess(context: FunctionContext, node: import("ts-morph").PropertyAccessExpression): Expr {
  const span = spanOf(node);
  const object = node.getExpression();
  const property = node.getName();
  if (Node.isIdentifier(object) && context.scope.lookup(object.getText())?.kind === "poisoned") throw new AlreadyReported();
  if (Node.isIdentifier(object) && !context.scope.lookup(object.getText())) {
    const origin = originOf(object);
    if (origin.kind === "tskernel" && ["threadIdx", "blockIdx", "blockDim", "gridDim"].includes(origin.name)) {
      if (context.kind === "helper") {
        return fail("TSK1017", span, [context.name, `it reads ${origin.name}; pass the value in as an argument`]);
      }
      if (property !== "x" && property !== "y" && property !== "z") {
        return fail("TSK1001", span, [`'${origin.name}.${property}'`], { notes: ["the components are x, y and z"] });
      }
      return { kind: "builtin", type: "i32", builtin: origin.name as "threadIdx", axis: property, span };
    }
    if (object.getText() === "Math" && origin.kind !== "user") {
      const value = Object.hasOwn(mathConstants, property) ? mathConstants[property] : undefined;
      if (value === undefined) return fail("TSK1012", span, [property]);
      return { kind: "literal", type: "f32", value: Math.fround(value), span };
    }
  }
  if (Node.isIdentifier(object) && context.scope.lookup(object.getText())?.kind === "array" && property === "length") {
    return fail("TSK1001", span, ["'.length' of an array"], { notes: ["pass the size as a scalar parameter"] });
  }
  // A member of a value: a struct's field, a vector's lanes (`p.pos`, `v.xy`, `particles[i].mass`).
  const isValue = !Node.isIdentifier(object) || ["variable", "poisoned"].includes(context.scope.lookup(object.getText())?.kind ?? "");
  if (isValue) {
    const value = lowerExpr(context, object);
    const member = lowerMember(value, property, spanOf(node.getNameNode()), span);
    if (member) return member;
  }
  return fail("TSK1001", span, [`the property access '${node.getText()}'`]);
}
