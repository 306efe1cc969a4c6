/**
 * Generic traversals of the IR, so that passes state only what they change. `mapExpr` rebuilds an expression
 * bottom-up through a callback; `mapStmts` does the same for statements, applying an expression mapper to
 * every expression inside and a statement callback that may replace one statement with several. Nodes that
 * do not change are returned as they are, so identity comparisons stay meaningful.
 */

import { assertNever, isFragmentOperand, type ArrayRef, type Expr, type HelperFunction, type MatrixStmt, type Span, type Stmt } from "./ir.ts";
import { isWarpgroupShape } from "./matrix.ts";

export type ExprMapper = (expr: Expr) => Expr;

export function mapExpr(expr: Expr, fn: ExprMapper): Expr {
  switch (expr.kind) {
    case "literal":
    case "variable":
    case "constRef":
    case "builtin":
    case "subgroupBuiltin":
      return fn(expr);
    case "unary": {
      const operand = mapExpr(expr.operand, fn);
      return fn(operand === expr.operand ? expr : { ...expr, operand });
    }
    case "binary": {
      const left = mapExpr(expr.left, fn);
      const right = mapExpr(expr.right, fn);
      return fn(left === expr.left && right === expr.right ? expr : { ...expr, left, right });
    }
    case "select": {
      const condition = mapExpr(expr.condition, fn);
      const whenTrue = mapExpr(expr.whenTrue, fn);
      const whenFalse = mapExpr(expr.whenFalse, fn);
      const same = condition === expr.condition && whenTrue === expr.whenTrue && whenFalse === expr.whenFalse;
      return fn(same ? expr : { ...expr, condition, whenTrue, whenFalse });
    }
    case "convert": {
      const value = mapExpr(expr.value, fn);
      return fn(value === expr.value ? expr : { ...expr, value });
    }
    case "intrinsic":
    case "call": {
      const args = mapList(expr.args, (arg) => mapExpr(arg, fn));
      return fn(args === expr.args ? expr : ({ ...expr, args } as Expr));
    }
    case "load": {
      const indices = mapList(expr.indices, (index) => mapExpr(index, fn));
      return fn(indices === expr.indices ? expr : { ...expr, indices });
    }
    case "construct": {
      const args = mapList(expr.args, (arg) => mapExpr(arg, fn));
      return fn(args === expr.args ? expr : { ...expr, args });
    }
    case "swizzle":
    case "field": {
      const value = mapExpr(expr.value, fn);
      return fn(value === expr.value ? expr : ({ ...expr, value } as Expr));
    }
    case "check": {
      const holds = mapExpr(expr.holds, fn);
      const first = mapExpr(expr.values[0], fn);
      const second = mapExpr(expr.values[1], fn);
      const same = holds === expr.holds && first === expr.values[0] && second === expr.values[1];
      return fn(same ? expr : { ...expr, holds, values: [first, second] });
    }
    default:
      return assertNever(expr, "expression");
  }
}

function mapList<T>(items: readonly T[], fn: (item: T) => T): readonly T[] {
  let changed = false;
  const out = items.map((item) => {
    const mapped = fn(item);
    if (mapped !== item) changed = true;
    return mapped;
  });
  return changed ? out : items;
}

export interface StmtMapper {
  /** Applied to every expression (bottom-up). */
  readonly expr?: ExprMapper;
  /** Applied to each statement after its parts were mapped; may return several statements or none. */
  readonly stmt?: (stmt: Stmt) => Stmt | readonly Stmt[];
}

export function mapStmts(stmts: readonly Stmt[], mapper: StmtMapper): Stmt[] {
  return stmts.flatMap((stmt) => {
    const mapped = mapStmtParts(stmt, mapper);
    const result = mapper.stmt ? mapper.stmt(mapped) : mapped;
    return Array.isArray(result) ? result : [result as Stmt];
  });
}

