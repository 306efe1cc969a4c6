/**
 * The random program generator of the differential fuzzer (in the manner of Csmith and YARPGen): well-typed
 * kernels over i32, u32, f32 and bool with wrapping arithmetic, division and remainder of negative numbers,
 * shifts, conversions (out-of-range and NaN included), comparisons, ternaries, `Math` functions, loops with
 * break and continue, early returns, helpers, and shared arrays with barriers.
 *
 * Every program has one meaning by docs/language.md, so that any difference between backends is a bug or a
 * documented difference (compare.ts). The generator therefore avoids what the language leaves undefined:
 * integer division by zero and -2147483648 / -1 (divisors are made non-zero, dividends odd where the divisor
 * may be -1), shift amounts outside 0..31 (masked with `& 31`), out-of-bounds indices, races on shared
 * memory (each thread writes its own element; others' are read only after a barrier), and barriers in
 * non-uniform control flow.
 *
 * Floats are kept *exact* wherever they flow on: every f32 value that reaches a local, a condition, a loop or
 * an integer is an integer or dyadic fraction whose bits fit the significand (`Exact` tracks a bound on its
 * magnitude and fraction bits, and `clamp` restores the bound), so every backend must compute it bit for bit,
 * FMA contraction or not. Rounding happens only in an output's top operation (`inexact` outputs: division,
 * square root, the transcendental functions, fma, f32 `%`, large int→f32), compared within that operation's
 * stated bound; special values (NaN, infinities, huge and subnormal numbers, from the `inS` buffer) appear
 * only in `special` outputs.
 *
 * The 16- and 8-bit types (docs/language.md §26) appear where their results are still exact on every target:
 * bf16 (and in `wide` programs f16) expressions made of conversions of exact f32 values, of integers and of
 * bf16 inputs, and of + − × negation, abs, min, max and selects, each of which rounds once to its type (the
 * same bits everywhere: an f32 holds the exact sum and product of two 16-bit values, and the rounding is to
 * nearest even on every target), stored to `outH` / `outX` or converted to an integer or f32 output; an int8
 * input read as i32 (sign-extended), and int8 and uint16 outputs that keep the low bits of an integer. Wide
 * programs also store f64 sums of products of exact values (exact in f64, so FMA contraction cannot change
 * them), their square roots and quotients (correctly rounded on CUDA and the CPU), and their f32 roundings.
 *
 * Vectors (docs/language.md §27) appear inside scalar expressions, through a lane, a `dot` or `all`/`any`:
 * constructions from scalar expressions, broadcasts, component-wise add/sub/mul/min/max (with scalars
 * broadcast), negation, swizzles, float-to-integer lane conversions, comparisons and selects. Their f32
 * lanes are exact values within a bound, as scalars are, so `dot` stays exact too.
 *
 * Atomics and subgroup operations: when the language gains them, add their statement and expression
 * makers to `extensionStatements` below (and their meaning to evaluate.ts); nothing else needs to change.
 */

import type { Rng } from "../rng.ts";
import { narrowOutputs, wideOutputs, type Binary, type Expr, type FloatCheck, type HalfTy, type Helper, type InexactOp, type MathFn, type OutputBuffer, type Program, type SharedArray, type Stmt, type Ty, type VecExpr, type VecSize } from "./program.ts";

/** An exact f32 value's bound: |v| ≤ max and v·2^frac is an integer; exact while max·2^frac ≤ 2^24. */
interface Exact {
  readonly e: Expr;
  readonly max: number;
  readonly frac: number;
}

const significand = 2 ** 24;
const fits = (max: number, frac: number) => max * 2 ** frac <= significand;

/** The bound every f32 local, input and helper result keeps: |v| ≤ 4096 with at most 4 fraction bits. */
export const localBound = { max: 4096, frac: 4 } as const;
/** The bound of f32 helper arguments. */
const argumentBound = { max: 256, frac: 2 } as const;

const lit = (ty: Ty, v: number): Expr => ({ k: "lit", ty, v });
const v = (ty: Ty, name: string): Expr => ({ k: "var", ty, name });
const bin = (ty: Ty, op: Binary, a: Expr, b: Expr): Expr => ({ k: "bin", ty, op, a, b });
const math = (ty: Ty, fn: MathFn, ...args: Expr[]): Expr => ({ k: "math", ty, fn, args });

/** The types of locals, parameters and helper results (the 16-bit and f64 values appear only in outputs). */
type LocalTy = "i32" | "u32" | "f32" | "bool";

interface Local {
  readonly name: string;
  readonly ty: LocalTy;
  readonly mutable: boolean;
}

interface HelperSig {
  readonly name: string;
  readonly params: readonly LocalTy[];
  readonly ret: LocalTy;
  /** For f32 results: the bound of the value returned. */
  readonly bound?: { max: number; frac: number };
}

/** Context of the statements being generated. */
interface Scope {
  readonly locals: Local[];
  readonly parent?: Scope;
}

class Generator {
  private names = 0;
  private scope: Scope = { locals: [] };
  private loopDepth = 0;
  private helpers: HelperSig[] = [];
  private inHelper = false;
  /** Kernels with barriers have no early returns (so every barrier is reached by every thread). */
  private readonly barriers: boolean;
  private shared: SharedArray[] = [];
  private sharedWritten = new Set<string>();

  constructor(
    private readonly rng: Rng,
    private readonly block: number,
    private readonly inputs: number,
    private readonly wide = false,
  ) {
    this.barriers = rng.chance(0.35);
  }

