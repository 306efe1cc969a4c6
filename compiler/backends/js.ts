/**
 * The JavaScript backend for the CPU runtime: prints a validated, specialized module as JS in which each
 * kernel specialization is a function that runs one whole block, `(args, blockIdx, blockDim, gridDim)`.
 *
 * Barriers really separate phases without threads: the body is cut at every statement that contains a
 * *cut* — a barrier or a collective (a subgroup operation) — or a jump out of a loop that does. Runs of
 * statements between the cuts become *regions*, each wrapped in a loop over the block's threads, so every
 * thread finishes a region before any thread starts the next. Statements that contain cuts stay outside the
 * thread loops; the validator guarantees their conditions are the same for every thread, so they are
 * evaluated once, with thread 0's values. A collective itself runs once for the whole block, over the
 * per-thread slots of its arguments, writing the slots of its result (js-runtime.ts). Locals that live
 * across regions are *spilled* to one typed array slot per thread and promoted to plain locals inside each
 * region. A thread that returns is marked done and skipped by later regions.
 *
 * A kernel with warpgroup roles (`warpgroupIdx`, mbarriers) runs the same way per warpgroup instead of per
 * block: its body becomes a generator over the warpgroup's 128 threads, block level means warpgroup level
 * (conditions evaluated with the warpgroup's first thread), `syncThreads()` and an unfinished `waitBarrier`
 * yield, and the runtime's `runWarpgroups` interleaves the block's warpgroups (js-runtime.ts).
 *
 * Values follow docs/language.md's 32-bit semantics: `Math.fround` after every f32 operation, `| 0` and
 * `Math.imul` for i32, `>>> 0` for u32, truncating integer division, saturating float→int conversion.
 */