function mapStmtParts(stmt: Stmt, mapper: StmtMapper): Stmt {
  const e = (expr: Expr): Expr => (mapper.expr ? mapExpr(expr, mapper.expr) : expr);
  const s = (body: readonly Stmt[]): Stmt[] => mapStmts(body, mapper);
  switch (stmt.kind) {
    case "declare":
      return stmt.init ? { ...stmt, init: e(stmt.init) } : stmt;
    case "assign":
      return { ...stmt, value: e(stmt.value) };
    case "store":
      return { ...stmt, indices: stmt.indices.map(e), value: e(stmt.value) };
    case "if":
      return { ...stmt, condition: e(stmt.condition), then: s(stmt.then), else: s(stmt.else) };
    case "for":
      return {
        ...stmt,
        init: s(stmt.init),
        condition: stmt.condition ? e(stmt.condition) : undefined,
        update: s(stmt.update),
        body: s(stmt.body),
      };
    case "while":
      return { ...stmt, condition: e(stmt.condition), body: s(stmt.body) };
    case "return":
      return stmt.value ? { ...stmt, value: e(stmt.value) } : stmt;
    case "block":
      return { ...stmt, body: s(stmt.body) };
    case "vectorLoad":
      return { ...stmt, indices: stmt.indices.map(e), ...(stmt.zeroUnless ? { zeroUnless: e(stmt.zeroUnless) } : {}) };
    case "vectorStore":
      return { ...stmt, indices: stmt.indices.map(e), values: stmt.values.map(e) };
    case "asyncCopy":
      return { ...stmt, targetIndices: stmt.targetIndices.map(e), sourceIndices: stmt.sourceIndices.map(e) };
    case "atomic":
      return { ...stmt, indices: stmt.indices.map(e), ...(stmt.value ? { value: e(stmt.value) } : {}), ...(stmt.expected ? { expected: e(stmt.expected) } : {}) };
    case "collective":
      return { ...stmt, args: stmt.args.map(e) };
    case "matrixLoad":
    case "matrixStore":
      return {
        ...stmt,
        fragment: { ...stmt.fragment, index: e(stmt.fragment.index) },
        offset: e(stmt.offset),
        stride: e(stmt.stride),
        ...(stmt.colStride ? { colStride: e(stmt.colStride) } : {}),
        ...(stmt.kind === "matrixStore" && stmt.boxRows ? { boxRows: e(stmt.boxRows) } : {}),
        ...(stmt.kind === "matrixStore" && stmt.alpha ? { alpha: e(stmt.alpha) } : {}),
        ...(stmt.kind === "matrixStore" && stmt.beta ? { beta: e(stmt.beta) } : {}),
      };
    case "wgmma":
      return {
        ...stmt,
        accumulator: { ...stmt.accumulator, index: e(stmt.accumulator.index) },
        a: isFragmentOperand(stmt.a) ? { ...stmt.a, index: e(stmt.a.index) } : { ...stmt.a, offset: e(stmt.a.offset) },
        offset: e(stmt.offset),
        ...(stmt.bBoxRows ? { bBoxRows: e(stmt.bBoxRows) } : {}),
      };
    case "tileStore":
      return { ...stmt, x: e(stmt.x), y: e(stmt.y), offset: e(stmt.offset) };
    case "tileStoreWait":
      return stmt;
    case "wgmmaSync":
    case "setMaxRegisters":
      return stmt;
    case "barrierOp":
      return { ...stmt, index: e(stmt.index), ...(stmt.value ? { value: e(stmt.value) } : {}) };
    case "tileCopy":
      return { ...stmt, offset: e(stmt.offset), x: e(stmt.x), y: e(stmt.y), index: e(stmt.index) };
    case "mma":
      return {
        ...stmt,
        accumulator: { ...stmt.accumulator, index: e(stmt.accumulator.index) },
        a: { ...stmt.a, index: e(stmt.a.index) },
        b: { ...stmt.b, index: e(stmt.b.index) },
      };
    case "break":
    case "continue":
    case "barrier":
    case "fence":
    case "asyncCommit":
      return stmt;
    case "asyncWait":
      return stmt.pendingExpr ? { ...stmt, pendingExpr: e(stmt.pendingExpr) } : stmt;
    default:
      return assertNever(stmt, "statement");
  }
}

/** Arrays that an atomic operation of the body touches. */
export function atomicArrays(stmts: readonly Stmt[]): Set<ArrayRef> {
  const arrays = new Set<ArrayRef>();
  walkStmts(stmts, (stmt) => stmt.kind === "atomic" && arrays.add(stmt.array));
  return arrays;
}