  fresh(prefix: string): string {
    return `${prefix}${this.names++}`;
  }

  // -------------------------------------------------------------------------------------------------------
  // Names in scope

  private visible(filter: (l: Local) => boolean): Local[] {
    const out: Local[] = [];
    for (let s: Scope | undefined = this.scope; s; s = s.parent) out.push(...s.locals.filter(filter));
    return out;
  }

  private withScope<T>(body: () => T): T {
    const saved = this.scope;
    this.scope = { locals: [], parent: saved };
    try {
      return body();
    } finally {
      this.scope = saved;
    }
  }

  private declare(local: Local): void {
    this.scope.locals.push(local);
  }

  // -------------------------------------------------------------------------------------------------------
  // Expressions

  int(ty: "i32" | "u32", depth: number): Expr {
    const rng = this.rng;
    const leaf = depth <= 0 || rng.chance(0.25);
    if (leaf) return this.intLeaf(ty);
    const choice = rng.weighted<string>([[6, "arith"], [3, "bitwise"], [3, "shift"], [3, "divrem"], [1, "unary"], [2, "convert"], [1, "select"], [2, "math"], [1, "call"], [1, "vector"]]);
    const sub = () => this.int(ty, depth - 1);
    switch (choice) {
      case "vector": {
        const size = this.vectorSize();
        if (rng.chance(0.3)) return { k: "vec", ty, reduce: "dot", a: this.vector(ty, size, depth - 1).v, b: this.vector(ty, size, depth - 1).v };
        return { k: "vec", ty, reduce: "lane", a: this.vector(ty, size, depth - 1).v, lane: rng.int(size) };
      }
      case "arith":
        return bin(ty, rng.pick(["add", "sub", "mul"] as const), sub(), sub());
      case "bitwise":
        return bin(ty, rng.pick(["and", "or", "xor"] as const), sub(), sub());
      case "shift": {
        const op = rng.pick(["shl", "shr", "ushr"] as const);
        // The amount may be of the other integer type; it is kept in 0..31 (§22: CUDA differs beyond).
        const amountTy = rng.pick(["i32", "u32"] as const);
        const amount = rng.chance(0.4) ? lit(amountTy, rng.int(32)) : bin(amountTy, "and", this.int(amountTy, depth - 1), lit(amountTy, 31));
        return bin(ty, op, sub(), amount);
      }
      case "divrem":
        return this.divRem(ty, depth);
      case "unary":
        return ty === "i32" ? { k: "un", ty, op: rng.pick(["neg", "bitnot", "plus"] as const), a: sub() } : { k: "un", ty, op: rng.pick(["bitnot", "plus"] as const), a: sub() };
      case "convert": {
        const from = rng.weighted<string>([[3, "int"], [2, "float"], [1, "bool"]]);
        if (from === "bool") return { k: "conv", ty, a: this.bool(depth - 1) };
        if (from === "float") return { k: "conv", ty, a: this.exact(depth - 1).e };
        return { k: "conv", ty, a: this.int(ty === "i32" ? "u32" : "i32", depth - 1) };
      }
      case "select":
        return { k: "sel", ty, c: this.bool(depth - 1), a: sub(), b: sub() };
      case "math": {
        const fn = rng.pick(["abs", "min", "max"] as const);
        if (fn === "abs") return math(ty, "abs", sub());
        return math(ty, fn, ...Array.from({ length: rng.range(2, 3) }, sub));
      }
      default:
        return this.call(ty, depth) ?? sub();
    }
  }

  /** Integer division and remainder with a divisor that is never 0, and never -1 beside an even dividend. */
  private divRem(ty: "i32" | "u32", depth: number): Expr {
    const rng = this.rng;
    const op = rng.pick(["div", "rem"] as const);
    const a = this.int(ty, depth - 1);
    const b = this.int(ty, depth - 1);
    const mask = rng.pick([1, 7, 255, 0x7fff]);
    const positive = bin(ty, "add", bin(ty, "and", b, lit(ty, mask)), lit(ty, 1));
    if (ty === "u32" || rng.chance(0.5)) return bin(ty, op, a, positive);
    // A negative divisor: the dividend is made odd, so it is never -2147483648 (whose quotient by -1 overflows).
    return bin(ty, op, bin(ty, "or", a, lit(ty, 1)), { k: "un", ty, op: "neg", a: positive });
  }

  private intLeaf(ty: "i32" | "u32"): Expr {
    const rng = this.rng;
    const locals = this.visible((l) => l.ty === ty);
    const choice = rng.weighted<string>([[3, "literal"], [locals.length > 0 ? 5 : 0, "local"], [this.inHelper ? 0 : 3, "load"], [this.inHelper ? 0 : 2, "builtin"], [this.inHelper ? 0 : 1, "scalar"]]);
    switch (choice) {
      case "local":
        return v(ty, rng.pick(locals).name);
      case "load": {
        // The int8 input reads as an i32, sign-extended.
        if (ty === "i32" && rng.chance(0.25)) return { k: "load", ty, buf: "inB", index: this.inputIndex() };
        return { k: "load", ty, buf: ty === "i32" ? "inI" : "inU", index: this.inputIndex() };
      }
      case "builtin": {
        const name = rng.pick(["threadIdx", "blockIdx", "blockDim", "gridDim", "t"] as const);
        const e: Expr = name === "t" ? v("i32", "t") : { k: "builtin", ty: "i32", name };
        return ty === "i32" ? e : { k: "conv", ty: "u32", a: e };
      }
      case "scalar":
        return ty === "i32" ? v("i32", "sI") : v("u32", "sU");
      default:
        return lit(ty, this.intLiteral(ty));
    }
  }

