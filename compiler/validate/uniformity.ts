/**
 * Uniformity: `syncThreads()` must be reached by every thread of a block or by none, and a collective
 * (`subgroupAdd` and the other subgroup operations) by every lane of its subgroup, so both may only stand in
 * control flow that is the same for all threads of the block. This is WGSL's rule (its analysis treats
 * subgroup operations as barriers), and tskernel enforces it for every target at compile time, pointing at
 * the user's TypeScript. The xor mask and the distance of a subgroup shuffle must be uniform values, as WGSL
 * requires too.
 *
 * A value is non-uniform when it depends on `threadIdx` or `subgroupInvocationId`, on a read of shared memory
 * or of a writable global buffer (other threads may change them), on a helper call with a non-uniform
 * argument, on an atomic's old value or a subgroup scan, or on a variable that is assigned a non-uniform
 * value or assigned under non-uniform control flow. Control flow becomes
 * non-uniform under an `if`/loop whose condition is non-uniform, after a `return` that only some threads
 * take, and in a loop that only some threads may leave early (`break`/`continue` under non-uniform control).
 * The analysis is conservative in the same ways as WGSL's, so every kernel it accepts also passes Dawn's.
 *
 * The warp-level matrix operations (`loadFragment`, `storeFragment`, `mma`) follow the collectives' rule, and
 * their fragment indices must be uniform: the lanes of a warp hold one fragment together.
 *
 * Warpgroup roles add a second scope. `warpgroupIdx` differs between warpgroups but not within one, so a
 * branch on it splits the block into roles: for barriers and subgroup operations it is a non-uniform value
 * like any other (no `syncThreads()` inside a role), while the matrix operations and `waitBarrier` need only
 * control flow that is the same across each warpgroup, and index fragments, offsets, barriers and parities
 * that are. The analysis runs once per scope; without `warpgroupIdx` both agree.
 */

import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { isFragmentOperand, valueTypeOf, type CollectiveOp, type Expr, type Kernel, type Span, type Stmt, type Variable } from "../ir/ir.ts";
import { loadType } from "../ir/vectors.ts";
import { matrixOperationName, usesWarpgroupRoles } from "../ir/rewrite.ts";
import { isWarpgroupShape } from "../ir/matrix.ts";

/** Whether a matrix statement belongs to a warpgroup (wgmma, or a warpgroup fragment's load or store). */
function warpgroup(stmt: Stmt): boolean {
  if (stmt.kind === "wgmma" || stmt.kind === "wgmmaSync") return true;
  return (stmt.kind === "matrixLoad" || stmt.kind === "matrixStore") && isWarpgroupShape(stmt.fragment.array.fragment!.shape);
}

/** Why control flow is non-uniform: where, and what the user should look at. */
interface Divergence {
  readonly span: Span;
  readonly message: string;
  /** The message when a subgroup operation, not a barrier, is what the divergence affects (if different). */
  readonly collectiveMessage?: string;
}

/** The operand of a collective that must be uniform, and what the messages call it. */
const uniformOperands: Partial<Record<CollectiveOp, string>> = {
  subgroupShuffleXor: "mask",
  subgroupShuffleUp: "distance",
  subgroupShuffleDown: "distance",
};

/** What must agree: every thread of the block, or every thread of each warpgroup. */
type Scope = "block" | "warpgroup";

export function checkUniformity(kernel: Kernel, diagnostics: Diagnostic[]): void {
  checkScope(kernel, "block", diagnostics);
  checkScope(kernel, "warpgroup", diagnostics);
}

