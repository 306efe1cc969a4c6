/**
 * Scalarization of vectors and structs, for targets that compute them lane by lane (the CPU backend, whose
 * JavaScript would otherwise allocate an object per vector: a local per lane is a register to V8). After
 * this pass no expression, local, parameter or helper has a vector or struct type:
 *
 * - a vector or struct local (or parameter) becomes one local per scalar leaf, in memory order (`p_pos_x`…);
 *   a kernel's vector or struct parameter becomes one scalar parameter per leaf, which the CPU runtime passes
 *   flattened in the same order (the manifest's layout);
 * - an expression becomes its leaves' expressions: operators and conversions lane by lane, the functions by
 *   their definitions (ir/vector-functions.ts), parts (`v.zyx`, `p.pos`) by picking leaves;
 * - a global buffer of vectors or structs is read and written through typed views of its bytes (`viewOf`):
 *   leaf o of element i of an f32 field is view element (i · stride + o) / 4, WGSL's layout, the bytes every
 *   target shares; shared and private arrays of them become one scalar array per leaf (the bytes of those
 *   are no one else's business);
 * - a helper takes its arguments' leaves and returns its first leaf, the others through the module's
 *   `helperResults` array, which the caller reads right after the call (hoisted into a statement of its own).
 *
 * Parts that a definition uses more than once are computed once into a local (`bind`), except inside the
 * right operand of `&&`/`||` and the branches of `?:`, where that would compute them when they are not
 * needed (and read arrays the program guards against): there they are repeated. A helper call there is
 * still hoisted, and the operator becomes an `if` so that it runs only when it would have.
 */

import { assertNever, isFragmentOperand, type Access, type ArrayRef, type Expr, type HelperFunction, type Kernel, type KernelParam, type ScalarType, type Span, type Stmt, type Type, type Variable } from "../ir/ir.ts";
import { arrayStride, isStruct, scalars, type ElementType, type StructType } from "../ir/types.ts";
import { definedIntrinsics, expandIntrinsic } from "../ir/vector-functions.ts";
import { elementOf, isComposite, laneCount, laneNames, leavesOf, lanesOf, type Leaf } from "../ir/vectors.ts";

/** The module's array of helper results: a helper's leaves after the first (the JS backend declares it). */
export const helperResults: ArrayRef = { kind: "array", name: "results", elementType: "f64", space: "global", access: "read_write", dims: [], span: { file: "", start: 0, end: 0 } };

export interface ScalarizedKernel {
  readonly kernel: Kernel;
  readonly sharedSizes: ReadonlyMap<ArrayRef, readonly number[]>;
}

export interface ScalarizedModule {
  /** The helpers, with scalar parameters and returns, in the order given. */
  readonly helpers: readonly { readonly helper: HelperFunction; readonly body: readonly Stmt[] }[];
  readonly kernels: readonly ScalarizedKernel[];
}

export function scalarizeVectors(helpers: readonly { readonly helper: HelperFunction; readonly body: readonly Stmt[] }[], kernels: readonly ScalarizedKernel[]): ScalarizedModule {
  const state = new ModuleState();
  const newHelpers = helpers.map(({ helper }) => state.helper(helper));
  const helperBodies = helpers.map(({ helper, body }) => {
    const scalarizer = new Scalarizer(state, new Map(), helper);
    return { helper: state.helper(helper), body: scalarizer.block(body) };
  });
  newHelpers.forEach((helper, index) => (helper.body = helperBodies[index]!.body));
  return { helpers: helperBodies, kernels: kernels.map((unit) => scalarizeKernel(state, unit)) };
}