  intLiteral(ty: "i32" | "u32"): number {
    const rng = this.rng;
    const edges = ty === "i32" ? [0, 1, -1, 2, -2, 3, 7, 31, 32, -7, 255, 256, 65535, 65536, 2147483647, -2147483648, 0x55555555, -0x55555556] : [0, 1, 2, 3, 7, 31, 32, 255, 65535, 65536, 2147483647, 2147483648, 4294967295, 0xaaaaaaaa];
    if (rng.chance(0.6)) return rng.pick(edges);
    const raw = rng.u32();
    return ty === "i32" ? raw | 0 : raw;
  }

  /** An index into an input buffer that is in bounds for every thread. */
  private inputIndex(): Expr {
    const k = this.rng.int(this.inputs);
    if (this.rng.chance(0.2)) return lit("i32", k);
    return bin("i32", "add", bin("i32", "mul", v("i32", "t"), lit("i32", this.inputs)), lit("i32", k));
  }

  bool(depth: number): Expr {
    const rng = this.rng;
    const locals = this.visible((l) => l.ty === "bool");
    if (depth <= 0 || rng.chance(0.2)) {
      const choice = rng.weighted<string>([[1, "literal"], [locals.length > 0 ? 3 : 0, "local"], [this.inHelper ? 0 : 1, "scalar"]]);
      if (choice === "local") return v("bool", rng.pick(locals).name);
      if (choice === "scalar") return v("bool", "sB");
      return lit("bool", rng.int(2));
    }
    const choice = rng.weighted<string>([[4, "intCompare"], [3, "floatCompare"], [2, "logic"], [1, "not"], [1, "boolEq"], [1, "call"], [1, "vector"]]);
    switch (choice) {
      case "vector": {
        const size = this.vectorSize();
        const lanes = this.vector("bool", size, depth - 1).v;
        return rng.chance(0.3) ? { k: "vec", ty: "bool", reduce: "lane", a: lanes, lane: rng.int(size) } : { k: "vec", ty: "bool", reduce: rng.pick(["all", "any"] as const), a: lanes };
      }
      case "intCompare": {
        const ty = rng.pick(["i32", "u32"] as const);
        return bin("bool", rng.pick(["eq", "ne", "lt", "le", "gt", "ge"] as const), this.int(ty, depth - 1), this.int(ty, depth - 1));
      }
      case "floatCompare":
        return bin("bool", rng.pick(["eq", "ne", "lt", "le", "gt", "ge"] as const), this.exact(depth - 1).e, this.exact(depth - 1).e);
      case "logic":
        return bin("bool", rng.pick(["logand", "logor"] as const), this.bool(depth - 1), this.bool(depth - 1));
      case "not":
        return { k: "un", ty: "bool", op: "not", a: this.bool(depth - 1) };
      case "boolEq": {
        // Comparisons on both sides: TypeScript narrows bool locals and literal conditions to `true` or
        // `false` and rejects comparing two types that do not overlap (TS2367); a comparison of numbers is
        // always of type boolean.
        const ty = rng.pick(["i32", "u32"] as const);
        const side = () => bin("bool", rng.pick(["lt", "ge", "eq"] as const), this.int(ty, depth - 1), { k: "var", ty, name: ty === "i32" ? (this.inHelper ? "" : "sI") : this.inHelper ? "" : "sU" });
        if (this.inHelper) return this.bool(depth - 1);
        return bin("bool", rng.pick(["eq", "ne"] as const), side(), side());
      }
      default:
        return this.call("bool", depth) ?? this.bool(depth - 1);
    }
  }

  /** Brings an exact value within a bound: clamp the magnitude, then round down to `frac` fraction bits. */
  clamp(x: Exact, bound: { max: number; frac: number }): Exact {
    if (x.max <= bound.max && x.frac <= bound.frac) return x;
    let e = math("f32", "min", math("f32", "max", x.e, lit("f32", -bound.max)), lit("f32", bound.max));
    if (x.frac > bound.frac) {
      // x·2^frac fits the significand (x is exact), so the scaling and the floor are exact too.
      e = bin("f32", "mul", math("f32", "floor", bin("f32", "mul", e, lit("f32", 2 ** bound.frac))), lit("f32", 2 ** -bound.frac));
    }
    return { e, max: bound.max, frac: bound.frac };
  }