function checkScope(kernel: Kernel, scope: Scope, diagnostics: Diagnostic[]): void {
  const nonUniform = nonUniformVariables(kernel.body, scope);
  const reasonOf = (expr: Expr): string | undefined => nonUniformReason(expr, nonUniform, scope);
  const block = scope === "block";
  // A kernel with warpgroup roles (CUDA and the CPU only) holds whole warps in each warpgroup, so its subgroup
  // operations need control flow that is the same across each warpgroup only, as its waits do.
  const collectivesScope: Scope = usesWarpgroupRoles(kernel.body) ? "warpgroup" : "block";
  let afterReturn: Divergence | undefined;
  const reported = new Set<Stmt>();

  // A wait (or syncWarpgroup) that the 128 threads of a warpgroup must reach together, with operands they share.
  const warpgroupWait = (stmt: Stmt, what: string, current: Divergence | undefined, operands: readonly (readonly [string, Expr])[]): void => {
    if (current && !reported.has(stmt)) {
      reported.add(stmt);
      diagnostics.push(
        makeDiagnostic("TSK3086", stmt.span, [what], {
          label: "not every thread of the warpgroup may reach this wait",
          related: [{ span: current.span, message: current.collectiveMessage ?? current.message }],
          notes: [
            "a wait is where the CPU backend lets the warpgroup's coroutine yield, and on CUDA threads that skip it would run on too early (or, at syncWarpgroup(), wait forever)",
            "branch on warpgroupIdx and values all threads share; guard only what the threads do after the wait",
          ],
        }),
      );
    }
    for (const [name, expr] of operands) {
      const reason = reasonOf(expr);
      if (!reason) continue;
      diagnostics.push(
        makeDiagnostic("TSK3087", expr.span, [name, what], {
          label: `this ${name} ${reason}`,
          notes: ["compute it from constants, loop counters, warpgroupIdx and values all threads share"],
        }),
      );
    }
  };

  const walk = (stmts: readonly Stmt[], divergence: Divergence | undefined): void => {
    for (const stmt of stmts) {
      const current = divergence ?? afterReturn;
      switch (stmt.kind) {
        case "barrier":
          // syncWarpgroup() needs only its warpgroup to agree: it is checked in that scope, like a wait.
          if (stmt.scope === "warpgroup") {
            if (!block) warpgroupWait(stmt, "syncWarpgroup()", current, []);
            break;
          }
          if (block && current && !reported.has(stmt)) {
            reported.add(stmt);
            diagnostics.push(
              makeDiagnostic("TSK3001", stmt.span, [stmt.scope === "cluster" ? "syncCluster()" : "syncThreads()"], {
                label: "not every thread of the block may reach this barrier",
                related: [{ span: current.span, message: current.message }],
                notes: [
                  stmt.scope === "cluster"
                    ? "every thread of every block of the cluster must reach each syncCluster(), or the cluster hangs"
                    : "every thread of a block must reach each syncThreads(), or the block hangs (CUDA) or the shader is rejected (WebGPU)",
                  "move the barrier out of the condition, and guard only the loads and stores with it",
                ],
              }),
            );
          }
          break;
        case "collective": {
          if (scope !== collectivesScope) break;
          if (current && !reported.has(stmt)) {
            reported.add(stmt);
            diagnostics.push(
              makeDiagnostic("TSK3015", stmt.span, [`${stmt.op}()`], {
                label: "not every lane of the subgroup may reach this subgroup operation",
                related: [{ span: current.span, message: current.collectiveMessage ?? current.message }],
                notes: [
                  "every lane of a subgroup must take part in each subgroup operation (WGSL rejects the shader otherwise, and CUDA's warp intrinsics would wait for lanes that never come)",
                  "move the operation out of the condition, and use the condition on its result instead",
                ],
              }),
            );
          }
          const what = uniformOperands[stmt.op];
          const reason = what ? reasonOf(stmt.args[1]!) : undefined;
          if (what && reason) {
            diagnostics.push(
              makeDiagnostic("TSK3017", stmt.args[1]!.span, [what, `${stmt.op}()`], {
                label: `this ${what} ${reason}`,
                notes: [`WGSL requires it; loops over subgroupSize (\`for (let d = subgroupSize / 2; d > 0; d /= 2)\`) and constants are uniform`],
              }),
            );
          }
          break;
        }
        case "matrixLoad":
        case "matrixStore":
        case "mma":
        case "wgmma":
        case "wgmmaSync": {
          if (block) break;
          const what = matrixOperationName(stmt);
          if (current && !reported.has(stmt)) {
            reported.add(stmt);
            diagnostics.push(
              makeDiagnostic("TSK3045", stmt.span, [what], {
                label: "not every thread of the warp may reach this matrix operation",
                related: [{ span: current.span, message: current.collectiveMessage ?? current.message }],
                notes: [
                  warpgroup(stmt)
                    ? "the 128 threads of a warpgroup hold a fragment together, and wgmma and its commits and waits are warpgroup-wide"
                    : "the lanes of a warp hold a fragment together, and mma.sync waits for all 32 of them",
                  "move the operation out of the condition; guard only what you do with the results",
                ],
              }),
            );
          }
          // Every lane must name the same fragment: each holds its part of it.
          const refs = stmt.kind === "mma" ? [stmt.accumulator, stmt.a, stmt.b] : stmt.kind === "wgmma" ? [stmt.accumulator, ...(isFragmentOperand(stmt.a) ? [stmt.a] : [])] : stmt.kind === "wgmmaSync" ? [] : [stmt.fragment];
          // wgmma's shared operands are matrices of the whole warpgroup: every thread must name the same ones.
          if (stmt.kind === "wgmma") {
            const shared = [stmt.offset, ...(isFragmentOperand(stmt.a) ? [] : [stmt.a.offset]), ...(stmt.bBoxRows ? [stmt.bBoxRows] : [])];
            for (const offset of shared) {
              const offsetReason = reasonOf(offset);
              if (!offsetReason) continue;
              diagnostics.push(
                makeDiagnostic("TSK3063", offset.span, [], {
                  label: `this offset ${offsetReason}`,
                  notes: ["the tensor cores read one A and one B for the whole warpgroup: compute the offsets from constants, loop counters and values all threads share"],
                }),
              );
            }
          }
          for (const ref of refs) {
            const reason = reasonOf(ref.index);
            if (!reason) continue;
            diagnostics.push(
              makeDiagnostic("TSK3049", ref.index.span, [what], {
                label: `this index ${reason}`,
                notes: ["each lane holds its part of every fragment: index fragments with constants and loop counters that all threads share"],
              }),
            );
          }
          break;
        }
        case "setMaxRegisters":
          if (block || !current || reported.has(stmt)) break;
          reported.add(stmt);
          diagnostics.push(
            makeDiagnostic("TSK3090", stmt.span, [], {
              label: "not every thread of the warpgroup may reach this",
              related: [{ span: current.span, message: current.collectiveMessage ?? current.message }],
              notes: ["setmaxnreg is executed by the 128 threads of a warpgroup together; branch on warpgroupIdx and values all threads share"],
            }),
          );
          break;
        case "barrierOp":
          if (block || stmt.op !== "wait") break;
          warpgroupWait(stmt, "waitBarrier()", current, [["barrier index", stmt.index], ["parity", stmt.value!]]);
          break;
        case "atomic":
          if (block || stmt.op !== "wait") break;
          warpgroupWait(stmt, "waitFlag()", current, [...stmt.indices.map((index) => ["index", index] as const), ["value", stmt.value!]]);
          break;
        case "if": {
          const reason = reasonOf(stmt.condition);
          const inner = current ?? (reason ? { span: stmt.condition.span, message: `this condition ${reason}` } : undefined);
          walk(stmt.then, inner);
          walk(stmt.else, inner);
          break;
        }
        case "while":
        case "for": {
          if (stmt.kind === "for") walk(stmt.init, current);
          const reason = stmt.condition ? reasonOf(stmt.condition) : undefined;
          const exit = current ? undefined : earlyExit(stmt.body, reasonOf);
          // An early exit is named first: it is usually why the loop's own variables differ between threads.
          const inner =
            current ?? exit ?? (reason ? { span: stmt.condition!.span, message: `this loop condition ${reason}` } : undefined);
          walk(stmt.body, inner);
          if (stmt.kind === "for") walk(stmt.update, inner);
          break;
        }
        case "block":
          walk(stmt.body, current);
          break;
        case "return":
          if (current && !afterReturn) {
            afterReturn = {
              span: stmt.span,
              message: "some threads may return here, so later barriers are not reached by all",
              collectiveMessage: "some threads may return here, so later subgroup operations are not reached by all lanes",
            };
          }
          break;
        default:
          break;
      }
    }
  };
  walk(kernel.body, undefined);
}