function scalarizeKernel(state: ModuleState, { kernel, sharedSizes }: ScalarizedKernel): ScalarizedKernel {
  const sizes = new Map(sharedSizes);
  const arrays = new Map<ArrayRef, ArrayRef[]>();
  const split = (array: ArrayRef): ArrayRef[] => {
    if (!isComposite(array.elementType)) return [array];
    const leaves = leavesOf(array.elementType).map((leaf): ArrayRef => ({ ...array, name: `${array.name}_${leafName(array.elementType, leaf)}`, elementType: leaf.type as ElementType }));
    arrays.set(array, leaves);
    for (const leaf of leaves) sizes.set(leaf, sharedSizes.get(array) ?? []);
    return leaves;
  };
  const shared = kernel.shared.flatMap(split);
  const locals = kernel.locals.flatMap(split);
  const params = kernel.params.flatMap((param): KernelParam[] =>
    param.kind === "scalar" && isComposite(param.variable.type) ? state.leafVariables(param.variable).map((variable) => ({ kind: "scalar", variable })) : [param],
  );
  const body = new Scalarizer(state, arrays, undefined).block(kernel.body);
  return { kernel: { ...kernel, params, shared, locals, body }, sharedSizes: sizes };
}

/** A leaf's name: its fields and lanes, `pos_x`. */
function leafName(type: Type | ElementType, leaf: Leaf): string {
  const parts: string[] = [];
  let current = type as Type;
  for (const step of leaf.path) {
    if (step.kind === "field") {
      const struct = current as StructType;
      parts.push(struct.fields[step.field]!.name);
      current = struct.fields[step.field]!.type as Type;
    } else {
      parts.push(step.lanes.map((lane) => laneNames[lane]).join(""));
      current = elementOf(current);
    }
  }
  return parts.join("_");
}

/** The leaves of a type that a path selects, as indices into `leavesOf(type)`, in the part's leaf order. */
function selectLeaves(type: Type | ElementType, path: readonly Access[]): number[] {
  if (path.length === 0) return leavesOf(type).map((_, index) => index);
  const [step, ...rest] = path;
  if (step!.kind === "field") {
    const struct = type as StructType;
    const before = struct.fields.slice(0, step!.field).reduce((count, field) => count + leavesOf(field.type).length, 0);
    return selectLeaves(struct.fields[step!.field]!.type, rest).map((index) => before + index);
  }
  const lanes = step!.lanes;
  return selectLeaves(lanesOf(elementOf(type as Type), lanes.length), rest).map((index) => lanes[index]!);
}

class ModuleState {
  private readonly leaves = new Map<Variable, Variable[]>();
  private readonly helpers = new Map<HelperFunction, HelperFunction>();

  /** The scalar locals standing for a vector or struct variable (made once, shared by every use). */
  leafVariables(variable: Variable): Variable[] {
    let found = this.leaves.get(variable);
    if (!found) {
      found = leavesOf(variable.type).map((leaf) => ({ kind: "variable", name: `${variable.name}_${leafName(variable.type, leaf)}`, type: leaf.type, mutable: variable.mutable, span: variable.span }));
      this.leaves.set(variable, found);
    }
    return found;
  }

  private readonly views = new Map<ArrayRef, Map<ScalarType, ArrayRef>>();

  /** The typed view of `type` elements over the bytes of a buffer of vectors or structs (one object per pair). */
  view(buffer: ArrayRef, type: ScalarType): ArrayRef {
    let byType = this.views.get(buffer);
    if (!byType) this.views.set(buffer, (byType = new Map()));
    let found = byType.get(type);
    if (!found) byType.set(type, (found = { ...buffer, name: `${buffer.name}_${type}`, elementType: type as ElementType, viewOf: buffer }));
    return found;
  }

  /** The scalarized helper of a helper: leaf parameters, its first leaf returned (body filled in later). */
  helper(helper: HelperFunction): HelperFunction {
    let found = this.helpers.get(helper);
    if (!found) {
      const params = helper.params.flatMap((param) => (isComposite(param.type) ? this.leafVariables(param) : [param]));
      found = { ...helper, params, returnType: leavesOf(helper.returnType)[0]!.type, body: [] };
      this.helpers.set(helper, found);
    }
    return found;
  }
}

const simple = (expr: Expr) => expr.kind === "literal" || expr.kind === "variable";

class Scalarizer {
  /** Statements that must run before the one being scalarized (temporaries, hoisted calls). */
  private prelude: Stmt[] = [];
  /** Inside an operand that runs only sometimes: parts are repeated rather than bound to locals. */
  private conditional = false;

