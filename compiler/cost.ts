/**
 * A static estimate of what one thread of a kernel specialization costs: the bytes it moves to and from
 * global memory and the floating-point operations it performs, and their ratio, the compute-to-global-memory-
 * access ratio the seed articles reason with (the tiled matmul's is TILE/4 flops per byte, the naive one's 1/4).
 * `tskernel report` prints it, and the benchmarks' rooflines place kernels with it.
 *
 * Counts are polynomials in the trip counts of the loops whose bounds are known only at run time (`for (t = 0;
 * t < k; t += TILE)`): each such loop is a variable, named by where it is; a loop whose bounds are constants
 * after specialization multiplies its body by its trip count. Where control flow chooses (`if`, `?:`), each
 * term takes the larger branch, so the estimate is of a thread that takes the longest path; `break`,
 * `continue` and `return` are not followed. What counts:
 * - global bytes: every load and store of a global buffer's element (its size: 4 bytes for f32, 2 for f16,
 *   1 for u8, 12 for a vec3f, a struct's padded size; a field or lanes of an element, just those; the elements
 *   of a vector access, 16 bytes; 16 bytes each way for copyAsync4/8/16; a fragment's elements for a matrix load or
 *   store; an atomic's read and write);
 * - flops: floating-point `+ - * /` (compound assignments too), one per lane of a vector, and the functions as
 *   intrinsicFlops counts them (2 for fma, 1 for sqrt, exp, log, pow, the trigonometric and hyperbolic
 *   functions, none for min, max, abs, rounding or comparisons, dot as 2n − 1, …); a warp's mma is 2·m·n·k
 *   shared by its 32 threads, a warpgroup's wgmma the same over its 128. Subgroup operations count no flops.
 * A tensor copy's (copyTile) box is the tensor map's, known only at run time: it is not counted, and a note
 * says so.
 */

import type { Span } from "./diagnostics/span.ts";
import { assertNever, asyncCopyLanes, isFragmentOperand, type ArrayRef, type Expr, type ForStmt, type HelperFunction, type Kernel, type Stmt, type WarpgroupShape } from "./ir/ir.ts";
import { isInteger, layoutOf, scalars, type ElementType, type Type } from "./ir/types.ts";
import { fragmentLayout, warpgroupDepth, warpLanes, warpgroupLanes } from "./ir/matrix.ts";

/** A polynomial: each term's product of loop variables (sorted names joined by "·"; "" for the constant) to its coefficient. */
export type Polynomial = ReadonlyMap<string, number>;

export interface CostEstimate {
  /** Bytes one thread reads from and writes to global memory. */
  readonly globalBytes: Polynomial;
  /** Floating-point operations of one thread. */
  readonly flops: Polynomial;
  /** The loops whose trip count is known only at run time, by the name their variable has in the polynomials. */
  readonly loops: readonly { readonly name: string; readonly span: Span }[];
  /** What the estimate leaves out. */
  readonly notes: readonly string[];
}

/** How many times a loop runs before it gives up simulating one with constant bounds. */
const maxSimulatedTrips = 1 << 20;

const arithmetic = new Set<string>(["add", "sub", "mul", "div"]);

/** Bytes of a value of a type as it lies in a buffer (a vec3f: 12; a struct: its padded size). */
function valueBytes(type: Type | ElementType): number {
  return layoutOf(type === "bool" ? "u32" : type).size;
}

/** Lanes of a type: a vector's size, 1 for a scalar (a struct is not computed on). */
function lanes(type: Type): number {
  return typeof type === "object" && type.kind === "vector" ? type.size : 1;
}

function isFloatType(type: Type | ElementType): boolean {
  if (typeof type === "string") return scalars[type].class === "float";
  return type.kind === "vector" && type.element !== "bool" && scalars[type.element].class === "float";
}

/**
 * The flops of an intrinsic on operands of type `operand` giving `result`: per lane, 2 for fma, 1 for the
 * transcendental functions, 3 for mix, 4 for smoothstep, none for the choosing and rounding ones (min, max,
 * clamp, step, fract, saturate, sign…); the vector functions as their arithmetic (dot: 2n − 1, length: 2n,
 * distance: 3n, normalize: 3n + 1, cross: 9, reflect: 4n + 1, faceForward: 2n − 1).
 */
