/**
 * Lowers the calls that are statements in the IR but values in TypeScript: atomics (`atomicAdd(hist, bin,
 * 1)`, returning the old value) and subgroup operations (`subgroupAdd(x)`, collectives that every lane of a
 * subgroup runs together), and reads the `subgroupSize` and `subgroupInvocationId` builtins. A call written
 * inside an expression becomes a statement that declares a local, placed before the statement the expression
 * belongs to (`context.pending`); where nothing can run first (the right operand of `&&`, a branch of `?:`,
 * a `for` update) that is TSK1032. The typing rules of docs/language.md, "Atomics" and "Subgroups", live here.
 */

import { Node, type CallExpression, type Expression } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import { isComposite } from "../ir/vectors.ts";
import { isNumeric, valueTypeOf, type ArrayRef, type ElementScalar, type AtomicOp, type AtomicOrder, type AtomicStmt, type CollectiveOp, type Expr, type ScalarType, type Span, type Stmt, type Variable } from "../ir/ir.ts";
import { spanOf, type FunctionContext } from "./context.ts";

export const atomicFunctions: Readonly<Record<string, AtomicOp>> = {
  atomicAdd: "add",
  atomicSub: "sub",
  atomicMin: "min",
  atomicMax: "max",
  atomicAnd: "and",
  atomicOr: "or",
  atomicXor: "xor",
  atomicExchange: "exchange",
  atomicCompareExchange: "compareExchange",
  atomicLoad: "load",
  atomicStore: "store",
  waitFlag: "wait",
};

/** The memory orders each kind of atomic takes as its optional last argument (docs/language.md, "Atomics"). */
const ordersOf = (op: AtomicOp): readonly AtomicOrder[] => (op === "load" ? ["acquire"] : op === "store" ? ["release"] : op === "wait" ? [] : ["acquire", "release", "acqRel"]);

/** Atomics that f32 arrays take (WGSL has no float atomics: these go through the bits of an atomic<u32>). */
const floatAtomics: ReadonlySet<AtomicOp> = new Set(["add", "exchange", "load", "store"]);

/** The element types atomics take: 32-bit words. */
const atomicElementTypes: ReadonlySet<string> = new Set(["f32", "i32", "u32"]);

/** The value types subgroup arithmetic and shuffles take. */
const subgroupValueTypes: ReadonlySet<ScalarType> = new Set(["f32", "i32", "u32"]);

/** The arguments each atomic takes, as a diagnostic names them. */
const atomicArguments: Readonly<Partial<Record<AtomicOp, readonly [number, string]>>> = {
  compareExchange: [4, "4 arguments (an array, an index, the expected value and the new value)"],
  load: [2, "2 arguments (an array and an index)"],
  wait: [3, "3 arguments (an array, an index and the value to wait for)"],
};

/** How each subgroup function is typed: its value argument, an optional lane argument, and the result. */
interface SubgroupSignature {
  /** `numeric`: f32, i32 or u32, and the result has the same type; `bool`: a predicate. */
  readonly value: "numeric" | "bool";
  /** The second argument: a lane, an xor mask or a distance, i32 or u32 (converted to u32). */
  readonly lane?: string;
  readonly result?: ScalarType;
  /** The name of the local that holds the result in generated code. */
  readonly hint: string;
}

export const subgroupFunctions: Readonly<Record<CollectiveOp, SubgroupSignature>> = {
  subgroupAdd: { value: "numeric", hint: "sum" },
  subgroupMin: { value: "numeric", hint: "least" },
  subgroupMax: { value: "numeric", hint: "greatest" },
  subgroupInclusiveAdd: { value: "numeric", hint: "scan" },
  subgroupExclusiveAdd: { value: "numeric", hint: "scan" },
  subgroupBroadcast: { value: "numeric", lane: "lane", hint: "broadcast" },
  subgroupShuffle: { value: "numeric", lane: "lane", hint: "shuffled" },
  subgroupShuffleXor: { value: "numeric", lane: "mask", hint: "shuffled" },
  subgroupShuffleUp: { value: "numeric", lane: "distance", hint: "shuffled" },
  subgroupShuffleDown: { value: "numeric", lane: "distance", hint: "shuffled" },
  subgroupBallot: { value: "bool", result: "u32", hint: "ballot" },
  subgroupAll: { value: "bool", result: "bool", hint: "all" },
  subgroupAny: { value: "bool", result: "bool", hint: "any" },
  // Over the warpgroup rather than the subgroup, but a collective all the same (docs/language.md, roles).
  warpgroupBroadcast: { value: "numeric", hint: "broadcast" },
};

export function isSubgroupFunction(name: string): name is CollectiveOp {
  return Object.hasOwn(subgroupFunctions, name);
}

/**
 * The kernel's shared words for warpgroupBroadcast: one i32 a warpgroup of the largest block (1024 threads), declared
 * with the kernel's shared arrays at the first call, so that the manifest and the limits count them.
 */
