/**
 * Per-target legalization: small IR→IR rewrites for what one target spells differently or does not allow,
 * chosen by the target's capabilities (backends/targets.ts) so that backends only print.
 *
 * - WGSL takes shift amounts as u32 only: an i32 amount is converted (a literal is retyped).
 * - CUDA has no unambiguous `abs` for unsigned ints, and the absolute value of a u32 is the value itself.
 * - Vector accesses (`load4`, `store4`) become four element accesses where the target has no 16-byte
 *   accesses (JS indexes typed arrays), and on private arrays everywhere (a vector access would force a
 *   register array into memory). WGSL keeps them on global buffers and shared arrays that the kernel only
 *   ever accesses four elements at a time, which it declares as arrays of `vec4<f32>`, and splits the rest.
 * - Asynchronous copies become plain copies, and their commit and wait nothing, where the target has none
 *   (a vector load into temporaries and a vector store, so the rule above still applies to the source).
 */

import { vectorWidth, type ArrayRef, type AsyncCopyStmt, type Expr, type LoadExpr, type Stmt, type Variable } from "../ir/ir.ts";
import { exprsOf, mapStmts, walkExpr, walkStmts } from "../ir/rewrite.ts";

export interface LegalizeOptions {
  readonly shiftAmountU32: boolean;
  readonly dropUnsignedAbs: boolean;
  /** Print `load4`/`store4` as element accesses. */
  readonly splitVectorAccesses: boolean;
  /** With `splitVectorAccesses`: keep them on buffers and shared arrays only accessed four elements at a time. */
  readonly vectorArrays?: boolean;
  /** Print `copyAsync4` as a plain copy and drop `commitAsync`/`waitAsync`. */
  readonly synchronousCopies: boolean;
  /** With `synchronousCopies`: keep `commitAsync`/`waitAsync` (the CPU's checked mode tracks the copies). */
  readonly keepAsyncFences?: boolean;
}

export function legalize(stmts: readonly Stmt[], options: LegalizeOptions): Stmt[] {
  const copied = options.synchronousCopies ? mapStmts(stmts, { stmt: (stmt) => (stmt.kind === "asyncCopy" ? copyAsVectors(stmt) : stmt) }) : [...stmts];
  const keepVectors = options.splitVectorAccesses && options.vectorArrays ? vectorOnlyArrays(copied) : new Set<ArrayRef>();
  const split = (array: ArrayRef) => array.space === "private" || (options.splitVectorAccesses && !keepVectors.has(array));
  const expr = (node: Expr): Expr => {
    if (options.shiftAmountU32 && node.kind === "binary" && (node.op === "shl" || node.op === "shr") && node.right.type !== "u32") {
      return { ...node, right: asU32(node.right) };
    }
    if (options.dropUnsignedAbs && node.kind === "intrinsic" && node.name === "abs" && node.type === "u32") return node.args[0]!;
    return node;
  };
  return mapStmts(copied, {
    expr,
    stmt: (stmt) => {
      switch (stmt.kind) {
        case "assign":
        case "store":
          return options.shiftAmountU32 && (stmt.op === "shl" || stmt.op === "shr") && stmt.value.type !== "u32" ? { ...stmt, value: asU32(stmt.value) } : stmt;
        case "vectorLoad":
          if (!split(stmt.array)) return stmt;
          return stmt.targets.map((variable, lane): Stmt => ({ kind: "declare", variable, init: elementLoad(stmt.array, stmt.indices, lane, stmt.span), span: stmt.span }));
        case "vectorStore":
          if (!split(stmt.array)) return stmt;
          return splitVectorStore(stmt);
        case "asyncCommit":
        case "asyncWait":
          return options.synchronousCopies && !options.keepAsyncFences ? [] : stmt;
        default:
          return stmt;
      }
    },
  });
}

/** A synchronous stand-in for `copyAsync4`: four elements into temporaries, then into the shared array. */
function copyAsVectors(stmt: AsyncCopyStmt): Stmt {
  const targets = Array.from({ length: vectorWidth }, (_, lane): Variable => ({ kind: "variable", name: `copied${lane}`, type: stmt.source.elementType, mutable: false, span: stmt.span }));
  const values = targets.map((variable): Expr => ({ kind: "variable", type: variable.type, variable, span: stmt.span }));
  return {
    kind: "block",
    body: [
      { kind: "vectorLoad", targets, array: stmt.source, indices: stmt.sourceIndices, span: stmt.span },
      { kind: "vectorStore", array: stmt.target, indices: stmt.targetIndices, values, span: stmt.span, asynchronous: true },
    ],
    span: stmt.span,
  };
}

/** Global buffers and shared arrays that the body reads and writes only through vector accesses. */
export function vectorOnlyArrays(stmts: readonly Stmt[]): Set<ArrayRef> {
  const vector = new Set<ArrayRef>();
  const scalar = new Set<ArrayRef>();
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") vector.add(stmt.array);
    if (stmt.kind === "store") scalar.add(stmt.array);
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "load" && scalar.add(e.array));
  });
  return new Set([...vector].filter((array) => array.space !== "private" && !scalar.has(array)));
}

/** The indices of element `lane` of a vector access: the last index plus the lane. */
export function laneIndices(indices: readonly Expr[], lane: number): Expr[] {
  const last = indices[indices.length - 1]!;
  if (lane === 0) return [...indices];
  const offset: Expr =
    last.kind === "literal"
      ? { ...last, value: last.value + lane }
      : { kind: "binary", op: "add", type: last.type, left: last, right: { kind: "literal", type: last.type, value: lane, span: last.span }, span: last.span };
  return [...indices.slice(0, -1), offset];
}

/** Element `lane` of a vector read; the first element carries the alignment the vector access needed. */
function elementLoad(array: LoadExpr["array"], indices: readonly Expr[], lane: number, span: Stmt["span"]): LoadExpr {
  return { kind: "load", type: array.elementType, array, indices: laneIndices(indices, lane), span, ...(lane === 0 ? { alignment: vectorWidth } : {}) };
}

/**
 * A vector store as four element stores. The values are computed before the first store, into locals
 * where they are not already plain values, because a value may read an element that an earlier store of
 * the four would change.
 */
function splitVectorStore(stmt: Stmt & { kind: "vectorStore" }): Stmt[] {
  const out: Stmt[] = [];
  const values = stmt.values.map((value): Expr => {
    if (value.kind === "literal" || value.kind === "variable") return value;
    const temp: Variable = { kind: "variable", name: "lane", type: value.type, mutable: false, span: value.span };
    out.push({ kind: "declare", variable: temp, init: value, span: stmt.span });
    return { kind: "variable", type: value.type, variable: temp, span: value.span };
  });
  values.forEach((value, lane) =>
    out.push({
      kind: "store",
      array: stmt.array,
      indices: laneIndices(stmt.indices, lane),
      value,
      span: stmt.span,
      ...(lane === 0 ? { alignment: vectorWidth } : {}),
      ...(stmt.asynchronous ? { asynchronous: true } : {}),
    }),
  );
  return out;
}

function asU32(value: Expr): Expr {
  if (value.kind === "literal" && value.value >= 0) return { ...value, type: "u32" };
  return { kind: "convert", type: "u32", value, span: value.span };
}
