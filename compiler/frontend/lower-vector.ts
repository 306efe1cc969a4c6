/**
 * Lowers what kernels do with vectors (docs/language.md, "Vectors"): the constructors (`vec3f(x, y, z)`,
 * `vec4f(v.xyz, 1)`, `vec3f(s)`, `vec3f(v)` of another element type), components and swizzles (`v.x`,
 * `v.zyx`), and the functions: component-wise arithmetic with TypeGPU's names (`add`, `sub`, `mul`, `div`,
 * `neg`), comparisons giving bool vectors (`eq` … `ge`) with `and`, `or`, `not`, `all`, `any`, `select`,
 * and WGSL's functions with WGSL's names and meaning (`dot`, `cross`, `length`, `normalize`, `mix`, `clamp`,
 * …), which take scalars too. TypeScript has no operator overloading, so these are functions.
 *
 * The typing rule of every component-wise function: its operands share one type, a scalar or a vector; a
 * scalar operand where the others are vectors is broadcast (a `construct` of one scalar), so the IR's nodes
 * stay same-typed; a literal takes the element type of the others. `functions` below is the table.
 */

import type { CallExpression, Expression } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import type { BinaryOp, Expr, IntrinsicName, Span, Type } from "../ir/ir.ts";
import { isFloat, isNumeric, typeName, vectorTypes, type VectorType } from "../ir/types.ts";
import { elementOf, laneCount, laneNames, lanesOf, parseSwizzle, withElement } from "../ir/vectors.ts";
import { spanOf, type FunctionContext } from "./context.ts";

/** What a function's operands may hold, lane by lane. */
type Domain = "float" | "numeric" | "bool" | "any";

interface VectorFunction {
  readonly arity: number;
  readonly domain: Domain;
  /** Vector operands only (`dot`, `normalize`…); `vec3` only for `cross`. */
  readonly shape?: "vector" | "vec3";
  /** The result: the operands' type (default), their scalar, or a bool of their shape. */
  readonly result?: "scalar" | "bool";
  /** The IR it becomes: an operator or an intrinsic. */
  readonly binary?: BinaryOp;
  readonly unary?: "neg" | "not";
  readonly intrinsic?: IntrinsicName;
}

/** Every vector function, by its name in "tskernel". */
export const functions: Readonly<Record<string, VectorFunction>> = {
  add: { arity: 2, domain: "numeric", binary: "add" },
  sub: { arity: 2, domain: "numeric", binary: "sub" },
  mul: { arity: 2, domain: "numeric", binary: "mul" },
  div: { arity: 2, domain: "numeric", binary: "div" },
  neg: { arity: 1, domain: "numeric", unary: "neg" },
  eq: { arity: 2, domain: "any", result: "bool", binary: "eq" },
  ne: { arity: 2, domain: "any", result: "bool", binary: "ne" },
  lt: { arity: 2, domain: "numeric", result: "bool", binary: "lt" },
  le: { arity: 2, domain: "numeric", result: "bool", binary: "le" },
  gt: { arity: 2, domain: "numeric", result: "bool", binary: "gt" },
  ge: { arity: 2, domain: "numeric", result: "bool", binary: "ge" },
  // Lane by lane; both operands are evaluated (they are pure), unlike `&&` and `||`.
  and: { arity: 2, domain: "bool", binary: "and" },
  or: { arity: 2, domain: "bool", binary: "or" },
  not: { arity: 1, domain: "bool", unary: "not" },
  all: { arity: 1, domain: "bool", result: "scalar", intrinsic: "all" },
  any: { arity: 1, domain: "bool", result: "scalar", intrinsic: "any" },
  abs: { arity: 1, domain: "numeric", intrinsic: "abs" },
  min: { arity: 2, domain: "numeric", intrinsic: "min" },
  max: { arity: 2, domain: "numeric", intrinsic: "max" },
  clamp: { arity: 3, domain: "numeric", intrinsic: "clamp" },
  sign: { arity: 1, domain: "float", intrinsic: "sign" },
  floor: { arity: 1, domain: "float", intrinsic: "floor" },
  ceil: { arity: 1, domain: "float", intrinsic: "ceil" },
  trunc: { arity: 1, domain: "float", intrinsic: "trunc" },
  fract: { arity: 1, domain: "float", intrinsic: "fract" },
  sqrt: { arity: 1, domain: "float", intrinsic: "sqrt" },
  inverseSqrt: { arity: 1, domain: "float", intrinsic: "inverseSqrt" },
  exp: { arity: 1, domain: "float", intrinsic: "exp" },
  exp2: { arity: 1, domain: "float", intrinsic: "exp2" },
  log: { arity: 1, domain: "float", intrinsic: "log" },
  log2: { arity: 1, domain: "float", intrinsic: "log2" },
  sin: { arity: 1, domain: "float", intrinsic: "sin" },
  cos: { arity: 1, domain: "float", intrinsic: "cos" },
  tan: { arity: 1, domain: "float", intrinsic: "tan" },
  tanh: { arity: 1, domain: "float", intrinsic: "tanh" },
  saturate: { arity: 1, domain: "float", intrinsic: "saturate" },
  pow: { arity: 2, domain: "float", intrinsic: "pow" },
  atan2: { arity: 2, domain: "float", intrinsic: "atan2" },
  step: { arity: 2, domain: "float", intrinsic: "step" },
  mix: { arity: 3, domain: "float", intrinsic: "mix" },
  smoothstep: { arity: 3, domain: "float", intrinsic: "smoothstep" },
  length: { arity: 1, domain: "float", result: "scalar", intrinsic: "length" },
  distance: { arity: 2, domain: "float", result: "scalar", intrinsic: "distance" },
  dot: { arity: 2, domain: "numeric", shape: "vector", result: "scalar", intrinsic: "dot" },
  normalize: { arity: 1, domain: "float", shape: "vector", intrinsic: "normalize" },
  cross: { arity: 2, domain: "float", shape: "vec3", intrinsic: "cross" },
  reflect: { arity: 2, domain: "float", shape: "vector", intrinsic: "reflect" },
  faceForward: { arity: 3, domain: "float", shape: "vector", intrinsic: "faceForward" },
};

