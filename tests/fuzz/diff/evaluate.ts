/**
 * The reference: runs a generated program (program.ts) with the meaning docs/language.md gives each
 * construct, written here from the documentation and sharing no code with the compiler or a backend. A block's
 * threads advance statement by statement together at the top level, which is where barriers stand, so a
 * thread reads another's shared element only after every thread has written its own.
 *
 * For each output element it records the expected value and how to compare it: integers and exact floats
 * exactly; an inexact output's top operation in double precision (the value a correctly rounded target
 * approximates); and whether the value met a non-finite or subnormal f32 on the way (`nonFinite`), which
 * compare.ts uses for the targets that may assume finite math.
 */

import { referenceBf16, referenceBf16Bits, referenceF16, referenceF16Bits } from "../../half-reference.ts";
import type { Binary, Expr, FloatCheck, Helper, OutputBuffer, Program, Stmt, Ty, VecExpr } from "./program.ts";

export interface Inputs {
  readonly inI: Int32Array;
  readonly inU: Uint32Array;
  readonly inF: Float32Array;
  readonly inS: Float32Array;
  /** bf16 values (exactly; the harness passes their encodings). */
  readonly inH: Float32Array;
  readonly inB: Int8Array;
  readonly sI: number;
  readonly sU: number;
  readonly sF: number;
  readonly sB: boolean;
}

export interface Expected {
  /** Per buffer, per element: the value, or undefined where no thread writes (the thread returned first). */
  readonly outI: (number | undefined)[];
  readonly outU: (number | undefined)[];
  /** For inexact elements: the top operation evaluated in double precision. */
  readonly outF: (number | undefined)[];
  /** The 16- and 8-bit outputs and f64 (wide programs), all exact: what the store keeps. */
  readonly outH: (number | undefined)[];
  readonly outB: (number | undefined)[];
  readonly outW: (number | undefined)[];
  readonly outX: (number | undefined)[];
  readonly outD: (number | undefined)[];
  readonly checks: (FloatCheck | undefined)[];
  /** Elements whose computation met NaN, an infinity or a subnormal f32. */
  readonly nonFinite: Readonly<Record<OutputBuffer, boolean[]>>;
  /** For inexact elements: the operation's arguments, for bounds that depend on them. */
  readonly args: (readonly number[] | undefined)[];
}

const f32 = Math.fround;
const i32 = (x: number) => x | 0;
const u32 = (x: number) => x >>> 0;
const smallestNormal = 2 ** -126;

/** x rounded to bf16 or f16 once, to nearest even (tests/half-reference.ts, which searches every value). */
function roundHalf(ty: "bf16" | "f16", x: number): number {
  if (Number.isNaN(x)) return x;
  return ty === "bf16" ? referenceBf16(referenceBf16Bits(x)!) : referenceF16(referenceF16Bits(x)!);
}

const isFloat = (ty: Ty) => ty === "f32" || ty === "bf16" || ty === "f16" || ty === "f64";

function wrap(ty: Ty, x: number): number {
  switch (ty) {
    case "f32":
      return f32(x);
    case "bf16":
    case "f16":
      return roundHalf(ty, x);
    case "f64":
      return x;
    case "i32":
      return i32(x);
    case "u32":
      return u32(x);
    case "bool":
      return x ? 1 : 0;
  }
}

/** What an output's store keeps: the low 8 bits of an int8 element (sign-extended), the low 16 of a uint16 one. */
function stored(buf: OutputBuffer, x: number): number {
  if (buf === "outB") return (x << 24) >> 24;
  if (buf === "outW") return x & 0xffff;
  return x;
}

/** Float to integer: truncate toward zero, saturate, NaN → 0 (docs/language.md §5). */
function floatToInt(ty: "i32" | "u32", x: number): number {
  if (Number.isNaN(x)) return 0;
  const t = Math.trunc(x);
  return ty === "i32" ? Math.min(Math.max(t, -2147483648), 2147483647) : Math.min(Math.max(t, 0), 4294967295);
}