  exact(depth: number): Exact {
    const rng = this.rng;
    if (depth <= 0 || rng.chance(0.25)) return this.exactLeaf();
    const choice = rng.weighted<string>([[5, "addsub"], [3, "mul"], [1, "scale"], [1, "neg"], [2, "minmax"], [2, "round"], [1, "sign"], [1, "select"], [2, "fromInt"], [1, "call"], [1, "vector"]]);
    const sub = () => this.exact(depth - 1);
    switch (choice) {
      case "vector": {
        const size = this.vectorSize();
        const a = this.vector("f32", size, depth - 1);
        const b = this.vector("f32", size, depth - 1);
        const dot = { max: size * a.bound.max * b.bound.max, frac: a.bound.frac + b.bound.frac };
        if (rng.chance(0.3) && fits(dot.max, dot.frac)) return { e: { k: "vec", ty: "f32", reduce: "dot", a: a.v, b: b.v }, ...dot };
        return { e: { k: "vec", ty: "f32", reduce: "lane", a: a.v, lane: rng.int(size) }, ...a.bound };
      }
      case "addsub": {
        const a = sub();
        const b = sub();
        const r = { e: bin("f32", rng.pick(["add", "sub"] as const), a.e, b.e), max: a.max + b.max, frac: Math.max(a.frac, b.frac) };
        return fits(r.max, r.frac) ? r : this.clamp({ ...r, max: r.max, frac: r.frac }, localBound);
      }
      case "mul": {
        let a = sub();
        let b = sub();
        if (!fits(a.max * b.max, a.frac + b.frac)) {
          a = this.clamp(a, { max: 64, frac: 2 });
          b = this.clamp(b, { max: 64, frac: 2 });
        }
        return { e: bin("f32", "mul", a.e, b.e), max: a.max * b.max, frac: a.frac + b.frac };
      }
      case "scale": {
        const a = this.clamp(sub(), localBound);
        const [factor, frac] = rng.pick([[0.5, 1], [0.25, 2], [2, 0], [4, 0]] as const);
        return { e: bin("f32", "mul", a.e, lit("f32", factor)), max: a.max * Math.max(1, factor), frac: a.frac + frac };
      }
      case "neg": {
        const a = sub();
        return { e: { k: "un", ty: "f32", op: rng.pick(["neg", "plus"] as const), a: a.e }, max: a.max, frac: a.frac };
      }
      case "minmax": {
        const a = sub();
        const b = sub();
        if (rng.chance(0.3)) return { e: math("f32", "abs", a.e), max: a.max, frac: a.frac };
        return { e: math("f32", rng.pick(["min", "max"] as const), a.e, b.e), max: Math.max(a.max, b.max), frac: Math.max(a.frac, b.frac) };
      }
      case "round": {
        const a = sub();
        return { e: math("f32", rng.pick(["floor", "ceil", "trunc"] as const), a.e), max: Math.ceil(a.max), frac: 0 };
      }
      case "sign":
        return { e: math("f32", "sign", sub().e), max: 1, frac: 0 };
      case "select": {
        const a = sub();
        const b = sub();
        return { e: { k: "sel", ty: "f32", c: this.bool(depth - 1), a: a.e, b: b.e }, max: Math.max(a.max, b.max), frac: Math.max(a.frac, b.frac) };
      }
      case "fromInt": {
        // An integer of at most 12 bits converts exactly.
        const ty = rng.pick(["i32", "u32"] as const);
        const masked = rng.chance(0.5) ? bin(ty, "and", this.int(ty, depth - 1), lit(ty, 0xfff)) : bin(ty, ty === "i32" ? "shr" : "ushr", this.int(ty, depth - 1), lit(ty, 20));
        return { e: { k: "conv", ty: "f32", a: masked }, max: 4096, frac: 0 };
      }
      default: {
        const call = this.call("f32", depth);
        const sig = call && this.helpers.find((h) => h.name === (call as { helper: string }).helper);
        return call && sig?.bound ? { e: call, ...sig.bound } : sub();
      }
    }
  }

  private vectorSize(): VecSize {
    return this.rng.pick([2, 3, 4] as const);
  }

  /**
   * A vector of `size` lanes of `ty` (f32 lanes exact, with the bound of every lane), at most a few levels
   * deep: vector operations multiply bounds quickly.
   */
  vector(ty: LocalTy, size: VecSize, depth: number): { v: VecExpr; bound: { max: number; frac: number } } {
    const rng = this.rng;
    const bound = { max: 64, frac: 2 };
    const scalar = (): Expr => (ty === "f32" ? this.clamp(this.exact(Math.min(depth, 2)), bound).e : ty === "bool" ? this.bool(Math.min(depth, 2)) : this.int(ty, Math.min(depth, 2)));
    const numeric = ty !== "bool";
    const choice = depth <= 0 || rng.chance(0.3) ? rng.pick(["make", "make", "splat"]) : rng.weighted<string>([[numeric ? 4 : 0, "bin"], [ty === "f32" || ty === "i32" ? 1 : 0, "neg"], [2, "swizzle"], [ty === "i32" || ty === "u32" ? 1 : 0, "conv"], [2, "select"], [ty === "bool" ? 4 : 0, "cmp"]]);
    const sub = (s: VecSize = size) => this.vector(ty, s, Math.min(depth - 1, 1));
    switch (choice) {
      case "bin": {
        const op = rng.pick(["add", "sub", "mul", "min", "max"] as const);
        const a = sub();
        const b = rng.chance(0.3) ? { v: undefined, e: scalar(), bound } : { ...sub(), e: undefined };
        const result = op === "mul" ? { max: a.bound.max * b.bound.max, frac: a.bound.frac + b.bound.frac } : op === "min" || op === "max" ? { max: Math.max(a.bound.max, b.bound.max), frac: Math.max(a.bound.frac, b.bound.frac) } : { max: a.bound.max + b.bound.max, frac: Math.max(a.bound.frac, b.bound.frac) };
        // Past the bound, the operation would round: the lanes are built afresh instead.
        if (ty === "f32" && !fits(result.max, result.frac)) return this.vector(ty, size, 0);
        return { v: { vk: "bin", ty, size, op, a: a.v, b: b.v ?? b.e! }, bound: result };
      }
      case "neg": {
        const a = sub();
        return { v: { vk: "neg", ty, size, a: a.v }, bound: a.bound };
      }
      case "swizzle": {
        const from = this.vectorSize();
        const a = sub(from);
        return { v: { vk: "swizzle", ty, size, a: a.v, lanes: Array.from({ length: size }, () => rng.int(from)) }, bound: a.bound };
      }
      case "conv":
        // Exact floats within ±64 truncate exactly; u32 lanes of negative ones saturate to 0.
        return { v: { vk: "conv", ty, size, a: this.vector("f32", size, Math.min(depth - 1, 1)).v }, bound };
      case "select": {
        const f = sub();
        const t = sub();
        const c = this.vector("bool", size, Math.min(depth - 1, 1)).v;
        return { v: { vk: "select", ty, size, f: f.v, t: t.v, c }, bound: { max: Math.max(f.bound.max, t.bound.max), frac: Math.max(f.bound.frac, t.bound.frac) } };
      }
      case "cmp": {
        const operand = rng.pick(["i32", "u32", "f32"] as const);
        const a = this.vector(operand, size, Math.min(depth - 1, 1)).v;
        const b = this.vector(operand, size, Math.min(depth - 1, 1)).v;
        return { v: { vk: "cmp", ty: "bool", size, op: rng.pick(["eq", "ne", "lt", "le", "gt", "ge"] as const), a, b }, bound };
      }
      case "splat":
        return { v: { vk: "splat", ty, size, a: scalar() }, bound };
      default:
        return { v: { vk: "make", ty, size, lanes: Array.from({ length: size }, scalar) }, bound };
    }
  }

