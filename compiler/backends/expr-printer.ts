/**
 * The expression printer shared by the C-like targets (CUDA and WGSL). It places parentheses by a rule
 * both languages accept: WGSL does not let bitwise operators, shifts, `&&` and `||` mix without
 * parentheses, so only arithmetic inside arithmetic and comparisons, comparisons inside logical operators,
 * and left-leaning chains of one operator print bare. Leaves (literals, builtins, conversions, loads, calls)
 * come from the target's hooks, and so do the forms of vectors and structs (constructions, swizzles, fields),
 * which a target may also take over entirely (`composite`: CUDA prints vector operations through its helpers).
 */

import { assertNever, type BinaryOp, type BuiltinExpr, type CheckExpr, type ConstructExpr, type Expr, type FieldExpr, type HelperFunction, type IntrinsicExpr, type LiteralExpr, type LoadExpr, type ScalarType, type SubgroupBuiltinExpr, type SwizzleExpr, type Type, type Variable, type ArrayRef } from "../ir/ir.ts";
import { elementOf, isComposite, laneCount } from "../ir/vectors.ts";
import type { Spelling } from "./targets.ts";

export type PrintedKind = "atom" | "unary" | "binary" | "ternary";

export interface Printed {
  readonly text: string;
  readonly kind: PrintedKind;
  readonly op?: BinaryOp;
}

export interface ExprHooks {
  readonly spelling: Spelling;
  literal(expr: LiteralExpr): Printed;
  variable(variable: Variable): string;
  builtin(expr: BuiltinExpr): Printed;
  subgroupBuiltin(expr: SubgroupBuiltinExpr): Printed;
  /** A load marked atomic (legalize does so only for targets that have atomic arrays). */
  atomicLoad?(expr: LoadExpr, element: string): Printed;
  /** Any other load, where the target reads an element otherwise than as `element` (a cast, an unpacking). */
  load?(expr: LoadExpr, element: string): Printed;
  convert(to: Type, value: Printed, from: Type): Printed;
  select(condition: Printed, whenTrue: Printed, whenFalse: Printed): Printed;
  array(array: ArrayRef): string;
  helper(helper: HelperFunction): string;
  /** Arguments a call passes after the helper's own (CUDA: a checked copy's error buffer and launch tag). */
  helperArguments?(helper: HelperFunction): readonly string[];
  /** A vector or struct built from its parts. */
  construct(expr: ConstructExpr, args: readonly Printed[]): Printed;
  /** Lanes of a vector, `v.zyx`; `value` is the vector, printed. */
  swizzle(expr: SwizzleExpr, value: Printed): Printed;
  /** A field of a struct, `p.pos`. */
  field(expr: FieldExpr, value: Printed): Printed;
  /**
   * A target's own form of an operation on vectors or structs (any expression of such a type, or with such
   * operands); undefined: the common form.
   */
  composite?(expr: Expr, print: (expr: Expr) => Printed): Printed | undefined;
  /** The element of an array as a place, from its common spelling `a[i]` (CUDA's padded vec3 elements). */
  elementPlace?(array: ArrayRef, text: string): string;
  /** A checked build's check (ir.ts, CheckExpr): `holds` and the two values printed, a call of the target's helper. */
  check?(expr: CheckExpr, holds: string, values: readonly [string, string]): Printed;
}

const multiplicative: ReadonlySet<BinaryOp> = new Set(["mul", "div", "rem"]);
const additive: ReadonlySet<BinaryOp> = new Set(["add", "sub"]);
const comparison: ReadonlySet<BinaryOp> = new Set(["eq", "ne", "lt", "le", "gt", "ge"]);
const chainable: ReadonlySet<BinaryOp> = new Set(["add", "sub", "mul", "div", "rem", "and", "or", "xor", "logand", "logor"]);

function bareInBinary(child: Printed, parent: BinaryOp, side: "left" | "right"): boolean {
  if (child.kind === "atom" || child.kind === "unary") return true;
  if (child.kind === "ternary" || child.op === undefined) return false;
  const op = child.op;
  if (additive.has(parent)) return multiplicative.has(op) || (additive.has(op) && side === "left");
  if (multiplicative.has(parent)) return multiplicative.has(op) && side === "left";
  if (comparison.has(parent)) return additive.has(op) || multiplicative.has(op);
  if (parent === "logand" || parent === "logor") return comparison.has(op) || (op === parent && side === "left");
  return chainable.has(parent) && op === parent && side === "left";
}