  constructor(
    private readonly state: ModuleState,
    /** Shared and private arrays of vectors or structs: their one array per leaf. */
    private readonly arrays: ReadonlyMap<ArrayRef, readonly ArrayRef[]>,
    /** The helper whose body this is, if any (its returns give leaves). */
    private readonly helper: HelperFunction | undefined,
  ) {}

  block(stmts: readonly Stmt[]): Stmt[] {
    return stmts.flatMap((stmt) => this.statement(stmt));
  }

  /** A statement with the temporaries and hoisted calls it needs before it. */
  private statement(stmt: Stmt): Stmt[] {
    const saved = this.prelude;
    this.prelude = [];
    try {
      const result = this.stmt(stmt);
      return [...this.prelude, ...result];
    } finally {
      this.prelude = saved;
    }
  }

  /** Runs `body` collecting its prelude apart; returns both. */
  private collect<T>(body: () => T): [Stmt[], T] {
    const saved = this.prelude;
    this.prelude = [];
    try {
      const result = body();
      return [this.prelude, result];
    } finally {
      this.prelude = saved;
    }
  }

  /**
   * A local for `expr`, unless it is already a literal or a variable, or the context forbids it; `force`: a
   * local even for a variable (read before the assignment that would change it) or where the context forbids.
   */
  private bind(expr: Expr, name: string, force = false): Expr {
    if (expr.kind === "literal" || (!force && (simple(expr) || this.conditional))) return expr;
    const variable: Variable = { kind: "variable", name, type: expr.type, mutable: false, span: expr.span };
    this.prelude.push({ kind: "declare", variable, init: expr, span: expr.span });
    return { kind: "variable", type: expr.type, variable, span: expr.span };
  }