class Thread {
  readonly env = new Map<string, number>();
  done = false;
  /** Set when a value met a non-finite or subnormal f32 (reset per output). */
  nonFinite = false;

  constructor(
    readonly tl: number,
    readonly t: number,
    readonly blockIdx: number,
  ) {}
}

type Flow = "normal" | "break" | "continue" | "return";

class Evaluator {
  private readonly helpers: Map<string, Helper>;
  private shared = new Map<string, Float32Array | Int32Array | Uint32Array>();

  constructor(
    private readonly program: Program,
    private readonly inputs: Inputs,
    private readonly options: EvaluateOptions = {},
  ) {
    this.helpers = new Map(program.helpers.map((h) => [h.name, h]));
  }

  run(): Expected {
    const p = this.program;
    const total = p.block * p.grid;
    const size = total * p.slots;
    const empty = () => new Array<number | undefined>(size).fill(undefined);
    const flags = () => new Array<boolean>(size).fill(false);
    const expected: Expected = {
      outI: empty(), outU: empty(), outF: empty(), outH: empty(), outB: empty(), outW: empty(), outX: empty(), outD: empty(),
      checks: new Array(size).fill(undefined),
      nonFinite: { outI: flags(), outU: flags(), outF: flags(), outH: flags(), outB: flags(), outW: flags(), outX: flags(), outD: flags() },
      args: new Array(size).fill(undefined),
    };
    for (let b = 0; b < p.grid; b++) {
      this.shared = new Map(p.shared.map((a) => [a.name, a.ty === "f32" ? new Float32Array(p.block) : a.ty === "i32" ? new Int32Array(p.block) : new Uint32Array(p.block)]));
      const threads = Array.from({ length: p.block }, (_, tl) => new Thread(tl, b * p.block + tl, b));
      for (const stmt of p.body) {
        for (const thread of threads) {
          if (thread.done) continue;
          if (stmt.k === "out") this.output(stmt, thread, expected);
          else if (this.stmt(stmt, thread) === "return") thread.done = true;
        }
      }
    }
    return expected;
  }

  private output(stmt: Stmt & { k: "out" }, thread: Thread, expected: Expected): void {
    const index = thread.t * this.program.slots + stmt.slot;
    thread.nonFinite = false;
    if (stmt.buf === "outF" && stmt.check?.kind === "inexact") {
      const { value, args } = this.precise(stmt.value, thread);
      expected.outF[index] = value;
      expected.args[index] = args;
    } else {
      expected[stmt.buf][index] = stored(stmt.buf, this.expr(stmt.value, thread));
    }
    if (stmt.buf === "outF") expected.checks[index] = stmt.check;
    expected.nonFinite[stmt.buf][index] = thread.nonFinite;
  }

  /** An inexact output's top operation, evaluated in double precision on its (exact) arguments. */
  private precise(e: Expr, thread: Thread): { value: number; args: number[] } {
    if (e.k === "conv") {
      const a = this.expr(e.a, thread);
      return { value: a, args: [a] };
    }
    const args = e.k === "bin" ? [this.expr(e.a, thread), this.expr(e.b, thread)] : e.k === "math" ? e.args.map((x) => this.expr(x, thread)) : [];
    const [a = 0, b = 0, c = 0] = args;
    const fn = e.k === "bin" ? e.op : e.k === "math" ? e.fn : "";
    const value = (
      {
        div: () => a / b, rem: () => a % b, sqrt: () => Math.sqrt(a), exp: () => Math.exp(a), log: () => Math.log(a), log2: () => Math.log2(a),
        pow: () => Math.pow(a, b), sin: () => Math.sin(a), cos: () => Math.cos(a), tan: () => Math.tan(a), tanh: () => Math.tanh(a),
        atan2: () => Math.atan2(a, b), fma: () => a * b + c,
      } as Record<string, () => number>
    )[fn];
    if (!value) throw new Error(`reference: ${fn} is not an inexact operation`);
    return { value: value(), args };
  }