import { declaredVariables, isFragmentOperand, type ArrayRef, type AtomicStmt, type BarrierOpStmt, type CollectiveStmt, type Expr, type FragmentRef, type HelperFunction, type MmaStmt, type WarpgroupShape, type WgmmaStmt, type Span, type Stmt, type Variable } from "../ir/ir.ts";
import { warpgroupColumns, warpgroupDepth } from "../ir/matrix.ts";
import { isFloat8, isHalfFloat, targetScalars, type ElementScalar, type ElementType, type Float8Type, type ScalarType } from "../ir/types.ts";
import { typesUsed } from "../ir/types-used.ts";
import { helperResults } from "../passes/scalarize-vectors.ts";
import { halfRuntime, halfRuntimeNames } from "./js-float16.ts";
import { float8Codec, float8Runtime, float8RuntimeNames } from "./js-float8.ts";
import { operationText } from "../passes/checks.ts";
import type { SourceLocator } from "../diagnostics/span.ts";
import { atomicArrays, exprsOf, usesSubgroups, usesWarpgroupRoles, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { atomicsRuntime, barrierRuntime, bitcastRuntime, matrix16Runtime, matrixRuntime, subgroupRuntime, subgroupRuntimeOps, tileStoreRuntime, warpgroup16Runtime, warpgroup8Runtime, warpgroupRuntime } from "./js-runtime.ts";
import { barrierCall, bare, JsExprPrinter, ThreadStmtPrinter } from "./js-thread.ts";
import { Namer } from "./namer.ts";
import { Writer } from "./writer.ts";
import type { KernelUnit } from "./unit.ts";

export type JsKernelUnit = KernelUnit;

export interface JsModuleInput {
  readonly displayPath: string;
  /** Where each span lies, for the `file:line:column` of each access and the operations' text in checked mode. */
  readonly locator: SourceLocator;
  /**
   * Checked mode: every array access and every block-level condition goes through the checker object the
   * runtime passes as a fifth argument, which reports out-of-bounds accesses, reads of unwritten shared
   * memory, shared-memory races between barriers and barriers not reached by all threads.
   */
  readonly checked?: boolean;
  readonly helpers: readonly { readonly helper: HelperFunction; readonly body: readonly Stmt[] }[];
  readonly kernels: readonly JsKernelUnit[];
}

export interface JsOutput {
  /** An ES module exporting one function per kernel specialization. */
  readonly source: string;
  /** The same code as a function body that returns `{ entryName: function, … }`, for `new Function`. */
  readonly factoryBody: string;
  /** `functions[i]` is the JS function name of `kernels[i]`. */
  readonly functions: readonly string[];
}

const reserved: ReadonlySet<string> = new Set([
  // JavaScript keywords and literals
  "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else", "enum",
  "export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "new", "null",
  "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
  "let", "static", "implements", "interface", "package", "private", "protected", "public", "await", "arguments",
  "eval", "undefined", "NaN", "Infinity", "Math",
  // Names the printed code uses itself
  "fround", "imul", "f32ToI32", "f32ToU32", "args", "blockIdx", "blockDim", "gridDim", "threads", "t",
  "tx", "ty", "tz", "bx", "by", "bz", "nx", "ny", "nz", "gx", "gy", "gz", "done", "alive",
  "chk", "sg", "subgroupSize", "subgroup", "subgroupPoison", "subgroupWrap", "atomics", "atomicBitViews", "atomicF32",
  "atomicBits", "atomicShared", "atomicBitsOf", "atomicUpdate", "SharedArrayBuffer", "Atomics",
  "roundTf32", "tf32Scratch", "tf32Bits", "mmaA", "mmaB", "mmaC", "mmaM16n8k8", "truncateTf32", "wgmmaA", "wgmmaB", "wgmmaC", "wgmmaM64k8",
  "wgmma16Slot", "wgmma16Bits", "wgmma16Scales", "wgmma16Decode", "wgmma16Swizzle", "wgmmaA16", "wgmmaB16", "wgmmaM64k16",
  "wgmma16LoadB", "wgmmaAccumulate", "wgmmaM64k16r", "wgmma8Swizzle", "wgmmaA8", "wgmmaB8", "wgmmaM64k32",
  "bitcastU32", "bitcastF32", "bitcastSlot", "bitcastSlotBits",
  "mbarrierClock", "mbarrierFault", "mbarrierAt", "mbarrierInit", "mbarrierArrive", "mbarrierDone", "runWarpgroups", "flagPause",
  "mbarrierStep", "mbarrierArriveExpect", "tileCopy", "tileMap", "tileStore", "tileTf32", "tileTf32Bits", "tileRoundTf32",
  "warpgroupIndex", "warpgroupFirst", "warpgroupEnd", "warpgroupBody", "warpgroupList",
  "clusterBlocks", "clusterRankValue", "clusterPeers", "clusterPeer", "clusterPeerBlock",
  ...halfRuntimeNames,
  ...float8RuntimeNames,
]);

const prelude = [
  "const fround = Math.fround;",
  "const imul = Math.imul;",
  "// Float to integer conversions truncate toward zero and saturate; NaN becomes 0.",
  "function f32ToI32(x) { return x !== x ? 0 : x >= 2147483647 ? 2147483647 : x <= -2147483648 ? -2147483648 : x | 0; }",
  "function f32ToU32(x) { return x !== x ? 0 : x >= 4294967295 ? 4294967295 : x <= 0 ? 0 : x >>> 0; }",
];

export function emitJs(input: JsModuleInput): JsOutput {
  const out = new Writer();
  const moduleNames = new Namer(reserved);
  const functions = input.kernels.map((unit) => moduleNames.name(unit, unit.entryName));
  for (const { helper } of input.helpers) moduleNames.name(helper, helper.name);

  out.line(`// Generated by tskernel from ${input.displayPath}. Do not edit: change the TypeScript and rebuild.`);
  out.line("// Each kernel function runs one whole block: (args, blockIdx, blockDim, gridDim), where args holds the");
  out.line("// run-time parameters in order (typed arrays and numbers) and the others are [x, y, z] arrays.");
  for (const line of prelude) out.line(line);
  const bodies = input.kernels.map((unit) => unit.kernel.body);
  if (bodies.some((body) => [...atomicArrays(body)].some((array) => array.space === "global"))) for (const line of atomicsRuntime) out.line(line);
  if (bodies.some(usesMatrixRuntime)) for (const line of matrixRuntime) out.line(line);
  if (bodies.some(usesMma16)) for (const line of matrix16Runtime) out.line(line);
  if ([...bodies, ...input.helpers.map(({ body }) => body)].some(usesBitcasts)) for (const line of bitcastRuntime) out.line(line);
  if (input.kernels.some((unit) => typesUsed(unit.kernel).some((use) => isHalfFloat(use.type)))) for (const line of halfRuntime) out.line(line);
  if (input.kernels.some((unit) => typesUsed(unit.kernel).some((use) => isFloat8(use.type)))) for (const line of float8Runtime) out.line(line);
  if (bodies.some(usesWgmma)) for (const line of warpgroupRuntime) out.line(line);
  if (bodies.some((body) => usesStmt(body, (stmt) => stmt.kind === "wgmma" && warpgroupDepth(stmt.accumulator.array.fragment!.shape as WarpgroupShape) === 16))) for (const line of warpgroup16Runtime) out.line(line);
  if (bodies.some((body) => usesStmt(body, (stmt) => stmt.kind === "wgmma" && warpgroupDepth(stmt.accumulator.array.fragment!.shape as WarpgroupShape) === 32))) for (const line of warpgroup8Runtime) out.line(line);
  if (bodies.some(usesWarpgroupRoles)) for (const line of barrierRuntime) out.line(line);
  if (bodies.some((body) => usesStmt(body, (stmt) => stmt.kind === "tileStore"))) for (const line of tileStoreRuntime) out.line(line);
  if (bodies.some(usesSubgroups)) {
    out.line("// Kernels with subgroup operations take two more arguments: the checker (checked mode only, else");
    out.line("// undefined) and the subgroup size (default 32).");
    for (const line of subgroupRuntime) out.line(line);
  }

  // Helpers that return a vector or struct pass its leaves after the first through one module-level array
  // (passes/scalarize-vectors.ts), which the caller reads right after the call.
  const results = resultsLength([...bodies, ...input.helpers.map(({ body }) => body)]);
  const resultsArray = results > 0 ? { name: moduleNames.name(helperResults, "results") } : undefined;
  if (resultsArray) out.line(`const ${resultsArray.name} = new Float64Array(${results});`);

  const location = input.checked ? (span: Span) => input.locator.location(span) : undefined;
  const operation = input.checked ? (span: Span) => operationText(input.locator.text(span), span) : undefined;

  for (const { helper, body } of input.helpers) {
    const names = moduleNames.child();
    const params = helper.params.map((param) => names.name(param, param.name));
    // Checked mode: a helper's integer divisions and shifts are checked as a kernel's are, so it takes the checker
    // and the thread its faults name after its own parameters (every call passes them), as `chk` and `t`: both
    // reserved, so no parameter of the helper takes those names, and the checked accesses print `t` as kernels do.
    const thread = location ? "t" : undefined;
    if (thread) params.push("chk", thread);
    const printer = new JsExprPrinter({
      variable: (v) => names.lookup(v),
      builtin: () => {
        throw new Error("internal: a helper reads a builtin");
      },
      array: (array) => {
        if (array === helperResults && resultsArray) return resultsArray;
        throw new Error("internal: a helper reads an array");
      },
      helper: (h) => moduleNames.lookup(h),
      ...(thread ? { location, operation, thread } : {}),
    });
    out.line();
    out.block(`function ${moduleNames.lookup(helper)}(${params.join(", ")}) {`, () => {
      new ThreadStmtPrinter(out, names, printer, undefined).stmts(body);
    });
  }
  input.kernels.forEach((unit, index) => new KernelPrinter(unit, functions[index]!, out, moduleNames, location, resultsArray, operation).print());

  const source = out.toString();
  const factoryBody = `${source.replace(/^export function /gm, "function ")}return { ${functions.join(", ")} };\n`;
  return { source, factoryBody, functions };
}

// ---------------------------------------------------------------------------------------------------------
// Kernels: cutting the body into regions

/** The statements that cut a region and are not barriers: collectives, matrix multiplies, mbarrier waits and waitFlag. */
type CutStmt = CollectiveStmt | MmaStmt | WgmmaStmt | BarrierOpStmt | AtomicStmt;

/** The first barrier and the first collective at any depth of `stmts`: the statements the body is cut at. */
function cutsIn(stmts: readonly Stmt[]): { barrier?: Stmt; collective?: CutStmt } {
  const found: { barrier?: Stmt; collective?: CutStmt } = {};
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "barrier") found.barrier ??= stmt;
    // An mma (wgmma) reads the other lanes' fragments: a cut like a subgroup operation. A waitBarrier is
    // where the warpgroup's generator yields.
    if (stmt.kind === "collective" || stmt.kind === "mma" || stmt.kind === "wgmma" || (stmt.kind === "barrierOp" && stmt.op === "wait") || (stmt.kind === "atomic" && stmt.op === "wait")) found.collective ??= stmt;
  });
  return found;
}

function containsCut(stmts: readonly Stmt[]): boolean {
  const { barrier, collective } = cutsIn(stmts);
  return barrier !== undefined || collective !== undefined;
}

/** Whether a body has a statement that `test` accepts (at any depth). */
function usesStmt(stmts: readonly Stmt[], test: (stmt: Stmt) => boolean): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => test(stmt) && (found = true));
  return found;
}

/** Whether a body multiplies on warpgroups (wgmma): it needs the warpgroup runtime too. */
function usesWgmma(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => stmt.kind === "wgmma" && (found = true));
  return found;
}

/** Whether a body multiplies m16n8k16 fragments (the matrix runtime's 16-bit part). */
function usesMma16(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => stmt.kind === "mma" && stmt.accumulator.array.fragment!.shape === "m16n8k16" && (found = true));
  return found;
}

