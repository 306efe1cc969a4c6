/**
 * What a checked build can prove about an integer before it checks it (passes/checks.ts): for each expression
 * an interval it surely lies in and a power of two it is surely a multiple of, so that a check whose condition
 * holds for every value in them is left out. Register tiles and shared-memory tiles are indexed by loop counters
 * (unrolled or not), thread indices of a fixed block and constants: their indices are in range by construction,
 * and checking each access made the tiled matmul rungs' checked WGSL up to ×27 slower than the plain one.
 *
 * The facts come from one walk over the body: a fixed block's thread indices (0 … size − 1), a subgroup's size
 * (1 … 128) and lane (0 … 127); a `const` local,
 * from its initializer (joined over every declaration of the same variable, which unrolling repeats); a loop
 * counter of `for (let i = a; i < b; i += s)` (s > 0 a literal, i assigned nowhere else), from a and b; a
 * variable given several values (`stage = 1 - stage`), from the join of them all once it settles (settle); every
 * other variable, parameter or value is anything its type holds. The arithmetic is exact (JavaScript numbers on
 * values below 2^33): an operation whose exact result could leave its type's range, where WGSL and CUDA wrap,
 * gives the whole range. Multiples of powers of two survive wrapping, so they are kept there.
 */

import type { Expr, ForStmt, ScalarType, Stmt, Variable } from "../ir/ir.ts";
import { declaredVariables } from "../ir/ir.ts";
import { walkExpr, walkStmts } from "../ir/rewrite.ts";

/** An integer's interval [lo, hi] and a power of two it is a multiple of (`align`, at most 2^31). */
export interface Fact {
  readonly lo: number;
  readonly hi: number;
  readonly align: number;
}

const maxAlign = 2 ** 31;
const typeRange: Partial<Record<ScalarType, readonly [number, number]>> = { i32: [-(2 ** 31), 2 ** 31 - 1], u32: [0, 2 ** 32 - 1], bool: [0, 1] };

/** The whole range of a type (an unknown value of it). */
function anything(type: unknown, align = 1): Fact {
  const range = typeof type === "string" ? typeRange[type as ScalarType] : undefined;
  return range ? { lo: range[0], hi: range[1], align } : { lo: -Infinity, hi: Infinity, align };
}

/** The largest power of two (at most 2^31) that divides an integer; 2^31 for 0. */
function alignOf(value: number): number {
  if (value === 0) return maxAlign;
  let align = 1;
  while (align < maxAlign && Number.isInteger(value / (align * 2))) align *= 2;
  return align;
}

/** [lo, hi] within `type`'s range, else the whole range (the operation may have wrapped), keeping `align`. */
function within(type: unknown, lo: number, hi: number, align: number): Fact {
  const range = typeof type === "string" ? typeRange[type as ScalarType] : undefined;
  const a = Math.min(align, maxAlign);
  if (!range || !(lo >= range[0] && hi <= range[1])) return anything(type, a);
  if (lo === hi) return { lo, hi, align: Math.max(a, alignOf(lo)) };
  return { lo, hi, align: a };
}

function join(a: Fact, b: Fact): Fact {
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi), align: Math.min(a.align, b.align) };
}

function constant(fact: Fact): number | undefined {
  return fact.lo === fact.hi ? fact.lo : undefined;
}

/** A loop `for (let i = start; i < bound (or <=); i += step)`, step a positive integer literal. */
interface Counter {
  readonly variable: Variable;
  readonly start: Expr;
  readonly bound: Expr;
  readonly inclusive: boolean;
  readonly step: number;
}