  private stmts(stmts: readonly Stmt[], thread: Thread): Flow {
    for (const s of stmts) {
      const flow = this.stmt(s, thread);
      if (flow !== "normal") return flow;
    }
    return "normal";
  }

  private stmt(s: Stmt, thread: Thread): Flow {
    switch (s.k) {
      case "decl":
        thread.env.set(s.name, this.expr(s.init, thread));
        return "normal";
      case "assign": {
        // A compound assignment is typed by its target, which the generator gives the value's type.
        const ty = s.value.ty;
        const value = this.expr(s.value, thread);
        thread.env.set(s.name, s.op ? this.binary(s.op, ty, thread.env.get(s.name)!, value) : value);
        return "normal";
      }
      case "shstore":
        this.shared.get(s.arr)![thread.tl] = this.expr(s.value, thread);
        return "normal";
      case "if":
        return this.stmts(this.expr(s.c, thread) ? s.then : s.else, thread);
      case "for":
      case "while":
        for (let j = 0; j < this.expr(s.count, thread); j++) {
          thread.env.set(s.v, j + (s.k === "while" ? 1 : 0));
          const flow = this.stmts(s.body, thread);
          if (flow === "break") break;
          if (flow === "return") return flow;
        }
        return "normal";
      case "break":
      case "continue":
      case "return":
        return s.k;
      case "barrier":
        return "normal";
      case "out":
        throw new Error("reference: outputs stand at the top level");
    }
  }

  /**
   * Marks the thread's current output when an f32 operation (arithmetic, comparison, Math function) meets or
   * makes NaN, an infinity or a subnormal. Loads, copies, selects and conversions do not mark: they move bits
   * (the conversions test them, on every target).
   */
  private note(values: readonly number[], types: readonly Ty[], thread: Thread): void {
    values.forEach((x, i) => {
      if (types[i] === "f32" && (!Number.isFinite(x) || (x !== 0 && Math.abs(x) < smallestNormal))) thread.nonFinite = true;
    });
  }

  expr(e: Expr, thread: Thread): number {
    const value = this.value(e, thread);
    if (e.k === "un" || e.k === "bin" || e.k === "math") this.note([value], [e.ty], thread);
    return value;
  }

  private value(e: Expr, thread: Thread): number {
    switch (e.k) {
      case "lit":
        return e.v;
      case "var":
        return this.variable(e.name, thread);
      case "builtin":
        return e.name === "threadIdx" ? thread.tl : e.name === "blockIdx" ? thread.blockIdx : e.name === "blockDim" ? this.program.block : this.program.grid;
      case "load":
        return this.inputs[e.buf][this.expr(e.index, thread)]!;
      case "shload":
        return this.shared.get(e.arr)![this.expr(e.index, thread)]!;
      case "un": {
        const a = this.expr(e.a, thread);
        this.note([a], [e.a.ty], thread);
        if (e.op === "not") return a ? 0 : 1;
        if (e.op === "plus") return a;
        if (e.op === "neg") return isFloat(e.ty) ? -a : i32(-a);
        return e.ty === "u32" ? u32(~a) : ~a;
      }
      case "bin": {
        // && and || evaluate their right side only when needed; both sides are pure, so either way agrees.
        const a = this.expr(e.a, thread);
        const b = this.expr(e.b, thread);
        this.note([a, b], [e.a.ty, e.b.ty], thread);
        return this.binary(e.op, e.a.ty, a, b);
      }
      case "sel":
        return this.expr(e.c, thread) ? this.expr(e.a, thread) : this.expr(e.b, thread);
      case "conv": {
        const a = this.expr(e.a, thread);
        const from = e.a.ty;
        // To a float type: the exact value rounded once to it (a bool is 0 or 1).
        if (isFloat(e.ty)) return wrap(e.ty, a);
        if (isFloat(from)) return floatToInt(e.ty as "i32" | "u32", a);
        return wrap(e.ty, a);
      }
      case "math":
        return this.math(e, thread);
      case "call":
        return this.call(this.helpers.get(e.helper)!, e.args.map((x) => this.expr(x, thread)), thread);
      case "vec":
        return this.vectorScalar(e, thread);
    }
  }

