/**
 * The validator: the last word between lowering and emission. It runs on specialized kernels and checks
 * what only holds once constants have values (shared-array sizes, the block shape, constant indices into
 * shared arrays, the alignment of vector accesses, constant fragment indices), barrier uniformity (uniformity.ts), and
 * each target's resource limits and capabilities (matrix operations). Backends print only
 * kernels that passed here, so they never report user errors.
 */

import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { arrayStride, asyncCopyLanes, isFragmentOperand, scalars, vectorLanes, vectorWidth, type ArrayRef, type Expr, type Kernel, type SharedOperand, type Span, type Stmt, type WarpgroupShape, type WgmmaStmt } from "../ir/ir.ts";
import { exprsOf, firstClusterOperation, firstMatrixOperation, matrixOperationName, usesMatrixOperations, usesSubgroups, usesWarpgroupOperations, firstRoleOperation, usesWarpgroupRoles, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { fragmentLayout, warpgroupColumns, warpgroupDepth, warpgroupLanes, warpLanes } from "../ir/matrix.ts";
import { layoutOf } from "../ir/types.ts";
import { targets, type TargetLimits, type TargetName } from "../backends/targets.ts";
import { checkUniformity } from "./uniformity.ts";
import { checkRegisterBudget } from "./register-budget.ts";
import { firstRefusedType } from "./target-types.ts";
import { layOutShared, type SharedLayout } from "./shared-layout.ts";
import { codeDepth } from "./code-depth.ts";
import { unrollLoops } from "../passes/unroll.ts";
import { laneIndices } from "../passes/legalize.ts";

/** What validation learns about a specialized kernel, recorded in the manifest. */
export interface KernelFacts {
  /** What the shared arrays take as CUDA allocates them, alignment padding included (shared-layout.ts). */
  readonly sharedBytes: number;
  /** Where the shared arrays lie: the CUDA backend prints it. */
  readonly sharedLayout: SharedLayout;
  /** Shared and private arrays with their constant sizes, in declaration order. */
  readonly sharedSizes: ReadonlyMap<ArrayRef, readonly number[]>;
  readonly block?: readonly [number, number, number];
}

export function validateKernel(kernel: Kernel, diagnostics: Diagnostic[], checks: { barrierUniformity?: boolean } = {}): KernelFacts {
  const sharedSizes = new Map<ArrayRef, number[]>();
  for (const array of [...kernel.shared, ...kernel.locals]) {
    const sizes: number[] = [];
    const kind = array.space === "shared" ? "shared" : "private";
    for (const dim of array.dims) {
      if (dim.kind !== "literal") {
        diagnostics.push(
          makeDiagnostic("TSK3003", dim.span, [kind], {
            notes: [`use literals, Const<…> parameters and consts computed from them alone; run-time values cannot size ${kind === "shared" ? "shared memory" : "a private array"}`],
          }),
        );
        sizes.push(0);
      } else if (!Number.isInteger(dim.value) || dim.value <= 0) {
        diagnostics.push(makeDiagnostic("TSK3005", dim.span, [dim.value, kind]));
        sizes.push(0);
      } else {
        sizes.push(dim.value);
      }
    }
    sharedSizes.set(array, sizes);
  }
  const sharedLayout = layOutShared(kernel.shared, sharedSizes, kernel.body);

  let block: [number, number, number] | undefined;
  if (kernel.block) {
    const dims = kernel.block.map((dim) => (typeof dim === "number" ? dim : Number.NaN));
    if (dims.every((dim) => Number.isInteger(dim) && dim > 0)) block = dims as [number, number, number];
    else diagnostics.push(makeDiagnostic("TSK3009", kernel.blockSpan ?? kernel.span, [kernel.block.map((d) => (typeof d === "number" ? d : d.text)).join(", ")]));
  }

  checkConstantIndices(kernel.body, sharedSizes, diagnostics);
  // Unrolling makes loop indices constant: `for (i = 0; i <= 16; i++) s[i]` only shows its s[16] then.
  // Unrolling folds each copy as it makes it, and the rest of the body was folded when it was specialized, so
  // no second fold of the whole body is needed (it was about a tenth of an editor compile).
  const unrolledBody = unrollLoops(kernel.body);
  const unrolled: Diagnostic[] = [];
  checkConstantIndices(unrolledBody, sharedSizes, unrolled);
  const seen = new Set(diagnostics.map((d) => d.span?.start));
  for (const d of unrolled) {
    if (seen.has(d.span?.start)) continue;
    seen.add(d.span?.start);
    diagnostics.push(d);
  }
  checkConstantOperands(kernel.body, diagnostics);
  checkAsyncWaitCounts(kernel.body, diagnostics);
  // After unrolling, so that `load4(tile, 4 * i + 1)` in an unrolled loop shows its constant starts.
  checkVectorAlignment(unrolledBody, sharedSizes, diagnostics);
  checkBroadcastLanes(unrolledBody, diagnostics);
  checkFragmentIndices(unrolledBody, sharedSizes, diagnostics);
  checkBarrierIndices(unrolledBody, sharedSizes, diagnostics);
  if (!block) {
    let registers: Stmt | undefined;
    walkStmts(kernel.body, (stmt) => stmt.kind === "setMaxRegisters" && (registers ??= stmt));
    if (registers) diagnostics.push(makeDiagnostic("TSK3091", registers.span, [kernel.name], { notes: ["give the kernel a fixed block in its options: `kernel({ block: [384] }, …)`"] }));
  } else {
    checkRegisterBudget(kernel.name, kernel.body, block[0] * block[1] * block[2], diagnostics);
  }
  if (!kernel.cluster) {
    const clusterOperation = firstClusterOperation(kernel.body);
    if (clusterOperation) {
      diagnostics.push(makeDiagnostic("TSK3168", clusterOperation.span, [kernel.name, clusterOperation.what], { notes: ["give the kernel clusters in its options: `kernel({ block: [384], cluster: [2] }, …)`; the grid must then be a multiple of the cluster"] }));
    }
  }
  if (checks.barrierUniformity ?? true) checkUniformity(kernel, diagnostics);
  return { sharedBytes: sharedLayout.allocatedBytes, sharedLayout, sharedSizes, block };
}

function checkConstantIndices(body: readonly import("../ir/ir.ts").Stmt[], sizes: ReadonlyMap<ArrayRef, readonly number[]>, diagnostics: Diagnostic[]): void {
  /** Reports constant indices out of bounds (of a shared array, or negative); true when it reported one. */
  const check = (array: ArrayRef, indices: readonly Expr[]): boolean => {
    const dims = sizes.get(array);
    let reported = false;
    if (!dims) {
      // A buffer's length is known only at launch, but a negative constant index is outside any buffer
      // (and WGSL rejects the shader for it: found by the robustness fuzzer, `atomicLoad(flags, -1)`).
      for (const index of indices) {
        if (index.kind === "literal" && index.value < 0) {
          diagnostics.push(makeDiagnostic("TSK3075", index.span, [index.value, array.name]));
          reported = true;
        }
      }
      return reported;
    }
    indices.forEach((index, dimension) => {
      const size = dims[dimension]!;
      if (index.kind === "literal" && size > 0 && (index.value < 0 || index.value >= size)) {
        diagnostics.push(makeDiagnostic("TSK3008", index.span, [index.value, dimension + 1, array.name, size]));
        reported = true;
      }
    });
    return reported;
  };
  walkStmts(body, (stmt) => {
    if (stmt.kind === "store" || stmt.kind === "atomic") check(stmt.array, stmt.indices);
    // A vector access touches its last index and the three after it.
    if (stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") {
      if (!check(stmt.array, stmt.indices)) check(stmt.array, laneIndices(stmt.indices, vectorLanes(stmt) - 1));
    }
    if (stmt.kind === "asyncCopy") {
      if (!check(stmt.target, stmt.targetIndices)) check(stmt.target, laneIndices(stmt.targetIndices, vectorWidth - 1));
    }
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "load" && check(e.array, e.indices));
  });
}