/** Whether `name` (an export of "tskernel") is a vector constructor or function this file lowers. */
export function isVectorFunction(name: string): boolean {
  return Object.hasOwn(functions, name) || name === "select" || (vectorTypes.has(name));
}

const domainWords: Readonly<Record<Domain, string>> = {
  float: "floats or vectors of floats",
  numeric: "numbers or vectors of numbers",
  bool: "bools or vectors of bools",
  any: "scalars or vectors",
};

function inDomain(type: Type, domain: Domain): boolean {
  if (laneCount(type) === 0) return false;
  const element = elementOf(type);
  switch (domain) {
    case "float":
      return isFloat(element);
    case "numeric":
      return isNumeric(element);
    case "bool":
      return element === "bool";
    case "any":
      return true;
  }
}

/** A vector constructor or function call; undefined when `name` is neither. */
export function lowerVectorCall(context: FunctionContext, name: string, call: CallExpression, hint: Type | undefined): Expr | undefined {
  const span = spanOf(call);
  const args = call.getArguments() as Expression[];
  const vector = vectorTypes.get(name);
  if (vector) return lowerConstructor(context, vector, args, span);
  if (name === "select") return lowerSelect(context, args, hint, span);
  const fn = Object.hasOwn(functions, name) ? functions[name] : undefined;
  if (!fn) return undefined;
  if (args.length !== fn.arity) fail("TSK2008", span, [`${name}()`, `${fn.arity} argument(s)`, `${args.length}`]);
  const operandHint = fn.result === undefined ? hint : undefined;
  const { operands, type } = lowerOperandsOf(context, `${name}()`, args, operandHint, span);
  if (!inDomain(type, fn.domain)) return fail("TSK2008", span, [`${name}()`, domainWords[fn.domain], typeName(type)]);
  if (fn.shape && (laneCount(type) < 2 || (fn.shape === "vec3" && laneCount(type) !== 3))) {
    return fail("TSK2008", span, [`${name}()`, fn.shape === "vec3" ? "vectors of 3 lanes" : "vectors", typeName(type)]);
  }
  const element = elementOf(type);
  const result: Type = fn.result === "scalar" ? element === "bool" ? "bool" : element : fn.result === "bool" ? withElement(type, "bool") : type;
  if (fn.binary) {
    // `and`/`or` of two bools is `&&`/`||` (both operands are pure, so evaluating both changes nothing); of
    // bool vectors it is the lane-by-lane `and`/`or`, which WGSL spells `&` and `|`.
    const op = laneCount(type) === 1 && fn.binary === "and" ? "logand" : laneCount(type) === 1 && fn.binary === "or" ? "logor" : fn.binary;
    return { kind: "binary", op, type: result, left: operands[0]!, right: operands[1]!, span };
  }
  if (fn.unary) {
    if (fn.unary === "neg" && element === "u32") return fail("TSK2005", span, ["neg()", typeName(type)], { notes: ["negate a u32 with sub(0, x), or convert it first"] });
    return { kind: "unary", op: fn.unary, type: result, operand: operands[0]!, span };
  }
  // all() and any() of a bool are the bool.
  if ((fn.intrinsic === "all" || fn.intrinsic === "any") && laneCount(type) === 1) return operands[0]!;
  return { kind: "intrinsic", name: fn.intrinsic!, type: result, args: operands, span };
}

/**
 * The operands of a component-wise function, lowered to one type: operands that are not literals decide it
 * (the first vector among them, else the first scalar), literals take its element, and scalars where it is
 * a vector are broadcast. `hint` decides for all-literal calls.
 */
