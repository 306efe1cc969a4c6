/**
 * The JS backend's printers below the block level: expressions with 32-bit semantics (`Math.fround`, `| 0`,
 * `Math.imul`, `>>> 0`; checked accesses through the checker object in checked mode) and the statements one
 * thread runs inside a region of a kernel, or in a helper function (see js.ts for regions and cuts).
 */

import { arrayStride, isFloat, isFloat8, isHalfFloat, targetScalars } from "../ir/types.ts";
import { halfCodec, halfRound, toHalf } from "./js-float16.ts";
import { float8Codec } from "./js-float8.ts";
import { assertNever, valueTypeOf, type ArrayRef, type ElementScalar, type AtomicStmt, type BinaryOp, type Expr, type HelperFunction, type ScalarType, type Span, type Stmt, type Variable } from "../ir/ir.ts";
import type { Namer } from "./namer.ts";
import type { Writer } from "./writer.ts";

// ---------------------------------------------------------------------------------------------------------
// Expressions

export interface JsHooks {
  variable(variable: Variable): string;
  builtin(expr: Expr & { kind: "builtin" }): string;
  subgroupBuiltin?(expr: Expr & { kind: "subgroupBuiltin" }): string;
  /** The JS name of an array and, for shared arrays, its constant sizes. */
  array(array: ArrayRef): { name: string; dims?: readonly number[] };
  helper(helper: HelperFunction): string;
  /** Checked mode: the `file:line:column` of a span. */
  location?(span: Span): string;
  /** Checked mode: the source text of an operation (a division's or a shift's, for its report). */
  operation?(span: Span): string;
  /**
   * Checked mode: the thread a division's or a shift's fault names (default `t`); `undefined` for block-uniform
   * statements, which run once per block outside the thread loops (the fault then names the block only).
   */
  readonly thread?: string;
}

/**
 * The call of an mbarrier operation (js-runtime.ts's `barrierRuntime`): `mbarrierInit`, `mbarrierArrive` (also
 * for arriveAfterCopies: the copies are plain stores here, complete at once) or, for a wait, the test that the
 * block-level loop around it repeats. Checked mode passes the checker, thread and location.
 */
export function barrierCall(stmt: Stmt & { kind: "barrierOp" }, printer: JsExprPrinter, thread: string): string {
  const { name, dims } = printer.hooksArray(stmt.barriers);
  const checked = printer.checked ? `, chk, ${thread}, ${JSON.stringify(printer.where(stmt.span))}` : "";
  const index = bare(printer.print(stmt.index));
  switch (stmt.op) {
    case "init":
      return `mbarrierInit(${name}, ${dims![0]}, ${index}, ${bare(printer.print(stmt.value!))}${checked})`;
    case "arrive":
      // { block: r }: the barrier of the same name in block r of the cluster (js.ts's clusterRunner publishes them).
      if (stmt.block) return `mbarrierArrive(clusterPeer(clusterBlocks, ${bare(printer.print(stmt.block))}).${name}, ${dims![0]}, ${index}, false${checked})`;
      return `mbarrierArrive(${name}, ${dims![0]}, ${index}, false${checked})`;
    case "arriveCopies":
      return `mbarrierArrive(${name}, ${dims![0]}, ${index}, true${checked})`;
    case "arriveExpect":
      return `mbarrierArriveExpect(${name}, ${dims![0]}, ${index}, ${bare(printer.print(stmt.value!))}${checked})`;
    case "wait":
      return `mbarrierDone(${name}, ${dims![0]}, ${index}, ${bare(printer.print(stmt.value!))}${checked})`;
  }
}

/** The text of an f32 literal: the exact double value of the f32 (a shortest f32 spelling would read back as another double). */
function literal(type: ScalarType, value: number): string {
  if (type === "bool") return value ? "true" : "false";
  const text = Object.is(value, -0) ? "-0" : String(value);
  return text.startsWith("-") ? `(${text})` : text;
}