/**
 * Vector accesses move 16 aligned bytes: a constant start must be a multiple of 4, and the rows of a 2-D
 * array must be a multiple of 4 long, or row starts after the first would be misaligned. Run-time starts
 * are the user's to keep aligned (the CPU backend's checked mode verifies them).
 */
function checkVectorAlignment(body: readonly Stmt[], sizes: ReadonlyMap<ArrayRef, readonly number[]>, diagnostics: Diagnostic[]): void {
  const reported = new Set<string>();
  const report = (diagnostic: Diagnostic) => {
    // An unrolled loop repeats its statements: one report per place is enough.
    const key = `${diagnostic.code}@${diagnostic.span?.start}`;
    if (reported.has(key)) return;
    reported.add(key);
    diagnostics.push(diagnostic);
  };
  const check = (what: string, array: ArrayRef, indices: readonly Expr[], span: Span, lanes = vectorWidth) => {
    const last = indices[indices.length - 1]!;
    if (last.kind === "literal" && last.value % lanes !== 0) report(makeDiagnostic("TSK3013", last.span, [what, last.value, array.name, lanes]));
    const dims = sizes.get(array);
    if (dims && dims.length === 2 && dims[1]! % lanes !== 0) report(makeDiagnostic("TSK3014", span, [what, array.name, dims[1]!, lanes]));
  };
  walkStmts(body, (stmt) => {
    if (stmt.kind === "vectorLoad") check(`load${vectorLanes(stmt)}`, stmt.array, stmt.indices, stmt.span, vectorLanes(stmt));
    if (stmt.kind === "vectorStore") check(`store${vectorLanes(stmt)}`, stmt.array, stmt.indices, stmt.span, vectorLanes(stmt));
    if (stmt.kind === "asyncCopy") {
      const lanes = asyncCopyLanes(stmt);
      check(`copyAsync${lanes}`, stmt.target, stmt.targetIndices, stmt.span, lanes);
      check(`copyAsync${lanes}`, stmt.source, stmt.sourceIndices, stmt.span, lanes);
    }
  });
}

