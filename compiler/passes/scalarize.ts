/**
 * Scalar replacement of private arrays, for the CPU backend: a `local.*` array whose every access has a
 * constant index becomes one local per element, as CUDA keeps such an array in registers. On the CPU a
 * private array is a slice of a block-wide typed array, so each access is a memory access with an index
 * computed from the thread; a local is a machine register or a stack slot that V8 optimizes freely (SAXPY's
 * staging arrays cost more than half of its time). The `unroll:` loops that index such an array with their
 * variable are unrolled first (only those, and only small ones: V8 gains nothing from unrolling as such and
 * chokes on large unrolled bodies), then folded; an array that still has a variable index stays an array.
 *
 * The element locals start at 0, as the CPU backend's arrays did, and are declared once per thread at the
 * start of the innermost statement list that holds every use of the array and that no loop of the kernel
 * repeats, so values live on from one iteration to the next as they did in the array.
 */

import { isStorageOnly, type ArrayRef, type DeclareStmt, type Expr, type ScalarType, type Stmt, type Variable } from "../ir/ir.ts";
import { loadType } from "../ir/vectors.ts";
import { exprsOf, mapStmts, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { foldStmts } from "./fold.ts";
import { unrollLoops } from "./unroll.ts";

/** Larger private arrays stay arrays: that many locals would only move the spilling into V8. */
const maxElements = 64;

/** The statements that the copies of one unrolled loop may hold, inner loops counted. */
const maxUnrolledStatements = 256;

export interface ScalarizeResult {
  readonly body: Stmt[];
  /** The private arrays left as arrays. */
  readonly locals: readonly ArrayRef[];
}

export function scalarizePrivateArrays(body: readonly Stmt[], locals: readonly ArrayRef[], sizes: ReadonlyMap<ArrayRef, readonly number[]>): ScalarizeResult {
  // Narrow integers stay arrays: their typed arrays truncate each store, which a local would not.
  let candidates = new Set(locals.filter((array) => (sizes.get(array)?.[0] ?? Infinity) <= maxElements && !isStorageOnly(array.elementType)));
  // Each attempt unrolls for the candidates left; one that fails drops out and the next attempt starts again
  // from the original body, so that no loop is unrolled for an array that stays an array.
  while (candidates.size > 0) {
    const attempt = scalarize(body, candidates, sizes);
    if (attempt.elements.size === candidates.size) {
      const { elements } = attempt;
      const element = (array: ArrayRef, indices: readonly Expr[]) => elements.get(array)![(indices[0] as Expr & { kind: "literal" }).value]!;
      const replaced = mapStmts(attempt.body, {
        expr: (expr) => (expr.kind === "load" && elements.has(expr.array) ? { kind: "variable", type: expr.type, variable: element(expr.array, expr.indices), span: expr.span } : expr),
        stmt: (stmt) =>
          stmt.kind === "store" && elements.has(stmt.array)
            ? { kind: "assign", variable: element(stmt.array, stmt.indices), ...(stmt.op ? { op: stmt.op } : {}), value: stmt.value, span: stmt.span }
            : stmt,
      });
      return { body: replaced, locals: locals.filter((array) => !elements.has(array)) };
    }
    candidates = new Set(attempt.elements.keys());
  }
  return { body: [...body], locals };
}

/**
 * Unrolls the loops that index a candidate with anything but a constant (unless a cut, a barrier or a
 * collective, is inside: the CPU backend keeps such a loop at block level), folds, and declares the element
 * locals of the candidates that can go: those whose every index is now a literal inside the array.
 */
function scalarize(body: readonly Stmt[], candidates: ReadonlySet<ArrayRef>, sizes: ReadonlyMap<ArrayRef, readonly number[]>): { body: Stmt[]; elements: Map<ArrayRef, Variable[]> } {
  const unrolled = foldStmts(
    unrollLoops(body, {
      maxStatements: maxUnrolledStatements,
      select: (loop) => !containsCut(loop.body) && !containsCall(loop.body) && variableIndexOf(loop.body, candidates),
    }),
  );
  const scalar = new Set(candidates);
  walkStmts(unrolled, (stmt) => {
    if ((stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") && scalar.has(stmt.array)) scalar.delete(stmt.array);
    // Fragments are arrays that mma (and, on targets that keep them whole, fragment loads and stores) name
    // as a whole: they stay arrays.
    if (stmt.kind === "mma") for (const ref of [stmt.accumulator, stmt.a, stmt.b]) scalar.delete(ref.array);
    if (stmt.kind === "wgmma") for (const ref of [stmt.accumulator, stmt.a]) scalar.delete(ref.array);
    if (stmt.kind === "matrixLoad" || stmt.kind === "matrixStore") scalar.delete(stmt.fragment.array);
    if (stmt.kind === "store" && scalar.has(stmt.array) && !constantIndex(stmt.indices, sizes.get(stmt.array)!)) scalar.delete(stmt.array);
    for (const expr of exprsOf(stmt)) {
      walkExpr(expr, (e) => {
        if (e.kind === "load" && scalar.has(e.array) && !constantIndex(e.indices, sizes.get(e.array)!)) scalar.delete(e.array);
      });
    }
  });
  const elements = new Map<ArrayRef, Variable[]>();
  for (const array of scalar) {
    const size = sizes.get(array)![0]!;
    elements.set(
      array,
      Array.from({ length: size }, (_, i) => ({ kind: "variable", name: `${array.name}${i}`, type: loadType(array.elementType), mutable: true, span: array.span }) as const),
    );
  }
  const kept = new Set<ArrayRef>();
  const declared = declareElements(unrolled, [...scalar], elements, kept);
  for (const array of kept) elements.delete(array);
  return { body: declared, elements };
}

function containsCut(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "barrier" || stmt.kind === "collective") found = true;
  });
  return found;
}