function intrinsicFlops(name: string, operand: Type, result: Type): number {
  if (!isFloatType(operand) && !isFloatType(result)) return 0;
  const n = lanes(operand);
  switch (name) {
    case "fma":
      return 2 * n;
    case "mix":
      return 3 * n;
    case "smoothstep":
      return 4 * n;
    case "dot":
    case "faceForward":
      return 2 * n - 1;
    case "length":
      return 2 * n;
    case "distance":
      return 3 * n;
    case "normalize":
      return 3 * n + 1;
    case "cross":
      return 9;
    case "reflect":
      return 4 * n + 1;
    default:
      return transcendental.has(name) ? n : 0;
  }
}

const transcendental = new Set(["sqrt", "inverseSqrt", "exp", "exp2", "log", "log2", "pow", "sin", "cos", "tan", "tanh", "atan2"]);

type Terms = Map<string, number>;

function add(into: Terms, from: Polynomial, scale = 1): void {
  for (const [term, coefficient] of from) into.set(term, (into.get(term) ?? 0) + coefficient * scale);
}

/** Each term's coefficient the larger of the two: the longer branch, term by term. */
function larger(a: Polynomial, b: Polynomial): Terms {
  const out: Terms = new Map(a);
  for (const [term, coefficient] of b) out.set(term, Math.max(out.get(term) ?? 0, coefficient));
  return out;
}

/** `p` times the loop variable `name`. */
function times(p: Polynomial, name: string): Terms {
  const out: Terms = new Map();
  for (const [term, coefficient] of p) {
    const factors = term === "" ? [name] : [...term.split("·"), name].sort();
    out.set(factors.join("·"), coefficient);
  }
  return out;
}

interface Cost {
  readonly bytes: Terms;
  readonly flops: Terms;
}

const empty = (): Cost => ({ bytes: new Map(), flops: new Map() });

/**
 * Estimates one specialization (constants already replaced by literals). `loopName` names a loop whose trip
 * count is not constant, from its span (the CLI uses the line: `L12`); distinct loops need distinct names.
 */
