/**
 * WGSL evaluates an expression made only of literals and built-in functions (a const-expression) when the
 * shader is created, and one that overflows or is not finite there (`abs(1673577648u) << 2u`, `exp(100.0f)`)
 * makes the whole shader invalid, where tskernel's meaning is the run-time one: integers wrap, floats reach
 * infinity (docs/language.md §6). The constant folder folds what it can with those rules; what it leaves
 * (Math functions, non-finite results) would be such a const-expression. So one leaf of each is printed
 * through an identity function (`tsk_runtime_u32(1673577648u)`), which WGSL cannot evaluate early, and the
 * expression is computed when the shader runs, as on the other targets: the first operand of every
 * operator whose operands are all literals, which leaves no part of any expression constant. An override-sized `blockDim` is
 * such a leaf too: it is evaluated when the pipeline is created. (Found by the differential fuzzer.)
 */

import type { Expr, ScalarType, Stmt } from "../ir/ir.ts";
import { childExprs, exprsOf, walkStmts } from "../ir/rewrite.ts";
import { wgslSpelling } from "./targets.ts";


/**
 * The leaves to print through an identity function: the first leaf of every maximal subexpression, other
 * than a lone leaf, that WGSL would evaluate early (blockDim counts as a constant either way).
 */
export function runtimeLeaves(body: readonly Stmt[]): Set<Expr> {
  const leaves = new Set<Expr>();
  /**
   * Whether `e`, with the leaves chosen so far wrapped, is still evaluated early. Children first: then an
   * operator whose operands are all constant has only leaves below it, and wrapping its first one suffices.
   */
  const early = (e: Expr): boolean => {
    // A fixed block's blockDim is printed as a literal; otherwise it is a pipeline constant.
    if (e.kind === "literal" || (e.kind === "builtin" && e.builtin === "blockDim")) return true;
    const parts = childExprs(e);
    const flags = parts.map(early);
    // A vector or struct built from constants, or a part of one, is constant but computes nothing: the
    // operator that uses it decides.
    if (e.kind === "construct" || e.kind === "swizzle" || e.kind === "field") return flags.every(Boolean);
    // Variables, loads and helper calls are evaluated when the shader runs; operators on constants are not.
    const operator = e.kind === "unary" || e.kind === "binary" || e.kind === "select" || e.kind === "convert" || e.kind === "intrinsic";
    if (operator && flags.every(Boolean)) leaves.add(firstLeaf(parts[0]!));
    return false;
  };
  walkStmts(body, (stmt) => {
    for (const expr of exprsOf(stmt)) early(expr);
  });
  return leaves;
}

/** The first scalar leaf of a constant operand: the first lane of a vector built from constants. */
function firstLeaf(expr: Expr): Expr {
  let leaf = expr;
  while (leaf.kind === "construct" || leaf.kind === "swizzle" || leaf.kind === "field") leaf = leaf.kind === "construct" ? leaf.args[0]! : leaf.value;
  return leaf;
}

/** The identity functions, one per type, for the module's top. */
export function runtimeFunctions(types: ReadonlySet<ScalarType>): string[] {
  return [...types].sort().map((type) => `fn tsk_runtime_${type}(x: ${wgslSpelling.types[type]}) -> ${wgslSpelling.types[type]} { return x; }`);
}