/** True when the body contains a collective operation (at any depth). */
export function containsCollective(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "collective") found = true;
  });
  return found;
}

/** True when the body reads `subgroupSize` or `subgroupInvocationId`, or has a collective: it needs subgroups. */
export function usesSubgroups(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "collective") found = true;
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "subgroupBuiltin" && e.builtin !== "warpgroupIdx" && (found = true));
  });
  return found;
}

/**
 * True when the body splits into warpgroup roles: it reads `warpgroupIdx` or uses mbarriers (or the tensor memory
 * accelerator, whose copies complete on them and whose stores share their runtime). The CPU backend
 * then runs each warpgroup of a block as a coroutine of its own (js.ts).
 */
export function usesWarpgroupRoles(stmts: readonly Stmt[]): boolean {
  // A kernel whose blocks work together (clusters) runs in the same coroutine form, blocks side by side.
  return usesRoleOperations(stmts) || firstClusterOperation(stmts) !== undefined;
}

/**
 * Whether a body uses mbarriers, the tensor memory accelerator, setMaxRegisters, warpgroupIdx, syncWarpgroup,
 * waitFlag or warpgroupBroadcast (not counting clusters).
 */
export function usesRoleOperations(stmts: readonly Stmt[]): boolean {
  return firstRoleOperation(stmts) !== undefined;
}

/** The first operation in a body that gives it warpgroup roles (usesRoleOperations), with how the user wrote it (TSK3085). */
export function firstRoleOperation(body: readonly Stmt[]): { span: Span; what: string } | undefined {
  let found: { span: Span; what: string } | undefined;
  const names = { init: "initBarrier()", arrive: "arriveBarrier()", arriveCopies: "arriveAfterCopies()", arriveExpect: "arriveExpectBytes()", wait: "waitBarrier()" } as const;
  walkStmts(body, (stmt) => {
    if (found) return;
    if (stmt.kind === "barrierOp") found = { span: stmt.span, what: names[stmt.op] };
    if (stmt.kind === "setMaxRegisters") found = { span: stmt.span, what: "setMaxRegisters()" };
    if (stmt.kind === "tileCopy") found = { span: stmt.span, what: "copyTile()" };
    if (stmt.kind === "tileStore") found = { span: stmt.span, what: "storeTile()" };
    if (stmt.kind === "tileStoreWait") found = { span: stmt.span, what: "waitTileStores()" };
    // A warpgroup's own barrier, a wait for a flag and a warpgroup collective: each warpgroup runs (and on the CPU,
    // yields) on its own.
    if (stmt.kind === "barrier" && stmt.scope === "warpgroup") found = { span: stmt.span, what: "syncWarpgroup()" };
    if (stmt.kind === "atomic" && stmt.op === "wait") found = { span: stmt.span, what: "waitFlag()" };
    if (stmt.kind === "collective" && stmt.op === "warpgroupBroadcast") found = { span: stmt.span, what: "warpgroupBroadcast()" };
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => !found && e.kind === "subgroupBuiltin" && e.builtin === "warpgroupIdx" && (found = { span: e.span, what: "warpgroupIdx" }));
  });
  return found;
}

/** The first operation in a body that only a kernel with clusters may use, with how the user wrote it (TSK3168). */
export function firstClusterOperation(stmts: readonly Stmt[]): { span: Span; what: string } | undefined {
  let found: { span: Span; what: string } | undefined;
  walkStmts(stmts, (stmt) => {
    if (found) return;
    if (stmt.kind === "barrier" && stmt.scope === "cluster") found = { span: stmt.span, what: "syncCluster()" };
    else if (stmt.kind === "barrierOp" && stmt.block) found = { span: stmt.span, what: "arriveBarrier(…, { block })" };
    else if (stmt.kind === "tileCopy" && stmt.multicast) found = { span: stmt.span, what: "copyTile(…, { multicast })" };
    else for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => !found && e.kind === "subgroupBuiltin" && e.builtin === "clusterRank" && (found = { span: e.span, what: "clusterRank" }));
  });
  return found;
}