/** Whether a body needs the matrix runtime: an mma or a wgmma, or the tf32 rounding of a fragment load or fill. */
function usesMatrixRuntime(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "mma" || stmt.kind === "wgmma") found = true;
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "intrinsic" && e.name === "roundTf32" && (found = true));
  });
  return found;
}

/** Whether a body reinterprets bits (`bitcastU32`, `bitcastF32`): then the module prints their functions. */
function usesBitcasts(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "intrinsic" && (e.name === "bitcastU32" || e.name === "bitcastF32") && (found = true));
  });
  return found;
}

/** A break/continue in `stmt` that leaves `stmt` (one not inside a loop nested in it). */
function containsEscapingJump(stmt: Stmt): boolean {
  switch (stmt.kind) {
    case "break":
    case "continue":
      return true;
    case "if":
      return stmt.then.some(containsEscapingJump) || stmt.else.some(containsEscapingJump);
    case "block":
      return stmt.body.some(containsEscapingJump);
    default:
      return false;
  }
}

/** The typed array of a spilled local's slots, one per thread (an f16 or bf16 value is exactly an f32). */
const slotArrays: Readonly<Record<ScalarType, string>> = {
  f32: "Float32Array", i32: "Int32Array", u32: "Uint32Array", bool: "Uint8Array", f16: "Float32Array", bf16: "Float32Array", f64: "Float64Array",
};

class KernelPrinter {
  private readonly names: Namer;
  private readonly printer: JsExprPrinter;
  /** The printer of block-uniform statements, which run outside the thread loops (checked faults name no thread). */
  private readonly uniformPrinter: JsExprPrinter;
  /** Block-level printer: spilled variables read from thread 0's slot. */
  private readonly blockPrinter: JsExprPrinter;
  private readonly spilled = new Map<Variable, string>();
  private readonly arrays = new Map<ArrayRef, { name: string; dims?: readonly number[] }>();
  private regionCount = 0;
  private labelCount = 0;
  private readonly hasReturn: boolean;
  /** The kernel uses subgroups: its function takes the subgroup size as a sixth argument. */
  private readonly subgroups: boolean;
  /**
   * The kernel has warpgroup roles (warpgroupIdx, mbarriers): its body runs once per warpgroup, as a
   * generator `warpgroupBody(warpgroupIndex)` over threads warpgroupFirst … warpgroupEnd − 1 that yields at syncThreads() and at waits, and the
   * runtime's `runWarpgroups` interleaves them. "Block level" then means "warpgroup level": conditions are
   * evaluated with the warpgroup's first thread, which the validator made agree with the others.
   */
  private readonly roles: boolean;
  /** Locals declared in the body (as opposed to parameters). */
  private readonly declared = new Set<Variable>();
  /**
   * Block-uniform locals: the same value in every thread, so one block-level local holds them, set once per
   * block where the body sets them, never spilled (uniformLocals).
   */
  private uniform: ReadonlySet<Variable> = new Set();
  /**
   * Locals recomputed in each region that reads them instead of spilled: `const`s declared at block level
   * from thread indices, parameters and constant uniform locals by a few integer operations (`const tid =
   * threadIdx.x` and the like), in declaration order. Cheaper than a slot per thread written in one region
   * and read in every later one. Filled by `print` (those read by block-level conditions still spill).
   */
  private readonly recomputed = new Map<Variable, Expr>();

  constructor(
    private readonly unit: JsKernelUnit,
    private readonly functionName: string,
    private readonly out: Writer,
    private readonly moduleNames: Namer,
    private readonly location: ((span: Span) => string) | undefined,
    /** The module's array of helper results, where a helper returns a vector or struct. */
    results?: { readonly name: string },
    /** Checked mode: the source text of an operation, for reports of divisions and shifts. */
    operation?: (span: Span) => string,
  ) {
    if (results) this.arrays.set(helperResults, results);
    this.names = moduleNames.child();
    const builtin = (expr: Expr & { kind: "builtin" }) => {
      const axis = expr.axis;
      switch (expr.builtin) {
        case "threadIdx":
          return `t${axis}`;
        case "blockIdx":
          return `b${axis}`;
        case "blockDim":
          return `n${axis}`;
        case "gridDim":
          return `g${axis}`;
      }
    };
    const hooks = {
      builtin,
      // Lanes are numbered along the thread's linear index t in the block.
      subgroupBuiltin: (expr: Expr & { kind: "subgroupBuiltin" }) => (expr.builtin === "subgroupSize" ? "sg" : expr.builtin === "warpgroupIdx" ? "warpgroupIndex" : expr.builtin === "clusterRank" ? "clusterRankValue" : "(t % sg)"),
      array: (array: ArrayRef) => this.arrays.get(array)!,
      helper: (helper: HelperFunction) => moduleNames.lookup(helper),
      location,
      operation,
    };
    this.printer = new JsExprPrinter({ ...hooks, variable: (v) => this.names.lookup(v) });
    this.uniformPrinter = new JsExprPrinter({ ...hooks, variable: (v) => this.names.lookup(v), thread: "undefined" });
    this.blockPrinter = new JsExprPrinter({
      ...hooks,
      variable: (v) => {
        // Checked mode evaluates block-level conditions for every thread `t`; otherwise thread 0 stands for all.
        const slot = location ? "t" : this.roles ? "warpgroupFirst" : "0";
        const slots = this.spilled.get(v);
        if (slots) return v.type === "bool" ? `(${slots}[${slot}] !== 0)` : `${slots}[${slot}]`;
        if (this.uniform.has(v)) return this.names.lookup(v);
        if (this.declared.has(v)) throw new Error(`internal: '${v.name}' is read outside a thread region but was not spilled`);
        return this.names.lookup(v); // a scalar parameter

      },
    });
    let hasReturn = false;
    walkStmts(unit.kernel.body, (stmt) => {
      if (stmt.kind === "return") hasReturn = true;
      for (const variable of declaredVariables(stmt)) this.declared.add(variable);
    });
    this.hasReturn = hasReturn;
    this.subgroups = usesSubgroups(unit.kernel.body);
    this.roles = usesWarpgroupRoles(unit.kernel.body);
    this.uniform = this.uniformLocals(unit.kernel.body);
  }

