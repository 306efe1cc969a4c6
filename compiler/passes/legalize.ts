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
 * - WGSL rejects a `for` without a condition whose body has no `break` ("for-loop does not exit"), and warns
 *   that code after one that only `return`s is unreachable: a missing condition is written `true`.
 * - Asynchronous copies become plain copies, and their commit and wait nothing, where the target has none
 *   (a vector load into temporaries and a vector store, so the rule above still applies to the source).
 * - Where the target declares the elements of arrays that atomics touch atomic (WGSL's `atomic<i32>`), every
 *   other access to those arrays becomes an atomic load or store (`a[i] += v` a load, then a store).
 * - Where the target runs collectives over per-thread slots (JS), each argument of a collective that is not
 *   already a local of the kernel body is computed into one first.
 * - Fragment loads and stores become each lane's element accesses at the positions of the fragment layout
 *   (ir/matrix.ts), a load of a tf32, bf16 or f16 fragment rounding each element to its type (`roundFragmentValue`); `mma` stays.
 * - Where the target's C++ leaves signed overflow and large shift amounts undefined (CUDA), i32 arithmetic
 *   is computed on the u32 bits and shift amounts are masked (wrap-integers.ts), as the language defines them.
 * - Vectors: assignments to several lanes one lane at a time, float-to-integer vector conversions lane by
 *   lane, WGSL's functions on scalars written out where the target has none (legalize-vectors.ts).
 * - In a checked build, the checks (checks.ts) come in after everything above has shaped the accesses they
 *   check and before integers are wrapped, so that a shift amount is checked before it is masked.
 */

import {
  declaredVariables,
  arrayStride,
  asyncCopyLanes,
  scalars,
  valueTypeOf,
  vectorLanes,
  vectorWidth,
  type ElementScalar,
  type ArrayRef,
  type AsyncCopyStmt,
  type BinaryOp,
  type CollectiveStmt,
  type Expr,
  type LoadExpr,
  type MatrixLoadStmt,
  type MatrixStoreStmt,
  type ScalarType,
  type Span,
  type Stmt,
  type Variable,
} from "../ir/ir.ts";
import { loadType } from "../ir/vectors.ts";
import { fragmentLayout, fragmentSlot, ldmatrixPlan, linearThreadIndex, roundFragmentValue } from "../ir/matrix.ts";
import { foldExpr } from "./fold.ts";
import { zeroOf } from "./checks.ts";
import { atomicArrays, exprsOf, mapStmts, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { wrapIntegers } from "./wrap-integers.ts";
import { legalizeVectors, type VectorLegalizeOptions } from "./legalize-vectors.ts";

export interface LegalizeOptions extends VectorLegalizeOptions {
  readonly shiftAmountU32: boolean;
  readonly dropUnsignedAbs: boolean;
  /** Print `load4`/`store4` as element accesses. */
  readonly splitVectorAccesses: boolean;
  /** With `splitVectorAccesses`: keep them on buffers and shared arrays only accessed four elements at a time. */
  readonly vectorArrays?: boolean;
  /**
   * Elements per storage word of the types the target packs (WGSL: bf16 and the narrow integers). Vector
   * accesses of such types to global and shared arrays stay whole (they cover whole words).
   */
  readonly elementsPerWord?: Readonly<Partial<Record<ElementScalar, number>>>;
  /** Print `copyAsync4` as a plain copy and drop `commitAsync`/`waitAsync`. */
  readonly synchronousCopies: boolean;
  /** With `synchronousCopies`: keep `commitAsync`/`waitAsync` (the CPU's checked mode tracks the copies). */
  readonly keepAsyncFences?: boolean;
  /** Mark loads and stores of arrays that atomics touch as atomic accesses. */
  readonly atomicAccesses?: boolean;
  /** Give every argument of a collective a local of its own (declared right before it). */
  readonly collectiveArgsInLocals?: boolean;
  /** Give every `for` a condition (`true` where the user wrote none). */
  readonly loopCondition?: boolean;
  /** Write `loadFragment`/`storeFragment` as the lane's element accesses. */
  readonly splitMatrixAccesses?: boolean;
  /**
   * With `splitMatrixAccesses`: keep `loadMatrix` whole (the target prints ldmatrix), with the row each lane
   * names; a checked build splits it still, so that its element loads are checked.
   */
  readonly ldmatrix?: boolean;
  /** Compute i32 `+`, `-`, `*`, `<<` and negation on u32 bits, where C++ defines the wrap (wrap-integers.ts). */
  readonly wrapSignedArithmetic?: boolean;
  /** Mask shift amounts that are not literals with `& 31` (C++ shifts by 32 or more are undefined). */
  readonly maskShiftAmounts?: boolean;
}

export function legalize(stmts: readonly Stmt[], options: LegalizeOptions, checks?: (stmts: Stmt[]) => Stmt[]): Stmt[] {
  const copied = options.synchronousCopies ? mapStmts(stmts, { stmt: (stmt) => (stmt.kind === "asyncCopy" ? copyAsVectors(stmt) : stmt) }) : [...stmts];
  const keepVectors = options.splitVectorAccesses && options.vectorArrays ? vectorOnlyArrays(copied, options.elementsPerWord) : new Set<ArrayRef>();
  const split = (array: ArrayRef) => array.space === "private" || (options.splitVectorAccesses && !keepVectors.has(array));
  // A vector access of a type the target packs k to a word covers whole words (its lanes a multiple of k, its
  // start a multiple of its lanes): the backend reads or writes each word once (WGSL: wgsl-packed.ts).
  const wholeWords = (stmt: Stmt & { kind: "vectorLoad" | "vectorStore" }) => {
    const k = typeof stmt.array.elementType === "string" ? options.elementsPerWord?.[stmt.array.elementType] : undefined;
    return stmt.array.space !== "private" && k !== undefined && k > 1 && vectorLanes(stmt) % k === 0;
  };
  const expr = (node: Expr): Expr => {
    if (options.shiftAmountU32 && node.kind === "binary" && (node.op === "shl" || node.op === "shr") && node.right.type !== "u32") {
      return { ...node, right: asU32(node.right) };
    }
    if (options.dropUnsignedAbs && node.kind === "intrinsic" && node.name === "abs" && node.type === "u32") return node.args[0]!;
    return node;
  };
  const splitVectorAccess = (stmt: Stmt & { kind: "vectorLoad" | "vectorStore" }): Stmt[] =>
    stmt.kind === "vectorLoad"
      ? stmt.targets.map((variable, lane): Stmt => {
          const load = elementLoad(stmt.array, stmt.indices, lane, stmt.span, stmt.targets.length);
          // A checked load's lanes, each 0 where its check failed (checks.ts).
          const init: Expr = stmt.zeroUnless ? { kind: "select", type: load.type, condition: stmt.zeroUnless, whenTrue: load, whenFalse: zeroOf(load.type, stmt.span), span: stmt.span } : load;
          return { kind: "declare", variable, init, span: stmt.span };
        })
      : splitVectorStore(stmt);
  // The accesses split after the checks, as atomic element accesses where the array is atomic.
  const splitLate = (stmts: Stmt[]): Stmt[] => {
    const late = mapStmts(stmts, { stmt: (stmt) => ((stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") && split(stmt.array) && !wholeWords(stmt) ? splitVectorAccess(stmt) : stmt) });
    return options.atomicAccesses ? markAtomicAccesses(late) : late;
  };
  const legal = mapStmts(copied, {
    expr,
    stmt: (stmt) => {
      switch (stmt.kind) {
        case "assign":
        case "store":
          return options.shiftAmountU32 && (stmt.op === "shl" || stmt.op === "shr") && stmt.value.type !== "u32" ? { ...stmt, value: asU32(stmt.value) } : stmt;
        case "vectorLoad":
        case "vectorStore":
          // A checked build checks the whole access once (its range), then splits it (below).
          return checks || !split(stmt.array) || wholeWords(stmt) ? stmt : splitVectorAccess(stmt);
        case "asyncCommit":
        case "asyncWait":
          return options.synchronousCopies && !options.keepAsyncFences ? [] : stmt;
        case "for":
          return options.loopCondition && !stmt.condition ? { ...stmt, condition: { kind: "literal", type: "bool", value: 1, span: stmt.span } } : stmt;
        case "matrixLoad":
        case "matrixStore":
          if (stmt.kind === "matrixLoad" && stmt.ldmatrix && options.ldmatrix && !checks) return ldmatrixLoad(stmt);
          // On the CPU a loadMatrix loads element by element, after a load of the first element of the row ldmatrix
          // would have this lane name (its value unused), marked with the 16-byte alignment of a split vector
          // access: checked mode reports a row off 16 bytes at the call. (A checked CUDA build splits it without
          // one: nvcc warns of the unused local; its element loads are checked all the same.)
          if (stmt.kind === "matrixLoad" && stmt.ldmatrix && !options.ldmatrix && options.splitMatrixAccesses) return [ldmatrixRowProbe(stmt), splitMatrixAccess(stmt)];
          return options.splitMatrixAccesses ? splitMatrixAccess(stmt) : stmt;
        default:
          return stmt;
      }
    },
  });
  // After splitting, so that the element accesses made from vector ones are marked too.
  const atomic = options.atomicAccesses ? markAtomicAccesses(legal) : legal;
  const vectors = legalizeVectors(atomic, options);
  const argued = options.collectiveArgsInLocals ? argumentsInLocals(vectors) : vectors;
  const collected = checks ? splitLate(checks(argued)) : argued;
  // Last, so that the arithmetic the rewrites above add (vector lanes' `i + 1`) wraps too.
  const wrap = { wrapSignedArithmetic: options.wrapSignedArithmetic ?? false, maskShiftAmounts: options.maskShiftAmounts ?? false };
  return wrap.wrapSignedArithmetic || wrap.maskShiftAmounts ? wrapIntegers(collected, wrap) : collected;
}

/** Loads and stores of arrays that an atomic touches become atomic loads and stores. */
function markAtomicAccesses(stmts: readonly Stmt[]): Stmt[] {
  const arrays = atomicArrays(stmts);
  if (arrays.size === 0) return [...stmts];
  return mapStmts(stmts, {
    expr: (node) => (node.kind === "load" && arrays.has(node.array) ? { ...node, atomic: true } : node),
    stmt: (stmt) => {
      if (stmt.kind !== "store" || !arrays.has(stmt.array)) return stmt;
      if (!stmt.op) return { ...stmt, atomic: true };
      // `a[i] op= v` on an atomic array: an atomic load, the operation, an atomic store (not one atomic step).
      const read: Expr = { kind: "load", type: loadType(stmt.array.elementType), array: stmt.array, indices: stmt.indices, span: stmt.span, atomic: true };
      const value: Expr = { kind: "binary", op: stmt.op, type: loadType(stmt.array.elementType), left: read, right: stmt.value, span: stmt.span };
      return { ...stmt, op: undefined, value, atomic: true };
    },
  });
}

/** Each collective argument that is not a local declared in the body gets one, declared just before it. */
function argumentsInLocals(stmts: readonly Stmt[]): Stmt[] {
  const locals = new Set<Variable>();
  walkStmts(stmts, (stmt) => declaredVariables(stmt).forEach((variable) => locals.add(variable)));
  return mapStmts(stmts, {
    stmt: (stmt) => {
      if (stmt.kind !== "collective") return stmt;
      const before: Stmt[] = [];
      const args = stmt.args.map((arg, index): Expr => {
        if (arg.kind === "variable" && locals.has(arg.variable)) return arg;
        const temp: Variable = { kind: "variable", name: index === 0 ? "value" : "lane", type: arg.type, mutable: false, span: arg.span };
        before.push({ kind: "declare", variable: temp, init: arg, span: stmt.span });
        return { kind: "variable", type: arg.type, variable: temp, span: arg.span };
      });
      return before.length === 0 ? stmt : [...before, { ...stmt, args } satisfies CollectiveStmt];
    },
  });
}

/** A synchronous stand-in for `copyAsync4` (`8`, `16`): its 16 bytes' elements into temporaries, then into the shared array. */
function copyAsVectors(stmt: AsyncCopyStmt): Stmt {
  const targets = Array.from({ length: asyncCopyLanes(stmt) }, (_, lane): Variable => ({ kind: "variable", name: `copied${lane}`, type: loadType(stmt.source.elementType), mutable: false, span: stmt.span }));
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

/**
 * Global buffers and shared arrays that the body reads and writes only through vector accesses that are each
 * four storage elements (a `vec4` of them): four 32-bit elements, or as many narrower elements as four storage
 * words hold where a target packs them (`elementsPerWord`: WGSL's eight bf16 or sixteen u8).
 */
export function vectorOnlyArrays(stmts: readonly Stmt[], elementsPerWord: Readonly<Partial<Record<ElementScalar, number>>> = {}): Set<ArrayRef> {
  const vector = new Set<ArrayRef>();
  const scalar = new Set<ArrayRef>();
  walkStmts(stmts, (stmt) => {
    if (stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") {
      if (vectorLanes(stmt) === vectorWidth * (elementsPerWord[stmt.array.elementType as ElementScalar] ?? 1)) vector.add(stmt.array);
      else scalar.add(stmt.array);
    }
    if (stmt.kind === "store" || stmt.kind === "atomic") scalar.add(stmt.array);
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
      : { kind: "binary", op: "add", type: last.type, left: last, right: { kind: "literal", type: last.type as ScalarType, value: lane, span: last.span }, span: last.span };
  return [...indices.slice(0, -1), offset];
}

/** Element `lane` of a vector read; the first element carries the alignment the vector access needed. */
function elementLoad(array: LoadExpr["array"], indices: readonly Expr[], lane: number, span: Stmt["span"], lanes = vectorWidth): LoadExpr {
  return { kind: "load", type: loadType(array.elementType), array, indices: laneIndices(indices, lane), span, ...(lane === 0 ? { alignment: lanes } : {}) };
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
      ...(lane === 0 ? { alignment: stmt.values.length } : {}),
      ...(stmt.asynchronous ? { asynchronous: true } : {}),
    }),
  );
  return out;
}

function asU32(value: Expr): Expr {
  if (value.kind === "literal" && value.value >= 0) return { ...value, type: "u32" };
  return { kind: "convert", type: "u32", value, span: value.span };
}

/**
 * A fragment load or store as the lane's element accesses, in a block of its own: the lane (the thread's
 * linear index in the block modulo 32) gives the group g and place q, which give the position of element 0;
 * the other elements lie at constant row and column steps from it (ir/matrix.ts).
 */
function splitMatrixAccess(stmt: MatrixLoadStmt | MatrixStoreStmt): Stmt {
  const span = stmt.span;
  const { array: fragmentArray, index } = stmt.fragment;
  const type = fragmentArray.fragment!;
  const layout = fragmentLayout(type);
  const int = (value: number): Expr => ({ kind: "literal", type: "i32", value, span });
  const bin = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ kind: "binary", op, type: "i32", left, right, span });
  const scaled = (term: Expr, factor: number): Expr | undefined => (factor === 0 ? undefined : factor === 1 ? term : bin("mul", term, int(factor)));
  const sum = (...terms: (Expr | undefined)[]): Expr => terms.filter((t): t is Expr => t !== undefined).reduce((a, b) => bin("add", a, b));
  const local = (name: string, init: Expr): [Variable, Stmt] => {
    const variable: Variable = { kind: "variable", name, type: "i32", mutable: false, span };
    return [variable, { kind: "declare", variable, init, span }];
  };
  const read = (variable: Variable): Expr => ({ kind: "variable", type: variable.type, variable, span });
  const linear = linearThreadIndex(span);
  // A warpgroup's fragments: the thread's index in its group of 128, whose warp (lane >> 5) adds rowW rows.
  const [lane, laneDecl] = local("lane", bin("and", linear, int(layout.lanes - 1)));
  const [group, groupDecl] = local("laneGroup", layout.lanes > 32 ? bin("and", bin("shr", read(lane), int(2)), int(7)) : bin("shr", read(lane), int(2)));
  const [place, placeDecl] = local("lanePlace", bin("and", read(lane), int(3)));
  const foldSum = (...terms: (Expr | undefined)[]): Expr => foldExpr(sum(...terms));
  const row0 = sum(scaled(read(group), layout.rowG), scaled(read(place), layout.rowQ), layout.rowW ? scaled(bin("shr", read(lane), int(5)), layout.rowW) : undefined);
  const col0 = sum(scaled(read(group), layout.colG), scaled(read(place), layout.colQ));
  const memory = stmt.kind === "matrixLoad" ? stmt.source : stmt.target;
  if (stmt.kind === "matrixStore" && stmt.boxRows) {
    return { kind: "block", body: [laneDecl, groupDecl, placeDecl, ...boxStores(stmt, stmt.boxRows, layout, row0, col0, read, local, int, bin)], span };
  }
  // Element (r, c) lies at offset + r·stride + c·colStride (colStride 1 unless given).
  const colStride = stmt.colStride;
  const colTerm = (col: Expr | number): Expr | undefined => {
    if (typeof col === "number") return col === 0 ? undefined : colStride ? (col === 1 ? colStride : bin("mul", colStride, int(col))) : int(col);
    return colStride ? bin("mul", col, colStride) : col;
  };
  const [base, baseDecl] = local("element", sum(stmt.offset, bin("mul", row0, stmt.stride), colTerm(col0)));
  const body: Stmt[] = [laneDecl, groupDecl, placeDecl, baseDecl];
  layout.rowE.forEach((rowStep, e) => {
    const colStep = layout.colE[e]!;
    const at = foldSum(read(base), rowStep === 0 ? undefined : rowStep === 1 ? stmt.stride : bin("mul", stmt.stride, int(rowStep)), colTerm(colStep));
    const slot = foldExpr(fragmentSlot(index, layout.perLane, e, span));
    if (stmt.kind === "matrixLoad") {
      // A 16-bit array's element widens exactly; a fragment of its own type keeps it without rounding again.
      const loaded: Expr = { kind: "load", type: loadType(memory.elementType), array: memory, indices: [at], span };
      const element: Expr = loaded.type === "f32" ? loaded : { kind: "convert", type: "f32", value: loaded, span };
      const value = memory.elementType === type.element ? element : roundFragmentValue(type.element, element);
      body.push({ kind: "store", array: fragmentArray, indices: [slot], value, span });
    } else {
      body.push({ kind: "store", array: memory, indices: [at], value: storedValue(memory, { kind: "load", type: "f32", array: fragmentArray, indices: [slot], span }), span });
    }
  });
  return { kind: "block", body, span };
}

/**
 * A `loadMatrix` kept whole for ldmatrix: the lane's linear index gives its matrix j = (lane >> 3) & (count − 1)
 * and row r = lane & 7 (lanes past the matrices name rows the instruction ignores, in bounds all the same), whose
 * start in the fragment's matrix ir/matrix.ts's ldmatrixPlan gives; `laneRow` is that element's index in the
 * shared array, offset + row·stride + column·colStride, declared in a local right before the load.
 */
function ldmatrixLoad(stmt: MatrixLoadStmt): Stmt {
  const [declarations, laneRow] = ldmatrixRow(stmt);
  return { kind: "block", body: [...declarations, { ...stmt, ldmatrix: { laneRow } }], span: stmt.span };
}

/** The first element of the row a lane names to ldmatrix, read into a local nothing reads, with the row's 16-byte alignment for checked mode. */
function ldmatrixRowProbe(stmt: MatrixLoadStmt): Stmt {
  const span = stmt.span;
  const [declarations, laneRow] = ldmatrixRow(stmt);
  const element = loadType(stmt.source.elementType);
  const variable: Variable = { kind: "variable", name: "ldmatrixRow", type: element, mutable: false, span };
  const probe: Stmt = { kind: "declare", variable, init: { kind: "load", type: element, array: stmt.source, indices: [laneRow], alignment: 8, span }, span };
  return { kind: "block", body: [...declarations, probe], span };
}

/** The declarations of the lane and of its row's index (laneRow), and that index: ldmatrixLoad's computation. */
function ldmatrixRow(stmt: MatrixLoadStmt): [Stmt[], Expr] {
  const span = stmt.span;
  const plan = ldmatrixPlan(fragmentLayout(stmt.fragment.array.fragment!), stmt.colStride ? "row" : "col");
  const int = (value: number): Expr => ({ kind: "literal", type: "i32", value, span });
  const bin = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ kind: "binary", op, type: "i32", left, right, span });
  const linear = linearThreadIndex(span);
  const lane: Variable = { kind: "variable", name: "lane", type: "i32", mutable: false, span };
  const read = (variable: Variable): Expr => ({ kind: "variable", type: variable.type, variable, span });
  const r = bin("and", read(lane), int(7));
  // Row and column of the lane's row start: origin(0) + Σ bits of j · originSteps + r · rowStep.
  const axis = (k: 0 | 1): Expr => {
    let sum: Expr = int(plan.origin0[k]);
    plan.originSteps.forEach((step, bit) => {
      if (step[k] !== 0) sum = bin("add", sum, bin("mul", bin("and", bin("shr", read(lane), int(3 + bit)), int(1)), int(step[k])));
    });
    return plan.rowStep[k] ? bin("add", sum, r) : sum;
  };
  const columns = stmt.colStride ? bin("mul", axis(1), stmt.colStride) : axis(1);
  const row: Variable = { kind: "variable", name: "laneRow", type: "i32", mutable: false, span };
  const laneRow = foldExpr(bin("add", bin("add", stmt.offset, bin("mul", axis(0), stmt.stride)), columns));
  return [
    [
      { kind: "declare", variable: lane, init: bin("and", linear, int(31)), span },
      { kind: "declare", variable: row, init: laneRow, span },
    ],
    read(row),
  ];
}

/** An accumulator element as the target array holds it: rounded to a 16-bit float type (to nearest even), or as is. */
function storedValue(target: ArrayRef, value: Expr): Expr {
  const type = target.elementType;
  return type === "bf16" || type === "f16" ? { kind: "convert", type, value, span: value.span } : value;
}

/**
 * A fragment store into the swizzled box layout (ir/matrix.ts, boxIndex): element (r, c) at
 * swizzle(offset + (c / perRow)·boxRows·perRow + perRow·r + c % perRow), with perRow the elements of a
 * 128-byte row; the swizzle XORs the 16-byte piece with the row's place in its group of 8.
 */
function boxStores(
  stmt: MatrixStoreStmt,
  boxRows: Expr,
  layout: ReturnType<typeof fragmentLayout>,
  row0: Expr,
  col0: Expr,
  read: (variable: Variable) => Expr,
  local: (name: string, init: Expr) => [Variable, Stmt],
  int: (value: number) => Expr,
  bin: (op: BinaryOp, left: Expr, right: Expr) => Expr,
): Stmt[] {
  const span = stmt.span;
  const bytes = arrayStride(stmt.target.elementType);
  const rowShift = Math.log2(128 / bytes);
  const pieceShift = Math.log2(16 / bytes);
  const piece = 16 / bytes;
  const [row, rowDecl] = local("boxRow", row0);
  const [col, colDecl] = local("boxCol", col0);
  const [box, boxDecl] = local("boxSize", bin("shl", boxRows, int(rowShift)));
  const body: Stmt[] = [rowDecl, colDecl, boxDecl];
  // When a thread's columns stay inside one 16-byte piece (its column 0 plus each element's offset within a
  // piece) and its rows inside one row of every group of 8 (rows step by multiples of 8), every element shares
  // the thread's swizzle z = (offset / rowLength + row0) & 7 (offset a multiple of 1024 bytes and boxRows of 8,
  // as the validator requires): its place is a per-thread base plus a constant plus (constant piece ^ z), which
  // keeps the index math out of the way of the accumulators (the generic form spilled 150 bytes on sm_90a).
  const maxCol0 = 3 * layout.colQ + 7 * layout.colG;
  const sharesSwizzle = layout.rowE.every((step) => step % 8 === 0) && layout.colE.every((step) => maxCol0 + (step % piece) < piece);
  if (sharesSwizzle) {
    const [base, baseDecl] = local("boxBase", bin("add", bin("add", stmt.offset, bin("shl", read(row), int(rowShift))), read(col)));
    const [swizzle, swizzleDecl] = local("boxSwizzle", bin("shl", bin("and", bin("add", bin("shr", stmt.offset, int(rowShift)), read(row)), int(7)), int(pieceShift)));
    body.push(baseDecl, swizzleDecl);
    layout.rowE.forEach((rowStep, e) => {
      const colStep = layout.colE[e]!;
      const inRow = colStep & ((1 << rowShift) - 1);
      const fixed = foldExpr(bin("add", bin("mul", int(colStep >> rowShift), read(box)), int((rowStep << rowShift) + (colStep % piece))));
      const place = foldExpr(bin("add", bin("add", read(base), fixed), bin("xor", int((inRow >> pieceShift) << pieceShift), read(swizzle))));
      body.push(boxElementStore(stmt, layout, e, place, read, local));
    });
    return body;
  }
  layout.rowE.forEach((rowStep, e) => {
    const r = foldExpr(rowStep === 0 ? read(row) : bin("add", read(row), int(rowStep)));
    const c = foldExpr(layout.colE[e] === 0 ? read(col) : bin("add", read(col), int(layout.colE[e]!)));
    const plain = bin("add", bin("add", stmt.offset, bin("mul", bin("shr", c, int(rowShift)), read(box))), bin("add", bin("shl", r, int(rowShift)), bin("and", c, int((1 << rowShift) - 1))));
    const [at, atDecl] = local("boxElement", plain);
    const swizzled = bin("xor", read(at), bin("shl", bin("and", bin("shr", read(at), int(rowShift)), int(7)), int(pieceShift)));
    body.push({ kind: "block", body: [atDecl, boxElementStore(stmt, layout, e, swizzled, read, local)], span });
  });
  return body;
}

/** The store of fragment element `e` at `at` of the box layout, with the α/β epilogue when given. */
function boxElementStore(stmt: MatrixStoreStmt, layout: ReturnType<typeof fragmentLayout>, e: number, at: Expr, read: (variable: Variable) => Expr, local: (name: string, init: Expr) => [Variable, Stmt]): Stmt {
  const span = stmt.span;
  const slot = foldExpr(fragmentSlot(stmt.fragment.index, layout.perLane, e, span));
  const [place, placeDecl] = local("boxPlace", at);
  const element: Expr = { kind: "load", type: "f32", array: stmt.fragment.array, indices: [slot], span };
  const f32 = (op: BinaryOp, left: Expr, right: Expr): Expr => ({ kind: "binary", op, type: "f32", left, right, span });
  const scaled = stmt.alpha ? f32("mul", stmt.alpha, element) : element;
  // beta·(the element the target holds), widened to f32 from a 16-bit type.
  const old: Expr = { kind: "load", type: stmt.target.elementType === "f32" ? "f32" : (stmt.target.elementType as "bf16" | "f16"), array: stmt.target, indices: [read(place)], span };
  const combined = stmt.beta ? f32("add", scaled, f32("mul", stmt.beta, old.type === "f32" ? old : { kind: "convert", type: "f32", value: old, span })) : scaled;
  return { kind: "block", body: [placeDecl, { kind: "store", array: stmt.target, indices: [read(place)], value: storedValue(stmt.target, combined), span }], span };
}