/** Calls `visit` on every statement, outer before inner. */
export function walkStmts(stmts: readonly Stmt[], visit: (stmt: Stmt) => void): void {
  for (const stmt of stmts) {
    visit(stmt);
    switch (stmt.kind) {
      case "if":
        walkStmts(stmt.then, visit);
        walkStmts(stmt.else, visit);
        break;
      case "for":
        walkStmts(stmt.init, visit);
        walkStmts(stmt.update, visit);
        walkStmts(stmt.body, visit);
        break;
      case "while":
      case "block":
        walkStmts(stmt.body, visit);
        break;
      default:
        break;
    }
  }
}

/** Every expression directly held by a statement (not those of nested statements). */
export function exprsOf(stmt: Stmt): Expr[] {
  switch (stmt.kind) {
    case "declare":
      return stmt.init ? [stmt.init] : [];
    case "assign":
      return [stmt.value];
    case "store":
      return [...stmt.indices, stmt.value];
    case "if":
    case "while":
      return [stmt.condition];
    case "for":
      return stmt.condition ? [stmt.condition] : [];
    case "return":
      return stmt.value ? [stmt.value] : [];
    case "vectorLoad":
      return stmt.zeroUnless ? [...stmt.indices, stmt.zeroUnless] : [...stmt.indices];
    case "vectorStore":
      return [...stmt.indices, ...stmt.values];
    case "asyncCopy":
      return [...stmt.targetIndices, ...stmt.sourceIndices];
    case "atomic":
      return [...stmt.indices, ...(stmt.expected ? [stmt.expected] : []), ...(stmt.value ? [stmt.value] : [])];
    case "collective":
      return [...stmt.args];
    case "matrixLoad":
    case "matrixStore":
      return [stmt.fragment.index, stmt.offset, stmt.stride, ...(stmt.colStride ? [stmt.colStride] : []), ...(stmt.kind === "matrixStore" ? [stmt.boxRows, stmt.alpha, stmt.beta].filter((x): x is Expr => x !== undefined) : [])];
    case "mma":
      return [stmt.accumulator.index, stmt.a.index, stmt.b.index];
    case "wgmma":
      return [stmt.accumulator.index, isFragmentOperand(stmt.a) ? stmt.a.index : stmt.a.offset, stmt.offset, ...(stmt.bBoxRows ? [stmt.bBoxRows] : [])];
    case "tileStore":
      return [stmt.x, stmt.y, stmt.offset];
    case "barrierOp":
      return stmt.value ? [stmt.index, stmt.value] : [stmt.index];
    case "tileCopy":
      return [stmt.offset, stmt.x, stmt.y, stmt.index];
    case "asyncWait":
      return stmt.pendingExpr ? [stmt.pendingExpr] : [];
    default:
      return [];
  }
}

/** How the user wrote a matrix statement, for messages. */
export function matrixOperationName(stmt: MatrixStmt): string {
  if (stmt.kind === "wgmmaSync") return stmt.op === "commit" ? "wgmmaCommit()" : "wgmmaWait()";
  if (stmt.kind === "matrixLoad" && stmt.ldmatrix) return "loadMatrix()";
  return { matrixLoad: "loadFragment()", matrixStore: "storeFragment()", mma: "mma()", wgmma: "wgmma()" }[stmt.kind];
}

/** True when the body contains a warpgroup matrix statement (wgmma, its commits and waits, or a warpgroup fragment's load or store). */
export function usesWarpgroupOperations(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "wgmma" || stmt.kind === "wgmmaSync") found = true;
    if ((stmt.kind === "matrixLoad" || stmt.kind === "matrixStore") && isWarpgroupShape(stmt.fragment.array.fragment!.shape)) found = true;
  });
  return found;
}

/** True when the body contains a warp-level matrix statement (at any depth). */
export function usesMatrixOperations(stmts: readonly Stmt[]): boolean {
  return firstMatrixOperation(stmts) !== undefined;
}