  private exactLeaf(): Exact {
    const rng = this.rng;
    const locals = this.visible((l) => l.ty === "f32");
    const choice = rng.weighted<string>([[3, "literal"], [locals.length > 0 ? 5 : 0, "local"], [this.inHelper ? 0 : 3, "load"], [this.inHelper ? 0 : 1, "scalar"]]);
    if (choice === "local") return { e: v("f32", rng.pick(locals).name), ...localBound };
    if (choice === "load") return { e: { k: "load", ty: "f32", buf: "inF", index: this.inputIndex() }, ...localBound };
    if (choice === "scalar") return { e: v("f32", "sF"), ...localBound };
    const value = rng.pick([0, 1, -1, 0.5, -0.5, 2, 3, 0.25, 1.5, -2.75, 10, 100, -64, 4096]);
    return { e: lit("f32", rng.chance(0.1) ? -0 : value), max: Math.max(1, Math.abs(value)), frac: 2 };
  }

  /** A call of a helper with result type `ty`, or undefined when there is none. */
  private call(ty: Ty, depth: number): Expr | undefined {
    const candidates = this.helpers.filter((h) => h.ret === ty);
    if (candidates.length === 0) return undefined;
    const sig = this.rng.pick(candidates);
    const args = sig.params.map((p) => this.valueOf(p, depth - 1));
    return { k: "call", ty, helper: sig.name, args };
  }

  /** Any value of a type; f32 values within the helper-argument bound. */
  valueOf(ty: LocalTy, depth: number): Expr {
    if (ty === "bool") return this.bool(depth);
    if (ty === "f32") return this.clamp(this.exact(depth), argumentBound).e;
    return this.int(ty, depth);
  }

  /**
   * A bf16 or f16 value whose every operation rounds once to its type, from exact operands: conversions of
   * exact f32 values and of integers, bf16 inputs, literals, and + − ×, negation, abs, min, max and selects.
   * f16 may overflow to ±infinity (past 65504), bf16 too (products of converted u32s), the same on every target,
   * and make a NaN (inf − inf, inf · 0), which min and max treat differently on CUDA (compare.ts).
   */
  half(ty: HalfTy, depth: number): Expr {
    const rng = this.rng;
    if (depth <= 0 || rng.chance(0.3)) {
      const leaf = rng.weighted<string>([[3, "fromExact"], [2, "fromInt"], [this.inHelper ? 0 : 3, "load"], [1, "literal"], [this.wide ? 1 : 0, "fromHalf"]]);
      switch (leaf) {
        case "fromInt":
          return { k: "conv", ty, a: this.int(rng.pick(["i32", "u32"] as const), depth - 1) };
        case "load": {
          const load: Expr = { k: "load", ty: "bf16", buf: "inH", index: this.inputIndex() };
          return ty === "bf16" ? load : { k: "conv", ty, a: load };
        }
        case "literal":
          return lit(ty, rng.pick([0, 1, -1, 0.5, 1.5, -2.75, 3, 100, 0.25]));
        case "fromHalf":
          return { k: "conv", ty, a: this.half(ty === "bf16" ? "f16" : "bf16", depth - 1) };
        default:
          return { k: "conv", ty, a: this.exact(depth - 1).e };
      }
    }
    const sub = () => this.half(ty, depth - 1);
    const choice = rng.weighted<string>([[5, "arith"], [1, "neg"], [2, "minmax"], [1, "select"]]);
    switch (choice) {
      case "arith":
        return bin(ty, rng.pick(["add", "sub", "mul"] as const), sub(), sub());
      case "neg":
        return { k: "un", ty, op: "neg", a: sub() };
      case "minmax":
        return rng.chance(0.3) ? math(ty, "abs", sub()) : math(ty, rng.pick(["min", "max"] as const), sub(), sub());
      default:
        return { k: "sel", ty, c: this.bool(depth - 1), a: sub(), b: sub() };
    }
  }