/** A float type's arithmetic: the double result of each operator, rounded by `round` (none for f64). */
function floatTemplates(round: string | undefined): Partial<Record<BinaryOp, string>> {
  const wrap = (text: string) => (round ? `${round}(${text})` : `(${text})`);
  return { add: wrap("$a + $b"), sub: wrap("$a - $b"), mul: wrap("$a * $b"), div: wrap("$a / $b"), rem: wrap("$a % $b") };
}

/** Operator spellings by type; `$a`/`$b` are the operands. Every template is safe as an operand. */
const binaryTemplates: Readonly<Partial<Record<ScalarType, Partial<Record<BinaryOp, string>>>>> = {
  f32: floatTemplates("fround"),
  f16: floatTemplates(halfRound.f16),
  bf16: floatTemplates(halfRound.bf16),
  f64: floatTemplates(undefined),
  i32: {
    add: "(($a + $b) | 0)", sub: "(($a - $b) | 0)", mul: "imul($a, $b)", div: "(($a / $b) | 0)", rem: "(($a % $b) | 0)",
    and: "($a & $b)", or: "($a | $b)", xor: "($a ^ $b)", shl: "($a << $b)", shr: "($a >> $b)",
  },
  u32: {
    add: "(($a + $b) >>> 0)", sub: "(($a - $b) >>> 0)", mul: "(imul($a, $b) >>> 0)", div: "(($a / $b) >>> 0)", rem: "(($a % $b) >>> 0)",
    and: "(($a & $b) >>> 0)", or: "(($a | $b) >>> 0)", xor: "(($a ^ $b) >>> 0)", shl: "(($a << $b) >>> 0)", shr: "($a >>> $b)",
  },
};

const comparisonTemplates: Partial<Record<BinaryOp, string>> = {
  eq: "($a === $b)", ne: "($a !== $b)", lt: "($a < $b)", le: "($a <= $b)", gt: "($a > $b)", ge: "($a >= $b)",
  logand: "($a && $b)", logor: "($a || $b)",
};

const f32Intrinsics: Readonly<Record<string, string>> = {
  sqrt: "fround(Math.sqrt($0))", abs: "Math.abs($0)", min: "Math.min($0, $1)", max: "Math.max($0, $1)",
  floor: "Math.floor($0)", ceil: "Math.ceil($0)", trunc: "Math.trunc($0)", round: "fround(Math.round($0))",
  exp: "fround(Math.exp($0))", exp2: "fround(Math.pow(2, $0))", log: "fround(Math.log($0))", log2: "fround(Math.log2($0))",
  pow: "fround(Math.pow($0, $1))", sin: "fround(Math.sin($0))", cos: "fround(Math.cos($0))", tan: "fround(Math.tan($0))",
  tanh: "fround(Math.tanh($0))", atan2: "fround(Math.atan2($0, $1))", fma: "fround($0 * $1 + $2)", sign: "Math.sign($0)",
  roundTf32: "roundTf32($0)",
  bitcastF32: "bitcastF32($0)",
};

/** f64: JavaScript's own Math, whose results are doubles already. */
const f64Intrinsics: Readonly<Record<string, string>> = {
  sqrt: "Math.sqrt($0)", abs: "Math.abs($0)", min: "Math.min($0, $1)", max: "Math.max($0, $1)",
  floor: "Math.floor($0)", ceil: "Math.ceil($0)", trunc: "Math.trunc($0)", round: "Math.round($0)",
  exp: "Math.exp($0)", exp2: "Math.pow(2, $0)", log: "Math.log($0)", log2: "Math.log2($0)",
  pow: "Math.pow($0, $1)", sin: "Math.sin($0)", cos: "Math.cos($0)", tan: "Math.tan($0)",
  tanh: "Math.tanh($0)", atan2: "Math.atan2($0, $1)", sign: "Math.sign($0)",
};

/** The template of a float intrinsic: f32's; for f16 and bf16 the f32 function's result rounded once more. */
function floatIntrinsic(type: ScalarType, name: string): string | undefined {
  if (type === "f64") return f64Intrinsics[name];
  const f32 = f32Intrinsics[name];
  if (type === "f16" || type === "bf16") return f32 && `${halfRound[type]}(${f32})`;
  return f32;
}