/** `waitAsync(STAGES - 2)` whose count did not fold to 0…7 in this specialization (passes/specialize.ts). */
function checkAsyncWaitCounts(body: readonly Stmt[], diagnostics: Diagnostic[]): void {
  walkStmts(body, (stmt) => {
    if (stmt.kind !== "asyncWait" || !stmt.pendingExpr) return;
    const found = stmt.pendingExpr.kind === "literal" ? `${stmt.pendingExpr.value} in this specialization` : "a value that is not known at compile time";
    diagnostics.push(makeDiagnostic("TSK2008", stmt.pendingExpr.span, ["waitAsync()", "a whole number from 0 to 7 known at compile time", found]));
  });
}

/**
 * `subgroupBroadcast(x, lane)`: WGSL wants the lane as a constant expression from 0 to 127 (the most lanes a
 * subgroup has); once specialized, unrolled and folded it must be a literal in that range on every target.
 */
function checkBroadcastLanes(unrolledBody: readonly Stmt[], diagnostics: Diagnostic[]): void {
  walkStmts(unrolledBody, (stmt) => {
    if (stmt.kind !== "collective" || stmt.op !== "subgroupBroadcast") return;
    const lane = stmt.args[1]!;
    if (lane.kind === "literal" && lane.value >= 0 && lane.value <= 127) return;
    const found = lane.kind === "literal" ? String(lane.value) : "a value computed at run time";
    if (diagnostics.some((d) => d.code === "TSK3016" && d.span?.start === lane.span.start)) return;
    diagnostics.push(makeDiagnostic("TSK3016", lane.span, [found], { notes: lane.kind === "literal" ? [] : ["subgroupShuffle(x, lane) takes a lane computed at run time"] }));
  });
}

/** A fragment index that is constant once unrolled must name one of the array's fragments. */
function checkFragmentIndices(unrolledBody: readonly Stmt[], sizes: ReadonlyMap<ArrayRef, readonly number[]>, diagnostics: Diagnostic[]): void {
  const seen = new Set<number>();
  walkStmts(unrolledBody, (stmt) => {
    const refs =
      stmt.kind === "mma" ? [stmt.accumulator, stmt.a, stmt.b] : stmt.kind === "wgmma" ? [stmt.accumulator, ...(isFragmentOperand(stmt.a) ? [stmt.a] : [])] : stmt.kind === "matrixLoad" || stmt.kind === "matrixStore" ? [stmt.fragment] : [];
    if (stmt.kind === "wgmma") checkWgmmaOperand(stmt, sizes, seen, diagnostics);
    for (const { array, index } of refs) {
      const size = sizes.get(array)?.[0] ?? 0;
      const perLane = fragmentLayout(array.fragment!).perLane;
      const count = size / perLane;
      if (index.kind !== "literal" || size === 0 || (index.value >= 0 && index.value < count) || seen.has(index.span.start)) continue;
      seen.add(index.span.start);
      diagnostics.push(makeDiagnostic("TSK3046", index.span, [index.value, array.name, count]));
    }
  });
}