  /** An f64 leaf of at most 24 significant bits: an exact f32 value, or an integer's low 20 bits. */
  private f64Leaf(depth: number): Expr {
    if (this.rng.chance(0.5)) return { k: "conv", ty: "f64", a: this.exact(depth).e };
    const ty = this.rng.pick(["i32", "u32"] as const);
    return { k: "conv", ty: "f64", a: bin(ty, "and", this.int(ty, depth), lit(ty, 0xfffff)) };
  }

  /** Sums of products of two leaves: at most 49 significant bits, exact in f64 whatever the order. */
  f64(depth: number): Expr {
    const term = () => (this.rng.chance(0.6) ? bin("f64", "mul", this.f64Leaf(depth - 1), this.f64Leaf(depth - 1)) : this.f64Leaf(depth - 1));
    return bin("f64", this.rng.pick(["add", "sub"] as const), term(), term());
  }

  // -------------------------------------------------------------------------------------------------------
  // Statements

  private localType(): LocalTy {
    return this.rng.pick(["i32", "i32", "u32", "f32", "f32", "bool"] as const);
  }

  private initialValue(ty: LocalTy, depth: number): Expr {
    if (ty === "f32") return this.clamp(this.exact(depth), localBound).e;
    return ty === "bool" ? this.bool(depth) : this.int(ty, depth);
  }

  stmts(count: number, depth: number, uniform: boolean): Stmt[] {
    const out: Stmt[] = [];
    for (let i = 0; i < count; i++) out.push(...this.stmt(depth, uniform));
    return out;
  }

  /** One statement (a few for the shared-memory pattern). `uniform`: control flow is the same for all threads. */
  private stmt(depth: number, uniform: boolean): Stmt[] {
    const rng = this.rng;
    const mutable = this.visible((l) => l.mutable);
    const topLevel = uniform && this.loopDepth === 0 && !this.inHelper && this.scope.parent === undefined;
    const choice = rng.weighted<string>([
      [5, "decl"],
      [mutable.length > 0 ? 5 : 0, "assign"],
      [depth > 0 ? 2 : 0, "if"],
      [depth > 0 && this.loopDepth < 2 ? 2 : 0, "for"],
      [depth > 0 && this.loopDepth < 2 ? 1 : 0, "while"],
      [this.loopDepth > 0 ? 1 : 0, "jump"],
      [!this.barriers && !this.inHelper ? 0.4 : 0, "return"],
      [this.barriers && topLevel ? 2 : 0, "shared"],
      ...extensionStatements.map((x) => [x.weight, x.name] as [number, string]),
    ]);
    switch (choice) {
      case "decl": {
        const ty = this.localType();
        const local = { name: this.fresh("v"), ty, mutable: rng.chance(0.6) };
        const init = this.initialValue(ty, 3);
        this.declare(local);
        return [{ k: "decl", name: local.name, ty, init, mutable: local.mutable }];
      }
      case "assign": {
        const target = rng.pick(mutable);
        if (target.ty === "f32") return [{ k: "assign", name: target.name, value: this.clamp(this.exact(3), localBound).e }];
        if (target.ty === "bool") return [{ k: "assign", name: target.name, value: this.bool(3) }];
        const ty = target.ty;
        if (rng.chance(0.5)) {
          const op = rng.pick(["add", "sub", "mul", "and", "or", "xor", "shl", "shr", "ushr"] as const);
          const value = op === "shl" || op === "shr" || op === "ushr" ? bin(ty, "and", this.int(ty, 2), lit(ty, 31)) : this.int(ty, 2);
          return [{ k: "assign", name: target.name, op, value }];
        }
        return [{ k: "assign", name: target.name, value: this.int(ty, 3) }];
      }
      case "if": {
        const c = this.bool(3);
        // A condition that may differ between threads makes everything inside non-uniform.
        const inner = uniform && this.isUniform(c);
        const then = this.withScope(() => this.stmts(rng.range(1, 3), depth - 1, inner));
        const otherwise = rng.chance(0.5) ? this.withScope(() => this.stmts(rng.range(1, 2), depth - 1, inner)) : [];
        return [{ k: "if", c, then, else: otherwise }];
      }
      case "for":
      case "while": {
        const counter = this.fresh("j");
        const count = this.loopCount();
        const inner = uniform && this.isUniform(count);
        this.loopDepth++;
        const body = this.withScope(() => {
          this.declare({ name: counter, ty: "i32", mutable: false });
          return this.stmts(rng.range(1, 3), depth - 1, inner);
        });
        this.loopDepth--;
        if (choice === "while") return [{ k: "while", v: counter, count, body }];
        return [{ k: "for", v: counter, count, body, unroll: count.k === "lit" && rng.chance(0.3) }];
      }
      case "jump":
        return [{ k: "if", c: this.bool(2), then: [{ k: rng.pick(["break", "continue"] as const) }], else: [] }];
      case "return":
        return [{ k: "if", c: this.bool(2), then: [{ k: "return" }], else: [] }];
      case "shared":
        return this.sharedPhase();
      default: {
        const extension = extensionStatements.find((x) => x.name === choice);
        return extension ? extension.make(this) : [];
      }
    }
  }