const intIntrinsics: Readonly<Record<string, { i32: string; u32: string }>> = {
  abs: { i32: "(Math.abs($0) | 0)", u32: "$0" },
  min: { i32: "Math.min($0, $1)", u32: "Math.min($0, $1)" },
  max: { i32: "Math.max($0, $1)", u32: "Math.max($0, $1)" },
  bitcastU32: { i32: "", u32: "bitcastU32($0)" },
};

function fill(template: string, args: readonly string[]): string {
  return template.replace(/\$(a|b|\d)/g, (_, key: string) => (key === "a" ? args[0]! : key === "b" ? args[1]! : args[Number(key)]!));
}

export class JsExprPrinter {
  constructor(private readonly hooks: JsHooks) {}

  /**
   * Prints `left op right` for operands of `type` (also used for compound assignments). Checked mode, given the
   * operation's span: an integer divisor passes through `chk.div`, which faults on 0, and a shift amount through
   * `chk.shift`, which faults outside 0…31 (a literal, which the compiler checked, does not).
   */
  binary(op: BinaryOp, type: ScalarType, left: string, right: string, span?: Span, rightIsLiteral = false): string {
    const template = comparisonTemplates[op] ?? binaryTemplates[type]?.[op];
    if (!template) throw new Error(`internal: no JS spelling of ${op} on ${type}`);
    return fill(template, [left, span && !rightIsLiteral ? this.checkedOperand(op, type, right, span) : right]);
  }

  private checkedOperand(op: BinaryOp, type: ScalarType, right: string, span: Span): string {
    if (!this.hooks.location || !this.hooks.operation || (type !== "i32" && type !== "u32")) return right;
    const where = JSON.stringify(this.hooks.location(span));
    const text = JSON.stringify(this.hooks.operation(span));
    const thread = this.hooks.thread ?? "t";
    if (op === "div" || op === "rem") return `chk.div(${bare(right)}, "${op === "div" ? "/" : "%"}", ${text}, ${thread}, ${where})`;
    if (op === "shl" || op === "shr") return `chk.shift(${bare(right)}, ${text}, ${thread}, ${where})`;
    return right;
  }

  print(expr: Expr): string {
    switch (expr.kind) {
      case "literal":
        return literal(expr.type, expr.value);
      case "variable":
        return this.hooks.variable(expr.variable);
      case "constRef":
        throw new Error(`internal: constant '${expr.name}' reached a backend unspecialized`);
      case "builtin":
        return this.hooks.builtin(expr);
      case "subgroupBuiltin":
        if (!this.hooks.subgroupBuiltin) throw new Error("internal: a helper reads a subgroup builtin");
        return this.hooks.subgroupBuiltin(expr);
      case "unary": {
        const operand = this.print(expr.operand);
        if (expr.op === "not") return `(!${operand})`;
        if (expr.op === "neg") return expr.type === "i32" ? `((-${operand}) | 0)` : `(-${operand})`;
        return expr.type === "u32" ? `((~${operand}) >>> 0)` : `(~${operand})`;
      }
      case "binary":
        return this.binary(expr.op, expr.left.type as ScalarType, this.print(expr.left), this.print(expr.right), expr.span, expr.right.kind === "literal");
      case "select":
        return `(${this.print(expr.condition)} ? ${this.print(expr.whenTrue)} : ${this.print(expr.whenFalse)})`;
      case "convert":
        return this.convert(expr.value.type as ScalarType, expr.type as ScalarType, this.print(expr.value));
      case "intrinsic": {
        const args = expr.args.map((arg) => this.print(arg));
        if (isFloat(expr.type) && expr.name !== "bitcastU32") {
          const template = floatIntrinsic(expr.type, expr.name);
          if (!template) throw new Error(`internal: no JS spelling of ${expr.name} on ${expr.type}`);
          return fill(template, args);
        }
        const entry = intIntrinsics[expr.name];
        if (!entry || (expr.type !== "i32" && expr.type !== "u32")) throw new Error(`internal: no JS spelling of ${expr.name} on ${expr.type}`);
        return fill(entry[expr.type], args);
      }
      case "call": {
        // Checked mode: helpers take the checker and the thread their faults name after their arguments.
        const args = expr.args.map((arg) => this.print(arg));
        if (this.hooks.location) args.push("chk", this.hooks.thread ?? "t");
        return `${this.hooks.helper(expr.callee)}(${args.join(", ")})`;
      }
      case "load": {
        const element = this.hooks.location ? this.checkedAccess("ld", expr.array, expr.indices, expr.span, undefined, expr.alignment) : this.element(expr.array, expr.indices);
        return decodeElement(expr.array, element);
      }
      case "construct":
      case "swizzle":
      case "field":
        throw new Error(`internal: a ${expr.kind} reached the JS backend; scalarize-vectors.ts writes vectors and structs out lane by lane`);
      case "check":
        throw new Error("internal: a check reached the JS backend, whose checked mode calls the checker itself");
      default:
        return assertNever(expr, "expression");
    }
  }