/**
 * A way out of this loop that only some threads take: a break/continue of this loop (not of a nested one),
 * or a return at any depth, under a non-uniform condition. Threads that stay then run the loop's barriers
 * again without the others, whatever the order of the barrier and the exit in the body.
 */
function earlyExit(body: readonly Stmt[], reasonOf: (expr: Expr) => string | undefined): Divergence | undefined {
  const search = (stmts: readonly Stmt[], under: Divergence | undefined, nested: boolean): Divergence | undefined => {
    for (const stmt of stmts) {
      const leaves = stmt.kind === "return" || (!nested && (stmt.kind === "break" || stmt.kind === "continue"));
      if (leaves && under) {
        return { span: stmt.span, message: `some threads may leave the loop here (${under.message})` };
      }
      let found: Divergence | undefined;
      if (stmt.kind === "if") {
        const reason = reasonOf(stmt.condition);
        const inner = under ?? (reason ? { span: stmt.condition.span, message: `its condition ${reason}` } : undefined);
        found = search(stmt.then, inner, nested) ?? search(stmt.else, inner, nested);
      } else if (stmt.kind === "block") {
        found = search(stmt.body, under, nested);
      } else if (stmt.kind === "for" || stmt.kind === "while") {
        const reason = stmt.condition ? reasonOf(stmt.condition) : undefined;
        const inner = under ?? (reason ? { span: stmt.condition!.span, message: `its condition ${reason}` } : undefined);
        found = search(stmt.body, inner, true);
      }
      if (found) return found;
    }
    return undefined;
  };
  return search(body, undefined, false);
}