  private stmt(stmt: Stmt): Stmt[] {
    switch (stmt.kind) {
      case "declare": {
        if (!isComposite(stmt.variable.type)) return [{ ...stmt, ...(stmt.init ? { init: this.scalar(stmt.init) } : {}) }];
        const targets = this.state.leafVariables(stmt.variable);
        const values = stmt.init ? this.leaves(stmt.init) : targets.map((variable) => zero(variable.type as ScalarType, stmt.span));
        return targets.map((variable, index): Stmt => ({ kind: "declare", variable, init: values[index]!, span: stmt.span }));
      }
      case "assign":
        return this.assign(stmt);
      case "store":
        return this.store(stmt);
      case "if":
        return [{ ...stmt, condition: this.scalar(stmt.condition), then: this.block(stmt.then), else: this.block(stmt.else) }];
      case "while": {
        const [before, condition] = this.collect(() => this.scalar(stmt.condition));
        const body = this.block(stmt.body);
        if (before.length === 0) return [{ ...stmt, condition, body }];
        // What the condition needs runs before each test: `while (true) { …; if (!c) break; body }`.
        return [{ ...stmt, condition: { kind: "literal", type: "bool", value: 1, span: stmt.span }, body: [...before, exitUnless(condition), ...body] }];
      }
      case "for":
        return this.forLoop(stmt);
      case "return": {
        if (!stmt.value) return [stmt];
        if (!this.helper || !isComposite(stmt.value.type)) return [{ ...stmt, value: this.scalar(stmt.value) }];
        // The first leaf is the return value; the others go to the results array, read by the caller.
        const values = this.leaves(stmt.value);
        const stores = values.slice(1).map((value, index): Stmt => ({ kind: "store", array: helperResults, indices: [int(index + 1, stmt.span)], value, span: stmt.span }));
        return [...stores, { ...stmt, value: values[0]! }];
      }
      case "block":
        return [{ ...stmt, body: this.block(stmt.body) }];
      case "vectorLoad":
        return [{ ...stmt, indices: stmt.indices.map((index) => this.scalar(index)), ...(stmt.zeroUnless ? { zeroUnless: this.scalar(stmt.zeroUnless) } : {}) }];
      case "vectorStore":
        return [{ ...stmt, indices: stmt.indices.map((index) => this.scalar(index)), values: stmt.values.map((value) => this.scalar(value)) }];
      case "asyncCopy":
        return [{ ...stmt, targetIndices: stmt.targetIndices.map((i) => this.scalar(i)), sourceIndices: stmt.sourceIndices.map((i) => this.scalar(i)) }];
      case "atomic":
        return [{ ...stmt, indices: stmt.indices.map((i) => this.scalar(i)), ...(stmt.value ? { value: this.scalar(stmt.value) } : {}), ...(stmt.expected ? { expected: this.scalar(stmt.expected) } : {}) }];
      case "collective":
        return [{ ...stmt, args: stmt.args.map((arg) => this.scalar(arg)) }];
      case "matrixLoad":
        return [{ ...stmt, fragment: { ...stmt.fragment, index: this.scalar(stmt.fragment.index) }, offset: this.scalar(stmt.offset), stride: this.scalar(stmt.stride), ...(stmt.colStride ? { colStride: this.scalar(stmt.colStride) } : {}) }];
      case "matrixStore": {
        const optional = (["colStride", "boxRows", "alpha", "beta"] as const).flatMap((key) => (stmt[key] ? [[key, this.scalar(stmt[key]!)] as const] : []));
        return [{ ...stmt, fragment: { ...stmt.fragment, index: this.scalar(stmt.fragment.index) }, offset: this.scalar(stmt.offset), stride: this.scalar(stmt.stride), ...Object.fromEntries(optional) }];
      }
      case "mma":
        return [{ ...stmt, accumulator: { ...stmt.accumulator, index: this.scalar(stmt.accumulator.index) }, a: { ...stmt.a, index: this.scalar(stmt.a.index) }, b: { ...stmt.b, index: this.scalar(stmt.b.index) } }];
      case "wgmma": {
        const a = isFragmentOperand(stmt.a) ? { ...stmt.a, index: this.scalar(stmt.a.index) } : { ...stmt.a, offset: this.scalar(stmt.a.offset) };
        return [{ ...stmt, accumulator: { ...stmt.accumulator, index: this.scalar(stmt.accumulator.index) }, a, offset: this.scalar(stmt.offset), ...(stmt.bBoxRows ? { bBoxRows: this.scalar(stmt.bBoxRows) } : {}) }];
      }
      case "barrierOp":
        return [{ ...stmt, index: this.scalar(stmt.index), ...(stmt.value ? { value: this.scalar(stmt.value) } : {}) }];
      case "tileCopy":
        return [{ ...stmt, offset: this.scalar(stmt.offset), x: this.scalar(stmt.x), y: this.scalar(stmt.y), index: this.scalar(stmt.index) }];
      case "tileStore":
        return [{ ...stmt, offset: this.scalar(stmt.offset), x: this.scalar(stmt.x), y: this.scalar(stmt.y) }];
      case "tileStoreWait":
        return [stmt];
      case "break":
      case "continue":
      case "barrier":
      case "fence":
      case "asyncCommit":
      case "asyncWait":
      case "wgmmaSync":
      case "setMaxRegisters":
        return [stmt];
      default:
        return assertNever(stmt, "statement");
    }
  }

  /**
   * A `for` whose condition or update needs statements of its own (a hoisted call, or a part bound to a
   * local) becomes `for (init; ; ) { if (started) { update } started = true; …; if (!c) break; body }`,
   * which runs the update before every test but the first, as the loop did, `continue` included.
   */
  private forLoop(stmt: Stmt & { kind: "for" }): Stmt[] {
    const init = this.block(stmt.init);
    const [before, condition] = this.collect(() => (stmt.condition ? this.scalar(stmt.condition) : undefined));
    const update = this.block(stmt.update);
    const body = this.block(stmt.body);
    const updateIsSimple = update.every((s) => s.kind === "assign");
    if (before.length === 0 && updateIsSimple) return [{ ...stmt, init, condition, update, body }];
    const span = stmt.span;
    const started: Variable = { kind: "variable", name: "started", type: "bool", mutable: true, span };
    const read: Expr = { kind: "variable", type: "bool", variable: started, span };
    const head: Stmt[] = [
      ...(update.length > 0 ? [{ kind: "if", condition: read, then: update, else: [], span } as Stmt, { kind: "assign", variable: started, value: { kind: "literal", type: "bool", value: 1, span }, span } as Stmt] : []),
      ...before,
      ...(condition ? [exitUnless(condition)] : []),
    ];
    const loop: Stmt = { ...stmt, init, condition: undefined, update: [], body: [...head, ...body] };
    return [{ kind: "block", body: [{ kind: "declare", variable: started, init: { kind: "literal", type: "bool", value: 0, span }, span }, loop], span }];
  }