/** The first warp-level matrix statement of the body, in source order, if any. */
export function firstMatrixOperation(stmts: readonly Stmt[]): MatrixStmt | undefined {
  let found: MatrixStmt | undefined;
  walkStmts(stmts, (stmt) => {
    if (!found && (stmt.kind === "matrixLoad" || stmt.kind === "matrixStore" || stmt.kind === "mma" || stmt.kind === "wgmma" || stmt.kind === "wgmmaSync")) found = stmt;
  });
  return found;
}

/** The operands of an expression node, in source order (none for a leaf). */
export function childExprs(expr: Expr): readonly Expr[] {
  switch (expr.kind) {
    case "unary":
      return [expr.operand];
    case "binary":
      return [expr.left, expr.right];
    case "select":
      return [expr.condition, expr.whenTrue, expr.whenFalse];
    case "convert":
      return [expr.value];
    case "intrinsic":
    case "call":
    case "construct":
      return expr.args;
    case "load":
      return expr.indices;
    case "swizzle":
    case "field":
      return [expr.value];
    case "check":
      return [expr.holds, ...expr.values];
    default:
      return [];
  }
}

/** Calls `visit` on every expression node inside `expr`, parents first. */
export function walkExpr(expr: Expr, visit: (expr: Expr) => void): void {
  visit(expr);
  for (const child of childExprs(expr)) walkExpr(child, visit);
}

/** Arrays a kernel body reads (`load`) or writes (`store`); an atomic does both. */
export function arrayAccesses(stmts: readonly Stmt[]): { reads: Set<ArrayRef>; writes: Set<ArrayRef> } {
  const reads = new Set<ArrayRef>();
  const writes = new Set<ArrayRef>();
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "store") {
      writes.add(stmt.array);
      if (stmt.op) reads.add(stmt.array);
    }
    if (stmt.kind === "vectorLoad") reads.add(stmt.array);
    if (stmt.kind === "vectorStore") writes.add(stmt.array);
    if (stmt.kind === "asyncCopy") {
      reads.add(stmt.source);
      writes.add(stmt.target);
    }
    if (stmt.kind === "atomic") {
      reads.add(stmt.array);
      writes.add(stmt.array);
    }
    // warpgroupBroadcast hands its value over through the kernel's shared words.
    if (stmt.kind === "collective" && stmt.words) {
      reads.add(stmt.words);
      writes.add(stmt.words);
    }
    if (stmt.kind === "matrixLoad") {
      reads.add(stmt.source);
      writes.add(stmt.fragment.array);
    }
    if (stmt.kind === "matrixStore") {
      reads.add(stmt.fragment.array);
      writes.add(stmt.target);
      if (stmt.beta) reads.add(stmt.target);
    }
    if (stmt.kind === "mma") {
      for (const ref of [stmt.accumulator, stmt.a, stmt.b]) reads.add(ref.array);
      writes.add(stmt.accumulator.array);
    }
    if (stmt.kind === "wgmma") {
      for (const array of [stmt.accumulator.array, stmt.a.array, stmt.b]) reads.add(array);
      writes.add(stmt.accumulator.array);
    }
    // An mbarrier operation reads and updates the barrier's state.
    if (stmt.kind === "barrierOp") {
      reads.add(stmt.barriers);
      writes.add(stmt.barriers);
    }
    if (stmt.kind === "tileCopy") {
      for (const array of [stmt.source, stmt.map, stmt.barriers]) reads.add(array);
      for (const array of [stmt.target, stmt.barriers]) writes.add(array);
    }
    if (stmt.kind === "tileStore") {
      for (const array of [stmt.source, stmt.map]) reads.add(array);
      writes.add(stmt.target);
    }
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "load" && reads.add(e.array));
  });
  return { reads, writes };
}

/** The helpers that the given bodies call, directly or through other helpers. */
export function helpersCalledBy(bodies: readonly (readonly Stmt[])[]): Set<HelperFunction> {
  const reached = new Set<HelperFunction>();
  const pending = [...bodies];
  while (pending.length > 0) {
    walkStmts(pending.pop()!, (stmt) => {
      for (const expr of exprsOf(stmt)) {
        walkExpr(expr, (node) => {
          if (node.kind !== "call" || reached.has(node.callee)) return;
          reached.add(node.callee);
          pending.push(node.callee.body);
        });
      }
    });
  }
  return reached;
}