  /**
   * The locals that hold one value for the whole block: set only by declarations and assignments that stand
   * at block level (in the statement lists that `sequence` prints, never inside a thread region's control
   * flow), from values that every thread computes alike (literals, scalar parameters, blockIdx, blockDim,
   * gridDim and other such locals, through operators and helpers; never threadIdx or a load). A loop
   * counter of a loop with a barrier inside is the typical one: it then costs one local instead of a slot
   * per thread and a thread loop per update.
   */
  private uniformLocals(body: readonly Stmt[]): Set<Variable> {
    const sets = new Map<Variable, Expr[]>();
    const excluded = new Set<Variable>();
    const visitBlockLevel = (stmts: readonly Stmt[], inBlockLoop: boolean) => {
      for (const stmt of stmts) {
        if (stmt.kind === "declare" || stmt.kind === "assign") {
          const value = stmt.kind === "declare" ? stmt.init : stmt.value;
          const list = sets.get(stmt.variable) ?? [];
          if (value) list.push(value);
          sets.set(stmt.variable, list);
          continue;
        }
        if (!this.isBlockLevel(stmt, inBlockLoop)) {
          // Inside a region: whatever it sets differs from thread to thread, or may.
          walkStmts([stmt], (inner) => {
            for (const variable of declaredVariables(inner)) excluded.add(variable);
            if (inner.kind === "assign") excluded.add(inner.variable);
          });
          continue;
        }
        if (stmt.kind === "collective") {
          excluded.add(stmt.result);
          for (const arg of stmt.args) if (arg.kind === "variable") excluded.add(arg.variable);
        }
        this.blockLevelParts(stmt, {
          condition: () => undefined,
          region: (part) => visitBlockLevel(part, inBlockLoop),
          nested: (part, loopBody) => visitBlockLevel(part, loopBody || inBlockLoop),
        });
      }
    };
    visitBlockLevel(body, false);
    this.blockDeclarations = new Map([...sets].filter(([v, values]) => !excluded.has(v) && !v.mutable && values.length === 1).map(([v, values]) => [v, values[0]!]));
    const uniform = new Set([...sets.keys()].filter((v) => !excluded.has(v)));
    const isUniform = (expr: Expr): boolean => {
      let ok = true;
      walkExpr(expr, (e) => {
        // warpgroupIdx is `w`, one value for the warpgroup's generator, where a uniform local lives; clusterRank one for the block.
        if (e.kind === "load" || (e.kind === "subgroupBuiltin" && e.builtin !== "warpgroupIdx" && e.builtin !== "clusterRank") || (e.kind === "builtin" && e.builtin === "threadIdx")) ok = false;
        if (e.kind === "variable" && this.declared.has(e.variable) && !uniform.has(e.variable)) ok = false;
      });
      return ok;
    };
    for (let changed = true; changed; ) {
      changed = false;
      for (const variable of uniform) {
        if (sets.get(variable)!.every(isUniform)) continue;
        uniform.delete(variable);
        changed = true;
      }
    }
    return uniform;
  }

  /** `const` locals declared once at block level (outside any region's control flow), with their values. */
  private blockDeclarations = new Map<Variable, Expr>();

  /** Candidates for `recomputed`, in declaration order: see there. */
  private recomputable(): Map<Variable, Expr> {
    const found = new Map<Variable, Expr>();
    for (const [variable, value] of this.blockDeclarations) {
      if (this.uniform.has(variable)) continue;
      let ok = true;
      walkExpr(value, (e) => {
        switch (e.kind) {
          case "literal":
          case "builtin":
          case "unary":
          case "convert":
          case "select":
            return;
          case "binary":
            // Division is slower than the load it would save.
            if (e.op === "div" || e.op === "rem") ok = false;
            return;
          case "variable":
            if (this.declared.has(e.variable) && !found.has(e.variable) && !(this.uniform.has(e.variable) && !e.variable.mutable)) ok = false;
            return;
          default:
            ok = false;
        }
      });
      if (ok) found.set(variable, value);
    }
    return found;
  }

  /** A block-level declaration or assignment of a uniform local: printed once, outside the thread loops. */
  private isUniformStmt(stmt: Stmt): stmt is Stmt & { kind: "declare" | "assign" } {
    return (stmt.kind === "declare" || stmt.kind === "assign") && this.uniform.has(stmt.variable);
  }

  /**
   * Whether a uniform statement must wait for the region gathered before it: when that region reads or sets
   * the local, which would otherwise see the new value too early. Otherwise it is printed first, and the
   * region stays whole.
   */
  private waitsFor(pending: readonly Stmt[], stmt: Stmt & { kind: "declare" | "assign" }): boolean {
    let found = false;
    walkStmts(pending, (inner) => {
      if (inner.kind === "assign" && inner.variable === stmt.variable) found = true;
      for (const expr of exprsOf(inner)) walkExpr(expr, (e) => e.kind === "variable" && e.variable === stmt.variable && (found = true));
    });
    return found;
  }

  print(): void {
    const { kernel } = this.unit;
    const { out, names } = this;
    // Named before the kernel's locals, which then cannot shadow it.
    const arraysName = this.location ? undefined : this.moduleNames.name({}, `${this.functionName}_arrays`);
    // A buffer of vectors or structs comes as its typed views (`{ f32, i32, u32 }`, made once per buffer by the
    // CPU device); the body reads each view it uses (passes/scalarize-vectors.ts).
    const views = new Map<ArrayRef, ArrayRef[]>();
    walkStmts(kernel.body, (stmt) => {
      const note = (array: ArrayRef) => array.viewOf && !(views.get(array.viewOf) ?? []).includes(array) && views.set(array.viewOf, [...(views.get(array.viewOf) ?? []), array]);
      if (stmt.kind === "store") note(stmt.array);
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "load" && note(e.array));
    });
    const viewLines: string[] = [];
    const params = kernel.params.flatMap((param) => {
      if (param.kind === "buffer") {
        const name = names.name(param.array, param.array.name);
        this.arrays.set(param.array, { name });
        for (const view of views.get(param.array) ?? []) {
          const viewName = names.name(view, view.name);
          this.arrays.set(view, { name: viewName });
          viewLines.push(`const ${viewName} = ${name}.${view.elementType as string};`);
        }
        return [name];
      }
      if (param.kind === "scalar") return [names.name(param.variable, param.variable.name)];
      return [];
    });
    // Which locals spill is known before anything is printed: the function's arrays are listed in its header.
    const uses = this.planSpills(kernel.body);
    // Those a block-level condition reads must be in slots (thread 0's, or each thread's in checked mode).
    for (const [variable, value] of this.recomputable()) {
      const readsSpilled = (expr: Expr) => {
        let found = false;
        walkExpr(expr, (e) => e.kind === "variable" && this.declared.has(e.variable) && !this.uniform.has(e.variable) && !this.recomputed.has(e.variable) && (found = true));
        return found;
      };
      if (!uses.get(variable)?.has("block") && !readsSpilled(value)) this.recomputed.set(variable, value);
    }
    // Parameters are the same for every thread and live in the function's scope; only body locals spill.
    const spills = [...uses]
      .filter(([variable, units]) => this.declared.has(variable) && !this.uniform.has(variable) && !this.recomputed.has(variable) && (units.size >= 2 || units.has("block")))
      .map(([variable]) => variable);
    // The block's arrays: shared, private, the spill slots and the returned threads' marks. `zero`: zeroed
    // for each block (shared and private arrays start from zeros on the CPU, docs/language.md; a slot is
    // always written by its local's declaration before it is read).
    const allocations: { name: string; ctor: string; size: string; zero: boolean }[] = [];
    const ctorOf = (element: ElementType) => targetScalars.js[element as ElementScalar].storage!;
    for (const array of kernel.shared) {
      const sizes = this.unit.sharedSizes.get(array) ?? [];
      const name = names.name(array, array.name);
      this.arrays.set(array, { name, dims: sizes });
      // mbarriers: five words each (js-runtime.ts's barrierRuntime), zero until initBarrier.
      if (array.barriers) allocations.push({ name, ctor: "Int32Array", size: String(5 * (sizes[0] ?? 0)), zero: true });
      else allocations.push({ name, ctor: ctorOf(array.elementType), size: String(sizes.reduce((x, y) => x * y, 1)), zero: true });
    }
    for (const array of kernel.locals) {
      const size = this.unit.sharedSizes.get(array)?.[0] ?? 0;
      const name = names.name(array, array.name);
      this.arrays.set(array, { name, dims: [size] });
      allocations.push({ name, ctor: ctorOf(array.elementType), size: `threads * ${size}`, zero: true });
    }
    if (this.hasReturn) allocations.push({ name: "done", ctor: "Uint8Array", size: "threads", zero: true });
    for (const variable of spills) {
      const slots = names.name({}, `${variable.name}_slots`);
      this.spilled.set(variable, slots);
      allocations.push({ name: slots, ctor: slotArrays[variable.type as ScalarType], size: "threads", zero: false });
    }
    // Unchecked, the arrays are made once per thread count and reused by every later block: making a typed
    // array costs about a microsecond, which a block of a small kernel would otherwise pay several times
    // over. Checked mode keeps fresh arrays, which its checker follows by identity.
    // A cluster's blocks run together, each with arrays of its own: no reuse across blocks there.
    const clustered = this.roles && kernel.cluster !== undefined;
    const scratch = allocations.length > 0 && !clustered ? arraysName : undefined;