/** A barrier index that is constant once unrolled must name one of the barriers (TSK3089). */
function checkBarrierIndices(unrolledBody: readonly Stmt[], sizes: ReadonlyMap<ArrayRef, readonly number[]>, diagnostics: Diagnostic[]): void {
  const seen = new Set<number>();
  walkStmts(unrolledBody, (stmt) => {
    // The swizzle's 8-row groups start on 1024-byte boundaries of the array (which CUDA aligns so).
    if (stmt.kind === "tileCopy" && stmt.offset.kind === "literal" && !seen.has(stmt.offset.span.start)) {
      const bytes = arrayStride(stmt.target.elementType);
      if (bytes === 4 && stmt.offset.value % 256 !== 0) {
        seen.add(stmt.offset.span.start);
        diagnostics.push(makeDiagnostic("TSK3092", stmt.offset.span, [stmt.offset.value, stmt.target.name]));
      } else if (stmt.offset.value % (1024 / bytes) !== 0) {
        seen.add(stmt.offset.span.start);
        diagnostics.push(makeDiagnostic("TSK3163", stmt.offset.span, ["copyTile() writes", stmt.target.name, stmt.offset.value, 1024 / bytes]));
      }
    }
    // storeFragment's box layout swizzles by the place of each row in its group of 8 (ir/matrix.ts, boxIndex).
    if (stmt.kind === "matrixStore" && stmt.boxRows) {
      const bytes = arrayStride(stmt.target.elementType);
      if (stmt.offset.kind === "literal" && stmt.offset.value % (1024 / bytes) !== 0 && !seen.has(stmt.offset.span.start)) {
        seen.add(stmt.offset.span.start);
        diagnostics.push(makeDiagnostic("TSK3163", stmt.offset.span, ["storeFragment() writes", stmt.target.name, stmt.offset.value, 1024 / bytes]));
      }
      const rows = stmt.boxRows;
      if (rows.kind === "literal" && (rows.value % 8 !== 0 || rows.value < 8 || rows.value > 256) && !seen.has(rows.span.start)) {
        seen.add(rows.span.start);
        diagnostics.push(makeDiagnostic("TSK3164", rows.span, [rows.value]));
      }
    }
    // ldmatrix reads rows of 16 bytes that must start on 16 bytes (the shared arrays are 16-byte aligned): a
    // constant offset, or the constant stride between the rows (the one that is not 1), a multiple of 8.
    if (stmt.kind === "matrixLoad" && stmt.ldmatrix) {
      const rowStride = stmt.colStride ?? stmt.stride;
      for (const [expr, what] of [[stmt.offset, "offset"], [rowStride, "rows"]] as const) {
        if (expr.kind === "literal" && expr.value % 8 !== 0 && !seen.has(expr.span.start)) {
          seen.add(expr.span.start);
          diagnostics.push(makeDiagnostic("TSK3165", expr.span, [stmt.source.name, what === "offset" ? "element offset" : "rows a stride of", expr.value]));
        }
      }
    }
    if (stmt.kind === "tileStore" && stmt.offset.kind === "literal" && !seen.has(stmt.offset.span.start)) {
      const bytes = arrayStride(stmt.source.elementType);
      if (stmt.offset.value % (1024 / bytes) !== 0) {
        seen.add(stmt.offset.span.start);
        diagnostics.push(makeDiagnostic("TSK3163", stmt.offset.span, ["storeTile() reads", stmt.source.name, stmt.offset.value, 1024 / bytes]));
      }
    }
    if (stmt.kind !== "barrierOp" && stmt.kind !== "tileCopy") return;
    const count = sizes.get(stmt.barriers)?.[0] ?? 0;
    const index = stmt.index;
    if (index.kind !== "literal" || count === 0 || (index.value >= 0 && index.value < count) || seen.has(index.span.start)) return;
    seen.add(index.span.start);
    diagnostics.push(makeDiagnostic("TSK3089", index.span, [index.value, stmt.barriers.name, count]));
  });
}