export function estimateCost(kernel: Kernel, loopName: (span: Span) => string): CostEstimate {
  const loops = new Map<string, Span>();
  const notes = new Set<string>();
  const helperCosts = new Map<HelperFunction, Cost>();

  const elementBytes = (array: ArrayRef) => (array.space === "global" ? valueBytes(array.elementType) : 0);
  /** A part of an element (`p[i].pos`, `v[i].x`) moves its own bytes. */
  const partBytes = (array: ArrayRef, part: Type) => (array.space === "global" ? valueBytes(part) : 0);
  /** One element's scalar bytes, for the vector accesses of scalar arrays. */
  const scalarElementBytes = (array: ArrayRef) => (array.space === "global" && typeof array.elementType === "string" ? scalars[array.elementType].bytes : 0);

  function expr(e: Expr, cost: Cost): void {
    switch (e.kind) {
      case "literal":
      case "variable":
      case "constRef":
      case "builtin":
      case "subgroupBuiltin":
        return;
      case "unary":
        return expr(e.operand, cost);
      case "binary":
        if (isFloatType(e.type) && arithmetic.has(e.op)) add(cost.flops, new Map([["", lanes(e.type)]]));
        expr(e.left, cost);
        return expr(e.right, cost);
      case "select": {
        expr(e.condition, cost);
        const whenTrue = empty();
        const whenFalse = empty();
        expr(e.whenTrue, whenTrue);
        expr(e.whenFalse, whenFalse);
        add(cost.bytes, larger(whenTrue.bytes, whenFalse.bytes));
        add(cost.flops, larger(whenTrue.flops, whenFalse.flops));
        return;
      }
      case "convert":
        return expr(e.value, cost);
      case "intrinsic":
        add(cost.flops, new Map([["", intrinsicFlops(e.name, e.args[0]?.type ?? e.type, e.type)]]));
        for (const arg of e.args) expr(arg, cost);
        return;
      case "call": {
        for (const arg of e.args) expr(arg, cost);
        const helper = helperCost(e.callee);
        add(cost.bytes, helper.bytes);
        add(cost.flops, helper.flops);
        return;
      }
      case "load":
        add(cost.bytes, new Map([["", elementBytes(e.array)]]));
        for (const index of e.indices) expr(index, cost);
        return;
      case "construct":
        for (const arg of e.args) expr(arg, cost);
        return;
      case "swizzle":
      case "field":
        // A part of a loaded element is all the load moves (`p[i].pos` reads the field, not the struct).
        if (e.value.kind === "load") {
          add(cost.bytes, new Map([["", partBytes(e.value.array, e.type)]]));
          for (const index of e.value.indices) expr(index, cost);
          return;
        }
        return expr(e.value, cost);
      case "check":
        // Only checked builds have checks, and the estimate is of the kernel as written.
        throw new Error("internal: the cost estimate reads kernels before checks are inserted");
      default:
        return assertNever(e, "expression");
    }
  }

  function helperCost(helper: HelperFunction): Cost {
    const known = helperCosts.get(helper);
    if (known) return known;
    const cost = empty();
    stmts(helper.body, cost);
    helperCosts.set(helper, cost);
    return cost;
  }

  function stmts(list: readonly Stmt[], cost: Cost): void {
    for (const s of list) stmt(s, cost);
  }

  function stmt(s: Stmt, cost: Cost): void {
    const each = (...exprs: (Expr | undefined)[]) => {
      for (const e of exprs) if (e) expr(e, cost);
    };
    const bytes = (n: number) => add(cost.bytes, new Map([["", n]]));
    const flops = (n: number) => add(cost.flops, new Map([["", n]]));
    switch (s.kind) {
      case "declare":
        return each(s.init);
      case "assign":
        if (s.op && isFloatType(s.value.type) && arithmetic.has(s.op)) flops(lanes(s.value.type));
        return each(s.value);
      case "store":
        // `a[i] op= v` reads the element too; a store to a part of an element (`p[i].pos = v`) moves the part.
        bytes((s.path ? partBytes(s.array, s.value.type) : elementBytes(s.array)) * (s.op ? 2 : 1));
        if (s.op && isFloatType(s.value.type) && arithmetic.has(s.op)) flops(lanes(s.value.type));
        return each(...s.indices, s.value);
      case "if": {
        each(s.condition);
        const then = empty();
        const otherwise = empty();
        stmts(s.then, then);
        stmts(s.else, otherwise);
        add(cost.bytes, larger(then.bytes, otherwise.bytes));
        add(cost.flops, larger(then.flops, otherwise.flops));
        return;
      }
      case "for": {
        stmts(s.init, cost);
        const body = empty();
        if (s.condition) expr(s.condition, body);
        stmts(s.body, body);
        stmts(s.update, body);
        const trips = constantTrips(s);
        if (trips !== undefined) {
          add(cost.bytes, body.bytes, trips);
          add(cost.flops, body.flops, trips);
        } else {
          const name = loopName(s.span);
          loops.set(name, s.span);
          add(cost.bytes, times(body.bytes, name));
          add(cost.flops, times(body.flops, name));
        }
        return;
      }
      case "while": {
        const body = empty();
        expr(s.condition, body);
        stmts(s.body, body);
        const name = loopName(s.span);
        loops.set(name, s.span);
        add(cost.bytes, times(body.bytes, name));
        add(cost.flops, times(body.flops, name));
        return;
      }
      case "block":
        return stmts(s.body, cost);
      case "break":
      case "continue":
      case "barrier":
      case "fence":
      case "asyncCommit":
      case "asyncWait":
      case "wgmmaSync":
      case "setMaxRegisters":
        return;
      case "return":
        return each(s.value);
      case "vectorLoad":
        // 16 bytes: four, eight or sixteen elements, one local each.
        bytes(s.targets.length * scalarElementBytes(s.array));
        return each(...s.indices);
      case "vectorStore":
        bytes(s.values.length * scalarElementBytes(s.array));
        return each(...s.indices, ...s.values);
      case "asyncCopy":
        bytes(asyncCopyLanes(s) * (elementBytes(s.source) + elementBytes(s.target)));
        return each(...s.targetIndices, ...s.sourceIndices);
      case "atomic":
        bytes(elementBytes(s.array) * (s.op === "load" || s.op === "store" ? 1 : 2));
        if (isFloatType(s.array.elementType) && (s.op === "add" || s.op === "sub")) flops(1);
        return each(...s.indices, s.value, s.expected);
      case "collective":
        return each(...s.args);
      case "matrixLoad":
        bytes(fragmentLayout(s.fragment.array.fragment!).perLane * elementBytes(s.source));
        return each(s.fragment.index, s.offset, s.stride, s.colStride);
      case "matrixStore":
        bytes(fragmentLayout(s.fragment.array.fragment!).perLane * elementBytes(s.target));
        return each(s.fragment.index, s.offset, s.stride, s.colStride);
      case "mma": {
        const { rows, cols } = fragmentLayout(s.accumulator.array.fragment!);
        const depth = fragmentLayout(s.a.array.fragment!).cols;
        flops((2 * rows * cols * depth) / warpLanes);
        return each(s.accumulator.index, s.a.index, s.b.index);
      }
      case "wgmma": {
        const { rows, cols } = fragmentLayout(s.accumulator.array.fragment!);
        const depth = warpgroupDepth(s.accumulator.array.fragment!.shape as WarpgroupShape);
        flops((2 * rows * cols * depth) / warpgroupLanes);
        // A is a register fragment (TF32 shapes, and 16-bit ones so written) or read from shared memory like B.
        return isFragmentOperand(s.a) ? each(s.accumulator.index, s.a.index, s.offset, s.bBoxRows) : each(s.accumulator.index, s.a.offset, s.offset, s.bBoxRows);
      }
      case "barrierOp":
        return each(s.index, s.value);
      case "tileCopy":
        notes.add("copyTile's boxes are not counted: their size is the tensor map's, known only at run time");
        return each(s.offset, s.x, s.y, s.index);
      case "tileStore":
        notes.add("storeTile's boxes are not counted: their size is the tensor map's, known only at run time");
        return each(s.offset, s.x, s.y);
      case "tileStoreWait":
        return;
      default:
        return assertNever(s, "statement");
    }
  }

  const cost = empty();
  stmts(kernel.body, cost);
  const clean = (terms: Terms): Polynomial => new Map([...terms].filter(([, coefficient]) => coefficient !== 0).sort(([a], [b]) => termOrder(a, b)));
  return { globalBytes: clean(cost.bytes), flops: clean(cost.flops), loops: [...loops].map(([name, span]) => ({ name, span })), notes: [...notes] };
}