function counterOf(loop: ForStmt): Counter | undefined {
  const declare = loop.init.length === 1 ? loop.init[0] : undefined;
  if (declare?.kind !== "declare" || !declare.init) return undefined;
  const variable = declare.variable;
  if (variable.type !== "i32" && variable.type !== "u32") return undefined;
  const update = loop.update.length === 1 ? loop.update[0] : undefined;
  if (update?.kind !== "assign" || update.variable !== variable || update.path) return undefined;
  const value = update.value;
  let step: number | undefined;
  if (update.op === "add" && value.kind === "literal") step = value.value;
  else if (!update.op && value.kind === "binary" && value.op === "add" && value.left.kind === "variable" && value.left.variable === variable && value.right.kind === "literal") step = value.right.value;
  if (step === undefined || !(step > 0) || !Number.isInteger(step)) return undefined;
  const condition = loop.condition;
  if (condition?.kind !== "binary" || (condition.op !== "lt" && condition.op !== "le") || condition.left.kind !== "variable" || condition.left.variable !== variable) return undefined;
  return { variable, start: declare.init, bound: condition.right, inclusive: condition.op === "le", step };
}

/** Whether `expr` reads `variable`. */
function mentions(expr: Expr, variable: Variable): boolean {
  let found = false;
  walkExpr(expr, (e) => {
    if (e.kind === "variable" && e.variable === variable) found = true;
  });
  return found;
}

export class IndexRanges {
  private readonly variables = new Map<Variable, Fact>();

  /** The facts of `body`'s variables; `block`: the kernel's fixed block shape, where it has one. */
  constructor(body: readonly Stmt[], private readonly block?: readonly [number, number, number]) {
    // How often each variable is assigned, and by how many loops' updates; variables that something other
    // than a declaration with a value sets (a load4, an atomic, a collective) know nothing.
    const assignments = new Map<Variable, number>();
    const loopUpdates = new Map<Variable, number>();
    const unknown = new Set<Variable>();
    // Every value each variable is given (declarations and whole assignments), for those assigned after all.
    const values = new Map<Variable, Expr[]>();
    const give = (variable: Variable, value: Expr) => {
      const list = values.get(variable);
      if (list) list.push(value);
      else values.set(variable, [value]);
    };
    walkStmts(body, (stmt) => {
      if (stmt.kind === "assign") {
        assignments.set(stmt.variable, (assignments.get(stmt.variable) ?? 0) + 1);
        // `x op= e` gives x the value x op e; an assignment to a part of it (a lane, a field) says nothing.
        if (stmt.path) unknown.add(stmt.variable);
        else give(stmt.variable, stmt.op ? ({ kind: "binary", op: stmt.op, left: { kind: "variable", variable: stmt.variable, type: stmt.variable.type, span: stmt.span }, right: stmt.value, type: stmt.variable.type, span: stmt.span } as Expr) : stmt.value);
      } else if (stmt.kind === "declare" && !stmt.init) unknown.add(stmt.variable);
      else if (stmt.kind === "declare") give(stmt.variable, stmt.init!);
      else if (stmt.kind === "for") {
        const counter = counterOf(stmt);
        if (counter) loopUpdates.set(counter.variable, (loopUpdates.get(counter.variable) ?? 0) + 1);
      } else for (const variable of declaredVariables(stmt)) unknown.add(variable);
    });
    const counters = new Set<Variable>();
    walkStmts(body, (stmt) => {
      if (stmt.kind === "for") {
        // A counter that only its loops' updates assign.
        const counter = counterOf(stmt);
        if (counter && !unknown.has(counter.variable) && assignments.get(counter.variable) === loopUpdates.get(counter.variable)) {
          this.note(counter.variable, this.counterFact(counter));
          counters.add(counter.variable);
        }
      } else if (stmt.kind === "declare" && stmt.init && !unknown.has(stmt.variable) && !assignments.has(stmt.variable)) {
        this.note(stmt.variable, this.of(stmt.init));
      }
    });
    // Variables declared with a value and assigned elsewhere too (not loop counters) settle on the join of theirs.
    this.settle([...values].filter(([variable]) => assignments.has(variable) && !unknown.has(variable) && !counters.has(variable)));
  }