  /** `v = …`, `v.xy = …`, `p.pos.x += 1`: one assignment per leaf written. */
  private assign(stmt: Stmt & { kind: "assign" }): Stmt[] {
    if (!isComposite(stmt.variable.type)) return [{ ...stmt, value: this.scalar(stmt.value) }];
    const leafVariables = this.state.leafVariables(stmt.variable);
    const targets = selectLeaves(stmt.variable.type, stmt.path ?? []).map((index) => leafVariables[index]!);
    let values = isComposite(stmt.value.type) ? this.leaves(stmt.value) : [this.scalar(stmt.value)];
    // `v = v.zyx`: read every lane before writing any.
    if (targets.length > 1 && values.some((value) => reads(value, (e) => e.kind === "variable" && targets.includes(e.variable)))) values = values.map((value) => this.bind(value, "lane", true));
    return targets.map((variable, index): Stmt => ({ kind: "assign", variable, ...(stmt.op ? { op: stmt.op } : {}), value: values[index]!, span: stmt.span }));
  }

  /** A store to a buffer, shared or private array of vectors or structs: one store per leaf written. */
  private store(stmt: Stmt & { kind: "store" }): Stmt[] {
    if (!isComposite(stmt.array.elementType)) return [{ ...stmt, indices: stmt.indices.map((i) => this.scalar(i)), value: this.scalar(stmt.value) }];
    const indices = stmt.indices.map((index) => this.bind(this.scalar(index), "index"));
    let values = isComposite(stmt.value.type) ? this.leaves(stmt.value) : [this.scalar(stmt.value)];
    // `a[i] = { x: a[i].y, y: a[i].x }`: read before writing.
    if (values.length > 1 && values.some((value) => reads(value, (e) => e.kind === "load" && (e.array.viewOf === stmt.array || this.arrays.get(stmt.array)?.includes(e.array) === true)))) {
      values = values.map((value) => this.bind(value, "lane", true));
    }
    return selectLeaves(stmt.array.elementType, stmt.path ?? []).map((leaf, index): Stmt => {
      const { array, indices: at } = this.leafAccess(stmt.array, indices, leaf, stmt.span);
      return { kind: "store", array, indices: at, ...(stmt.op ? { op: stmt.op } : {}), value: values[index]!, span: stmt.span };
    });
  }

  /** Where leaf `leaf` of element `indices` of an array of vectors or structs lies: a view, or the leaf's array. */
  private leafAccess(array: ArrayRef, indices: readonly Expr[], leaf: number, span: Span): { array: ArrayRef; indices: Expr[] } {
    const leafArrays = this.arrays.get(array);
    if (leafArrays) return { array: leafArrays[leaf]!, indices: [...indices] };
    const { type, offset } = leavesOf(array.elementType)[leaf]!;
    const bytes = scalars[type].bytes;
    const view = this.state.view(array, type);
    const index = indices[0]!;
    const indexType = index.type as ScalarType;
    const stride = arrayStride(array.elementType) / bytes;
    const scaled: Expr = index.kind === "literal" ? int(index.value * stride, span, indexType) : { kind: "binary", op: "mul", type: indexType, left: index, right: int(stride, span, indexType), span };
    const at: Expr = offset === 0 ? scaled : scaled.kind === "literal" ? int(scaled.value + offset / bytes, span, indexType) : { kind: "binary", op: "add", type: indexType, left: scaled, right: int(offset / bytes, span, indexType), span };
    return { array: view, indices: [at] };
  }