/** Higher-degree terms first, then by name: the order terms print in. */
function termOrder(a: string, b: string): number {
  return degree(b) - degree(a) || a.localeCompare(b);
}

/**
 * How many times a `for` runs when its variable starts at a constant, is compared with a constant and steps
 * by a constant (`for (let i = 0; i < 16; i += 4)`, `for (let s = 128; s > 0; s >>= 1)`); undefined when any
 * of these is known only at run time, or the body assigns the variable too.
 */
export function constantTrips(loop: ForStmt): number | undefined {
  const [init] = loop.init;
  if (loop.init.length !== 1 || !init || loop.update.length !== 1 || !loop.condition) return undefined;
  const variable = init.kind === "declare" ? init.variable : init.kind === "assign" && !init.op ? init.variable : undefined;
  const startExpr = init.kind === "declare" ? init.init : init.kind === "assign" ? init.value : undefined;
  const start = startExpr && constantValue(startExpr);
  if (!variable || start === undefined) return undefined;
  const condition = loop.condition;
  if (condition.kind !== "binary" || condition.left.kind !== "variable" || condition.left.variable !== variable) return undefined;
  const bound = constantValue(condition.right);
  const update = loop.update[0]!;
  if (bound === undefined || update.kind !== "assign" || update.variable !== variable || !update.op) return undefined;
  const step = constantValue(update.value);
  if (step === undefined) return undefined;
  let assignedInBody = false;
  const visit = (list: readonly Stmt[]) => {
    for (const s of list) {
      if (s.kind === "assign" && s.variable === variable) assignedInBody = true;
      if (s.kind === "if") (visit(s.then), visit(s.else));
      if (s.kind === "for") (visit(s.init), visit(s.body), visit(s.update));
      if (s.kind === "while" || s.kind === "block") visit(s.body);
    }
  };
  visit(loop.body);
  if (assignedInBody) return undefined;
  const holds = (v: number): boolean | undefined => {
    switch (condition.op) {
      case "lt": return v < bound;
      case "le": return v <= bound;
      case "gt": return v > bound;
      case "ge": return v >= bound;
      case "ne": return v !== bound;
      default: return undefined;
    }
  };
  const next = (v: number): number | undefined => {
    switch (update.op) {
      case "add": return v + step;
      case "sub": return v - step;
      case "mul": return v * step;
      case "div": return step === 0 ? undefined : Math.trunc(v / step);
      case "shl": return v << step;
      case "shr": return v >> step;
      default: return undefined;
    }
  };
  let value = start;
  for (let trips = 0; trips <= maxSimulatedTrips; trips++) {
    const going = holds(value);
    if (going === undefined) return undefined;
    if (!going) return trips;
    const following = next(value);
    if (following === undefined || following === value) return undefined;
    value = following;
  }
  return undefined;
}