  /**
   * The facts of variables given several values (`stage = 1 - stage` between two halves of a double buffer):
   * the join of every value they are given, evaluated with the facts so far, until a round changes nothing (then
   * each value any of them can be given lies in its fact, so the facts hold at every point).
   */
  private settle(candidates: readonly (readonly [Variable, readonly Expr[]])[]): void {
    if (candidates.length === 0) return;
    // A fact that grew in this many rounds (a counter kept by hand) becomes its type's whole range, so that the
    // others can still settle; a variable whose fact cannot settle (after 16 rounds) knows nothing.
    const patience = 4;
    const grew = new Map<Variable, number>();
    for (let round = 0; round < 16; round++) {
      let changed = false;
      for (const [variable, given] of candidates) {
        const known = this.variables.get(variable);
        // In the first round a variable's own value stands for nothing yet: its initial values start it.
        let fact: Fact | undefined;
        for (const value of given) {
          if (!known && mentions(value, variable)) continue;
          const next = this.of(value);
          fact = fact ? join(fact, next) : next;
        }
        if (!fact) continue;
        const joined = known ? join(known, fact) : fact;
        if (!known || joined.lo !== known.lo || joined.hi !== known.hi || joined.align !== known.align) {
          const times = (grew.get(variable) ?? 0) + 1;
          grew.set(variable, times);
          this.variables.set(variable, times > patience ? anything(variable.type) : joined);
          changed = true;
        }
      }
      if (!changed) return;
    }
    for (const [variable] of candidates) this.variables.delete(variable);
  }

  private note(variable: Variable, fact: Fact): void {
    const known = this.variables.get(variable);
    this.variables.set(variable, known ? join(known, fact) : fact);
  }

  /** A counter's fact inside its loop: from its start to the bound's last value below it. */
  private counterFact({ variable, start, bound, inclusive, step }: Counter): Fact {
    const first = this.of(start);
    const last = inclusive ? this.of(bound).hi : this.of(bound).hi - 1;
    const align = Math.min(first.align, alignOf(step));
    // The last value plus a step must not wrap past the type's end (the loop would then go on).
    if (!(last + step <= typeRange[variable.type as ScalarType]![1])) return anything(variable.type, align);
    return within(variable.type, first.lo, Math.max(first.lo, last), align);
  }

  /** The fact of an integer expression (the whole range of its type where nothing is known). */
  of(expr: Expr): Fact {
    switch (expr.kind) {
      case "literal":
        return { lo: expr.value, hi: expr.value, align: Number.isInteger(expr.value) ? alignOf(expr.value) : 1 };
      case "variable":
        return this.variables.get(expr.variable) ?? anything(expr.type);
      case "builtin": {
        const axis = expr.axis === "x" ? 0 : expr.axis === "y" ? 1 : 2;
        if (expr.builtin === "threadIdx" && this.block) return within(expr.type, 0, this.block[axis]! - 1, 1);
        if (expr.builtin === "blockDim" && this.block) return within(expr.type, this.block[axis]!, this.block[axis]!, 1);
        return within(expr.type, 0, 2 ** 31 - 1, 1);
      }
      case "subgroupBuiltin":
        // WGSL's subgroup sizes are powers of two from 4 to 128; CUDA's warps 32 lanes.
        if (expr.builtin === "subgroupSize") return within(expr.type, 1, 128, 1);
        if (expr.builtin === "subgroupInvocationId") return within(expr.type, 0, 127, 1);
        return within(expr.type, 0, 2 ** 31 - 1, 1);
      case "convert": {
        const value = this.of(expr.value);
        if (expr.value.type !== "i32" && expr.value.type !== "u32") return anything(expr.type);
        // The same bits: the interval holds where it fits both types, the multiple always.
        return within(expr.type, value.lo, value.hi, value.align);
      }
      case "unary":
        if (expr.op === "neg") {
          const value = this.of(expr.operand);
          return within(expr.type, -value.hi, -value.lo, value.align);
        }
        return anything(expr.type);
      case "select":
        return join(this.of(expr.whenTrue), this.of(expr.whenFalse));
      case "intrinsic":
        if ((expr.name === "min" || expr.name === "max") && expr.args.length === 2) {
          const [a, b] = expr.args.map((arg) => this.of(arg)) as [Fact, Fact];
          const pick = expr.name === "min" ? Math.min : Math.max;
          return within(expr.type, pick(a.lo, b.lo), pick(a.hi, b.hi), Math.min(a.align, b.align));
        }
        return anything(expr.type);
      case "binary":
        return this.binary(expr);
      default:
        return anything(expr.type);
    }
  }