  // -------------------------------------------------------------------------------------------------------
  // Expressions

  /** A scalar expression whose parts may be vectors or structs. */
  scalar(expr: Expr): Expr {
    if (isComposite(expr.type)) throw new Error("internal: a vector or struct where a scalar was expected");
    switch (expr.kind) {
      case "literal":
      case "variable":
      case "constRef":
      case "builtin":
      case "subgroupBuiltin":
        return expr;
      case "unary":
        return { ...expr, operand: this.scalar(expr.operand) };
      case "binary": {
        const left = this.scalar(expr.left);
        if (expr.op !== "logand" && expr.op !== "logor") return { ...expr, left, right: this.scalar(expr.right) };
        const [before, right] = this.sometimes(() => this.scalar(expr.right));
        if (before.length === 0) return { ...expr, left, right };
        // A hoisted call in the right operand runs only when the left does not decide.
        const result = this.mutableLocal("logical", left);
        const read: Expr = { kind: "variable", type: "bool", variable: result, span: expr.span };
        const test: Expr = expr.op === "logand" ? read : { kind: "unary", op: "not", type: "bool", operand: read, span: expr.span };
        this.prelude.push({ kind: "if", condition: test, then: [...before, { kind: "assign", variable: result, value: right, span: expr.span }], else: [], span: expr.span });
        return read;
      }
      case "select": {
        const condition = this.scalar(expr.condition);
        const [beforeTrue, whenTrue] = this.sometimes(() => this.scalar(expr.whenTrue));
        const [beforeFalse, whenFalse] = this.sometimes(() => this.scalar(expr.whenFalse));
        if (beforeTrue.length === 0 && beforeFalse.length === 0) return { ...expr, condition, whenTrue, whenFalse };
        return this.branches(condition, [beforeTrue, [whenTrue]], [beforeFalse, [whenFalse]], expr.span)[0]!;
      }
      case "convert":
        return { ...expr, value: this.scalar(expr.value) };
      case "load":
        return { ...expr, indices: expr.indices.map((index) => this.scalar(index)) };
      case "call":
        return this.call(expr)[0]!;
      case "intrinsic": {
        const first = expr.args[0]!;
        if (!isComposite(first.type) && !definedIntrinsics.has(expr.name)) return { ...expr, args: expr.args.map((arg) => this.scalar(arg)) };
        const args = expr.args.map((arg) => (isComposite(arg.type) ? this.leaves(arg) : [this.scalar(arg)]));
        return expandIntrinsic(expr.name, elementOf(first.type), args, expr.span, (e, name) => this.bind(e, name))[0]!;
      }
      case "swizzle":
      case "field":
        return this.leaves(expr)[0]!;
      case "construct":
        throw new Error("internal: a construct is never a scalar");
      case "check":
        throw new Error("internal: checks reached the vector scalarizer (the CPU's checked mode is its own)");
      default:
        return assertNever(expr, "expression");
    }
  }

