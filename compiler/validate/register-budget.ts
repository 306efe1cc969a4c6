/**
 * The register budget of warpgroup roles (TSK3166). `setMaxRegisters` is `setmaxnreg`: a warpgroup that asks
 * for more than the block's share (65536 / threads, in steps of 8) waits until others have given registers
 * back, and the block only ever has share · threads of them. Roles whose counts need more wait forever on
 * the GPU, while the CPU emulation (which has no registers) runs them fine: a hang found only on the device
 * (it happened with 88 + 2 · 208 in a block of 384, whose share is 168). This pass follows each warpgroup's
 * path through the kernel's top-level branches, evaluating conditions on `warpgroupIdx` and constants, takes the
 * largest count on that path (the share where there is none), and reports the block whose total exceeds the
 * registers it has. A branch on anything else that holds a `setMaxRegisters` ends the analysis silently.
 */

import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import type { Expr, Stmt } from "../ir/ir.ts";
import { walkStmts } from "../ir/rewrite.ts";

type Found = { readonly count: number; readonly stmt: Stmt & { kind: "setMaxRegisters" } };

/** Reports TSK3166 for a kernel of `threads` (whole warpgroups) whose roles ask for more registers than it has. */
export function checkRegisterBudget(kernelName: string, body: readonly Stmt[], threads: number, diagnostics: Diagnostic[]): void {
  if (threads % 128 !== 0) return;
  let any = false;
  walkStmts(body, (stmt) => stmt.kind === "setMaxRegisters" && (any = true));
  if (!any) return;
  const share = Math.floor(65536 / threads / 8) * 8;
  const peaks: (Found | undefined)[] = [];
  for (let group = 0; group < threads / 128; group++) {
    const path = peakOnPath(body, group);
    if (path === "unknown") return;
    peaks.push(path.peak);
  }
  const counts = peaks.map((peak) => peak?.count ?? share);
  const needed = counts.reduce((sum, count) => sum + 128 * count, 0);
  const available = share * threads;
  if (needed <= available) return;
  // Point at the largest request: an increase that waits for registers nobody can give back.
  const largest = peaks.reduce<Found | undefined>((best, peak) => (peak && (!best || peak.count > best.count) ? peak : best), undefined)!;
  const listing = counts.map((count, group) => `warpgroup ${group}: ${count}`).join(", ");
  diagnostics.push(
    makeDiagnostic("TSK3166", largest.stmt.span, [kernelName, String(needed), String(available)], {
      notes: [
        `registers a thread by warpgroup (${threads} threads, a share of ${share} each where a warpgroup sets none): ${listing}`,
        `lower the counts so that 128 · (their sum) ≤ ${available}, e.g. give the producer fewer`,
      ],
    }),
  );
}

/** The largest setMaxRegisters on warpgroup `group`'s path through `stmts`, or "unknown" where a branch can't be decided. */
function peakOnPath(stmts: readonly Stmt[], group: number): { peak: Found | undefined; ended: boolean } | "unknown" {
  let peak: Found | undefined;
  const better = (found: Found | undefined) => {
    if (found && (!peak || found.count > peak.count)) peak = found;
  };
  for (const stmt of stmts) {
    switch (stmt.kind) {
      case "setMaxRegisters":
        better({ count: stmt.count, stmt });
        break;
      case "return":
        return { peak, ended: true };
      case "if": {
        const taken = evaluate(stmt.condition, group);
        if (taken === undefined) {
          // Undecidable: harmless unless a branch sets registers.
          if (holdsSetMaxRegisters(stmt.then) || holdsSetMaxRegisters(stmt.else)) return "unknown";
          break;
        }
        const inner = peakOnPath(taken !== 0 ? stmt.then : stmt.else, group);
        if (inner === "unknown") return inner;
        better(inner.peak);
        if (inner.ended) return { peak, ended: true };
        break;
      }
      case "block": {
        const inner = peakOnPath(stmt.body, group);
        if (inner === "unknown") return inner;
        better(inner.peak);
        if (inner.ended) return { peak, ended: true };
        break;
      }
      case "for":
      case "while":
        // A loop's body may run: every count in it counts (a branch inside is decided or not, as above).
        if (holdsSetMaxRegisters(stmt.body)) {
          const inner = peakOnPath(stmt.body, group);
          if (inner === "unknown") return inner;
          better(inner.peak);
        }
        break;
      default:
        break;
    }
  }
  return { peak, ended: false };
}

function holdsSetMaxRegisters(stmts: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(stmts, (stmt) => stmt.kind === "setMaxRegisters" && (found = true));
  return found;
}

/** The value of an integer or bool expression of warpgroupIdx and literals, or undefined. */
function evaluate(expr: Expr, group: number): number | undefined {
  switch (expr.kind) {
    case "literal":
      return expr.value;
    case "subgroupBuiltin":
      return expr.builtin === "warpgroupIdx" ? group : undefined;
    case "unary": {
      const value = evaluate(expr.operand, group);
      if (value === undefined) return undefined;
      return expr.op === "not" ? Number(value === 0) : expr.op === "neg" ? -value : ~value;
    }
    case "binary": {
      const left = evaluate(expr.left, group);
      const right = evaluate(expr.right, group);
      if (left === undefined || right === undefined) return undefined;
      switch (expr.op) {
        case "eq": return Number(left === right);
        case "ne": return Number(left !== right);
        case "lt": return Number(left < right);
        case "le": return Number(left <= right);
        case "gt": return Number(left > right);
        case "ge": return Number(left >= right);
        case "logand": return Number(left !== 0 && right !== 0);
        case "logor": return Number(left !== 0 || right !== 0);
        case "add": return left + right;
        case "sub": return left - right;
        case "mul": return left * right;
        case "and": return left & right;
        case "or": return left | right;
        case "xor": return left ^ right;
        default: return undefined;
      }
    }
    default:
      return undefined;
  }
}