  get checked(): boolean {
    return this.hooks.location !== undefined;
  }

  /**
   * Checked mode: the statement that starts each iteration of a loop, through which the checker stops a
   * launch that runs past its time limit, naming the loop (`chk.tick(t, "file:line:col")`); "" otherwise.
   * `thread`: the thread's variable, or -1 where the loop is the whole block's.
   */
  /** Checked mode: the `file:line:column` of a span (callers check `checked` first). */
  where(span: Span): string {
    return this.hooks.location!(span);
  }

  loopTick(span: Span, thread: "t" | "-1"): string {
    return this.hooks.location ? `chk.tick(${thread}, ${JSON.stringify(this.hooks.location(span))});` : "";
  }

  hooksArray(array: ArrayRef): { name: string; dims?: readonly number[] } {
    return this.hooks.array(array);
  }

  element(array: ArrayRef, indices: readonly Expr[]): string {
    return `${this.hooks.array(array).name}[${this.flatIndex(array, indices)}]`;
  }

  /** The index into the JS typed array that holds `array`. */
  flatIndex(array: ArrayRef, indices: readonly Expr[]): string {
    const { dims } = this.hooks.array(array);
    // A private array holds one slice per thread of the block, thread t's at t·size.
    if (array.space === "private") return `t * ${dims![0]} + ${this.print(indices[0]!)}`;
    if (indices.length === 1) return this.print(indices[0]!);
    return `${this.print(indices[0]!)} * ${dims![1]} + ${this.print(indices[1]!)}`;
  }

  /**
   * Checked mode: the flat index of an atomic's element after the checker saw it: `chk.atmg(array, "name",
   * index, t, "where")` (bounds) for global buffers, `chk.atms1`/`chk.atms2` (bounds, races with plain
   * accesses, reads of unwritten elements when `readsOld`) for shared arrays.
   */
  checkedAtomic(array: ArrayRef, indices: readonly Expr[], span: Span, readsOld: boolean): string {
    const { name, dims } = this.hooks.array(array);
    const where = JSON.stringify(this.hooks.location!(span));
    const index = indices.map((i) => bare(this.print(i))).join(", ");
    if (array.space === "global") return `chk.atmg(${name}, ${JSON.stringify(array.name)}, ${index}, t, ${where})`;
    return `chk.atms${indices.length}(${name}, ${JSON.stringify(array.name)}, ${index}, ${dims!.join(", ")}, t, ${where}, ${readsOld})`;
  }