/** Why an expression differs between threads (of the block, or of a warpgroup), as a phrase, or undefined when it does not. */
function nonUniformReason(expr: Expr, nonUniform: ReadonlyMap<Variable, string>, scope: Scope): string | undefined {
  const recurse = (e: Expr) => nonUniformReason(e, nonUniform, scope);
  switch (expr.kind) {
    case "builtin":
      return expr.builtin === "threadIdx" ? `depends on threadIdx.${expr.axis}` : undefined;
    case "subgroupBuiltin":
      if (expr.builtin === "warpgroupIdx") return scope === "block" ? "depends on warpgroupIdx" : undefined;
      return expr.builtin === "subgroupInvocationId" ? "depends on subgroupInvocationId" : undefined;
    case "variable": {
      const why = nonUniform.get(expr.variable);
      return why === undefined ? undefined : `depends on '${expr.variable.name}', which ${why}`;
    }
    case "load":
      if (expr.array.space === "shared") return `reads shared memory ('${expr.array.name}'), which other threads may change`;
      if (expr.array.space === "private") return `reads the private array '${expr.array.name}'`;
      if (expr.array.access === "read_write") return `reads the writable buffer '${expr.array.name}'`;
      return expr.indices.map(recurse).find(Boolean);
    case "literal":
    case "constRef":
      return undefined;
    case "unary":
      return recurse(expr.operand);
    case "binary":
      return preferDirect(recurse(expr.left), recurse(expr.right));
    case "select":
      return recurse(expr.condition) ?? recurse(expr.whenTrue) ?? recurse(expr.whenFalse);
    case "convert":
      return recurse(expr.value);
    case "intrinsic":
    case "call":
      return expr.args.map(recurse).find(Boolean);
  }
}

/** Of two reasons, the one that names its source (threadIdx, a read) rather than a variable in between. */
function preferDirect(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return a.startsWith("depends on '") && !b.startsWith("depends on '") ? b : a;
}

/** Variables whose value may differ between threads, each with the reason, found by iterating to a fixpoint. */
function nonUniformVariables(body: readonly Stmt[], scope: Scope): Map<Variable, string> {
  const reasonIn = (expr: Expr, known: ReadonlyMap<Variable, string>) => nonUniformReason(expr, known, scope);
  const result = new Map<Variable, string>();
  let changed = true;
  const mark = (variable: Variable, why: string) => {
    if (!result.has(variable)) {
      result.set(variable, why);
      changed = true;
    }
  };
  const visit = (stmts: readonly Stmt[], control: string | undefined): void => {
    for (const stmt of stmts) {
      switch (stmt.kind) {
        case "declare":
        case "assign": {
          const value = stmt.kind === "declare" ? stmt.init : stmt.value;
          const reason = value ? reasonIn(value, result) : undefined;
          if (reason) mark(stmt.variable, reason);
          else if (control) mark(stmt.variable, `is assigned under a condition that ${control}`);
          break;
        }
        case "atomic":
          if (stmt.result) mark(stmt.result, `holds the old value of ${stmt.array.name}[…] that an atomic returned, which differs between threads`);
          break;
        case "collective": {
          // The same in every thread of a warpgroup, not of the block (unless its argument is).
          if (stmt.op === "warpgroupBroadcast") {
            const differs = scope === "block" ? reasonIn(stmt.args[0]!, result) : undefined;
            if (differs) mark(stmt.result, `is a warpgroupBroadcast, the same within a warpgroup only (its argument ${differs})`);
            break;
          }
          const scan = stmt.op === "subgroupInclusiveAdd" || stmt.op === "subgroupExclusiveAdd";
          const reason = scan
            ? `is a subgroup scan (${stmt.op}), which differs between lanes`
            : (stmt.args.map((arg) => reasonIn(arg, result)).find(Boolean) ?? (control ? `is assigned under a condition that ${control}` : undefined));
          if (reason) mark(stmt.result, reason);
          break;
        }
        case "vectorLoad": {
          // Four elements of one array: as non-uniform as a load of the first would be.
          const first: Expr = { kind: "load", type: loadType(stmt.array.elementType), array: stmt.array, indices: stmt.indices, span: stmt.span };
          const reason = reasonIn(first, result) ?? (control ? `is assigned under a condition that ${control}` : undefined);
          if (reason) for (const variable of stmt.targets) mark(variable, reason);
          break;
        }
        case "if": {
          const inner = control ?? reasonIn(stmt.condition, result);
          visit(stmt.then, inner);
          visit(stmt.else, inner);
          break;
        }
        case "for":
        case "while": {
          if (stmt.kind === "for") visit(stmt.init, control);
          const inner =
            control ??
            (stmt.condition ? reasonIn(stmt.condition, result) : undefined) ??
            (earlyExit(stmt.body, (expr) => reasonIn(expr, result)) ? "lets some threads leave the loop early" : undefined);
          visit(stmt.body, inner);
          if (stmt.kind === "for") visit(stmt.update, inner);
          break;
        }
        case "block":
          visit(stmt.body, control);
          break;
        default:
          break;
      }
    }
  };
  while (changed) {
    changed = false;
    visit(body, undefined);
  }
  return result;
}