  /** A lane, `dot` or `all`/`any` of vectors (docs/language.md §27). */
  private vectorScalar(e: Expr & { k: "vec" }, thread: Thread): number {
    const a = this.vector(e.a, thread);
    switch (e.reduce) {
      case "lane":
        return a[e.lane!]!;
      case "all":
        return a.every(Boolean) ? 1 : 0;
      case "any":
        return a.some(Boolean) ? 1 : 0;
      case "dot": {
        // The sum of the lanes' products from x on, each step an operation of the element type.
        const b = this.vector(e.b!, thread);
        return a.map((x, i) => this.binary("mul", e.ty, x, b[i]!)).reduce((sum, term) => this.binary("add", e.ty, sum, term));
      }
    }
  }

  /** A vector's lanes: each operation lane by lane, with the scalar rules of its element type. */
  private vector(e: VecExpr, thread: Thread): number[] {
    switch (e.vk) {
      case "make":
        return e.lanes.map((lane) => this.expr(lane, thread));
      case "splat":
        return new Array<number>(e.size).fill(this.expr(e.a, thread));
      case "bin": {
        const a = this.vector(e.a, thread);
        const b = "vk" in e.b ? this.vector(e.b, thread) : new Array<number>(e.size).fill(this.expr(e.b, thread));
        return a.map((x, i) => (e.op === "min" ? Math.min(x, b[i]!) : e.op === "max" ? Math.max(x, b[i]!) : this.binary(e.op, e.ty, x, b[i]!)));
      }
      case "neg":
        return this.vector(e.a, thread).map((x) => (e.ty === "f32" ? -x : i32(-x)));
      case "swizzle": {
        const a = this.vector(e.a, thread);
        return e.lanes.map((lane) => a[lane]!);
      }
      case "conv":
        return this.vector(e.a, thread).map((x) => floatToInt(e.ty as "i32" | "u32", x));
      case "cmp": {
        const a = this.vector(e.a, thread);
        const b = this.vector(e.b, thread);
        return a.map((x, i) => this.binary(e.op, e.a.ty, x, b[i]!));
      }
      case "select": {
        const f = this.vector(e.f, thread);
        const t = this.vector(e.t, thread);
        const c = this.vector(e.c, thread);
        return c.map((take, i) => (take ? t[i]! : f[i]!));
      }
    }
  }

  private variable(name: string, thread: Thread): number {
    switch (name) {
      case "t":
        return thread.t;
      case "tl":
        return thread.tl;
      case "sI":
        return this.inputs.sI;
      case "sU":
        return this.inputs.sU;
      case "sF":
        return this.inputs.sF;
      case "sB":
        return this.inputs.sB ? 1 : 0;
      default: {
        const value = thread.env.get(name);
        if (value === undefined) throw new Error(`reference: '${name}' has no value`);
        return value;
      }
    }
  }