  /**
   * A checked load (`ld`) or store (`st`, with the value after the sizes): `chk.ldg(array, "name", index, t,
   * "where")` for global buffers, `chk.lds2(array, "name", i, j, rows, cols, t, "where")` for shared ones.
   */
  checkedAccess(kind: "ld" | "st" | "ast", array: ArrayRef, indices: readonly Expr[], span: Span, value?: string, alignment?: number): string {
    const { name, dims } = this.hooks.array(array);
    const where = JSON.stringify(this.hooks.location!(span));
    // ldg/stg for global buffers; lds1/lds2/sts1/sts2 for shared arrays, whose sizes follow the indices.
    const fn = array.space === "global" ? `${kind}g` : array.space === "private" ? `${kind}p` : `${kind}s${indices.length}`;
    // A typed view of a buffer of vectors or structs (scalarize-vectors.ts) reports in the buffer's elements.
    if (array.viewOf && array.space === "global" && kind !== "ast") {
      const per = arrayStride(array.viewOf.elementType) / arrayStride(array.elementType);
      const stored = value === undefined ? "" : `, ${value}`;
      return `chk.${kind}v(${name}, ${JSON.stringify(array.viewOf.name)}, ${this.print(indices[0]!)}, ${per}${stored}, t, ${where})`;
    }
    const printed = indices.map((i) => this.print(i));
    // The first element of a split vector access: its index must be a multiple of the vector's width.
    if (alignment) printed[printed.length - 1] = `chk.aligned(${bare(printed[printed.length - 1]!)}, ${alignment}, ${JSON.stringify(array.name)}, t, ${where})`;
    const index = printed.join(", ");
    const sizes = array.space === "global" ? "" : `, ${dims!.join(", ")}`;
    const stored = value === undefined ? "" : `, ${value}`;
    return `chk.${fn}(${name}, ${JSON.stringify(array.name)}, ${index}${sizes}${stored}, t, ${where})`;
  }

  private convert(from: ScalarType, to: ScalarType, value: string): string {
    if (from === "bool") return to === "bool" ? value : `(${value} ? 1 : 0)`;
    switch (to) {
      case "f32":
        return `fround(${value})`;
      case "f64":
        return value;
      case "f16":
      case "bf16":
        return toHalf(to, from, value);
      // The saturating conversions take any float: an f16, bf16 or f64 value is a number like an f32's.
      case "i32":
        return isFloat(from) ? `f32ToI32(${value})` : `(${value} | 0)`;
      case "u32":
        return isFloat(from) ? `f32ToU32(${value})` : `(${value} >>> 0)`;
      case "bool":
        throw new Error("internal: conversion to bool");
      default:
        throw new Error(`internal: no JS conversion from ${from} to ${to}`);
    }
  }
}

/** A loaded element as its value: the encodings of f16 and bf16 arrays (js-float16.ts) and the codes of e4m3 and e5m2 arrays (js-float8.ts) decoded. */
export function decodeElement(array: ArrayRef, element: string): string {
  const type = array.elementType;
  if (isFloat8(type)) return float8Codec[type].decode(bare(element));
  return isHalfFloat(type) && targetScalars.js[type].storesBits ? `${halfCodec[type].decode}(${bare(element)})` : element;
}

/** A value to store into an element: encoded for f16, bf16, e4m3 and e5m2 arrays. */
export function encodeElement(array: ArrayRef, value: string): string {
  const type = array.elementType;
  if (isFloat8(type)) return `${float8Codec[type].encode}(${bare(value)})`;
  return isHalfFloat(type) && targetScalars.js[type].storesBits ? `${halfCodec[type].encode}(${bare(value)})` : value;
}

/** Removes one pair of parentheses around a whole expression, for statements and conditions. */
export function bare(text: string): string {
  if (!text.startsWith("(") || !text.endsWith(")")) return text;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
    if (depth === 0 && i < text.length - 1) return text;
  }
  return text.slice(1, -1);
}

function zero(type: ScalarType): string {
  return type === "bool" ? "false" : "0";
}

// ---------------------------------------------------------------------------------------------------------
// Thread-level statements (inside a region, or in a helper)

/** How a thread-level `return` ends the thread: undefined in helpers (a real return). */
export interface ThreadExit {
  readonly label: string;
}