  /** Trip counts: literals, or small values of scalar parameters (uniform) or of the thread index (not). */
  private loopCount(): Expr {
    const rng = this.rng;
    return rng.weighted<Expr>([
      [3, lit("i32", rng.range(0, 5))],
      [this.inHelper ? 0 : 2, bin("i32", "and", v("i32", "sI"), lit("i32", 3))],
      [this.inHelper ? 0 : 1, { k: "conv", ty: "i32", a: bin("u32", "and", v("u32", "sU"), lit("u32", 3)) }],
      [this.inHelper || this.barriers ? 0 : 1, bin("i32", "and", v("i32", "tl"), lit("i32", 3))],
    ]);
  }

  /** Conservatively: does the expression have the same value on every thread of a block? */
  private isUniform(e: Expr): boolean {
    switch (e.k) {
      case "lit":
        return true;
      case "var":
        return ["sI", "sU", "sF", "sB"].includes(e.name);
      case "builtin":
        return e.name !== "threadIdx";
      case "un":
      case "conv":
        return this.isUniform(e.a);
      case "bin":
        return this.isUniform(e.a) && this.isUniform(e.b);
      default:
        return false;
    }
  }

  /**
   * Each thread writes its own element of a shared array, a barrier makes the writes visible, the thread
   * reads another thread's element into a local, and a second barrier ends the reads before any later write.
   */
  private sharedPhase(): Stmt[] {
    const rng = this.rng;
    const ty = rng.pick(["i32", "u32", "f32"] as const);
    let array = this.shared.find((a) => a.ty === ty && !this.sharedWritten.has(a.name));
    if (!array || rng.chance(0.3)) {
      array = { name: this.fresh(`sh${ty}`), ty };
      this.shared.push(array);
    }
    this.sharedWritten.add(array.name);
    const value = ty === "f32" ? this.clamp(this.exact(3), localBound).e : this.int(ty as "i32" | "u32", 3);
    const tl = v("i32", "tl");
    const other = rng.pick([
      bin("i32", "rem", bin("i32", "add", tl, lit("i32", rng.range(0, this.block))), lit("i32", this.block)),
      bin("i32", "sub", lit("i32", this.block - 1), tl),
      lit("i32", rng.int(this.block)),
      tl,
    ]);
    const local = { name: this.fresh("r"), ty, mutable: false };
    const read: Stmt = { k: "decl", name: local.name, ty, init: { k: "shload", ty, arr: array.name, index: other }, mutable: false };
    this.declare(local);
    // The array may be written again by a later phase, after the second barrier.
    this.sharedWritten.delete(array.name);
    return [{ k: "shstore", arr: array.name, value }, { k: "barrier" }, read, { k: "barrier" }];
  }

  // -------------------------------------------------------------------------------------------------------
  // Helpers and outputs

  helper(): Helper {
    const rng = this.rng;
    const name = this.fresh("h");
    const params = Array.from({ length: rng.range(1, 3) }, () => ({ name: this.fresh("p"), ty: this.localType() }));
    const ret = this.localType();
    this.inHelper = true;
    const saved = this.scope;
    this.scope = { locals: params.map((p) => ({ name: p.name, ty: p.ty, mutable: false })) };
    const body = this.stmts(rng.range(0, 3), 2, false);
    const result = ret === "f32" ? this.clamp(this.exact(3), localBound) : undefined;
    const resultExpr = result ? result.e : ret === "bool" ? this.bool(3) : this.int(ret as "i32" | "u32", 3);
    this.scope = saved;
    this.inHelper = false;
    // f32 parameters hold at most the argument bound (call sites clamp them).
    this.helpers.push({ name, params: params.map((p) => p.ty), ret, bound: ret === "f32" ? localBound : undefined });
    return { name, params, ret, body, result: resultExpr };
  }

  output(buf: OutputBuffer, slot: number): Stmt {
    const rng = this.rng;
    switch (buf) {
      case "outH":
      case "outX":
        return { k: "out", buf, slot, value: this.half(buf === "outH" ? "bf16" : "f16", 4) };
      case "outB":
      case "outW":
        // Integers of any size: the store keeps the low 8 (16) bits.
        return { k: "out", buf, slot, value: this.int(buf === "outB" ? "i32" : "u32", 4) };
      case "outD": {
        const value = this.f64(3);
        // The exact f64, or its square root or a quotient (correctly rounded on CUDA and the CPU).
        const kind = rng.weighted<string>([[3, "exact"], [1, "sqrt"], [1, "div"]]);
        if (kind === "sqrt") return { k: "out", buf, slot, value: math("f64", "sqrt", math("f64", "abs", value)) };
        if (kind === "div") return { k: "out", buf, slot, value: bin("f64", "div", value, bin("f64", "add", math("f64", "abs", this.f64Leaf(2)), lit("f64", 0.5))) };
        return { k: "out", buf, slot, value };
      }
    }
    // Halves widened or converted: exactly, or truncated and saturated as from f32.
    if (rng.chance(0.15) && buf !== "outF") return { k: "out", buf, slot, value: { k: "conv", ty: buf === "outI" ? "i32" : "u32", a: this.half(this.wide && rng.chance(0.5) ? "f16" : "bf16", 3) } };
    if (rng.chance(0.1) && buf === "outF") {
      const from: Expr = this.wide && rng.chance(0.4) ? this.f64(2) : this.half(this.wide && rng.chance(0.5) ? "f16" : "bf16", 3);
      return { k: "out", buf, slot, value: { k: "conv", ty: "f32", a: from }, check: { kind: "exact" } };
    }
    if (buf !== "outF") {
      const ty = buf === "outI" ? "i32" : "u32";
      // Integers from special floats: the conversions' saturation and NaN rule.
      if (rng.chance(0.25)) return { k: "out", buf, slot, value: { k: "conv", ty, a: this.special(2) } };
      if (rng.chance(0.1)) return { k: "out", buf, slot, value: { k: "conv", ty, a: bin("bool", rng.pick(["lt", "eq", "ge"] as const), this.special(1), this.exact(2).e) } };
      return { k: "out", buf, slot, value: this.int(ty, 4) };
    }
    const kind = rng.weighted<string>([[3, "exact"], [4, "inexact"], [2, "special"]]);
    if (kind === "exact") return { k: "out", buf, slot, value: this.exact(4).e, check: { kind: "exact" } };
    if (kind === "special") return { k: "out", buf, slot, value: this.special(2), check: { kind: "special" } };
    const { e, op } = this.inexact();
    const check: FloatCheck = { kind: "inexact", op };
    return { k: "out", buf, slot, value: e, check };
  }