  /** The leaves of a vector or struct expression, in memory order. */
  leaves(expr: Expr): Expr[] {
    switch (expr.kind) {
      case "variable":
        return this.state.leafVariables(expr.variable).map((variable) => ({ kind: "variable", type: variable.type, variable, span: expr.span }));
      case "load": {
        const indices = expr.indices.map((index) => this.bind(this.scalar(index), "index"));
        return leavesOf(expr.array.elementType).map((leaf, index) => {
          const { array, indices: at } = this.leafAccess(expr.array, indices, index, expr.span);
          return { kind: "load", type: leaf.type, array, indices: at, span: expr.span };
        });
      }
      case "swizzle":
      case "field":
        return this.part(expr);
      case "construct": {
        if (isStruct(expr.type)) return expr.args.flatMap((arg) => (isComposite(arg.type) ? this.leaves(arg) : [this.scalar(arg)]));
        if (expr.args.length === 1 && !isComposite(expr.args[0]!.type)) {
          const lane = this.bind(this.scalar(expr.args[0]!), "lane");
          return Array.from({ length: laneCount(expr.type) }, () => lane);
        }
        return expr.args.flatMap((arg) => (isComposite(arg.type) ? this.leaves(arg) : [this.scalar(arg)]));
      }
      case "binary": {
        const left = this.leaves(expr.left);
        const right = this.leaves(expr.right);
        // Lane-wise `and`/`or` of bool vectors: both lanes are pure, so `&&`/`||` per lane is the same.
        const op = expr.op === "and" && elementOf(expr.type) === "bool" ? "logand" : expr.op === "or" && elementOf(expr.type) === "bool" ? "logor" : expr.op;
        return left.map((lane, index) => ({ kind: "binary", op, type: elementOf(expr.type), left: lane, right: right[index]!, span: expr.span }));
      }
      case "unary":
        return this.leaves(expr.operand).map((lane) => ({ kind: "unary", op: expr.op, type: elementOf(expr.type), operand: lane, span: expr.span }));
      case "convert":
        return this.leaves(expr.value).map((lane) => ({ kind: "convert", type: elementOf(expr.type), value: lane, span: expr.span }));
      case "select": {
        const lanes = isComposite(expr.condition.type);
        const conditions = lanes ? this.leaves(expr.condition) : [this.bind(this.scalar(expr.condition), "condition")];
        const [beforeTrue, whenTrue] = this.sometimes(() => this.leaves(expr.whenTrue));
        const [beforeFalse, whenFalse] = this.sometimes(() => this.leaves(expr.whenFalse));
        if ((beforeTrue.length > 0 || beforeFalse.length > 0) && !lanes) return this.branches(conditions[0]!, [beforeTrue, whenTrue], [beforeFalse, whenFalse], expr.span);
        this.prelude.push(...beforeTrue, ...beforeFalse);
        return whenTrue.map((lane, index) => ({ kind: "select", type: lane.type, condition: conditions[lanes ? index : 0]!, whenTrue: lane, whenFalse: whenFalse[index]!, span: expr.span }));
      }
      case "intrinsic": {
        const element = elementOf(expr.args[0]!.type);
        const args = expr.args.map((arg) => (isComposite(arg.type) ? this.leaves(arg) : [this.scalar(arg)]));
        return expandIntrinsic(expr.name, element, args, expr.span, (e, name) => this.bind(e, name));
      }
      case "call":
        return this.call(expr);
      default:
        throw new Error(`internal: a ${expr.kind} expression of type ${typeof expr.type === "string" ? expr.type : expr.type.name}`);
    }
  }

  /** The leaves of a part of a value (`v.zyx`, `p.pos`): from a variable or a load, only those it selects. */
  private part(expr: Expr & { kind: "swizzle" | "field" }): Expr[] {
    const path: Access[] = [];
    let base: Expr = expr;
    while (base.kind === "swizzle" || base.kind === "field") {
      path.unshift(base.kind === "field" ? { kind: "field", field: base.field } : { kind: "swizzle", lanes: base.lanes });
      base = base.value;
    }
    const selected = selectLeaves(base.type, path);
    if (base.kind === "variable") {
      const leaves = this.state.leafVariables(base.variable);
      return selected.map((index): Expr => ({ kind: "variable", type: leaves[index]!.type, variable: leaves[index]!, span: expr.span }));
    }
    if (base.kind === "load") {
      const load = base;
      const indices = load.indices.map((index) => (selected.length > 1 ? this.bind(this.scalar(index), "index") : this.scalar(index)));
      return selected.map((index): Expr => {
        const { array, indices: at } = this.leafAccess(load.array, indices, index, expr.span);
        return { kind: "load", type: leavesOf(load.array.elementType)[index]!.type, array, indices: at, span: expr.span };
      });
    }
    const all = this.leaves(base);
    return selected.map((index) => all[index]!);
  }