export function lowerOperandsOf(context: FunctionContext, what: string, nodes: readonly Expression[], hint: Type | undefined, span: Span): { operands: Expr[]; type: Type } {
  const lower = context.module.lower;
  const lowered: (Expr | undefined)[] = nodes.map((node) => (lower.isLiteralLike(node) ? undefined : lower.expr(context, node)));
  const decided = lowered.find((expr) => expr !== undefined && laneCount(expr.type) > 1)?.type ?? lowered.find((expr) => expr !== undefined)?.type ?? hint;
  const elementHint = decided !== undefined && laneCount(decided) > 0 ? elementOf(decided) : undefined;
  const all = nodes.map((node, index) => lowered[index] ?? lower.expr(context, node, elementHint));
  const type = decided ?? all[0]!.type;
  const operands = all.map((operand, index) => {
    if (operand.type === type) return operand;
    if (laneCount(type) > 1 && laneCount(operand.type) === 1 && operand.type === elementOf(type)) return broadcast(operand, type as VectorType);
    return fail("TSK2008", spanOf(nodes[index]!), [`argument ${index + 1} of ${what}`, laneCount(type) > 1 ? `${typeName(type)} (or ${typeName(elementOf(type))}, for every lane)` : typeName(type), typeName(operand.type)], {
      notes: ["tskernel never converts implicitly: convert with f32(…), i32(…), u32(…) or the vector's constructor, vec3f(v)"],
    });
  });
  return { operands, type };
}

/** A vector whose every lane is `scalar`. */
export function broadcast(scalar: Expr, type: VectorType): Expr {
  return { kind: "construct", type, args: [scalar], span: scalar.span };
}

/** `select(whenFalse, whenTrue, condition)`, as WGSL orders it: lane by lane where the condition is a bool vector. */
function lowerSelect(context: FunctionContext, args: readonly Expression[], hint: Type | undefined, span: Span): Expr {
  if (args.length !== 3) return fail("TSK2008", span, ["select()", "3 arguments (the value if false, the value if true, the condition)", `${args.length}`]);
  const condition = context.module.lower.expr(context, args[2]!);
  if (laneCount(condition.type) === 0 || elementOf(condition.type) !== "bool") {
    return fail("TSK2008", spanOf(args[2]!), ["the condition of select()", "a bool or a vector of bools", typeName(condition.type)]);
  }
  const { operands, type } = lowerOperandsOf(context, "select()", args.slice(0, 2), hint, span);
  if (laneCount(condition.type) > 1 && laneCount(type) !== laneCount(condition.type)) {
    return fail("TSK2008", span, ["select()", `values of ${laneCount(condition.type)} lanes, like its condition ${typeName(condition.type)}`, typeName(type)]);
  }
  return { kind: "select", type, condition, whenTrue: operands[1]!, whenFalse: operands[0]!, span };
}

/**
 * `vec3f()` (zero), `vec3f(s)` (every lane s), `vec3f(v)` (a vector of 3 lanes of another element,
 * converted lane by lane), or scalars and vectors of its element whose lanes fill it in order.
 */
function lowerConstructor(context: FunctionContext, type: VectorType, nodes: readonly Expression[], span: Span): Expr {
  const lower = context.module.lower;
  const what = `${type.name}()`;
  if (nodes.length === 0) return broadcast({ kind: "literal", type: type.element, value: 0, span }, type);
  // The element type guides the literals inside the arguments (`vec4u(v, select(0, 1, c))`) without forcing a type.
  const args = nodes.map((node) => lower.expr(context, node, type.element));
  if (args.length === 1) {
    const only = args[0]!;
    if (laneCount(only.type) === 1 && only.type === type.element) return broadcast(only, type);
    if (laneCount(only.type) === type.size) {
      if (only.type === type) return only;
      if (elementOf(only.type) === "bool" || type.element === "bool") {
        return fail("TSK2008", spanOf(nodes[0]!), [what, `a vector of ${type.size} numbers to convert`, typeName(only.type)], { notes: ["compare to get bools (ne(v, 0)); select(…) to get numbers from bools"] });
      }
      return { kind: "convert", type, value: only, span };
    }
  }
  let lanes = 0;
  args.forEach((arg, index) => {
    if (laneCount(arg.type) === 0 || elementOf(arg.type) !== type.element) {
      fail("TSK2008", spanOf(nodes[index]!), [`argument ${index + 1} of ${what}`, `${type.element} or a vector of ${type.element}`, typeName(arg.type)], {
        notes: ["tskernel never converts implicitly: convert the argument first"],
      });
    }
    lanes += laneCount(arg.type);
  });
  if (lanes !== type.size) return fail("TSK2008", span, [what, `${type.size} lanes (or one scalar for every lane)`, `${lanes}`]);
  return { kind: "construct", type, args, span };
}

/** `v.x`, `v.zyx`: lanes of a vector value. */
export function lowerSwizzle(value: Expr, name: string, nameSpan: Span, span: Span): Expr {
  const size = laneCount(value.type);
  const lanes = parseSwizzle(name, size);
  if (!lanes) return fail("TSK1154", nameSpan, [typeName(value.type), name, [...laneNames.slice(0, size)].join(", ")], { notes: ["a swizzle names one to four of them, repeats allowed: v.x, v.zyx, v.xxyy"] });
  return { kind: "swizzle", type: lanesOf(elementOf(value.type), lanes.length), value, lanes, span };
}