    const specialization = [...kernel.constValues].map(([name, value]) => `${name} = ${value}`).join(", ");
    out.line();
    out.line(`// Kernel ${kernel.name}${specialization ? ` specialized for ${specialization}` : ""}: runs one block.`);
    if (scratch) out.line(`let ${scratch};`);
    const extra = this.subgroups ? ", chk, subgroupSize" : this.location ? ", chk" : "";
    if (clustered) this.clusterRunner(kernel.cluster!, extra);
    // A block of a cluster is made by the cluster's runner: its arrays are published to the other blocks
    // (`clusterBlocks[rank]`), and its warpgroups are returned to run with theirs.
    const blockName = clustered ? `${this.functionName}_block` : this.functionName;
    out.line(clustered ? `function ${blockName}(args, blockIdx, blockDim, gridDim${extra}, clusterBlocks, clusterRankValue) {` : `export function ${this.functionName}(args, blockIdx, blockDim, gridDim${extra}) {`);
    out.indent();
    if (this.subgroups) out.line("const sg = subgroupSize ?? 32;");
    if (this.location) out.line(`chk.beginBlock(blockIdx, blockDim${this.subgroups ? ", sg" : ""});`);
    if (params.length > 0) out.line(`const [${params.join(", ")}] = args;`);
    for (const line of viewLines) out.line(line);
    out.line("const bx = blockIdx[0], by = blockIdx[1], bz = blockIdx[2];");
    // A block shape the kernel fixes is a constant: thread loops get constant bounds and, in a 1-D block,
    // threadIdx.x is the loop variable itself.
    const fixed = this.unit.block;
    if (fixed) out.line(`const nx = ${fixed[0]}, ny = ${fixed[1]}, nz = ${fixed[2]}, threads = ${fixed[0] * fixed[1] * fixed[2]};`);
    else out.line("const nx = blockDim[0], ny = blockDim[1], nz = blockDim[2], threads = nx * ny * nz;");
    out.line("const gx = gridDim[0], gy = gridDim[1], gz = gridDim[2];");
    if (scratch) {
      out.block(`if (${scratch} === undefined || ${scratch}.threads !== threads) {`, () => {
        out.line(`${scratch} = { threads, ${allocations.map((a) => `${a.name}: new ${a.ctor}(${a.size})`).join(", ")} };`);
      });
      out.line(`const { ${allocations.map((a) => a.name).join(", ")} } = ${scratch};`);
      const zeroed = allocations.filter((a) => a.zero);
      if (zeroed.length > 0) out.line(zeroed.map((a) => `${a.name}.fill(0);`).join(" "));
    } else {
      for (const a of allocations) out.line(`const ${a.name} = new ${a.ctor}(${a.size});`);
    }
    if (clustered) out.line(`clusterBlocks[clusterRankValue] = { ${kernel.shared.map((array) => this.arrays.get(array)!.name).join(", ")} };`);
    if (this.hasReturn) out.line("let alive = threads;");