/**
 * wgmma's shared operand, where its offset is constant once unrolled: the tensor cores read B through a matrix
 * descriptor of the 128-byte swizzle, whose 8-row groups start on 1024-byte boundaries of the array (which the
 * targets align so), and whose k-slice of 8 elements (32 bytes) lies within one 128-byte row. The CPU backend
 * checks offsets computed at run time; CUDA cannot (the descriptor takes any address).
 */
function checkWgmmaOperand(stmt: WgmmaStmt, sizes: ReadonlyMap<ArrayRef, readonly number[]>, seen: Set<number>, diagnostics: Diagnostic[]): void {
  if (!isFragmentOperand(stmt.a)) return checkWgmma16Operands(stmt, stmt.a, sizes, seen, diagnostics);
  // A 16-bit A fragment: only B is in shared memory, read as the shared-A form reads it.
  if (warpgroupDepth(stmt.accumulator.array.fragment!.shape as WarpgroupShape) === 16) return checkWgmma16Operands(stmt, undefined, sizes, seen, diagnostics);
  const offset = stmt.offset;
  if (offset.kind !== "literal" || seen.has(offset.span.start)) return;
  if (offset.value % 8 !== 0 || offset.value % 256 >= 32 || offset.value < 0) {
    seen.add(offset.span.start);
    diagnostics.push(makeDiagnostic("TSK3061", offset.span, [offset.value, stmt.b.name], {
      notes: ["B[k][col] is read from element swizzle128(offset + 32·col + k): start at the first row of a 1024-byte group, stepping k by 8 within it (docs/language.md §25)"],
    }));
    return;
  }
  const size = sizes.get(stmt.b)?.[0] ?? 0;
  const last = offset.value + 32 * (warpgroupColumns(stmt.accumulator.array.fragment!.shape as WarpgroupShape) - 1) + 7;
  if (size > 0 && last >= size) {
    seen.add(offset.span.start);
    diagnostics.push(makeDiagnostic("TSK3062", offset.span, [last, stmt.b.name, size]));
  }
}

/**
 * The shared operands of a 16-bit or 8-bit wgmma, where their offsets are constant once unrolled: a K-major
 * operand starts in the first 128-byte row of an 8-row group, at a multiple of 32 bytes (one k step: 16
 * elements of 2 bytes, 32 of 1), an N-major one on a group (a multiple of 512 elements); N-major boxes are whole
 * groups of rows, at least 16; and neither operand may reach past its array (ir/matrix.ts, wgmmaOperandIndex).
 * `a` is undefined where A is a register fragment.
 */
function checkWgmma16Operands(stmt: WgmmaStmt, a: SharedOperand | undefined, sizes: ReadonlyMap<ArrayRef, readonly number[]>, seen: Set<number>, diagnostics: Diagnostic[]): void {
  const shape = stmt.accumulator.array.fragment!.shape as WarpgroupShape;
  const n = warpgroupColumns(shape);
  // Elements of a 128-byte row (64 of 16 bits, 128 of 8) and of one k step (16 or 32: 32 bytes).
  const perRow = warpgroupDepth(shape) === 32 ? 128 : 64;
  const k = warpgroupDepth(shape);
  const boxRows = stmt.bBoxRows;
  if (boxRows?.kind === "literal" && (boxRows.value % 8 !== 0 || boxRows.value < 16 || boxRows.value > 256) && !seen.has(boxRows.span.start)) {
    seen.add(boxRows.span.start);
    diagnostics.push(makeDiagnostic("TSK3162", boxRows.span, [boxRows.value]));
  }
  const operands: [string, Expr, ArrayRef, "k" | "n", number][] = [
    ...(a ? [["A", a.offset, a.array, "k", perRow * 63 + k - 1] as [string, Expr, ArrayRef, "k" | "n", number]] : []),
    ["B", stmt.offset, stmt.b, stmt.bMajor ?? "k", stmt.bMajor === "n" ? (boxRows?.kind === "literal" ? ((n >> 6) - 1) * 64 * boxRows.value + 64 * 15 + 63 : -1) : perRow * (n - 1) + k - 1],
  ];
  for (const [name, offset, array, major, reach] of operands) {
    if (offset.kind !== "literal" || seen.has(offset.span.start)) continue;
    const aligned = major === "k" ? offset.value % k === 0 && offset.value % (8 * perRow) < perRow : offset.value % 512 === 0;
    if (!aligned || offset.value < 0) {
      seen.add(offset.span.start);
      diagnostics.push(makeDiagnostic("TSK3160", offset.span, [name, offset.value, array.name, major === "k" ? `a multiple of ${k} in the first 128-byte row of a group of 8 rows (offset % ${8 * perRow} < ${perRow})` : "a multiple of 512 (a group of 8 rows of 128 bytes)"]));
      continue;
    }
    const size = sizes.get(array)?.[0] ?? 0;
    if (reach >= 0 && size > 0 && offset.value + reach >= size) {
      seen.add(offset.span.start);
      diagnostics.push(makeDiagnostic("TSK3161", offset.span, [name, offset.value + reach, array.name, size]));
    }
  }
}