function broadcastWords(context: FunctionContext, span: Span): ArrayRef {
  if (!context.broadcastWords) {
    const eight: Expr = { kind: "literal", type: "i32", value: 8, span };
    context.broadcastWords = { kind: "array", name: "broadcastWords", elementType: "i32", space: "shared", access: "read_write", dims: [eight], span };
    context.shared.push(context.broadcastWords);
  }
  return context.broadcastWords;
}

/** Locals the frontend made for hoisted calls; a declaration initialized with one takes its place. */
const hoistedResults = new WeakSet<Variable>();

/** Puts `make(result)` among the pending statements and returns a read of `result`. */
function hoist(context: FunctionContext, what: string, type: ScalarType, hint: string, span: Span, make: (result: Variable) => Stmt): Expr {
  if (!context.pending) {
    return fail("TSK1032", span, [what, context.hoistBlocked ?? "here"], {
      notes: [
        `${what} runs before the rest of the statement it is written in, which here would change whether it runs: call it in a statement of its own (inside an \`if\` if it must not always run) and use the local it gives`,
      ],
    });
  }
  const result: Variable = { kind: "variable", name: hint, type, mutable: false, span };
  hoistedResults.add(result);
  context.pending.push(make(result));
  return { kind: "variable", type, variable: result, span };
}

/**
 * `const old = atomicAdd(…)`: when a declaration's value is exactly a hoisted call's result, the call declares
 * the user's variable itself instead of a temporary. Returns the statement to use in place of the declaration.
 */
export function adoptHoisted(context: FunctionContext, value: Expr, variable: Variable): Stmt | undefined {
  const pending = context.pending;
  const last = pending?.[pending.length - 1];
  if (value.kind !== "variable" || !hoistedResults.has(value.variable) || !last) return undefined;
  if (last.kind === "atomic" && last.result === value.variable) return { ...pending!.pop()!, result: variable } as Stmt;
  if (last.kind === "collective" && last.result === value.variable) return { ...pending!.pop()!, result: variable } as Stmt;
  return undefined;
}

/** An atomic or subgroup call in an expression: hoisted into a statement. Undefined for other calls. */
export function lowerSpecialCall(context: FunctionContext, name: string, call: CallExpression, hint: ScalarType | undefined): Expr | undefined {
  const span = spanOf(call);
  if (Object.hasOwn(atomicFunctions, name)) {
    if (atomicFunctions[name] === "store" || atomicFunctions[name] === "wait") return fail("TSK1011", span, [`${name}()`]);
    const atomic = lowerAtomic(context, name, call);
    return hoist(context, `${name}()`, valueTypeOf(atomic.array.elementType as ElementScalar), "old", span, (result) => ({ ...atomic, result }));
  }
  if (isSubgroupFunction(name)) {
    if (context.kind === "helper") return fail("TSK1031", span, [`${name}()`, context.name], { notes: ["subgroup operations are collective: every lane of the subgroup must call them from the kernel body"] });
    const { args, type } = lowerSubgroupArgs(context, name, call, hint);
    const words = name === "warpgroupBroadcast" ? broadcastWords(context, span) : undefined;
    return hoist(context, `${name}()`, type, subgroupFunctions[name].hint, span, (result) => ({ kind: "collective", op: name, args, result, ...(words ? { words } : {}), span }));
  }
  return undefined;
}

/** An atomic call as a statement of its own: its old value is not used. */
export function lowerAtomicStatement(context: FunctionContext, name: string, call: CallExpression): Stmt[] | undefined {
  if (!Object.hasOwn(atomicFunctions, name)) return undefined;
  return [lowerAtomic(context, name, call)];
}

