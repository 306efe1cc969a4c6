/**
 * Checked builds (`tskernel build --checked`, `compileKernelLibrary(…, { checked: true })`): an IR→IR pass,
 * run last in legalization for the targets whose row in backends/targets.ts has `checks`, that makes every
 * rule of the language a kernel can break at run time a check (ir.ts, CheckExpr) that the backends print as a
 * call of a small helper. A failed check does not let the violation happen, and the thread records it in the
 * kernel's error buffer for the runtime to report with the TypeScript location:
 *
 * - every load, store, atomic and vector access of a global buffer, a shared array or a private array is
 *   checked against its length, per dimension (a global buffer's length is an implicit parameter the runtime
 *   passes; shared and private arrays have constant sizes). A failed load gives 0 (a zero vector or struct),
 *   a failed store or atomic does nothing (an atomic's old value is 0). A 16-byte vector access also checks
 *   that its start is a multiple of its lanes (CUDA faults on a misaligned one);
 * - an integer `/` or `%` by zero divides by 1 instead (the quotient is the dividend, the remainder 0, as WGSL
 *   defines them), and a shift amount outside 0…31 is reported and then taken modulo 32, as always; in helpers
 *   too, through a copy of each helper that divides or shifts (or calls one that does) for each kernel, whose
 *   checks record into that kernel's buffer (HelperFunction.checks);
 * - where the target counts the threads that reach a barrier cheaply (`divergence`: CUDA's
 *   `__syncthreads_count`), those are recorded when part of the block is missing (kernels get there only past
 *   the compiler's uniformity check, so rarely). Subgroup operations are not checked on any GPU: CUDA's
 *   `__activemask()` tells which lanes are converged at that instant, not which will arrive, and on the H100
 *   it reported a correct kernel (scan-lookback-subgroups.ts, lanes not yet reconverged after a spin-wait).
 *
 * A check whose condition folds to true (a constant index into a shared array, a literal divisor), or that
 * holds for every value its operands can take (passes/index-ranges.ts: a register tile indexed by loop counters,
 * a shared tile by the thread indices of a fixed block, a start that is a multiple of 4 by construction), is left
 * out. Where the target evaluates both sides of a `select` (WGSL), a check on one side counts only when the
 * condition picks that side. The statements a checked build cannot check are listed (`unchecked`): tensor
 * memory accelerator copies (the hardware bounds-checks their boxes in global memory), wgmma operands and
 * mbarrier operations, whose constant offsets and indices the validator checks.
 */