/**
 * A helper call: V8 inlines calls only up to a budget of bytecode per function, and the copies of an
 * unrolled loop spend it (GELU's 16 unrolled calls ran 1.6× slower than the loop of 4 inlined ones).
 */
function containsCall(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "call" && (found = true));
  });
  return found;
}

/** An access to one of `arrays` whose index is not a literal. */
function variableIndexOf(stmts: readonly Stmt[], arrays: ReadonlySet<ArrayRef>): boolean {
  let found = false;
  const check = (array: ArrayRef, indices: readonly Expr[]) => {
    if (arrays.has(array) && indices.some((index) => index.kind !== "literal")) found = true;
  };
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "store") check(stmt.array, stmt.indices);
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "load" && check(e.array, e.indices));
  });
  return found;
}

function constantIndex(indices: readonly Expr[], dims: readonly number[]): boolean {
  const index = indices[0];
  return indices.length === 1 && index?.kind === "literal" && Number.isInteger(index.value) && index.value >= 0 && index.value < dims[0]!;
}

/** Whether a statement (at any depth) reads or writes `array`. */
function uses(stmt: Stmt, array: ArrayRef): boolean {
  let found = false;
  walkStmts([stmt], (s) => {
    if (s.kind === "store" && s.array === array) found = true;
    for (const expr of exprsOf(s)) walkExpr(expr, (e) => e.kind === "load" && e.array === array && (found = true));
  });
  return found;
}

/**
 * Declares each array's element locals in `stmts` or, where a single `if` branch or `{ … }` block of it holds
 * every use, in there (recursively). Loop bodies are never entered: a declaration there would reset the
 * values at each iteration. An array whose uses a cut separates is left out (added to `kept`): the CPU
 * backend would spill each of its locals to a block-wide array of its own, which costs more than the one
 * array it had.
 */
function declareElements(stmts: readonly Stmt[], arrays: readonly ArrayRef[], elements: ReadonlyMap<ArrayRef, readonly Variable[]>, kept: Set<ArrayRef>): Stmt[] {
  const here = new Map<number, ArrayRef[]>();
  const into = new Map<Stmt, { then: ArrayRef[]; else: ArrayRef[]; body: ArrayRef[] }>();
  for (const array of arrays) {
    const users = stmts.flatMap((stmt, index) => (uses(stmt, array) ? [index] : []));
    if (users.length === 0) continue;
    const only = users.length === 1 ? stmts[users[0]!]! : undefined;
    const slot = only && (into.get(only) ?? { then: [], else: [], body: [] });
    if (only?.kind === "block") {
      slot!.body.push(array);
      into.set(only, slot!);
      continue;
    }
    if (only?.kind === "if") {
      const inThen = only.then.some((s) => uses(s, array));
      const inElse = only.else.some((s) => uses(s, array));
      const inCondition = exprsOf(only).some((expr) => {
        let found = false;
        walkExpr(expr, (e) => e.kind === "load" && e.array === array && (found = true));
        return found;
      });
      if (!inCondition && inThen !== inElse) {
        (inThen ? slot!.then : slot!.else).push(array);
        into.set(only, slot!);
        continue;
      }
    }
    const first = users[0]!;
    if (containsCut(stmts.slice(first, users[users.length - 1]! + 1))) {
      kept.add(array);
      continue;
    }
    here.set(first, [...(here.get(first) ?? []), array]);
  }
  return stmts.flatMap((stmt, index) => {
    const declarations = (here.get(index) ?? []).flatMap((array) =>
      elements.get(array)!.map((variable): DeclareStmt => ({ kind: "declare", variable, init: { kind: "literal", type: variable.type as ScalarType, value: 0, span: variable.span }, span: variable.span })),
    );
    const nested = into.get(stmt);
    let result = stmt;
    if (nested && stmt.kind === "block") result = { ...stmt, body: declareElements(stmt.body, nested.body, elements, kept) };
    if (nested && stmt.kind === "if") result = { ...stmt, then: declareElements(stmt.then, nested.then, elements, kept), else: declareElements(stmt.else, nested.else, elements, kept) };
    return [...declarations, result];
  });
}
