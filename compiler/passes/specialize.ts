/**
 * Specialization: gives each compile-time constant of a kernel its value, as CUDA instantiates a template.
 * Every `constRef` becomes a literal, the block shape and shared-array sizes become numbers where they can,
 * and the result is folded. Shared arrays get new `ArrayRef`s with folded sizes, so loads and stores are
 * pointed at the new ones; arrays the folded body no longer uses are dropped.
 */

import type { ArrayRef, BlockShapeExpr, ConstValue, Expr, Kernel, Stmt } from "../ir/ir.ts";
import { arrayAccesses, mapExpr, mapStmts } from "../ir/rewrite.ts";
import { foldExpr, foldExprNode, foldStmts } from "./fold.ts";
import { f32Digits } from "../backends/expr-printer.ts";

export function specializeKernel(kernel: Kernel, values: ReadonlyMap<string, ConstValue>): Kernel {
  const substitute = (expr: Expr): Expr => {
    if (expr.kind !== "constRef") return foldExprNode(expr);
    const value = values.get(expr.name);
    if (value === undefined) return expr; // the driver reports missing values before specializing
    return { kind: "literal", type: expr.type, value: typeof value === "boolean" ? (value ? 1 : 0) : value, span: expr.span };
  };
  const sharedMap = new Map<ArrayRef, ArrayRef>();
  const shared = kernel.shared.map((array) => {
    const specialized: ArrayRef = { ...array, dims: array.dims.map((dim) => foldExpr(mapExpr(dim, substitute))) };
    sharedMap.set(array, specialized);
    return specialized;
  });
  const locals = kernel.locals.map((array) => {
    const specialized: ArrayRef = { ...array, dims: array.dims.map((dim) => foldExpr(mapExpr(dim, substitute))) };
    sharedMap.set(array, specialized);
    return specialized;
  });
  const retarget = (array: ArrayRef): ArrayRef => sharedMap.get(array) ?? array;
  const body: Stmt[] = mapStmts(kernel.body, {
    expr: (expr) => {
      const substituted = substitute(expr);
      return substituted.kind === "load" ? { ...substituted, array: retarget(substituted.array) } : substituted;
    },
    stmt: (stmt) => {
      switch (stmt.kind) {
        case "store":
        case "vectorLoad":
        case "vectorStore":
        case "atomic":
          return { ...stmt, array: retarget(stmt.array) };
        case "asyncCopy":
          return { ...stmt, target: retarget(stmt.target), source: retarget(stmt.source) };
        case "matrixLoad":
          return { ...stmt, fragment: { ...stmt.fragment, array: retarget(stmt.fragment.array) }, source: retarget(stmt.source) };
        case "matrixStore":
          return { ...stmt, fragment: { ...stmt.fragment, array: retarget(stmt.fragment.array) }, target: retarget(stmt.target) };
        case "mma":
          return {
            ...stmt,
            accumulator: { ...stmt.accumulator, array: retarget(stmt.accumulator.array) },
            a: { ...stmt.a, array: retarget(stmt.a.array) },
            b: { ...stmt.b, array: retarget(stmt.b.array) },
          };
        case "wgmma":
          return {
            ...stmt,
            accumulator: { ...stmt.accumulator, array: retarget(stmt.accumulator.array) },
            a: { ...stmt.a, array: retarget(stmt.a.array) },
            b: retarget(stmt.b),
          };
        case "barrierOp":
          return { ...stmt, barriers: retarget(stmt.barriers) };
        case "tileCopy":
          return { ...stmt, target: retarget(stmt.target), barriers: retarget(stmt.barriers) };
        case "tileStore":
          return { ...stmt, source: retarget(stmt.source) };
        case "collective":
          return stmt.words ? { ...stmt, words: retarget(stmt.words) } : stmt;
        case "asyncWait": {
          // waitAsync(STAGES - 2): the count is known now; one outside 0…7 stays for the validator.
          const count = stmt.pendingExpr && foldExpr(stmt.pendingExpr);
          if (count?.kind !== "literal" || !Number.isInteger(count.value) || count.value < 0 || count.value > 7) return count ? { ...stmt, pendingExpr: count } : stmt;
          return { kind: "asyncWait", pending: count.value, span: stmt.span };
        }
        default:
          return stmt;
      }
    },
  });
  // A formula that does not come out a positive integer stays a number here; the validator reports it (TSK3009).
  const block = kernel.block?.map((dim) => (typeof dim === "number" ? dim : (evaluateBlockShape(dim.formula, values) ?? dim))) as Kernel["block"];
  const folded = foldStmts(body);
  // An array the folded body never names (one only the branch of `if (COALESCE)` that folding dropped uses, say)
  // is not declared: its memory would count in the manifest and the target's budget though no target keeps it
  // (ptxas drops it). One whose size is not a valid constant stays, for the validator to report.
  const { reads, writes } = arrayAccesses(folded);
  const kept = (array: ArrayRef) => reads.has(array) || writes.has(array) || !array.dims.every((dim) => dim.kind === "literal" && Number.isInteger(dim.value) && dim.value > 0);
  return { ...kernel, shared: shared.filter(kept), locals: locals.filter(kept), body: folded, block, constValues: values };
}

function evaluateBlockShape(formula: BlockShapeExpr, values: ReadonlyMap<string, ConstValue>): number | undefined {
  if (typeof formula === "number") return formula;
  if (typeof formula === "string") {
    const value = values.get(formula);
    return typeof value === "number" ? value : undefined;
  }
  const left = evaluateBlockShape(formula.left, values);
  const right = evaluateBlockShape(formula.right, values);
  if (left === undefined || right === undefined) return undefined;
  return formula.op === "*" ? left * right : left / right;
}

/** The name of one specialization: the kernel's name, then each type parameter's element type, each constant's name and value. */
export function specializedName(kernel: Kernel, values: ReadonlyMap<string, ConstValue>): string {
  const types = [...(kernel.typeArgs ?? [])].map(([name, type]) => `${name}_${type}`);
  const constants = kernel.params.flatMap((param) => {
    if (param.kind !== "const") return [];
    const value = values.get(param.name);
    // Names must be identifiers on every target: 0.5 → 0p5, -2 → m2, 1e-8 → 1em8.
    const text = typeof value === "number" && !Number.isInteger(value) ? f32Digits(value) : String(value);
    const spelled = text.replace(/-/g, "m").replace(/\./g, "p").replace(/\+/g, "");
    return [`${param.name}_${spelled}`];
  });
  const parts = [...types, ...constants];
  return parts.length === 0 ? kernel.name : `${kernel.name}_${parts.join("_")}`;
}