/**
 * Operands that are constant after folding and make an operation target-defined: a shift by an amount
 * outside 0..31 (CUDA gives 0, WGSL and JS take it modulo 32) and a division by zero (WGSL rejects the
 * shader). Rejected everywhere so that all targets agree.
 */
export function checkConstantOperands(body: readonly import("../ir/ir.ts").Stmt[], diagnostics: Diagnostic[]): void {
  const check = (op: string | undefined, right: Expr, span: import("../ir/ir.ts").Span) => {
    if (right.kind !== "literal") return;
    if ((op === "shl" || op === "shr") && (right.value < 0 || right.value > 31)) diagnostics.push(makeDiagnostic("TSK3010", span, [right.value]));
    if ((op === "div" || op === "rem") && right.value === 0) diagnostics.push(makeDiagnostic("TSK3011", span));
  };
  walkStmts(body, (stmt) => {
    if ((stmt.kind === "assign" || stmt.kind === "store") && stmt.op) check(stmt.op, stmt.value, stmt.span);
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "binary" && check(e.op, e.right, e.span));
  });
}

/**
 * How many parameters a target can take: WebGPU's bindings (one per buffer, one for the scalars' uniform) and
 * CUDA's parameter space. Each error points at the first parameter that does not fit.
 */
function checkParamLimits(kernel: Kernel, limits: TargetLimits, displayName: string, diagnostics: Diagnostic[]): void {
  const params = kernel.params.filter((param) => param.kind !== "const");
  const spanOf = (param: (typeof params)[number]) => (param.kind === "buffer" ? param.array.span : param.kind === "scalar" ? param.variable.span : kernel.span);
  if (limits.maxBindings !== undefined) {
    const buffers = params.filter((param) => param.kind === "buffer");
    const uniform = params.some((param) => param.kind === "scalar") ? 1 : 0;
    if (buffers.length + uniform > limits.maxBindings) {
      diagnostics.push(
        makeDiagnostic("TSK3033", spanOf(buffers[limits.maxBindings - uniform]!), [kernel.name, buffers.length + uniform, displayName, limits.maxBindings], {
          notes: ["each buffer parameter takes one binding and the scalar parameters share one more; pass fewer, larger buffers"],
        }),
      );
    }
  }
  if (limits.maxParamBytes !== undefined) {
    let bytes = 0;
    let first: (typeof params)[number] | undefined;
    for (const param of params) {
      // Pointers are 8 bytes, bool 1, the other scalars 4, each aligned to its size as C lays them out; a
      // vector or struct its layout's size at its alignment (the .cu's structs have WGSL's layout).
      const value = param.kind === "scalar" ? param.variable.type : undefined;
      const { size, align } = value !== undefined && typeof value === "object" ? layoutOf(value) : { size: param.kind === "buffer" ? 8 : value === "bool" ? 1 : 4, align: param.kind === "buffer" ? 8 : value === "bool" ? 1 : 4 };
      bytes = Math.ceil(bytes / align) * align + size;
      if (bytes > limits.maxParamBytes && !first) first = param;
    }
    if (first) diagnostics.push(makeDiagnostic("TSK3034", spanOf(first), [kernel.name, bytes, displayName, limits.maxParamBytes], { notes: ["a buffer parameter takes 8 bytes, a scalar 4 (bool 1), a vector or struct its size; pass fewer, larger buffers"] }));
  }
}