export function parenthesize(printed: Printed): string {
  return `(${printed.text})`;
}

export class ExprPrinter {
  constructor(private readonly hooks: ExprHooks) {}

  /** The text of an expression where any expression may stand (an argument, an initializer, an index). */
  print(expr: Expr): string {
    return this.printed(expr).text;
  }

  /** `a[i]`, `tile[r][c]`: an element of an array, as a place. */
  element(array: ArrayRef, indices: readonly Expr[]): string {
    const text = `${this.hooks.array(array)}${indices.map((index) => `[${this.print(index)}]`).join("")}`;
    return this.hooks.elementPlace ? this.hooks.elementPlace(array, text) : text;
  }

  /** An expression as an argument of a call (see Spelling.lessThanArgumentsInParens). */
  private argument(expr: Expr): Printed {
    const printed = this.printed(expr);
    if (this.hooks.spelling.lessThanArgumentsInParens && printed.kind === "binary" && lessThanOutsideParens(printed.text)) return { text: parenthesize(printed), kind: "atom" };
    return printed;
  }

  printed(expr: Expr): Printed {
    const hooks = this.hooks;
    const spelling = hooks.spelling;
    if (hooks.composite && (isComposite(expr.type) || childTypes(expr).some(isComposite))) {
      const own = hooks.composite(expr, (e) => this.printed(e));
      if (own) return own;
    }
    switch (expr.kind) {
      case "literal":
        return hooks.literal(expr);
      case "variable":
        return { text: hooks.variable(expr.variable), kind: "atom" };
      case "constRef":
        throw new Error(`internal: constant '${expr.name}' reached a backend unspecialized`);
      case "builtin":
        return hooks.builtin(expr);
      case "subgroupBuiltin":
        return hooks.subgroupBuiltin(expr);
      case "unary": {
        const unaryCall = expr.type === "f16" || expr.type === "bf16" ? spelling.typedUnary?.[expr.type]?.[expr.op] : undefined;
        if (unaryCall) return { text: unaryCall.replace("$0", this.print(expr.operand)), kind: "atom" };
        const operand = this.printed(expr.operand);
        const inner = operand.kind === "atom" || (operand.kind === "unary" && !operand.text.startsWith("-")) ? operand.text : parenthesize(operand);
        return { text: `${spelling.unary[expr.op]}${inner}`, kind: "unary" };
      }
      case "binary": {
        const call = binaryCall(spelling, expr.op, expr.left.type);
        if (call) return { text: call.replace("$0", this.print(expr.left)).replace("$1", this.print(expr.right)), kind: "atom" };
        const left = this.printed(expr.left);
        const right = this.printed(expr.right);
        const l = bareInBinary(left, expr.op, "left") ? left.text : parenthesize(left);
        const r = bareInBinary(right, expr.op, "right") ? right.text : parenthesize(right);
        return { text: `${l} ${spelling.binary[expr.op]} ${r}`, kind: "binary", op: expr.op };
      }
      case "select":
        return hooks.select(this.argument(expr.condition), this.argument(expr.whenTrue), this.argument(expr.whenFalse));
      case "convert":
        return hooks.convert(expr.type, this.printed(expr.value), expr.value.type);
      case "intrinsic": {
        const template = intrinsicTemplate(spelling, expr);
        if (!template) throw new Error(`internal: no ${expr.type} spelling of intrinsic ${expr.name}`);
        const args = expr.args.map((arg) => this.argument(arg).text);
        if (template.includes("$0")) return { text: template.replace(/\$(\d)/g, (_, i: string) => args[Number(i)]!), kind: "atom" };
        return { text: `${template}(${args.join(", ")})`, kind: "atom" };
      }
      case "call":
        return { text: `${hooks.helper(expr.callee)}(${[...expr.args.map((arg) => this.argument(arg).text), ...(hooks.helperArguments?.(expr.callee) ?? [])].join(", ")})`, kind: "atom" };
      case "load": {
        const element = this.element(expr.array, expr.indices);
        if (!expr.atomic) return hooks.load ? hooks.load(expr, element) : { text: element, kind: "atom" };
        if (!hooks.atomicLoad) throw new Error("internal: an atomic load reached a target without atomic arrays");
        return hooks.atomicLoad(expr, element);
      }
      case "construct":
        return hooks.construct(expr, expr.args.map((arg) => this.argument(arg)));
      case "swizzle":
        return hooks.swizzle(expr, this.printed(expr.value));
      case "field":
        return hooks.field(expr, this.printed(expr.value));
      case "check": {
        if (!hooks.check) throw new Error("internal: a check reached a target without checked builds");
        return hooks.check(expr, this.print(expr.holds), [this.print(expr.values[0]), this.print(expr.values[1])]);
      }
      default:
        return assertNever(expr, "expression");
    }
  }
}