function lowerAtomic(context: FunctionContext, name: string, call: CallExpression): AtomicStmt {
  const span = spanOf(call);
  const op = atomicFunctions[name]!;
  if (context.kind === "helper") return fail("TSK1031", span, [`${name}()`, context.name], { notes: ["helper functions cannot reach arrays; do the atomic in the kernel"] });
  const allArgs = call.getArguments() as Expression[];
  const [count, expects] = atomicArguments[op] ?? [3, "3 arguments (an array, an index and a value)"];
  const orders = ordersOf(op);
  const ordered = orders.length > 0 && allArgs.length === count + 1;
  if (allArgs.length !== count && !ordered) return fail("TSK2008", span, [`${name}()`, orders.length > 0 ? `${expects}, and optionally a memory order` : expects, `${allArgs.length}`]);
  const args = allArgs.slice(0, count);
  const order = ordered ? memoryOrder(name, allArgs[count]!, orders) : op === "wait" ? "acquire" : undefined;
  const arrayNode = args[0]!;
  const { array, indices } = context.module.lower.indexedArray(
    context,
    arrayNode,
    args[1]!,
    (found) => fail("TSK2008", spanOf(arrayNode), [`${name}()`, "an array as its first argument", `'${found}'`]),
    (target, rank) => (rank === 2 ? [`an atomic on a 2-D shared array takes a row: ${name}(${target.name}[row], column, …)`] : []),
  );
  if (array.space === "private" || array.access === "read") {
    const what = array.space === "private" ? "a private array: no other thread can see it, so write it plainly" : "a read-only buffer";
    return fail("TSK1030", spanOf(arrayNode), [`${name}()`, array.name, what], {
      notes: array.space === "global" ? ["declare the parameter as Int32Array, Uint32Array or Float32Array (not Readonly…) to update it"] : [],
    });
  }
  if (isComposite(array.elementType) || !atomicElementTypes.has(array.elementType)) {
    return fail("TSK2011", spanOf(call.getExpression()), [`${name}()`, array.elementType], { notes: ["atomics take arrays of i32, u32 and f32 elements"] });
  }
  if (array.elementType === "f32" && !floatAtomics.has(op)) {
    return fail("TSK2011", spanOf(call.getExpression()), [`${name}()`, "f32"], { notes: ["f32 arrays take atomicAdd, atomicExchange, atomicLoad and atomicStore; the other atomics need i32 or u32 elements"] });
  }
  const operand = (node: Expression, index: number) =>
    context.module.lower.expected(context, node, valueTypeOf(array.elementType as ElementScalar), (found) => fail("TSK2008", spanOf(node), [`argument ${index + 1} of ${name}()`, `${array.elementType} like the elements of '${array.name}'`, found.type]));
  const expected = op === "compareExchange" ? operand(args[2]!, 2) : undefined;
  const ordering = order ? { order } : {};
  if (op === "wait" && array.space !== "global") {
    return fail("TSK2008", spanOf(arrayNode), [`${name}()`, "a writable global buffer (Int32Array or Uint32Array)", `the shared array '${array.name}'`], { notes: ["a warpgroup waits for another's shared memory with mbarriers (waitBarrier)"] });
  }
  if (op === "load") return { kind: "atomic", op, array, indices, span, ...ordering };
  const value = operand(args[count - 1]!, count - 1);
  return { kind: "atomic", op, array, indices, value, ...(expected ? { expected } : {}), span, ...ordering };
}

/** The optional memory-order argument of an atomic: a string literal among `allowed` ("relaxed" always). */
function memoryOrder(name: string, node: Expression, allowed: readonly AtomicOrder[]): AtomicOrder | undefined {
  const accepted = ["relaxed", ...allowed].map((order) => `"${order}"`).join(", ");
  if (!Node.isStringLiteral(node) && !Node.isNoSubstitutionTemplateLiteral(node)) return fail("TSK2008", spanOf(node), [`the memory order of ${name}()`, `a string literal: ${accepted}`, `'${node.getText()}'`]);
  const text = node.getLiteralText();
  if (text === "relaxed") return undefined;
  if (!(allowed as readonly string[]).includes(text)) return fail("TSK2008", spanOf(node), [`the memory order of ${name}()`, accepted, `"${text}"`]);
  return text as AtomicOrder;
}

function lowerSubgroupArgs(context: FunctionContext, name: CollectiveOp, call: CallExpression, hint: ScalarType | undefined): { args: Expr[]; type: ScalarType } {
  const span = spanOf(call);
  const signature = subgroupFunctions[name];
  const args = call.getArguments() as Expression[];
  const count = signature.lane ? 2 : 1;
  if (args.length !== count) {
    return fail("TSK2008", span, [`${name}()`, signature.lane ? `2 arguments (a value and a ${signature.lane})` : "1 argument", `${args.length}`]);
  }
  const valueNode = args[0]!;
  let value: Expr;
  if (signature.value === "bool") {
    value = context.module.lower.expected(context, valueNode, "bool", (found) => fail("TSK2008", spanOf(valueNode), [`${name}()`, "a bool", found.type]));
  } else {
    value = context.module.lower.expr(context, valueNode, hint && isNumeric(hint) ? hint : undefined);
    if (isComposite(value.type) || !subgroupValueTypes.has(value.type)) return fail("TSK2008", spanOf(valueNode), [`${name}()`, "an f32, i32 or u32 value", value.type]);
  }
  const lowered = [value];
  if (signature.lane) {
    const laneNode = args[1]!;
    const lane = context.module.lower.expr(context, laneNode, context.module.lower.isLiteralLike(laneNode) ? "u32" : undefined);
    if (lane.type !== "i32" && lane.type !== "u32") return fail("TSK2008", spanOf(laneNode), [`the ${signature.lane} of ${name}()`, "an i32 or u32", lane.type]);
    lowered.push(lane.type === "u32" ? lane : { kind: "convert", type: "u32", value: lane, span: lane.span });
  }
  return { args: lowered, type: signature.result ?? (value.type as ScalarType) };
}

/** `subgroupSize`, `subgroupInvocationId`, `warpgroupIdx` and `clusterRank`, read as values. */
export function lowerSubgroupBuiltin(context: FunctionContext, name: string, node: Node): Expr | undefined {
  if (name !== "subgroupSize" && name !== "subgroupInvocationId" && name !== "warpgroupIdx" && name !== "clusterRank") return undefined;
  const span = spanOf(node);
  if (context.kind === "helper") return fail("TSK1017", span, [context.name, `it reads ${name}; pass the value in as an argument`]);
  return { kind: "subgroupBuiltin", builtin: name, type: "i32", span };
}