import { arrayStride, asyncCopyLanes, isInteger, type ArrayRef, type BinaryOp, type ElementType, type Expr, type HelperFunction, type Kernel, type KernelParam, type LiteralExpr, type ScalarType, type Span, type Stmt, type Type, type Variable } from "../ir/ir.ts";
import { isStruct, isVector, layoutOf } from "../ir/types.ts";
import { exprsOf, helpersCalledBy, mapExpr, mapStmts, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { foldExpr } from "./fold.ts";
import { IndexRanges } from "./index-ranges.ts";

export interface CheckOptions {
  /** The target evaluates both sides of a `select` (WGSL): a check on a side counts only where the condition picks it. */
  readonly eagerSelect: boolean;
  /** Barriers record the threads that miss them (CUDA: `__syncthreads_count`). */
  readonly divergence: boolean;
  /**
   * A load past an array's end is harmless (WGSL: robust buffer access, bounded workgroup and private
   * accesses): a checked vector load runs whatever its check says and its words are zeroed after, with no
   * branch around it.
   */
  readonly boundedLoads?: boolean;
  /**
   * A thread keeps only its first failed check, and recording one takes no branch (WGSL: backends/wgsl.ts,
   * checkFunction): the checks of one access (its alignment, its range) are joined by `&`, both evaluated,
   * where `&&` would put a branch between them.
   */
  readonly eagerConjunction?: boolean;
  /** The kernel's fixed block shape, where it has one: thread indices below it (passes/index-ranges.ts). */
  readonly block?: readonly [number, number, number];
}

/** What a failed check reports: the CPU checked mode's kinds (runtime/kernel-fault.ts). */
export type CheckKind = "out-of-bounds" | "misaligned-vector-access" | "division-by-zero" | "shift-out-of-range" | "barrier-divergence";

/**
 * One check of a kernel: what it checks and where. The two values a failure records mean, by kind:
 * out-of-bounds, the index and the buffer's length (a global buffer), the index (1-D shared and private arrays)
 * or the two indices (2-D shared arrays), a vector access's start in place of the index; misaligned, the start;
 * division by zero, nothing; a shift, the amount; a barrier, the threads that reached it and the block's.
 */
export interface CheckSite {
  readonly kind: CheckKind;
  readonly span: Span;
  /** Accesses: what the access does. */
  readonly access?: "read of" | "write to" | "atomic on";
  /** Accesses: the array's name and space, and a shared or private array's sizes. */
  readonly array?: { readonly name: string; readonly space: "global" | "shared" | "private"; readonly dims?: readonly number[] };
  /** Vector accesses: the elements moved at once. */
  readonly lanes?: number;
  /** Whether each recorded value is an i32 (read back signed). */
  readonly signed: readonly [boolean, boolean];
  /** Division and shifts: the operator as written (`/`, `%`, `<<`, `>>`). */
  readonly operator?: string;
}

/** A kernel's checks: the table the runtime reads its records with, and the parameters the build adds. */
export interface KernelChecks {
  readonly sites: readonly CheckSite[];
  /** After the kernel's own parameters: the error buffer, the launch's tag, the lengths of checked buffers. */
  readonly params: readonly KernelParam[];
  /** Statements no check covers, with why (for a warning). */
  readonly unchecked: readonly { readonly span: Span; readonly what: string; readonly why: string }[];
}

/** Words of one record in the error buffer: site, launch, block x y z, thread x y z, two values. */
export const checkRecordWords = 10;
/** Records an error buffer holds after its count; later failures are only counted. */
export const checkRecords = 8;

const binaryText: Partial<Record<BinaryOp, string>> = { div: "/", rem: "%", shl: "<<", shr: ">>" };

/**
 * How a checked build makes its copies of helpers: their bodies before the target's legalization (`bodies`, where
 * the target rewrote helpers, as for vectors), and that legalization with the copy's checks inserted at the point
 * where a kernel's are (`prepare`, which calls `insert` with the body so far).
 */
export interface HelperCopies {
  readonly bodies: ReadonlyMap<HelperFunction, readonly Stmt[]>;
  prepare(body: readonly Stmt[], insert: (stmts: Stmt[]) => Stmt[]): readonly Stmt[];
}

/**
 * The kernel's body with its checks, and checked copies of the helpers it reaches that divide or shift (`helpers`,
 * each after those it calls): a helper is compiled once for all its callers, so a checked build gives each kernel
 * copies whose checks record into that kernel's error buffer under its sites (HelperFunction.checks), and points
 * the kernel's calls (and the copies' own) at them.
 */
export function insertChecks(
  kernel: Kernel,
  body: readonly Stmt[],
  sizes: ReadonlyMap<ArrayRef, readonly number[]>,
  options: CheckOptions,
  helperCopies?: HelperCopies,
): { body: Stmt[]; checks: KernelChecks; helpers: { helper: HelperFunction; body: readonly Stmt[] }[] } {
  const taken = new Set(kernel.params.map((param) => (param.kind === "buffer" ? param.array.name : param.kind === "scalar" ? param.variable.name : param.name)));
  const fresh = (base: string) => {
    let name = base;
    while (taken.has(name)) name += "_";
    taken.add(name);
    return name;
  };
  const span = kernel.span;
  const errors: ArrayRef = { kind: "array", name: fresh("tsk_errors"), elementType: "u32", space: "global", access: "read_write", dims: [], span };
  const launch: Variable = { kind: "variable", name: fresh("tsk_launch"), type: "u32", mutable: false, span };
  const lengths = new Map<ArrayRef, Variable>();
  const sites: CheckSite[] = [];
  const unchecked: { span: Span; what: string; why: string }[] = [];

  const lengthOf = (array: ArrayRef): Variable => {
    let variable = lengths.get(array);
    if (!variable) lengths.set(array, (variable = { kind: "variable", name: fresh(`tsk_length_${array.name}`), type: "u32", mutable: false, span }));
    return variable;
  };
  const ranges = new IndexRanges(body, options.block);
  /** A check of `holds` at a new site, or undefined where `holds` folds to true or surely holds (nothing to check). */
  const check = (holds: Expr, site: CheckSite, values: readonly Expr[]): Expr | undefined => {
    const folded = foldExpr(holds);
    if (ranges.proves(folded)) return undefined;
    sites.push(site);
    const value = (i: number): Expr => values[i] ?? u32(0, site.span);
    return { kind: "check", type: "bool", holds: folded, site: sites.length - 1, values: [value(0), value(1)], errors, launch, span: site.span };
  };

  /** Whether `indices` (with `lanes` elements from the last) lie in `array`: its check, undefined where they surely do. */
  const accessCheck = (array: ArrayRef, indices: readonly Expr[], access: "read of" | "write to" | "atomic on", at: Span, lanes = 1): Expr | undefined => {
    if (!checkable(array)) return undefined;
    const signed: [boolean, boolean] = [indices[0]!.type === "i32", indices[1]?.type === "i32"];
    // A vector access's last element: its start is a multiple of its lanes (a power of two, checked first or
    // proven), so start + lanes − 1 does not wrap and being below the length covers the whole range.
    const within = (index: Expr, length: Expr, extra: number): Expr => {
      const start = asU32(index);
      return bin("lt", "bool", extra === 0 ? start : bin("add", "u32", start, u32(extra, at)), length);
    };
    const last = indices.length - 1;
    if (array.space === "global") {
      const length = variable(lengthOf(array));
      return check(within(indices[0]!, length, lanes - 1), { kind: "out-of-bounds", span: at, access, array: { name: array.name, space: "global" }, ...(lanes > 1 ? { lanes } : {}), signed: [signed[0], false] }, [asU32(indices[0]!), length]);
    }
    const dims = sizes.get(array) ?? array.dims.map((dim) => (dim.kind === "literal" ? dim.value : NaN));
    if (dims.some((dim) => !Number.isFinite(dim))) throw new Error(`internal: the size of '${array.name}' is not known to the checks`);
    const holds = indices.map((index, i) => within(index, u32(dims[i]!, at), i === last ? lanes - 1 : 0)).reduce((a, b) => bin("logand", "bool", a, b));
    return check(holds, { kind: "out-of-bounds", span: at, access, array: { name: array.name, space: array.space, dims }, ...(lanes > 1 ? { lanes } : {}), signed }, indices.map(asU32));
  };
  /** A 16-byte access's start is a multiple of its lanes; undefined where the start folds to one. */
  const alignmentCheck = (array: ArrayRef, indices: readonly Expr[], lanes: number, at: Span): Expr | undefined => {
    if (!checkable(array) || lanes <= 1) return undefined;
    const start = indices[indices.length - 1]!;
    const holds = bin("eq", "bool", bin("and", "u32", asU32(start), u32(lanes - 1, at)), u32(0, at));
    return check(holds, { kind: "misaligned-vector-access", span: at, array: { name: array.name, space: array.space }, lanes, signed: [start.type === "i32", false] }, [asU32(start)]);
  };
  const conjunction: BinaryOp = options.eagerConjunction ? "and" : "logand";
  const both = (...checks: (Expr | undefined)[]): Expr | undefined => checks.filter((c): c is Expr => c !== undefined).reduce<Expr | undefined>((a, b) => (a ? bin(conjunction, "bool", a, b) : b), undefined);

  // The checked copies of the helpers this kernel reaches, made as calls to them are met, each after its callees.
  const bodyOf = (helper: HelperFunction) => helperCopies?.bodies.get(helper) ?? helper.body;
  const instrumented = new Map<HelperFunction, boolean>();
  const needsCopy = (helper: HelperFunction): boolean => {
    let needs = instrumented.get(helper);
    if (needs === undefined) {
      instrumented.set(helper, false);
      needs = dividesOrShifts(bodyOf(helper)) || [...helpersCalledBy([bodyOf(helper)])].some(needsCopy);
      instrumented.set(helper, needs);
    }
    return needs;
  };
  const copyOf = new Map<HelperFunction, HelperFunction>();
  const copies: { helper: HelperFunction; body: readonly Stmt[] }[] = [];
  const checkedCall = (node: Expr & { kind: "call" }): Expr => {
    if (!needsCopy(node.callee)) return node;
    let copy = copyOf.get(node.callee);
    if (!copy) {
      const made: HelperFunction = { ...node.callee, body: [], checks: { errors, launch } };
      copyOf.set(node.callee, made);
      const insert = (stmts: Stmt[]) => mapStmts(stmts, { expr: helperExpr, stmt: helperStmt });
      made.body = helperCopies ? helperCopies.prepare(bodyOf(node.callee), insert) : insert([...bodyOf(node.callee)]);
      copies.push({ helper: made, body: made.body });
      copy = made;
    }
    return { ...node, callee: copy };
  };

  const expr = (node: Expr): Expr => {
    switch (node.kind) {
      case "call":
        return checkedCall(node);
      case "load": {
        const ok = both(alignmentCheck(node.array, node.indices, node.alignment ?? 1, node.span), accessCheck(node.array, node.indices, "read of", node.span));
        return ok ? { kind: "select", type: node.type, condition: ok, whenTrue: node, whenFalse: zeroOf(node.type, node.span), span: node.span } : node;
      }
      case "binary":
        if ((node.op === "div" || node.op === "rem") && isInteger(node.type)) return { ...node, right: divisor(node.right, node.op, node.span) };
        if ((node.op === "shl" || node.op === "shr") && isInteger(node.left.type)) return { ...node, right: shiftAmount(node.right, node.op, node.span) };
        return node;
      case "select":
        return options.eagerSelect ? guardSides(node) : node;
      default:
        return node;
    }
  };
  /** The divisor of `x op divisor`, or 1 where it is 0 (recorded). */
  const divisor = (value: Expr, op: BinaryOp, at: Span): Expr => {
    const type = value.type as ScalarType;
    const ok = check(bin("ne", "bool", value, lit(type, 0, at)), { kind: "division-by-zero", span: at, operator: binaryText[op], signed: [false, false] }, []);
    return ok ? { kind: "select", type, condition: ok, whenTrue: value, whenFalse: lit(type, 1, at), span: at } : value;
  };
  /** A shift amount, recorded where it is outside 0…31 (it is used as it is: targets take it modulo 32). */
  const shiftAmount = (value: Expr, op: BinaryOp, at: Span): Expr => {
    const type = value.type as ScalarType;
    const ok = check(bin("lt", "bool", asU32(value), u32(32, at)), { kind: "shift-out-of-range", span: at, operator: binaryText[op], signed: [type === "i32", false] }, [asU32(value)]);
    return ok ? { kind: "select", type, condition: ok, whenTrue: value, whenFalse: value, span: at } : value;
  };
  /** The checks inside each side of a select count only where the condition picks that side. */
  const guardSides = (node: Expr & { kind: "select" }): Expr => {
    const condition = withoutChecks(node.condition);
    const guard = (side: Expr, picked: Expr): Expr => mapExpr(side, (e) => (e.kind === "check" ? { ...e, holds: bin("logor", "bool", e.holds, unary("not", picked)) } : e));
    const whenTrue = guard(node.whenTrue, condition);
    const whenFalse = guard(node.whenFalse, unary("not", condition));
    return whenTrue === node.whenTrue && whenFalse === node.whenFalse ? node : { ...node, whenTrue, whenFalse };
  };

  const stmt = (s: Stmt): Stmt | readonly Stmt[] => {
    switch (s.kind) {
      case "store": {
        const value = compound(s.op, s.value, s.span);
        const ok = both(alignmentCheck(s.array, s.indices, s.alignment ?? 1, s.span), accessCheck(s.array, s.indices, s.op ? "read of" : "write to", s.span));
        if (!ok) return value === s.value ? s : { ...s, value };
        // The value's own checks come first, as they do where the store is not checked (the CPU's order).
        if (!hasCheck(value)) return ifThen(ok, [{ ...s, value }], s.span);
        const temp: Variable = { kind: "variable", name: "stored", type: value.type, mutable: false, span: s.span };
        return [{ kind: "declare", variable: temp, init: value, span: s.span }, ifThen(ok, [{ ...s, value: read(temp, s.span) }], s.span)];
      }
      case "assign": {
        const value = compound(s.op, s.value, s.span);
        return value === s.value ? s : { ...s, value };
      }
      case "vectorStore": {
        const lanes = s.values.length;
        const ok = both(alignmentCheck(s.array, s.indices, lanes, s.span), accessCheck(s.array, s.indices, "write to", s.span, lanes));
        return ok ? ifThen(ok, [s], s.span) : s;
      }
      case "vectorLoad": {
        const lanes = s.targets.length;
        const ok = both(alignmentCheck(s.array, s.indices, lanes, s.span), accessCheck(s.array, s.indices, "read of", s.span, lanes));
        if (!ok) return s;
        if (options.boundedLoads) {
          // The check, then the load, whose words the backend zeroes where it failed (a select per word, not
          // per lane: sixteen bytes are four words). The check has its own variable so that a load split into
          // lanes (legalize.ts) evaluates it once.
          const inRange: Variable = { kind: "variable", name: "in_range", type: "bool", mutable: false, span: s.span };
          return [
            { kind: "declare", variable: inRange, init: ok, span: s.span },
            { ...s, zeroUnless: read(inRange, s.span) },
          ];
        }
        // The targets are declared after the check, from temporaries that stay 0 where it failed.
        const inner = s.targets.map((target): Variable => ({ ...target, name: `${target.name}_checked` }));
        const held = s.targets.map((target): Variable => ({ ...target, name: `${target.name}_held`, mutable: true }));
        return [
          ...held.map((variable): Stmt => ({ kind: "declare", variable, init: zeroOf(variable.type, s.span), span: s.span })),
          ifThen(ok, [{ ...s, targets: inner }, ...inner.map((variable, i): Stmt => ({ kind: "assign", variable: held[i]!, value: read(variable, s.span), span: s.span }))], s.span),
          ...s.targets.map((variable, i): Stmt => ({ kind: "declare", variable, init: read(held[i]!, s.span), span: s.span })),
        ];
      }
      case "atomic": {
        const ok = accessCheck(s.array, s.indices, "atomic on", s.span);
        if (!ok) return s;
        if (!s.result) return ifThen(ok, [s], s.span);
        const inner: Variable = { ...s.result, name: `${s.result.name}_checked` };
        const held: Variable = { ...s.result, name: `${s.result.name}_held`, mutable: true };
        return [
          { kind: "declare", variable: held, init: zeroOf(held.type, s.span), span: s.span },
          ifThen(ok, [{ ...s, result: inner }, { kind: "assign", variable: held, value: read(inner, s.span), span: s.span }], s.span),
          { kind: "declare", variable: s.result, init: read(held, s.span), span: s.span },
        ];
      }
      case "asyncCopy": {
        const lanes = asyncCopyLanes(s);
        const ok = both(
          alignmentCheck(s.source, s.sourceIndices, lanes, s.span),
          accessCheck(s.source, s.sourceIndices, "read of", s.span, lanes),
          alignmentCheck(s.target, s.targetIndices, lanes, s.span),
          accessCheck(s.target, s.targetIndices, "write to", s.span, lanes),
        );
        return ok ? ifThen(ok, [s], s.span) : s;
      }
      case "barrier":
        // A warpgroup's named barrier counts no threads (bar.sync has no count form that returns one).
        if (!options.divergence || s.scope === "warpgroup") return s;
        sites.push({ kind: "barrier-divergence", span: s.span, signed: [false, false] });
        return { ...s, check: { site: sites.length - 1, errors, launch } };
      case "wgmma":
        unchecked.push({ span: s.span, what: "wgmma()", why: "its shared operands are read through matrix descriptors; the validator checks constant offsets" });
        return s;
      case "tileCopy":
      case "tileStore":
        unchecked.push({ span: s.span, what: s.kind === "tileCopy" ? "copyTile()" : "storeTile()", why: "the tensor memory accelerator bounds-checks the box in global memory itself (zeros outside the tensor, nothing stored there); the shared offset is checked at compile time where constant" });
        return s;
      case "barrierOp":
        unchecked.push({ span: s.span, what: "mbarrier operations", why: "skipping one would hang the block; the validator checks constant barrier indices" });
        return s;
      default:
        return s;
    }
  };
  /** The value of `x op= value`: a divisor or shift amount is checked as in an expression. */
  const compound = (op: BinaryOp | undefined, value: Expr, at: Span): Expr => {
    if ((op === "div" || op === "rem") && isInteger(value.type)) return divisor(value, op, at);
    if ((op === "shl" || op === "shr") && isInteger(value.type)) return shiftAmount(value, op, at);
    return value;
  };

  const checked = mapStmts(body, { expr, stmt });
  // Helpers never touch arrays or barriers: in their copies only divisions, shifts and calls change.
  function helperExpr(node: Expr): Expr {
    return node.kind === "call" ? checkedCall(node) : node.kind === "binary" ? expr(node) : node;
  }
  function helperStmt(s: Stmt): Stmt | readonly Stmt[] {
    return s.kind === "assign" ? stmt(s) : s;
  }
  const params: KernelParam[] = [
    { kind: "buffer", array: errors, implicit: { kind: "errors" } },
    { kind: "scalar", variable: launch, implicit: { kind: "launch" } },
    // The lengths in the order of the buffers they measure.
    ...kernel.params.flatMap((param): KernelParam[] => {
      const length = param.kind === "buffer" ? lengths.get(param.array) : undefined;
      return length && param.kind === "buffer" ? [{ kind: "scalar", variable: length, implicit: { kind: "length", of: param.array.name } }] : [];
    }),
  ];
  return { body: checked, checks: { sites, params, unchecked: dedupeUnchecked(unchecked) }, helpers: copies };
}

/** Whether a body divides integers or shifts by an amount that is not a literal: what a checked build checks in a helper. */
function dividesOrShifts(body: readonly Stmt[]): boolean {
  let found = false;
  const operation = (op: BinaryOp | undefined, type: Type, right: Expr) => {
    if (op && isInteger(type) && right.kind !== "literal" && (op === "div" || op === "rem" || op === "shl" || op === "shr")) found = true;
  };
  walkStmts(body, (s) => {
    if (s.kind === "assign") operation(s.op, s.variable.type, s.value);
    for (const e of exprsOf(s)) walkExpr(e, (node) => node.kind === "binary" && operation(node.op, node.left.type, node.right));
  });
  return found;
}

/** One warning per kind of unchecked statement, at its first place. */
function dedupeUnchecked(list: readonly { span: Span; what: string; why: string }[]): { span: Span; what: string; why: string }[] {
  const seen = new Set<string>();
  return list.filter((item) => !seen.has(item.what) && seen.add(item.what));
}

/** The source text of an operation, on one line and at most 60 characters, for a report of it. */
export function operationText(sourceText: string, span: { readonly start: number; readonly end: number }): string {
  const text = sourceText.slice(span.start, span.end).replace(/\s+/g, " ").trim();
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Arrays that checks cover: not matrix fragments or mbarriers, which only their own statements reach. */
function checkable(array: ArrayRef): boolean {
  return !array.fragment && !array.barriers;
}

function hasCheck(e: Expr): boolean {
  let found = false;
  walkExpr(e, (node) => {
    if (node.kind === "check") found = true;
  });
  return found;
}

/** The checks of an expression as plain conditions, for a guard that repeats the expression. */
function withoutChecks(e: Expr): Expr {
  return mapExpr(e, (node) => (node.kind === "check" ? node.holds : node));
}

function ifThen(condition: Expr, then: Stmt[], span: Span): Stmt {
  return { kind: "if", condition, then, else: [], span };
}

function read(variable: Variable, span: Span): Expr {
  return { kind: "variable", type: variable.type, variable, span };
}

function variable(v: Variable): Expr {
  return { kind: "variable", type: v.type, variable: v, span: v.span };
}

function lit(type: ScalarType, value: number, span: Span): LiteralExpr {
  return { kind: "literal", type, value, span };
}

function u32(value: number, span: Span): LiteralExpr {
  return lit("u32", value, span);
}

function bin(op: BinaryOp, type: ScalarType, left: Expr, right: Expr): Expr {
  return { kind: "binary", op, type, left, right, span: left.span };
}

function unary(op: "not", operand: Expr): Expr {
  return { kind: "unary", op, type: "bool", operand, span: operand.span };
}

/** An integer as its u32 bits (a negative i32 index becomes one past any length). */
function asU32(value: Expr): Expr {
  if (value.type === "u32") return value;
  if (value.kind === "literal" && value.value >= 0) return { ...value, type: "u32" };
  return { kind: "convert", type: "u32", value, span: value.span };
}

/** The zero of a loaded type: a literal, a vector of zeros, a struct of zero fields. */
export function zeroOf(type: Type | ElementType, span: Span): Expr {
  if (typeof type === "string") return lit(type === "bool" ? "bool" : (type as ScalarType), 0, span);
  if (isVector(type)) return { kind: "construct", type, args: [lit(type.element, 0, span)], span };
  if (isStruct(type)) return { kind: "construct", type, args: type.fields.map((field) => zeroOf(field.type as Type, span)), span };
  throw new Error(`internal: no zero of ${JSON.stringify(type)} (${arrayStride(type)} bytes, ${layoutOf(type).align}-aligned)`);
}