/**
 * Whether a `<` comparison stands outside any parentheses in an argument's text: `a < b` and also
 * `c && a < b`, which WGSL would read with a later `>` as a template list (`f(c && a < b, d > e)`, found by
 * the differential fuzzer in a vector's constructor).
 */
function lessThanOutsideParens(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "<" && depth === 0 && text[i + 1] === " " && text[i - 1] === " ") return true;
  }
  return false;
}

/** The types of an expression's operands. */
function childTypes(expr: Expr): Type[] {
  switch (expr.kind) {
    case "unary":
      return [expr.operand.type];
    case "binary":
      return [expr.left.type, expr.right.type];
    case "select":
      return [expr.condition.type, expr.whenTrue.type];
    case "convert":
    case "swizzle":
    case "field":
      return [expr.value.type];
    case "intrinsic":
    case "construct":
      return expr.args.map((arg) => arg.type);
    default:
      return [];
  }
}

/**
 * How a target spells an intrinsic call: by its (lanes') type (f16 and bf16 from the f32 spelling,
 * Spelling.halfIntrinsic), and for integers by whether a literal is among the arguments. The bit casts go by
 * their own entries.
 */
export function intrinsicTemplate(spelling: Spelling, expr: IntrinsicExpr): string {
  const entry = spelling.intrinsics[expr.name];
  const type = laneCount(expr.type) > 1 ? elementOf(expr.type) : expr.type;
  if (type === "f32") return entry.f32;
  if (type === "f64") return entry.f64 ?? "";
  if (type === "f16" || type === "bf16") {
    const half = spelling.halfIntrinsic?.[type];
    return half && entry.f32 ? half(entry.f32, expr.args.length) : entry.f32;
  }
  return entry.intWithLiteral !== undefined && expr.args.some((arg) => arg.kind === "literal") ? entry.intWithLiteral : entry.int;
}

/**
 * The template a target spells `a op b` with for operands of `type`, if it spells it as a call. Vectors' operators
 * are WGSL's own, and CUDA's come from cuda-vectors.ts.
 */
export function binaryCall(spelling: Spelling, op: BinaryOp, type: Type): string | undefined {
  if (type === "f32") return spelling.floatCalls?.[op];
  if (type === "f16" || type === "bf16" || type === "f64") return spelling.typedCalls?.[type]?.[op];
  return undefined;
}

/** The largest finite f32. */
const f32Max = 3.4028234663852886e38;

/**
 * The shortest decimal spelling that reads back as the same f32, always with a '.' or an exponent. It never
 * lies beyond the largest finite f32: the shortest spelling of that value, 3.4028235e38, is above it (it
 * rounds down to it), and WGSL rejects such a literal as not representable, so that one value is spelled
 * with all the digits of its exact value.
 */
export function f32Digits(value: number): string {
  if (Object.is(value, -0)) return "-0.0";
  let text = String(value);
  for (let precision = 1; precision <= 9; precision++) {
    const candidate = Number(value.toPrecision(precision));
    if (Math.fround(candidate) === value && Math.abs(candidate) <= f32Max) {
      text = String(candidate);
      break;
    }
  }
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/** The shortest decimal spelling that reads back as the same double, always with a '.' or an exponent. */
export function f64Digits(value: number): string {
  if (Object.is(value, -0)) return "-0.0";
  const text = String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}
