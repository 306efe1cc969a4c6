/**
 * The statement printer shared by the C-like targets (CUDA and WGSL): control flow reads the same in both,
 * so only what differs comes from the target: the text of a declaration, assignment or store, the barrier and
 * the fence,
 * atomics and collectives, the lines of vector accesses and asynchronous copies (CUDA only: legalize splits
 * them for other targets), the lines of an `mma` (CUDA), of the mbarrier, tensor-copy and register statements
 * (CUDA), lines before a statement (CUDA's `wgmma.fence` before a loop of wgmmas),
 * an unroll pragma (CUDA) and a hook before each statement (CUDA's `#line`).
 */

import { assertNever, type AtomicStmt, type BarrierStmt, type BarrierOpStmt, type SetMaxRegistersStmt, type TileCopyStmt, type TileStoreStmt, type TileStoreWaitStmt, type CollectiveStmt, type MemoryOperationStmt, type MatrixLoadStmt, type MmaStmt, type WgmmaStmt, type WgmmaSyncStmt, type Span, type Stmt } from "../ir/ir.ts";
import type { ExprPrinter } from "./expr-printer.ts";
import type { Writer } from "./writer.ts";

export interface CStatementTarget {
  readonly out: Writer;
  readonly printer: ExprPrinter;
  /** `declare`, `assign` and `store` as text without the semicolon (also used in `for` headers). */
  simple(stmt: Stmt): string;
  /**
   * The lines of a `declare`, `assign` or `store` that the target writes as several statements (WGSL: a store
   * into a packed array), or undefined where `simple` spells it. Such a statement cannot stand in a `for`
   * header: a loop whose update is one becomes WGSL's `loop` with the update in its `continuing` block.
   */
  lines?(stmt: Stmt): readonly string[] | undefined;
  /** The barrier (a checked build's may count who reached it: BarrierStmt.check). */
  readonly barrier: string | ((stmt: BarrierStmt) => string);
  /** The device-scope fence, on targets that have one (the validator rejects `threadFence()` elsewhere). */
  readonly fence?: string;
  /** The lines of a vector access or asynchronous-copy statement, for targets that print them. */
  memoryOperation?(stmt: MemoryOperationStmt): readonly string[];
  /** Prints an atomic or a collective through `out` (a loop where the target needs one). */
  operation(stmt: AtomicStmt | CollectiveStmt): void;
  /**
   * The lines of an `mma` or a `wgmma` statement, for targets that have matrix operations (legalize splits fragment
   * loads and stores), and of a `loadMatrix` that legalize kept whole for ldmatrix (MatrixLoadStmt.ldmatrix.laneRow).
   */
  matrix?(stmt: MmaStmt | WgmmaStmt | WgmmaSyncStmt | MatrixLoadStmt): readonly string[];
  /** The line of an mbarrier operation, for targets that have them (the validator rejects them elsewhere: TSK3085). */
  barrierOp?(stmt: BarrierOpStmt | SetMaxRegistersStmt | TileCopyStmt | TileStoreStmt | TileStoreWaitStmt): string;
  /** A line printed before an `unroll:` loop, if the target has one. */
  readonly unrollPragma?: string;
  /** Called before each statement that maps to user code. */
  beforeStatement?(span: Span): void;
  /** Lines a target prints before a statement (CUDA: the wgmma.fence before a loop of wgmmas). */
  linesBefore?(stmt: Stmt): readonly string[];
  /** A line printed before a `return;` of the kernel (WGSL's checked builds: the thread's failed check reported). */
  readonly beforeReturn?: string;
}

export function printCStatements(stmts: readonly Stmt[], target: CStatementTarget): void {
  for (const stmt of stmts) printCStatement(stmt, target);
}