/** The way out of a capability a target lacks (TSK3048, TSK3050): build the kernel for the other targets only. */
function declareTargetsNote(displayName: string): string {
  return `declare the targets the kernel is for in its options, \`kernel({ …, targets: ["cuda", "js"] }, …)\`: a build for ${displayName} then skips it`;
}

/** Resource limits of one target; errors past the hard limit, warnings past the portable one. */
export function checkTargetLimits(kernel: Kernel, facts: KernelFacts, targetName: TargetName, diagnostics: Diagnostic[]): void {
  const { limits, displayName } = targets[targetName];
  const sharedSpan = kernel.shared[0]?.span ?? kernel.span;
  if (facts.sharedBytes > limits.maxSharedBytes) {
    diagnostics.push(
      makeDiagnostic("TSK3002", sharedSpan, [kernel.name, facts.sharedBytes, displayName, limits.maxSharedBytes], {
        related: kernel.shared.slice(1).map((array) => ({ span: array.span, message: `'${array.name}' also counts` })),
      }),
    );
  } else if (limits.portableSharedBytes !== undefined && facts.sharedBytes > limits.portableSharedBytes) {
    diagnostics.push(makeDiagnostic("TSK3006", sharedSpan, [kernel.name, facts.sharedBytes, limits.portableSharedBytes]));
  }
  const privateBytes = kernel.locals.map((array) => (facts.sharedSizes.get(array) ?? []).reduce((a, b) => a * b, 1) * arrayStride(array.elementType));
  const total = privateBytes.reduce((a, b) => a + b, 0);
  if (limits.maxPrivateBytes !== undefined && total > limits.maxPrivateBytes) {
    diagnostics.push(makeDiagnostic("TSK3031", kernel.locals[0]!.span, [kernel.name, total, displayName, limits.maxPrivateBytes]));
  }
  kernel.locals.forEach((array, index) => {
    if (limits.maxPrivateArrayBytes !== undefined && privateBytes[index]! > limits.maxPrivateArrayBytes) {
      diagnostics.push(makeDiagnostic("TSK3032", array.span, [array.name, privateBytes[index]!, displayName, limits.maxPrivateArrayBytes]));
    }
  });
  checkParamLimits(kernel, limits, displayName, diagnostics);
  const refused = firstRefusedType(kernel, targetName);
  if (refused) diagnostics.push(makeDiagnostic("TSK3120", refused.span, [displayName, refused.type, kernel.name, refused.why], { notes: [declareTargetsNote(displayName)] }));
  const matrix = limits.matrixOperations ? undefined : firstMatrixOperation(kernel.body);
  if (matrix) {
    const what = matrixOperationName(matrix);
    diagnostics.push(makeDiagnostic("TSK3048", matrix.span, [displayName, kernel.name, what], {
      notes: [
        `${declareTargetsNote(displayName)}; give ${displayName} a kernel without matrix operations`,
      ],
    }));
  }
  if (!limits.warpgroupRoles && kernel.cluster) {
    diagnostics.push(makeDiagnostic("TSK3167", kernel.clusterSpan ?? kernel.span, [displayName, kernel.name, kernel.cluster.join(" × ")], { notes: [declareTargetsNote(displayName)] }));
  } else if (!limits.warpgroupRoles) {
    const role = firstRoleOperation(kernel.body);
    if (role) {
      diagnostics.push(makeDiagnostic("TSK3085", role.span, [displayName, kernel.name, role.what], {
        notes: [`${declareTargetsNote(displayName)}; give ${displayName} a kernel in which every thread does the same work`],
      }));
    }
  }
  if (!limits.deviceScopeFence) {
    walkStmts(kernel.body, (stmt) => {
      if (stmt.kind === "atomic" && stmt.order && stmt.op !== "wait") {
        const name = `atomic${stmt.op[0]!.toUpperCase()}${stmt.op.slice(1)}()`;
        diagnostics.push(makeDiagnostic("TSK3051", stmt.span, [displayName, kernel.name, name, stmt.order], {
          notes: [
            "WGSL's atomics are relaxed and storageBarrier() orders memory within one workgroup only, so another workgroup may see a flag set before the data it guards",
            `${declareTargetsNote(displayName)}; or do the work in several launches (examples/scan.ts)`,
          ],
        }));
        return;
      }
      if (stmt.kind !== "fence") return;
      diagnostics.push(makeDiagnostic("TSK3050", stmt.span, [displayName], {
        notes: [
          "WGSL's atomics are relaxed and storageBarrier() orders memory within one workgroup only, so another workgroup may see a flag set before the data it guards; nor does WebGPU promise that a workgroup waiting on another lets that one run",
          `${declareTargetsNote(displayName)}; or do the work in several launches (examples/scan.ts)`,
        ],
      }));
    });
  }
  if (limits.maxCodeDepth !== undefined) {
    const deepest = codeDepth(kernel.body, kernel.span);
    if (deepest.depth > limits.maxCodeDepth) {
      diagnostics.push(
        makeDiagnostic("TSK3030", deepest.span, [kernel.name, deepest.depth, displayName, limits.maxCodeDepth], {
          notes: [
            `${displayName}'s shader compiler counts each operator, call and statement block as a level (the body of an if or a loop as two)`,
            "split the expression into statements with local variables, or move inner parts into helper functions (each starts again at the top)",
          ],
        }),
      );
    }
  }
  if (facts.block) {
    const threads = facts.block[0] * facts.block[1] * facts.block[2];
    const wide = facts.block.findIndex((dim, axis) => dim > limits.maxBlockDims[axis]!);
    if (wide >= 0) {
      diagnostics.push(makeDiagnostic("TSK3012", kernel.blockSpan ?? kernel.span, [kernel.name, "xyz"[wide]!, facts.block[wide]!, displayName, limits.maxBlockDims[wide]!]));
    } else if (threads > limits.maxThreadsPerBlock) {
      diagnostics.push(makeDiagnostic("TSK3004", kernel.blockSpan ?? kernel.span, [kernel.name, threads, displayName, limits.maxThreadsPerBlock]));
    } else if (limits.portableThreadsPerBlock !== undefined && threads > limits.portableThreadsPerBlock) {
      diagnostics.push(makeDiagnostic("TSK3007", kernel.blockSpan ?? kernel.span, [kernel.name, threads, limits.portableThreadsPerBlock]));
    }
    if (threads % warpLanes !== 0 && usesMatrixOperations(kernel.body)) {
      diagnostics.push(makeDiagnostic("TSK3047", kernel.blockSpan ?? kernel.span, [kernel.name, threads], {
        notes: ["matrix operations run on warps of 32 threads, formed along the linear thread index, on every target"],
      }));
    } else if (threads % warpgroupLanes !== 0 && usesWarpgroupOperations(kernel.body)) {
      diagnostics.push(makeDiagnostic("TSK3060", kernel.blockSpan ?? kernel.span, [kernel.name, threads], {
        notes: ["wgmma runs on warpgroups of 128 threads (four consecutive warps along the linear thread index), on every target"],
      }));
    }
    if (threads % warpgroupLanes !== 0 && usesWarpgroupRoles(kernel.body)) {
      // Roles proper, or clusters alone, whose blocks the CPU runs as warpgroup coroutines side by side.
      const cluster = firstRoleOperation(kernel.body) ? undefined : firstClusterOperation(kernel.body);
      const what = cluster ? `cluster operations (${cluster.what}), which the CPU runs as warpgroup roles` : "warpgroup roles (warpgroupIdx or mbarriers)";
      diagnostics.push(makeDiagnostic("TSK3088", kernel.blockSpan ?? kernel.span, [kernel.name, threads, what], {
        notes: ["warpgroups are four consecutive warps (128 threads) along the linear thread index; a role is taken by whole warpgroups"],
      }));
    }
    if (limits.subgroupMultiple !== undefined && threads % limits.subgroupMultiple !== 0 && usesSubgroups(kernel.body)) {
      diagnostics.push(makeDiagnostic("TSK3018", kernel.blockSpan ?? kernel.span, [kernel.name, limits.subgroupSizes!, threads], {
        notes: ["a partial subgroup would leave lanes that collective operations wait for or read from; make the block a multiple of 32 threads to run everywhere"],
      }));
    }
  }
}