  /** A value made from the special inputs by one operation whose result every target rounds the same. */
  private special(depth: number): Expr {
    const rng = this.rng;
    const s: Expr = { k: "load", ty: "f32", buf: "inS", index: this.inputIndex() };
    if (depth <= 0) return s;
    return rng.weighted<Expr>([
      [2, s],
      [1, { k: "un", ty: "f32", op: "neg", a: s }],
      [1, math("f32", "abs", s)],
      [1, math("f32", rng.pick(["floor", "ceil", "trunc"] as const), s)],
      [2, bin("f32", rng.pick(["add", "sub", "mul"] as const), s, this.exact(depth).e)],
      [1, { k: "sel", ty: "f32", c: this.bool(1), a: s, b: this.exact(1).e }],
    ]);
  }

  /** One rounding operation on exact arguments, within its domain. */
  private inexact(): { e: Expr; op: InexactOp } {
    const rng = this.rng;
    const op = rng.pick(["div", "sqrt", "exp", "log", "log2", "pow", "sin", "cos", "tan", "tanh", "atan2", "fma", "rem", "fromInt"] as const);
    const x = () => this.exact(3);
    const nonZero = () => {
      const d = x();
      return { k: "sel", ty: "f32", c: bin("bool", "eq", d.e, lit("f32", 0)), a: lit("f32", 3), b: d.e } as Expr;
    };
    const within = (max: number) => this.clamp(x(), { max, frac: 4 }).e;
    const positive = (max: number) => bin("f32", "add", math("f32", "abs", within(max)), lit("f32", 0.5));
    switch (op) {
      case "div":
      case "rem":
        return { e: bin("f32", op, x().e, nonZero()), op };
      case "sqrt":
        return { e: math("f32", "sqrt", math("f32", "abs", x().e)), op };
      case "exp":
        return { e: math("f32", "exp", within(16)), op };
      case "log":
      case "log2":
        return { e: math("f32", op, positive(4096)), op };
      case "pow":
        return { e: math("f32", "pow", positive(3.5), within(4)), op };
      case "sin":
      case "cos":
        return { e: math("f32", op, within(3)), op };
      case "tan":
        return { e: math("f32", "tan", within(1)), op };
      case "tanh":
        return { e: math("f32", "tanh", within(4)), op };
      case "atan2":
        return { e: math("f32", "atan2", x().e, positive(4096)), op };
      case "fma":
        return { e: math("f32", "fma", this.clamp(x(), localBound).e, this.clamp(x(), localBound).e, x().e), op };
      default: {
        const ty = rng.pick(["i32", "u32"] as const);
        return { e: { k: "conv", ty: "f32", a: this.int(ty, 3) }, op: "fromInt" };
      }
    }
  }

  program(name: string, grid: number, slots: number): Program {
    const rng = this.rng;
    const helpers = Array.from({ length: rng.range(0, 3) }, () => this.helper());
    const body = this.stmts(rng.range(3, 10), 3, true);
    for (const buf of ["outI", "outU", "outF", ...narrowOutputs, ...(this.wide ? wideOutputs : [])] as const) {
      for (let slot = 0; slot < slots; slot++) body.push(this.output(buf, slot));
    }
    return { name, block: this.block, grid, slots, inputs: this.inputs, helpers, shared: this.shared, body, wide: this.wide };
  }
}

/**
 * Statement kinds added by later language features (atomics, subgroup operations): each makes statements
 * with the generator's expression makers; its meaning goes into evaluate.ts. Empty until those exist.
 */
export const extensionStatements: { readonly name: string; readonly weight: number; readonly make: (g: Generator) => Stmt[] }[] = [];

export type { Generator };

/**
 * A random program: block and grid shape, helpers, body, then every output slot of every buffer. `wide`: with
 * the f16 and f64 outputs, for CUDA and the CPU.
 */
export function generateProgram(rng: Rng, name: string, options: { wide?: boolean } = {}): Program {
  const block = rng.pick([1, 2, 3, 32, 64, 64, 100, 128, 256]);
  const grid = rng.range(1, 3);
  const inputs = rng.range(1, 4);
  const slots = rng.range(2, 6);
  return new Generator(rng, block, inputs, options.wide ?? false).program(name, grid, slots);
}