function printCStatement(stmt: Stmt, target: CStatementTarget): void {
  const { out, printer } = target;
  const body = (stmts: readonly Stmt[]) => {
    out.indent();
    printCStatements(stmts, target);
    out.dedent();
  };
  if (stmt.kind !== "block") target.beforeStatement?.(stmt.span);
  for (const line of target.linesBefore?.(stmt) ?? []) out.line(line);
  switch (stmt.kind) {
    case "declare":
    case "assign":
    case "store": {
      const lines = target.lines?.(stmt);
      if (lines) for (const line of lines) out.line(line);
      else out.line(`${target.simple(stmt)};`);
      return;
    }
    case "if": {
      out.line(`if (${printer.print(stmt.condition)}) {`);
      let current: Stmt & { kind: "if" } = stmt;
      for (;;) {
        body(current.then);
        const elseBody = current.else;
        if (elseBody.length === 1 && elseBody[0]!.kind === "if") {
          current = elseBody[0] as Stmt & { kind: "if" };
          out.line(`} else if (${printer.print(current.condition)}) {`);
          continue;
        }
        if (elseBody.length > 0) {
          out.line("} else {");
          body(elseBody);
        }
        break;
      }
      out.line("}");
      return;
    }
    case "for": {
      const updateLines = stmt.update.length === 1 ? target.lines?.(stmt.update[0]!) : undefined;
      if (updateLines) {
        // `{ init; loop { if (!(cond)) { break; } body continuing { update } } }`: `continue` still runs the update.
        out.line("{");
        out.indent();
        printCStatements(stmt.init, target);
        out.line("loop {");
        out.indent();
        if (stmt.condition) out.line(`if (!(${printer.print(stmt.condition)})) { break; }`);
        printCStatements(stmt.body, target);
        out.line("continuing {");
        out.indent();
        for (const line of updateLines) out.line(line);
        out.dedent();
        out.line("}");
        out.dedent();
        out.line("}");
        out.dedent();
        out.line("}");
        return;
      }
      // One declaration or assignment fits the header; anything else goes before the loop, in a scope.
      const inlineInit = stmt.init.length <= 1 && stmt.init.every((s) => s.kind === "declare" || s.kind === "assign" && !target.lines?.(s));
      if (!inlineInit) {
        out.line("{");
        out.indent();
        printCStatements(stmt.init, target);
      }
      const init = inlineInit && stmt.init[0] ? target.simple(stmt.init[0]) : "";
      const condition = stmt.condition ? printer.print(stmt.condition) : "";
      const update = stmt.update[0] ? target.simple(stmt.update[0]) : "";
      if (stmt.unroll && target.unrollPragma) out.raw(target.unrollPragma);
      out.line(`for (${init}; ${condition}; ${update}) {`);
      body(stmt.body);
      out.line("}");
      if (!inlineInit) {
        out.dedent();
        out.line("}");
      }
      return;
    }
    case "while":
      out.line(`while (${printer.print(stmt.condition)}) {`);
      body(stmt.body);
      out.line("}");
      return;
    case "break":
    case "continue":
      out.line(`${stmt.kind};`);
      return;
    case "return":
      if (!stmt.value && target.beforeReturn) out.line(target.beforeReturn);
      out.line(stmt.value ? `return ${printer.print(stmt.value)};` : "return;");
      return;
    case "barrier":
      out.line(typeof target.barrier === "string" ? target.barrier : target.barrier(stmt));
      return;
    case "fence":
      if (target.fence === undefined) throw new Error("internal: threadFence() reached a target without a device-scope fence; the validator rejects it there");
      out.line(target.fence);
      return;
    case "block":
      out.line("{");
      body(stmt.body);
      out.line("}");
      return;
    case "vectorLoad":
    case "vectorStore":
    case "asyncCopy":
    case "asyncCommit":
    case "asyncWait":
      if (!target.memoryOperation) throw new Error(`internal: ${stmt.kind} reached a target that legalize should have split it for`);
      for (const line of target.memoryOperation(stmt)) out.line(line);
      return;
    case "atomic":
    case "collective":
      target.operation(stmt);
      return;
    case "mma":
    case "wgmma":
    case "wgmmaSync":
      if (!target.matrix) throw new Error(`internal: ${stmt.kind} reached a target without matrix operations; the validator rejects it (TSK3048)`);
      for (const line of target.matrix(stmt)) out.line(line);
      return;
    case "setMaxRegisters":
    case "tileCopy":
    case "tileStore":
    case "tileStoreWait":
    case "barrierOp":
      if (!target.barrierOp) throw new Error("internal: an mbarrier operation reached a target without them; the validator rejects it (TSK3085)");
      out.line(target.barrierOp(stmt));
      return;
    case "matrixLoad":
      if (stmt.ldmatrix?.laneRow && target.matrix) {
        for (const line of target.matrix(stmt)) out.line(line);
        return;
      }
      throw new Error("internal: matrixLoad reached the printer; legalize splits it into element accesses");
    case "matrixStore":
      throw new Error(`internal: ${stmt.kind} reached the printer; legalize splits it into element accesses`);
    default:
      assertNever(stmt, "statement");
  }
}