export class ThreadStmtPrinter {
  constructor(
    private readonly out: Writer,
    private readonly names: Namer,
    private readonly printer: JsExprPrinter,
    private readonly exit: ThreadExit | undefined,
    /** Variables spilled to per-thread arrays: their declaration is an assignment to the promoted local. */
    private readonly spilled: ReadonlySet<Variable> = new Set(),
  ) {}

  stmts(stmts: readonly Stmt[]): void {
    for (const stmt of stmts) this.stmt(stmt);
  }

  /** `declare`, `assign` and `store` as text without the semicolon (also used in `for` headers). */
  simple(stmt: Stmt): string {
    const { printer } = this;
    switch (stmt.kind) {
      case "declare": {
        const variable = stmt.variable;
        const init = stmt.init ? bare(printer.print(stmt.init)) : zero(variable.type as ScalarType);
        if (this.spilled.has(variable)) return `${this.names.lookup(variable)} = ${init}`;
        return `${variable.mutable ? "let" : "const"} ${this.names.name(variable, variable.name)} = ${init}`;
      }
      case "assign": {
        const name = this.names.lookup(stmt.variable);
        const value = printer.print(stmt.value);
        return `${name} = ${bare(stmt.op ? printer.binary(stmt.op, stmt.variable.type as ScalarType, name, value, stmt.span, stmt.value.kind === "literal") : value)}`;
      }
      default:
        throw new Error(`internal: ${stmt.kind} is not a simple statement`);
    }
  }

  /** Indices as they are when trivial; otherwise opens a block with a const per index (closed by the caller). */
  private indexTemps(indices: readonly Expr[]): readonly Expr[] {
    if (indices.every((index) => index.kind === "literal" || index.kind === "variable")) return indices;
    this.out.line("{").indent();
    return indices.map((index) => {
      const temp: Variable = { kind: "variable", name: "index", type: index.type, mutable: false, span: index.span };
      this.out.line(`const ${this.names.name(temp, "index")} = ${bare(this.printer.print(index))};`);
      return { kind: "variable", type: index.type, variable: temp, span: index.span } as const;
    });
  }

  /** `const x = init` for a local this statement declares (an assignment to its promoted local when spilled). */
  private declaration(variable: Variable, init: string): string {
    if (this.spilled.has(variable)) return `${this.names.lookup(variable)} = ${init}`;
    return `${variable.mutable ? "let" : "const"} ${this.names.name(variable, variable.name)} = ${init}`;
  }

  /**
   * An atomic: on a global buffer a call of the module's `atomics` functions (Atomics when worker threads
   * share the buffer); on a shared array, which only this block's threads see, the read-modify-write itself.
   */
  private atomic(stmt: AtomicStmt): void {
    const { out, printer } = this;
    // A wait yields to the other warpgroups, so it stands at warpgroup level (js.ts), never in a thread region.
    if (stmt.op === "wait") throw new Error("internal: a waitFlag inside a thread region");
    const type = stmt.array.elementType;
    const value = stmt.value ? bare(printer.print(stmt.value)) : "";
    const readsOld = stmt.result !== undefined || (stmt.op !== "exchange" && stmt.op !== "store");
    if (stmt.array.space === "global") {
      const { name } = printer.hooksArray(stmt.array);
      const index = printer.checked ? printer.checkedAtomic(stmt.array, stmt.indices, stmt.span, readsOld) : bare(printer.flatIndex(stmt.array, stmt.indices));
      const operands = [...(stmt.expected ? [bare(printer.print(stmt.expected))] : []), ...(stmt.value ? [value] : [])];
      const call = `atomics.${stmt.op}(${[name, index, ...operands].join(", ")})`;
      out.line(`${stmt.result ? this.declaration(stmt.result, call) : call};`);
      return;
    }
    const { name } = printer.hooksArray(stmt.array);
    const at = this.names.name({}, "at");
    out.line(`const ${at} = ${printer.checked ? printer.checkedAtomic(stmt.array, stmt.indices, stmt.span, readsOld) : bare(printer.flatIndex(stmt.array, stmt.indices))};`);
    const old = stmt.result ? this.names.name(stmt.result, stmt.result.name) : this.names.name({}, "old");
    if (readsOld) out.line(`${stmt.result ? this.declaration(stmt.result, `${name}[${at}]`) : `const ${old} = ${name}[${at}]`};`);
    switch (stmt.op) {
      case "compareExchange":
        out.line(`if (${old} === ${bare(printer.print(stmt.expected!))}) ${name}[${at}] = ${value};`);
        return;
      case "load":
        return;
      case "exchange":
      case "store":
        out.line(`${name}[${at}] = ${value};`);
        return;
      case "min":
      case "max":
        out.line(`${name}[${at}] = Math.${stmt.op}(${old}, ${value});`);
        return;
      default:
        out.line(`${name}[${at}] = ${bare(printer.binary(stmt.op, valueTypeOf(type as ElementScalar), old, value))};`);
    }
  }