  private binary(expr: Expr & { kind: "binary" }): Fact {
    const type = expr.type;
    if (type !== "i32" && type !== "u32") return anything(type);
    const a = this.of(expr.left);
    const b = this.of(expr.right);
    const c = constant(b);
    switch (expr.op) {
      case "add":
        return within(type, a.lo + b.lo, a.hi + b.hi, Math.min(a.align, b.align));
      case "sub":
        return within(type, a.lo - b.hi, a.hi - b.lo, Math.min(a.align, b.align));
      case "mul": {
        const corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi];
        if (corners.some((x) => Number.isNaN(x))) return anything(type, Math.min(maxAlign, a.align * b.align));
        return within(type, Math.min(...corners), Math.max(...corners), a.align * b.align);
      }
      case "shl":
        if (c === undefined || c < 0 || c > 31) return anything(type);
        return within(type, a.lo * 2 ** c, a.hi * 2 ** c, a.align * 2 ** c);
      case "shr":
        if (c === undefined || c < 0 || c > 31 || a.lo < 0) return anything(type);
        return within(type, Math.floor(a.lo / 2 ** c), Math.floor(a.hi / 2 ** c), Math.max(1, a.align / 2 ** c));
      case "div":
        if (c === undefined || c <= 0) return anything(type);
        return within(type, Math.trunc(a.lo / c), Math.trunc(a.hi / c), c === alignOf(c) && a.align >= c ? a.align / c : 1);
      case "rem": {
        if (c === undefined || c <= 0) return anything(type);
        const align = c === alignOf(c) ? Math.min(a.align, c) : 1;
        if (align >= c) return within(type, 0, 0, maxAlign);
        if (a.lo >= 0) return within(type, a.hi < c ? a.lo : 0, Math.min(a.hi, c - 1), align);
        return within(type, -(c - 1), c - 1, align);
      }
      case "and": {
        // A mask that is a non-negative literal on either side bounds the result.
        const [value, mask] = c !== undefined && c >= 0 ? [a, c] : constant(a) !== undefined && constant(a)! >= 0 ? [b, constant(a)!] : [undefined, undefined];
        if (value === undefined || mask === undefined) return anything(type);
        const align = Math.max(value.align, alignOf(mask));
        if (align > mask) return within(type, 0, 0, maxAlign);
        return within(type, 0, value.lo >= 0 ? Math.min(mask, value.hi) : mask, align);
      }
      default:
        return anything(type);
    }
  }

  /** Whether a condition (comparisons of integers, `&&`, `||`) holds for every value the facts allow. */
  proves(expr: Expr): boolean {
    switch (expr.kind) {
      case "literal":
        return expr.value !== 0;
      case "binary": {
        if (expr.op === "logand") return this.proves(expr.left) && this.proves(expr.right);
        if (expr.op === "logor") return this.proves(expr.left) || this.proves(expr.right);
        const type = expr.left.type;
        if (type !== "i32" && type !== "u32") return false;
        const a = this.of(expr.left);
        const b = this.of(expr.right);
        switch (expr.op) {
          case "lt":
            return a.hi < b.lo;
          case "le":
            return a.hi <= b.lo;
          case "gt":
            return a.lo > b.hi;
          case "ge":
            return a.lo >= b.hi;
          case "eq":
            return a.lo === a.hi && b.lo === b.hi && a.lo === b.lo;
          case "ne":
            return a.hi < b.lo || b.hi < a.lo;
          default:
            return false;
        }
      }
      default:
        return false;
    }
  }
}