/**
 * The value of an expression of literals (`BLOCK / 2` once BLOCK is 256), with integer division truncating;
 * undefined when it reads anything else.
 */
function constantValue(e: Expr): number | undefined {
  if (e.kind === "literal") return e.value;
  if (e.kind === "unary" && e.op === "neg") {
    const v = constantValue(e.operand);
    return v === undefined ? undefined : -v;
  }
  if (e.kind !== "binary") return undefined;
  const left = constantValue(e.left);
  const right = constantValue(e.right);
  if (left === undefined || right === undefined) return undefined;
  switch (e.op) {
    case "add": return left + right;
    case "sub": return left - right;
    case "mul": return left * right;
    case "div": return right === 0 ? undefined : isInteger(e.type) ? Math.trunc(left / right) : left / right;
    case "shl": return left << right;
    case "shr": return left >> right;
    default: return undefined;
  }
}

/** A term's degree: how many loop variables it multiplies. */
function degree(term: string): number {
  return term === "" ? 0 : term.split("·").length;
}

/** The highest degree of a polynomial's terms and the sum of their coefficients; degree -1 for zero. */
export function leadingTerms(p: Polynomial): { degree: number; coefficient: number } {
  const top = Math.max(-1, ...[...p.keys()].map(degree));
  return { degree: top, coefficient: [...p].filter(([term]) => degree(term) === top).reduce((sum, [, c]) => sum + c, 0) };
}

/**
 * flops per global byte as the loops that move global memory grow: the ratio of the flops' and the bytes'
 * terms of the bytes' highest degree (for the naive matmul 2·L / 8·L; for a kernel without run-time loops
 * over memory, its constants). Flops in run-time loops that move no global memory, whose trip counts the
 * source does not give (a reduction over the lanes of a subgroup), are not in it. undefined when the kernel
 * moves no global bytes.
 */
export function intensity(estimate: Pick<CostEstimate, "flops" | "globalBytes">): number | undefined {
  const bytes = leadingTerms(estimate.globalBytes);
  if (bytes.degree < 0 || bytes.coefficient === 0) return undefined;
  const flops = [...estimate.flops].filter(([term]) => degree(term) === bytes.degree).reduce((sum, [, c]) => sum + c, 0);
  return flops / bytes.coefficient;
}

/** A polynomial as people write it: `8·L12 + 4`, `0`. */
export function formatPolynomial(p: Polynomial): string {
  const terms = [...p].map(([term, coefficient]) => {
    const value = Number.isInteger(coefficient) ? String(coefficient) : coefficient.toFixed(2);
    return term === "" ? value : coefficient === 1 ? term : `${value}·${term}`;
  });
  return terms.length === 0 ? "0" : terms.join(" + ");
}