  binary(op: Binary, ty: Ty, a: number, b: number): number {
    switch (op) {
      case "add":
        return wrap(ty, a + b);
      case "sub":
        return wrap(ty, a - b);
      case "mul":
        // bf16 and f16 products and sums of two values are exact in double, then rounded once.
        return isFloat(ty) ? wrap(ty, a * b) : wrap(ty, Math.imul(a, b));
      case "div":
        // Integers truncate toward zero (C); the generator keeps divisors non-zero.
        return isFloat(ty) ? wrap(ty, a / b) : wrap(ty, Math.trunc(a / b));
      case "rem":
        // The sign of the dividend (C's %, also JavaScript's); f32 % is fmod.
        return wrap(ty, a % b);
      case "and":
        return wrap(ty, a & b);
      case "or":
        return wrap(ty, a | b);
      case "xor":
        return wrap(ty, a ^ b);
      case "shl":
        return wrap(ty, a << b);
      case "shr":
        return ty === "u32" ? a >>> b : a >> b;
      case "ushr":
        // Logical: the bits shifted as a u32, read back in the left operand's type.
        return wrap(ty, a >>> b);
      case "eq":
        return a === b ? 1 : 0;
      case "ne":
        return a !== b ? 1 : 0;
      case "lt":
        return a < b ? 1 : 0;
      case "le":
        return a <= b ? 1 : 0;
      case "gt":
        return a > b ? 1 : 0;
      case "ge":
        return a >= b ? 1 : 0;
      case "logand":
        return a && b ? 1 : 0;
      case "logor":
        return a || b ? 1 : 0;
    }
  }

  private math(e: Expr & { k: "math" }, thread: Thread): number {
    const args = e.args.map((x) => this.expr(x, thread));
    this.note(args, e.args.map((x) => x.ty), thread);
    const [a = 0, b = 0, c = 0] = args;
    const ty = e.ty;
    switch (e.fn) {
      case "abs":
        return isFloat(ty) ? Math.abs(a) : ty === "i32" ? i32(Math.abs(a)) : a;
      case "min":
        return args.reduce((x, y) => (isFloat(ty) && this.options.minMaxIgnoresNaN ? ignoringNaN(Math.min, x, y) : Math.min(x, y)));
      case "max":
        return args.reduce((x, y) => (isFloat(ty) && this.options.minMaxIgnoresNaN ? ignoringNaN(Math.max, x, y) : Math.max(x, y)));
      case "floor":
        return Math.floor(a);
      case "ceil":
        return Math.ceil(a);
      case "trunc":
        return Math.trunc(a);
      case "sign":
        return Math.sign(a);
      case "sqrt":
        return wrap(ty, Math.sqrt(a));
      case "exp":
        return f32(Math.exp(a));
      case "log":
        return f32(Math.log(a));
      case "log2":
        return f32(Math.log2(a));
      case "pow":
        return f32(Math.pow(a, b));
      case "sin":
        return f32(Math.sin(a));
      case "cos":
        return f32(Math.cos(a));
      case "tan":
        return f32(Math.tan(a));
      case "tanh":
        return f32(Math.tanh(a));
      case "atan2":
        return f32(Math.atan2(a, b));
      case "fma":
        return f32(a * b + c);
    }
  }

  private call(helper: Helper, args: number[], caller: Thread): number {
    const frame = new Thread(caller.tl, caller.t, caller.blockIdx);
    helper.params.forEach((p, i) => frame.env.set(p.name, args[i]!));
    this.stmts(helper.body, frame);
    const result = this.expr(helper.result, frame);
    if (frame.nonFinite) caller.nonFinite = true;
    return result;
  }
}

export interface EvaluateOptions {
  /**
   * Float `Math.min`/`Math.max` of a NaN and a number give the number, as CUDA's fminf/fmaxf do (docs/language.md
   * §12); by default the NaN, as JavaScript's Math.min/max and so the CPU backend do.
   */
  readonly minMaxIgnoresNaN?: boolean;
}

/** fminf/fmaxf: the other operand where one is NaN. */
function ignoringNaN(f: (a: number, b: number) => number, a: number, b: number): number {
  if (Number.isNaN(a)) return b;
  if (Number.isNaN(b)) return a;
  return f(a, b);
}

/** The expected outputs of a program on given inputs. */
export function evaluate(program: Program, inputs: Inputs, options: EvaluateOptions = {}): Expected {
  return new Evaluator(program, inputs, options).run();
}