  /** A helper call: its arguments' leaves in, its result's leaves out (the first returned, the others from the results array). */
  private call(expr: Expr & { kind: "call" }): Expr[] {
    const callee = this.state.helper(expr.callee);
    const args = expr.args.flatMap((arg) => (isComposite(arg.type) ? this.leaves(arg) : [this.scalar(arg)]));
    const call: Expr = { kind: "call", type: callee.returnType, callee, args, span: expr.span };
    if (!isComposite(expr.type)) return [call];
    const leaves = leavesOf(expr.type);
    const first = this.bind(call, "result", true);
    // Read right after the call, before any other call can write the array.
    return [first, ...leaves.slice(1).map((leaf, index) => this.bind(fromResult(index + 1, leaf.type, expr.span), "result", true))];
  }

  /** Runs `body` as an operand that runs only sometimes (see the file's comment); returns what it must run before. */
  private sometimes<T>(body: () => T): [Stmt[], T] {
    const saved = this.conditional;
    this.conditional = true;
    try {
      return this.collect(body);
    } finally {
      this.conditional = saved;
    }
  }

  /** `condition ? a : b` of leaves whose operands need statements: an `if` assigning one local per leaf. */
  private branches(condition: Expr, [beforeTrue, whenTrue]: [Stmt[], Expr[]], [beforeFalse, whenFalse]: [Stmt[], Expr[]], span: Span): Expr[] {
    const results = whenTrue.map((lane) => this.mutableLocal("selected", zero(lane.type as ScalarType, span)));
    const assign = (values: readonly Expr[]) => values.map((value, index): Stmt => ({ kind: "assign", variable: results[index]!, value, span }));
    this.prelude.push({ kind: "if", condition, then: [...beforeTrue, ...assign(whenTrue)], else: [...beforeFalse, ...assign(whenFalse)], span });
    return results.map((variable) => ({ kind: "variable", type: variable.type, variable, span }));
  }

  private mutableLocal(name: string, init: Expr): Variable {
    const variable: Variable = { kind: "variable", name, type: init.type, mutable: true, span: init.span };
    this.prelude.push({ kind: "declare", variable, init, span: init.span });
    return variable;
  }
}

/** Whether an expression contains a node that `test` accepts. */
function reads(expr: Expr, test: (expr: Expr) => boolean): boolean {
  if (test(expr)) return true;
  switch (expr.kind) {
    case "unary":
      return reads(expr.operand, test);
    case "binary":
      return reads(expr.left, test) || reads(expr.right, test);
    case "select":
      return reads(expr.condition, test) || reads(expr.whenTrue, test) || reads(expr.whenFalse, test);
    case "convert":
    case "swizzle":
    case "field":
      return reads(expr.value, test);
    case "intrinsic":
    case "call":
    case "construct":
      return expr.args.some((arg) => reads(arg, test));
    case "load":
      return expr.indices.some((index) => reads(index, test));
    default:
      return false;
  }
}

function int(value: number, span: Span, type: ScalarType = "i32"): Expr {
  return { kind: "literal", type, value, span };
}

function zero(type: ScalarType, span: Span): Expr {
  return { kind: "literal", type, value: 0, span };
}

/** `if (!condition) break;` */
function exitUnless(condition: Expr): Stmt {
  const negated: Expr = { kind: "unary", op: "not", type: "bool", operand: condition, span: condition.span };
  return { kind: "if", condition: negated, then: [{ kind: "break", span: condition.span }], else: [], span: condition.span };
}

/**
 * A leaf read back from the results array (a Float64Array, which holds every f32, i32 and u32 exactly and
 * stores a bool as 1 or 0): the number itself, or for a bool whether it is not 0.
 */
function fromResult(index: number, type: ScalarType, span: Span): Expr {
  const read: Expr = { kind: "load", type: type === "bool" ? "f64" : type, array: helperResults, indices: [int(index, span)], span };
  if (type !== "bool") return read;
  return { kind: "binary", op: "ne", type: "bool", left: read, right: { kind: "literal", type: "f64", value: 0, span }, span };
}