  stmt(stmt: Stmt): void {
    const { out, printer } = this;
    switch (stmt.kind) {
      case "declare":
      case "assign":
        out.line(`${this.simple(stmt)};`);
        return;
      case "store": {
        const value = printer.print(stmt.value);
        const array = stmt.array;
        if (printer.checked) {
          // Checked: load (for op=) and store through the checker, with the indices computed once.
          const temps = this.indexTemps(stmt.indices);
          const loaded = stmt.op ? printer.binary(stmt.op, valueTypeOf(array.elementType as ElementScalar), decodeElement(array, printer.checkedAccess("ld", array, temps, stmt.span)), value, stmt.span, stmt.value.kind === "literal") : value;
          // A store made from copyAsync4 counts as written only once a waitAsync covers it (asts1/asts2).
          out.line(`${printer.checkedAccess(stmt.asynchronous ? "ast" : "st", array, temps, stmt.span, bare(encodeElement(array, loaded)), stmt.alignment)};`);
          if (temps !== stmt.indices) out.dedent().line("}");
          return;
        }
        if (!stmt.op) {
          out.line(`${printer.element(array, stmt.indices)} = ${bare(encodeElement(array, value))};`);
          return;
        }
        // Read and write the same element: compute a non-trivial index once.
        const temps = this.indexTemps(stmt.indices);
        const element = printer.element(array, temps);
        out.line(`${element} = ${bare(encodeElement(array, printer.binary(stmt.op, valueTypeOf(array.elementType as ElementScalar), decodeElement(array, element), value)))};`);
        if (temps !== stmt.indices) out.dedent().line("}");
        return;
      }
      case "if": {
        out.line(`if (${bare(printer.print(stmt.condition))}) {`);
        out.indent();
        this.stmts(stmt.then);
        out.dedent();
        if (stmt.else.length > 0) {
          out.line("} else {");
          out.indent();
          this.stmts(stmt.else);
          out.dedent();
        }
        out.line("}");
        return;
      }
      case "for": {
        const inline = stmt.init.length <= 1 && stmt.init.every((s) => s.kind === "declare" || s.kind === "assign");
        if (!inline) {
          out.line("{");
          out.indent();
          this.stmts(stmt.init);
        }
        const init = inline && stmt.init[0] ? this.simple(stmt.init[0]) : "";
        const condition = stmt.condition ? bare(printer.print(stmt.condition)) : "";
        const update = stmt.update.map((s) => this.simple(s)).join(", ");
        out.line(`for (${init}; ${condition}; ${update}) {`);
        out.indent();
        if (printer.checked && this.exit) out.line(printer.loopTick(stmt.span, "t"));
        this.stmts(stmt.body);
        out.dedent();
        out.line("}");
        if (!inline) {
          out.dedent();
          out.line("}");
        }
        return;
      }
      case "while":
        out.line(`while (${bare(printer.print(stmt.condition))}) {`);
        out.indent();
        if (printer.checked && this.exit) out.line(printer.loopTick(stmt.span, "t"));
        this.stmts(stmt.body);
        out.dedent();
        out.line("}");
        return;
      case "break":
      case "continue":
        out.line(`${stmt.kind};`);
        return;
      case "return":
        if (!this.exit) {
          out.line(stmt.value ? `return ${bare(printer.print(stmt.value))};` : "return;");
        } else {
          out.line(`done[t] = 1; alive--; continue ${this.exit.label};`);
        }
        return;
      case "barrier":
        throw new Error("internal: a barrier inside a thread region");
      // Atomics on global buffers are \`Atomics\` operations wherever worker threads share them, and those are
      // sequentially consistent: they already order the accesses around them as the fence asks.
      case "fence":
        out.line("/* threadFence(): the atomics around it are sequentially consistent */");
        return;
      case "block":
        out.line("{");
        out.indent();
        this.stmts(stmt.body);
        out.dedent();
        out.line("}");
        return;
      // The copies themselves were made plain stores; only checked mode follows their groups.
      case "asyncCommit":
        if (printer.checked) out.line("chk.asyncCommit(t);");
        return;
      case "asyncWait":
        if (printer.checked) out.line(`chk.asyncWait(${stmt.pending}, t);`);
        return;
      case "atomic":
        this.atomic(stmt);
        return;
      case "collective":
      case "mma":
      case "wgmma":
        throw new Error(`internal: a ${stmt.kind} inside a thread region`);
      // A wgmma completes when the block reaches it here, so its groups need no waiting.
      case "wgmmaSync":
        return;
      // Registers are the CUDA compiler's business; the CPU has no budget to move.
      case "setMaxRegisters":
        return;
      case "barrierOp":
        if (stmt.op === "wait") throw new Error("internal: a waitBarrier inside a thread region");
        out.line(`${barrierCall(stmt, printer, "t")};`);
        return;
      case "tileCopy": {
        // Done at once here (js-runtime.ts's tileCopy), its bytes counted on the barrier as the copy's completion.
        const array = (a: ArrayRef) => printer.hooksArray(a);
        const target = array(stmt.target);
        const bars = array(stmt.barriers);
        const checked = printer.checked ? `, chk, t, ${JSON.stringify(printer.where(stmt.span))}` : "";
        const rest = (targetName: string, barsName: string) => [targetName, JSON.stringify(stmt.target.name), String(target.dims![0]), bare(printer.print(stmt.offset)), array(stmt.source).name, array(stmt.map).name, bare(printer.print(stmt.x)), bare(printer.print(stmt.y)), barsName, String(bars.dims![0]), bare(printer.print(stmt.index))];
        if (stmt.multicast) {
          // The same box into every block of the cluster in the mask, each counting the bytes on its own barrier.
          out.line(`for (const clusterPeerBlock of clusterPeers(clusterBlocks, ${bare(printer.print(stmt.multicast))})) tileCopy(${rest(`clusterPeerBlock.${target.name}`, `clusterPeerBlock.${bars.name}`).join(", ")}${checked});`);
          return;
        }
        out.line(`tileCopy(${rest(target.name, bars.name).join(", ")}${checked});`);
        return;
      }
      case "tileStore": {
        // Done at once here (js-runtime.ts's tileStore): nothing is left for waitTileStores to wait for.
        const array = (a: ArrayRef) => printer.hooksArray(a);
        const source = array(stmt.source);
        const checked = printer.checked ? `, chk, t, ${JSON.stringify(printer.where(stmt.span))}` : "";
        const args = [array(stmt.target).name, array(stmt.map).name, bare(printer.print(stmt.x)), bare(printer.print(stmt.y)), source.name, JSON.stringify(stmt.source.name), String(source.dims![0]), bare(printer.print(stmt.offset))];
        out.line(`tileStore(${args.join(", ")}${checked});`);
        return;
      }
      case "tileStoreWait":
        return;
      case "matrixLoad":
      case "matrixStore":
        throw new Error(`internal: ${stmt.kind} reached the JS backend; legalize splits it for this target`);
      case "vectorLoad":
      case "vectorStore":
      case "asyncCopy":
        throw new Error(`internal: ${stmt.kind} reached the JS backend; legalize splits it for this target`);
      default:
        assertNever(stmt, "statement");
    }
  }
}