    // Name every spilled local now, so regions can declare them in any order.
    for (const variable of this.spilled.keys()) names.name(variable, variable.name);
    this.regionCount = 0;
    if (this.roles) {
      out.line('if (threads % 128 !== 0) throw new Error("tskernel: warpgroup roles need blocks of whole warpgroups (128 threads); this block has " + threads);');
      out.block("function* warpgroupBody(warpgroupIndex) {", () => {
        out.line("const warpgroupFirst = warpgroupIndex * 128, warpgroupEnd = warpgroupFirst + 128;");
        this.sequence(kernel.body, undefined);
      });
      out.line("const warpgroupList = [];");
      out.line("for (let warpgroupIndex = 0; warpgroupIndex < threads / 128; warpgroupIndex++) warpgroupList.push(warpgroupBody(warpgroupIndex));");
      if (clustered) out.line("return warpgroupList;");
      else out.line(`runWarpgroups(warpgroupList, ${this.location ? "chk" : "undefined"}, ${JSON.stringify(this.unit.entryName)});`);
    } else {
      this.sequence(kernel.body, undefined);
    }
    out.dedent();
    out.line("}");
  }

  /**
   * The exported function of a kernel with clusters: the device calls it for every block, and the first block
   * of each cluster runs the whole cluster (the others return): it makes each block (`…_block`, in rank order,
   * x fastest, as CUDA's %cluster_ctarank), then runs all their warpgroups together, so that one block's
   * multicast copies and arrivals reach the others' arrays and barriers (`clusterBlocks`). syncThreads() waits
   * within a block, syncCluster() for the cluster (runWarpgroups' `blockOf`).
   */
  private clusterRunner(cluster: readonly [number, number, number], extra: string): void {
    const out = this.out;
    const [cx, cy, cz] = cluster;
    out.block(`export function ${this.functionName}(args, blockIdx, blockDim, gridDim${extra}) {`, () => {
      // The grid is a multiple of the cluster: every runtime's launch check refuses another (runtime/launch-check.ts).
      out.line(`if (blockIdx[0] % ${cx} !== 0 || blockIdx[1] % ${cy} !== 0 || blockIdx[2] % ${cz} !== 0) return;`);
      out.line("const clusterBlocks = [], groups = [], blockOf = [];");
      out.block(`for (let rank = 0; rank < ${cx * cy * cz}; rank++) {`, () => {
        out.line(`const b = [blockIdx[0] + rank % ${cx}, blockIdx[1] + ((rank / ${cx}) | 0) % ${cy}, blockIdx[2] + ((rank / ${cx * cy}) | 0)];`);
        // Checked: each block its own checker (its block, threads and copy groups), one barrier clock for all.
        const blockExtra = this.location ? extra.replace(", chk", ", rank === 0 ? chk : chk.sibling()") : extra;
        out.line(`for (const g of ${this.functionName}_block(args, b, blockDim, gridDim${blockExtra}, clusterBlocks, rank)) { groups.push(g); blockOf.push(rank); }`);
      });
      out.line(`runWarpgroups(groups, ${this.location ? "chk" : "undefined"}, ${JSON.stringify(this.unit.entryName)}, blockOf);`);
    });
    out.line();
  }

  /**
   * Walks the body as `sequence` will print it and records, for each local, the units that use it: region
   * ids and "block" for conditions evaluated once per block. Locals used by more than one unit are spilled.
   */
  private planSpills(body: readonly Stmt[]): Map<Variable, Set<string>> {
    const uses = new Map<Variable, Set<string>>();
    const note = (variable: Variable, unit: string) => {
      let set = uses.get(variable);
      if (!set) uses.set(variable, (set = new Set()));
      set.add(unit);
    };
    const noteExpr = (expr: Expr, unit: string) => walkExpr(expr, (e) => e.kind === "variable" && note(e.variable, unit));
    const noteStmts = (stmts: readonly Stmt[], unit: string) =>
      walkStmts(stmts, (stmt) => {
        for (const variable of declaredVariables(stmt)) note(variable, unit);
        if (stmt.kind === "assign") note(stmt.variable, unit);
        for (const expr of exprsOf(stmt)) noteExpr(expr, unit);
      });
    let region = 0;
    const visit = (stmts: readonly Stmt[], inBlockLoop: boolean) => {
      let open = false;
      let pending: Stmt[] = [];
      for (const stmt of stmts) {
        if (this.isUniformStmt(stmt)) {
          // As `sequence` prints it: the region before it closes only when it uses the local.
          if (open && this.waitsFor(pending, stmt)) {
            region++;
            open = false;
            pending = [];
          }
          continue;
        }
        if (this.isBlockLevel(stmt, inBlockLoop)) {
          pending = [];
          if (open) region++;
          open = false;
          // A collective reads its arguments' slots and writes its result's, for the whole block at once.
          if (stmt.kind === "collective") [stmt.result, ...stmt.args.flatMap((arg) => (arg.kind === "variable" ? [arg.variable] : []))].forEach((v) => note(v, "block"));
          // An mma's fragment indices are read once for the block.
          if (stmt.kind === "mma" || stmt.kind === "wgmma" || stmt.kind === "barrierOp") exprsOf(stmt).forEach((expr) => noteExpr(expr, "block"));
          this.blockLevelParts(stmt, {
            condition: (expr) => noteExpr(expr, "block"),
            region: (part) => visit(part, inBlockLoop),
            nested: (part, loopBody) => visit(part, loopBody || inBlockLoop),
          });
        } else {
          open = true;
          pending.push(stmt);
          noteStmts([stmt], `r${region}`);
        }
      }
      if (open) region++;
    };
    visit(body, false);
    return uses;
  }

  private isBlockLevel(stmt: Stmt, inBlockLoop: boolean): boolean {
    return containsCut([stmt]) || (inBlockLoop && containsEscapingJump(stmt));
  }

  /** The parts of a block-level statement, in the order they run, for both planning and printing. */
  private blockLevelParts(
    stmt: Stmt,
    visit: {
      condition: (expr: Expr) => void;
      region: (stmts: readonly Stmt[]) => void;
      /** `loopBody`: the statements are the body of a block-level loop (otherwise they inherit). */
      nested: (stmts: readonly Stmt[], loopBody: boolean) => void;
    },
  ): void {
    switch (stmt.kind) {
      case "if":
        visit.condition(stmt.condition);
        visit.nested(stmt.then, false);
        visit.nested(stmt.else, false);
        return;
      case "for":
        if (stmt.init.length > 0) visit.region(stmt.init);
        if (stmt.condition) visit.condition(stmt.condition);
        visit.nested(stmt.body, true);
        if (stmt.update.length > 0) visit.region(stmt.update);
        return;
      case "while":
        visit.condition(stmt.condition);
        visit.nested(stmt.body, true);
        return;
      case "block":
        visit.nested(stmt.body, false);
        return;
      default:
        return;
    }
  }

  /** Prints a statement list at block level: regions in thread loops, block-level statements as they are. */
  private sequence(stmts: readonly Stmt[], loop: { readonly breakLabel: string; readonly continueLabel: string } | undefined): void {
    let pending: Stmt[] = [];
    const flush = () => {
      if (pending.length > 0) this.region(pending);
      pending = [];
    };
    for (const stmt of stmts) {
      if (this.isUniformStmt(stmt)) {
        if (this.waitsFor(pending, stmt)) flush();
        new ThreadStmtPrinter(this.out, this.names, this.uniformPrinter, undefined).stmt(stmt);
        continue;
      }
      if (!this.isBlockLevel(stmt, loop !== undefined)) {
        pending.push(stmt);
        continue;
      }
      flush();
      this.blockLevel(stmt, loop);
    }
    flush();
  }

  private blockLevel(stmt: Stmt, loop: { readonly breakLabel: string; readonly continueLabel: string } | undefined): void {
    const { out } = this;
    const condition = (expr: Expr) => {
      const text = bare(this.blockPrinter.print(expr));
      if (!this.location) return text;
      // Every live thread must agree, or some would take a barrier the others skip.
      const done = this.hasReturn ? "done" : "undefined";
      // Thread ids too: a condition on threadIdx only gets this far when the compile-time check was skipped.
      const ids = "const tx = t % nx, ty = ((t / nx) | 0) % ny, tz = (t / (nx * ny)) | 0;";
      // With a subgroup operation inside, lanes of one subgroup that disagree are named as such.
      const { barrier, collective } = cutsIn([stmt]);
      const operation = collective?.kind === "barrierOp" ? "waitBarrier" : collective?.kind === "atomic" ? "waitFlag" : collective?.kind === "mma" || collective?.kind === "wgmma" ? collective.kind : collective?.op;
      const inside = collective ? `, { barrier: ${barrier !== undefined}, operation: "${operation}()", at: ${JSON.stringify(this.location(collective.span))} }` : "";
      const range = this.roles ? `warpgroupEnd, ${done}, ${JSON.stringify(this.location(expr.span))}, ${inside ? inside.slice(2) : "undefined"}, warpgroupFirst` : `threads, ${done}, ${JSON.stringify(this.location(expr.span))}${inside}`;
      return `chk.uniform((t) => { ${ids} return ${text}; }, ${range})`;
    };
    switch (stmt.kind) {
      case "barrier":
        // syncWarpgroup(): the warpgroup's threads already finish each region together; checked mode starts a new
        // barrier interval for all (which can hide a race between warpgroups, never invent one).
        if (stmt.scope === "warpgroup") {
          if (this.location) out.line("chk.sync();");
          return;
        }
        // With roles, the warpgroup's generator stops here until every warpgroup has (runWarpgroups syncs the checker).
        if (this.roles) out.line(stmt.scope === "cluster" ? "yield 1;" : "yield 0;");
        // The end of the region before it is the barrier: every thread has finished it.
        else if (this.location) out.line("chk.sync();");
        return;
      case "barrierOp": {
        // Only waits are cuts; the warpgroup's first thread stands for all (the validator made them agree).
        const where = this.location ? this.location(stmt.span) : `waitBarrier(${this.arrays.get(stmt.barriers)!.name}, …)`;
        const test = barrierCall(stmt, this.blockPrinter, this.location ? "t" : "warpgroupFirst");
        out.line(this.location ? `{ const t = warpgroupFirst; while (!${test}) yield ${JSON.stringify(where)}; }` : `while (!${test}) yield ${JSON.stringify(where)};`);
        return;
      }
      case "atomic": {
        // waitFlag (the only atomic at warpgroup level): yields until the flag holds the value. Where worker threads
        // share the buffer another thread may still set it, which the runtime waits for (runWarpgroups).
        const where = this.location ? this.location(stmt.span) : `waitFlag(${stmt.array.name}, …)`;
        const { name } = this.blockPrinter.hooksArray(stmt.array);
        const index = this.location ? this.blockPrinter.checkedAtomic(stmt.array, stmt.indices, stmt.span, true) : bare(this.blockPrinter.flatIndex(stmt.array, stmt.indices));
        const test = `atomics.load(${name}, ${index}) === ${bare(this.blockPrinter.print(stmt.value!))}`;
        const wait = `while (!(${test})) yield atomicShared(${name}) ? [${JSON.stringify(where)}] : ${JSON.stringify(where)};`;
        out.line(this.location ? `{ const t = warpgroupFirst; ${wait} }` : wait);
        return;
      }
      case "collective":
        this.collective(stmt);
        return;
      case "mma":
        this.mma(stmt);
        return;
      case "wgmma":
        this.wgmma(stmt);
        return;
      case "if":
        out.line(`if (${condition(stmt.condition)}) {`);
        out.indent();
        this.sequence(stmt.then, loop);
        out.dedent();
        if (stmt.else.length > 0) {
          out.line("} else {");
          out.indent();
          this.sequence(stmt.else, loop);
          out.dedent();
        }
        out.line("}");
        return;
      case "block":
        out.line("{");
        out.indent();
        this.sequence(stmt.body, loop);
        out.dedent();
        out.line("}");
        return;
      case "for":
      case "while": {
        const id = this.labelCount++;
        const labels = { breakLabel: `loop${id}`, continueLabel: `body${id}` };
        if (stmt.kind === "for" && stmt.init.length > 0) this.sequence(stmt.init, loop);
        out.line(`${labels.breakLabel}: for (;;) {`);
        out.indent();
        if (this.location) out.line(this.printer.loopTick(stmt.span, "-1"));
        if (stmt.condition) out.line(`if (!(${condition(stmt.condition)})) break;`);
        out.line(`${labels.continueLabel}: {`);
        out.indent();
        this.sequence(stmt.body, labels);
        out.dedent();
        out.line("}");
        if (stmt.kind === "for" && stmt.update.length > 0) this.sequence(stmt.update, loop);
        out.dedent();
        out.line("}");
        return;
      }
      case "break":
      case "continue":
        if (!loop) throw new Error("internal: a block-level jump outside a block-level loop");
        out.line(`break ${stmt.kind === "break" ? loop.breakLabel : loop.continueLabel};`);
        return;
      default:
        throw new Error(`internal: ${stmt.kind} cannot be block-level`);
    }
  }

  /** A collective over the block: its arguments' slots in, its result's slots out (js-runtime.ts). */
  private collective(stmt: CollectiveStmt): void {
    const slots = (expr: Expr) => {
      const name = expr.kind === "variable" ? this.spilled.get(expr.variable) : undefined;
      if (!name) throw new Error(`internal: an argument of ${stmt.op} is not a spilled local`);
      return name;
    };
    // The warpgroup's first thread's value for all of its threads (a role operation: the body runs per warpgroup).
    if (stmt.op === "warpgroupBroadcast") {
      const [value, result] = [slots(stmt.args[0]!), this.spilled.get(stmt.result)!];
      this.out.line(`for (let t = warpgroupFirst, v = ${value}[warpgroupFirst]; t < warpgroupEnd; t++) ${result}[t] = v;`);
      return;
    }
    const value = stmt.args[0]!;
    const type = value.type === "bool" ? "\"bool\"" : JSON.stringify(value.type);
    const lanes = stmt.args[1] ? slots(stmt.args[1]) : "undefined";
    const result = this.spilled.get(stmt.result)!;
    const done = this.hasReturn ? "done" : "undefined";
    const checked = this.location ? `chk, ${JSON.stringify(this.location(stmt.span))}` : "undefined, undefined";
    const range = this.roles ? "warpgroupEnd, sg" : "threads, sg";
    this.out.line(`subgroup("${subgroupRuntimeOps[stmt.op as keyof typeof subgroupRuntimeOps]}", ${type}, ${slots(value)}, ${lanes}, ${result}, ${range}, ${done}, ${checked}${this.roles ? ", warpgroupFirst" : ""});`);
  }

  /** An mma for every warp of the block, over the fragment arrays' per-thread slices (js-runtime.ts). */
  private mma(stmt: MmaStmt): void {
    const operand = (ref: MmaStmt["a"]) => {
      const { name, dims } = this.arrays.get(ref.array)!;
      return `${name}, ${dims![0]}, ${bare(this.blockPrinter.print(ref.index))}`;
    };
    const shape = stmt.accumulator.array.fragment!.shape === "m16n8k16" ? "M16n8k16" : "M16n8k8";
    const call = `mma${shape}(${operand(stmt.accumulator)}, ${operand(stmt.a)}, ${operand(stmt.b)}, ${this.roles ? "warpgroupEnd, warpgroupFirst" : "threads"});`;
    // Checked mode reads block-level values from thread t's slots; the validator made the indices uniform.
    this.out.line(this.location ? `{ const t = ${this.roles ? "warpgroupFirst" : "0"}; ${call} }` : call);
  }

  /**
   * A wgmma for every warpgroup of the block (js-runtime.ts): the fragment arrays' per-thread slices and the
   * block's shared array, read at the offset that thread 0 computes (the validator made it uniform).
   */
  private wgmma(stmt: WgmmaStmt): void {
    const operand = (ref: FragmentRef) => {
      const { name, dims } = this.arrays.get(ref.array)!;
      return `${name}, ${dims![0]}, ${bare(this.blockPrinter.print(ref.index))}`;
    };
    const n = warpgroupColumns(stmt.accumulator.array.fragment!.shape as WarpgroupShape);
    const shared = this.arrays.get(stmt.b)!.name;
    const threads = this.roles ? "warpgroupEnd, warpgroupFirst" : "threads";
    const offset = bare(this.blockPrinter.print(stmt.offset));
    let call: string;
    const half = stmt.b.elementType === "f16" ? 1 : 0;
    const major = stmt.bMajor === "n" ? `1, ${bare(this.blockPrinter.print(stmt.bBoxRows!))}` : "0, 0";
    if (isFragmentOperand(stmt.a) && warpgroupDepth(stmt.accumulator.array.fragment!.shape as WarpgroupShape) === 16) {
      // 16-bit A from the warpgroup's A fragments (their slots hold bf16 or f16 values), B as below.
      call = `wgmmaM64k16r(${n}, ${operand(stmt.accumulator)}, ${operand(stmt.a)}, ${shared}, ${offset}, ${major}, ${half}, ${threads});`;
    } else if (isFragmentOperand(stmt.a)) {
      call = `wgmmaM64k8(${n}, ${operand(stmt.accumulator)}, ${operand(stmt.a)}, ${shared}, ${offset}, ${threads});`;
    } else if (warpgroupDepth(stmt.accumulator.array.fragment!.shape as WarpgroupShape) === 32) {
      // 8-bit inputs: A and B from shared arrays of codes, each decoded by its type's table (js-float8.ts).
      const values = (array: ArrayRef) => float8Codec[array.elementType as Float8Type].table;
      const a = `${this.arrays.get(stmt.a.array)!.name}, ${bare(this.blockPrinter.print(stmt.a.offset))}, ${values(stmt.a.array)}`;
      call = `wgmmaM64k32(${n}, ${operand(stmt.accumulator)}, ${a}, ${shared}, ${offset}, ${values(stmt.b)}, ${threads});`;
    } else {
      // 16-bit inputs: A and B from shared arrays of encodings (0: bf16, 1: f16), B K-major (0) or N-major (1).
      const a = `${this.arrays.get(stmt.a.array)!.name}, ${bare(this.blockPrinter.print(stmt.a.offset))}`;
      call = `wgmmaM64k16(${n}, ${operand(stmt.accumulator)}, ${a}, ${shared}, ${offset}, ${major}, ${half}, ${threads});`;
    }
    this.out.line(this.location ? `{ const t = ${this.roles ? "warpgroupFirst" : "0"}; ${call} }` : call);
  }

  /** A run of barrier-free statements, executed by every (live) thread of the block in turn. */
  private region(stmts: readonly Stmt[]): void {
    const { out, names } = this;
    const label = `threads${this.regionCount++}`;
    const used = new Set<Variable>();
    const written = new Set<Variable>();
    const axes = new Set<string>();
    walkStmts(stmts, (stmt) => {
      for (const variable of [...declaredVariables(stmt), ...(stmt.kind === "assign" ? [stmt.variable] : [])]) {
        used.add(variable);
        written.add(variable);
      }
      for (const expr of exprsOf(stmt)) {
        walkExpr(expr, (e) => {
          if (e.kind === "variable") used.add(e.variable);
          if (e.kind === "builtin" && e.builtin === "threadIdx") axes.add(e.axis);
        });
      }
    });
    const promoted = [...used].filter((v) => this.spilled.has(v));
    // Recomputed locals this region reads but does not declare, with those their values read in turn.
    const declaredHere = new Set<Variable>();
    walkStmts(stmts, (stmt) => declaredVariables(stmt).forEach((v) => declaredHere.add(v)));
    const recompute = new Set<Variable>();
    const need = (variable: Variable) => {
      if (recompute.has(variable) || declaredHere.has(variable) || !this.recomputed.has(variable)) return;
      recompute.add(variable);
      walkExpr(this.recomputed.get(variable)!, (e) => {
        if (e.kind === "variable") need(e.variable);
        if (e.kind === "builtin" && e.builtin === "threadIdx") axes.add(e.axis);
      });
    };
    for (const variable of used) need(variable);
    out.line(this.roles ? `${label}: for (let t = warpgroupFirst; t < warpgroupEnd; t++) {` : `${label}: for (let t = 0; t < threads; t++) {`);
    out.indent();
    if (this.hasReturn) out.line("if (done[t]) continue;");
    const block = this.unit.block;
    if (axes.has("x")) out.line(block && block[1] * block[2] === 1 ? "const tx = t;" : "const tx = t % nx;");
    if (axes.has("y")) out.line(block && block[2] === 1 ? "const ty = (t / nx) | 0;" : "const ty = ((t / nx) | 0) % ny;");
    if (axes.has("z")) out.line("const tz = (t / (nx * ny)) | 0;");
    for (const variable of promoted) {
      const slots = this.spilled.get(variable)!;
      out.line(`let ${names.lookup(variable)} = ${variable.type === "bool" ? `${slots}[t] !== 0` : `${slots}[t]`};`);
    }
    for (const [variable, value] of this.recomputed) {
      if (recompute.has(variable)) out.line(`const ${names.lookup(variable)} = ${bare(this.printer.print(value))};`);
    }
    new ThreadStmtPrinter(out, names, this.printer, { label }, new Set(this.spilled.keys())).stmts(stmts);
    for (const variable of promoted) {
      if (!written.has(variable)) continue;
      const local = names.lookup(variable);
      out.line(`${this.spilled.get(variable)!}[t] = ${variable.type === "bool" ? `${local} ? 1 : 0` : local};`);
    }
    out.dedent();
    out.line("}");
    if (this.hasReturn) {
      // With roles, a warpgroup whose threads have all returned ends its coroutine: what follows is another role's.
      if (this.roles) out.line("if (done.subarray(warpgroupFirst, warpgroupEnd).every((d) => d === 1)) return;");
      else out.line("if (alive === 0) return;");
    }
  }
}

/** How many numbers the helper results array must hold: one past the largest index a helper stores to. */
function resultsLength(bodies: readonly (readonly Stmt[])[]): number {
  let length = 0;
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      if (stmt.kind === "store" && stmt.array === helperResults && stmt.indices[0]!.kind === "literal") length = Math.max(length, stmt.indices[0]!.value + 1);
    });
  }
  return length;
}
