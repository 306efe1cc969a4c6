/**
 * Lowers the matrix functions: `fragment.a/b/accumulator(shape, element, count)` declarations (private
 * arrays that hold `count` fragments, marked with their fragment type; the shape's row of ir/matrix.ts's
 * matrixShapes says which element types each role takes), and the statements `loadFragment`, `loadMatrix` (a
 * fragment load that CUDA does with ldmatrix), `storeFragment`, `mma`, `fillFragment` (which becomes plain stores into the fragment's elements: every lane
 * sets its own), and the warpgroup ones, `wgmma`, `wgmmaCommit` and `wgmmaWait`. Roles, shapes and element
 * types are checked here, where the user's arguments are at hand; the validator checks what needs constants
 * and control flow (uniformity, indices, the offsets of wgmma's shared operand). The mbarrier statements
 * (`initBarrier`, `arriveBarrier`, `arriveAfterCopies`, `arriveExpectBytes`, `waitBarrier`), `copyTile` and
 * `setMaxRegisters` are lowered here too: they are what lets warpgroups with different roles hand each other
 * stages of shared memory. So are the tensor memory accelerator's stores (`storeTile`, `waitTileStores`), and the
 * 16-bit forms: `wgmma(acc, A, aOffset, B, bOffset, { bMajor: "n", bBoxRows })` with both operands in shared
 * arrays of bf16 or f16, or `wgmma(acc, a, B, bOffset[, layout])` with A a bf16 or f16 A fragment, `storeFragment(acc, array, offset, { swizzle: 128, boxRows })` into the swizzled box
 * layout, and `copyTile` of 16-bit tensors.
 */

import { Node, type CallExpression, type Expression } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import { arrayStride, isInteger, scalars, type ArrayRef, type ElementType, type Expr, type FragmentElement, type FragmentRef, type MatrixShape, type Span, type Stmt } from "../ir/ir.ts";
import { fragmentLayout, fragmentLayouts, fragmentSlot, isWarpgroupShape, matrixShapes, roundFragmentValue, warpgroupDepth, wgmma16Elements, wgmma8Elements } from "../ir/matrix.ts";
import { elementTypeArgument, inlineCompileTimeConsts, spanOf, type FunctionContext } from "./context.ts";
import { elementIndex, elementSlot, lowerFragmentRef } from "./lower-fragment-elements.ts";
import { isLiteralLike, lowerExpected, lowerExpr } from "./lower-expr.ts";
import { originOf } from "./program.ts";


/** The shapes of the table whose fragments a warp (mma) or a warpgroup (wgmma) holds, in the table's order. */
function shapesOf(group: "warp" | "warpgroup"): string[] {
  return Object.entries(matrixShapes).flatMap(([shape, info]) => (info.group === group ? [shape] : []));
}

/** `a, b or c`, each name between `quote`s. */
function listed(names: readonly string[], quote: string): string {
  const quoted = names.map((name) => `${quote}${name}${quote}`);
  return quoted.length === 1 ? quoted[0]! : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

/** True when `node` is a `fragment.…(…)` call, the declaration of a fragment array. */
export function isFragmentAllocation(node: Expression): node is CallExpression {
  if (!Node.isCallExpression(node)) return false;
  const callee = node.getExpression();
  if (!Node.isPropertyAccessExpression(callee)) return false;
  const object = callee.getExpression();
  if (!Node.isIdentifier(object)) return false;
  const origin = originOf(object);
  return origin.kind === "tskernel" && origin.name === "fragment";
}

/**
 * The element type `dtype<T>()` names: the type the kernel's type parameter T is bound to in the instance being
 * lowered (or a literal type argument, `dtype<"bf16">()`). Undefined for any other expression.
 */
export function elementTypeName(context: FunctionContext, node: Expression): string | undefined {
  if (!Node.isCallExpression(node) || node.getArguments().length !== 0) return undefined;
  const callee = node.getExpression();
  if (!Node.isIdentifier(callee)) return undefined;
  const origin = originOf(callee);
  const typeArgument = node.getTypeArguments()[0];
  if (origin.kind !== "tskernel" || origin.name !== "dtype" || !typeArgument) return undefined;
  return elementTypeArgument(typeArgument, context.typeArgs ?? new Map());
}

/** `fragment.a("m16n8k8", "tf32", COUNT)`: a private f32 array of COUNT · perLane elements. */
export function lowerFragmentAllocation(context: FunctionContext, name: string, call: CallExpression, span: Span): ArrayRef {
  const callee = call.getExpression() as import("ts-morph").PropertyAccessExpression;
  const role = callee.getName();
  if (role !== "a" && role !== "b" && role !== "accumulator") {
    return fail("TSK1001", spanOf(callee), [`fragment.${role}`], { notes: ["fragment arrays are fragment.a, fragment.b or fragment.accumulator"] });
  }
  const args = call.getArguments() as Expression[];
  if (args.length !== 3) return fail("TSK1067", spanOf(call), [role, `3 arguments ("m16n8k8", "${role === "accumulator" ? "f32" : "tf32"}", a count)`, `${args.length}`]);
  const literal = (arg: Expression) => (Node.isStringLiteral(arg) || Node.isNoSubstitutionTemplateLiteral(arg) ? arg.getLiteralText() : undefined);
  const shapeText = literal(args[0]!);
  const shape = shapeText !== undefined && shapeText in fragmentLayouts ? (shapeText as MatrixShape) : undefined;
  if (!shape) return fail("TSK1067", spanOf(args[0]!), [role, `a shape: ${listed(shapesOf("warp"), '"')} (mma), or ${listed(shapesOf("warpgroup"), '"')} (wgmma)`, args[0]!.getText()]);
  if (!fragmentLayouts[shape][role] && role === "a" && matrixShapes[shape].k === 32) {
    return fail("TSK1067", spanOf(args[0]!), [role, `a shape with A fragments: the 8-bit shapes (${listed(shapesOf("warpgroup").filter((s) => matrixShapes[s as MatrixShape].k === 32), '"')}) read A from a shared array`, args[0]!.getText()]);
  }
  if (!fragmentLayouts[shape][role]) {
    return fail("TSK1067", spanOf(args[0]!), [role, `the shape ${listed(shapesOf("warp"), '"')}: wgmma reads its B operand from shared memory, so the warpgroup shapes have no B fragments`, args[0]!.getText()]);
  }
  // The element types the shape's table row allows the role (accumulators: f32); the 16-bit shapes' A fragments
  // hold bf16 or f16, and a tf32 one there is TSK1170 (the TF32 shapes are k8).
  const info = matrixShapes[shape];
  const allowed = (role === "accumulator" ? ["f32"] : info.inputs) as readonly FragmentElement[];
  // The element type as a literal, or as `dtype<T>()` in a kernel over T (the type T is bound to in this instance).
  const elementText = literal(args[1]!) ?? elementTypeName(context, args[1]!);
  const fragmentElement = allowed.find((element) => element === elementText);
  if (!fragmentElement) {
    if (role === "a" && info.k === 16) return fail("TSK1170", spanOf(args[1]!), [args[0]!.getText(), args[1]!.getText()]);
    const names = allowed.map((element) => `"${element}"`).join(" or ");
    return fail("TSK1067", spanOf(args[1]!), [role, allowed.length === 1 ? `the element type ${names}` : `the element type ${names} with the shape "${shape}"`, args[1]!.getText()]);
  }
  const count = inlineCompileTimeConsts(context, lowerExpr(context, args[2]!, isLiteralLike(args[2]!) ? "i32" : undefined));
  if (!isInteger(count.type)) return fail("TSK2008", spanOf(args[2]!), [`fragment.${role}`, "an i32 count", count.type]);
  const perLane: Expr = { kind: "literal", type: count.type, value: fragmentLayout({ shape, role }).perLane, span: count.span };
  // The size stays an expression; the validator requires it constant once specialized (TSK3003).
  const size: Expr = { kind: "binary", op: "mul", type: count.type, left: count, right: perLane, span: count.span };
  return { kind: "array", name, elementType: "f32", space: "private", access: "read_write", dims: [size], fragment: { role, shape, element: fragmentElement }, span };
}

/** The matrix statements, or undefined when `name` is not a matrix function. */
export function lowerMatrixOperation(context: FunctionContext, name: string, call: CallExpression): Stmt[] | undefined {
  if (name === "setFragmentElement") return lowerSetFragmentElement(context, call);
  if (name === "loadMatrix") return lowerLoadMatrix(context, call);
  if (!["loadFragment", "storeFragment", "fillFragment", "mma", "wgmma", "wgmmaCommit", "wgmmaWait"].includes(name)) return undefined;
  if (name === "wgmma" && call.getArguments().length >= 5 && !isFragmentArgument(context, call.getArguments()[1] as Expression)) return lowerWgmma16(context, call);
  const span = spanOf(call);
  const what = `${name}()`;
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  const counts: Record<string, [number, number, string]> = {
    mma: [3, 3, "3 arguments (acc, a, b)"],
    wgmma: [4, 5, "4 arguments (acc, a, a shared array and an offset), 5 with a 16-bit A fragment and B's layout, or 5 or 6 for 16-bit inputs from shared memory (acc, A, its offset, B, its offset and B's layout)"],
    wgmmaCommit: [0, 0, "no arguments"],
    wgmmaWait: [1, 1, "1 argument (the groups that may stay unfinished)"],
    fillFragment: [2, 2, "2 arguments (a fragment and a value)"],
  };
  const [least, most, shape] = counts[name] ?? [4, 5, "4 or 5 arguments (a fragment, an array, an offset, a stride and optionally a column stride)"];
  if (args.length < least || args.length > most) return fail("TSK2008", span, [what, shape, `${args.length} argument(s)`]);
  switch (name) {
    case "mma": {
      const [accumulator, a, b] = (["accumulator", "a", "b"] as const).map((role, index) => lowerFragmentRef(context, args[index]!, what, `${["first", "second", "third"][index]} argument`, role));
      for (const [ref, node] of [[accumulator!, args[0]!], [a!, args[1]!]] as const) {
        if (isWarpgroupShape(ref.array.fragment!.shape)) return fail("TSK2035", spanOf(node), [what, `a warp shape, ${listed(shapesOf("warp"), '"')} (wgmma() multiplies the warpgroup shapes)`, ref.array.name, ref.array.fragment!.shape]);
      }
      // One shape for the three (the table's row), and A and B of one element type (bf16 with bf16, f16 with f16).
      const shape = accumulator!.array.fragment!.shape;
      for (const [ref, node] of [[a!, args[1]!], [b!, args[2]!]] as const) {
        if (ref.array.fragment!.shape !== shape) return fail("TSK2035", spanOf(node), [what, `the accumulator's shape ${shape}`, ref.array.name, ref.array.fragment!.shape]);
      }
      if (a!.array.fragment!.element !== b!.array.fragment!.element) return fail("TSK2062", spanOf(args[2]!), [a!.array.name, a!.array.fragment!.element, b!.array.name, b!.array.fragment!.element]);
      return [{ kind: "mma", accumulator: accumulator!, a: a!, b: b!, span }];
    }
    case "wgmma": {
      const accumulator = lowerFragmentRef(context, args[0]!, what, "first argument", "accumulator");
      const a = lowerFragmentRef(context, args[1]!, what, "second argument", "a");
      const shape = accumulator.array.fragment!.shape;
      if (!isWarpgroupShape(shape)) return fail("TSK2035", spanOf(args[0]!), [what, `a warpgroup shape (m64n64k8, m64n128k8 or m64n256k8; mma() multiplies ${listed(shapesOf("warp"), "")})`, accumulator.array.name, shape]);
      if (a.array.fragment!.shape !== shape) return fail("TSK2035", spanOf(args[1]!), [what, `the accumulator's shape ${shape}`, a.array.name, a.array.fragment!.shape]);
      if (warpgroupDepth(shape) === 16) return lowerWgmma16RegisterA(context, call, accumulator, a);
      if (args.length !== 4) return fail("TSK2008", span, [what, "4 arguments (acc, a, a shared array and an offset) for a TF32 shape", `${args.length} argument(s)`]);
      const binding = Node.isIdentifier(args[2]!) ? context.scope.lookup(args[2]!.getText()) : undefined;
      if (binding?.kind !== "array" || binding.array.space !== "shared" || binding.array.dims.length !== 1 || binding.array.elementType !== "f32") {
        const found = binding?.kind === "array" ? `'${binding.array.name}', ${binding.array.space === "shared" ? (binding.array.dims.length !== 1 ? "a 2-D shared array" : `a shared array of ${binding.array.elementType}`) : `a ${binding.array.space} array`}` : `'${args[2]!.getText()}'`;
        return fail("TSK2036", spanOf(args[2]!), [found]);
      }
      const offset = lowerExpected(context, args[3]!, "i32", (found) => fail("TSK2008", spanOf(args[3]!), [what, "an i32 offset", found.type]));
      return [{ kind: "wgmma", accumulator, a, b: binding.array, offset, span }];
    }
    case "wgmmaCommit":
      return [{ kind: "wgmmaSync", op: "commit", pending: 0, span }];
    case "wgmmaWait": {
      const pending = lowerExpr(context, args[0]!, "i32");
      if (pending.kind !== "literal" || !Number.isInteger(pending.value) || pending.value < 0 || pending.value > 7) return fail("TSK1075", spanOf(args[0]!), [args[0]!.getText()]);
      return [{ kind: "wgmmaSync", op: "wait", pending: pending.value, span }];
    }
    case "fillFragment": {
      const fragment = lowerFragmentRef(context, args[0]!, what, "first argument");
      const layout = fragmentLayout(fragment.array.fragment!);
      const value = lowerExpected(context, args[1]!, "f32", (found) => fail("TSK2008", spanOf(args[1]!), [what, "an f32 value", found.type]));
      // A tf32, bf16 or f16 fragment holds only values of its type: the fill rounds as a load would.
      const stored = roundFragmentValue(fragment.array.fragment!.element, value);
      return layout.rowE.map((_, e): Stmt => ({ kind: "store", array: fragment.array, indices: [fragmentSlot(fragment.index, layout.perLane, e, span)], value: stored, span }));
    }
    default: {
      const fragment = lowerFragmentRef(context, args[0]!, what, "first argument", name === "storeFragment" ? "accumulator" : undefined);
      if (name === "storeFragment" && Node.isObjectLiteralExpression(args[3]!)) return lowerBoxStore(context, call, fragment);
      const array = lowerMatrixArray(context, args[1]!, what, fragment);
      if (name === "storeFragment" && array.access === "read") {
        return fail("TSK1014", spanOf(args[1]!), [args[1]!.getText(), `'${array.name}' is a read-only buffer`], {
          notes: ["declare the parameter as Float32Array (not ReadonlyFloat32Array) to write to it"],
        });
      }
      const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
      const offset = integer(args[2]!, "offset");
      const stride = integer(args[3]!, "stride");
      const colStride = args[4] ? { colStride: integer(args[4], "column stride") } : {};
      if (name === "loadFragment") return [{ kind: "matrixLoad", fragment, source: array, offset, stride, ...colStride, span }];
      return [{ kind: "matrixStore", fragment, target: array, offset, stride, ...colStride, span }];
    }
  }
}


/**
 * The memory side of a fragment load or store: a global buffer or a 1-D shared array of f32, or of the
 * fragment's own 16-bit type (a bf16 or f16 fragment's load), or of bf16 or f16 for an accumulator's store
 * (each element rounded to nearest even).
 */
function lowerMatrixArray(context: FunctionContext, node: Expression, what: string, fragment: FragmentRef): ArrayRef {
  const binding = Node.isIdentifier(node) ? context.scope.lookup(node.getText()) : undefined;
  if (binding?.kind !== "array" || binding.array.space === "private" || binding.array.dims.length > 1) {
    const found = binding?.kind === "array" ? (binding.array.space === "private" ? `'${node.getText()}', a private array` : `'${node.getText()}', a 2-D shared array`) : `'${node.getText()}'`;
    return fail("TSK2008", spanOf(node), [what, "a global buffer or a 1-D shared array as its second argument", found]);
  }
  const element = binding.array.elementType;
  const own = fragment.array.fragment!.element;
  const half = element === "bf16" || element === "f16";
  if (element === "f32" || (half && (element === own || own === "f32"))) return binding.array;
  if (half && (own === "bf16" || own === "f16")) return fail("TSK2063", spanOf(node), [what, fragment.array.name, own, binding.array.name, element]);
  return fail("TSK2021", spanOf(node), [what, binding.array.name, `${element} elements`], {
    notes: ["a bf16 or f16 fragment also loads from an array of its own type, and an accumulator stores into bf16 or f16 arrays too"],
  });
}

/**
 * `loadMatrix(frag, array, offset, stride[, colStride])`: a `loadFragment` of an m16n8k16 A or B fragment from a
 * 1-D shared array of its element type, which CUDA does with `ldmatrix` (the IR's MatrixLoadStmt.ldmatrix). The
 * instruction reads rows of 8 contiguous elements, so either colStride is absent (or the literal 1), or stride is
 * the literal 1 (the tile stored transposed); the rows' 16-byte alignment is the validator's (TSK3165).
 */
function lowerLoadMatrix(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  const what = "loadMatrix()";
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 4 && args.length !== 5) return fail("TSK2008", span, [what, "4 or 5 arguments (a fragment, a shared array, an offset, a stride and optionally a column stride)", `${args.length} argument(s)`]);
  const fragment = lowerFragmentRef(context, args[0]!, what, "first argument");
  const type = fragment.array.fragment!;
  if (type.shape !== "m16n8k16" || type.role === "accumulator") {
    return fail("TSK2035", spanOf(args[0]!), [what, 'the A or B fragments of "m16n8k16"', fragment.array.name, type.role === "accumulator" ? `${type.shape} (an accumulator)` : type.shape], {
      notes: ["loadFragment() loads any fragment element by element"],
    });
  }
  const source = lowerShared16(context, args[1]!, what, "its second argument");
  if (source.elementType !== type.element) return fail("TSK2063", spanOf(args[1]!), [what, fragment.array.name, type.element, source.name, source.elementType]);
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const offset = integer(args[2]!, "offset");
  const stride = integer(args[3]!, "stride");
  const colStride = args[4] ? integer(args[4], "column stride") : undefined;
  const one = (expr: Expr) => expr.kind === "literal" && expr.value === 1;
  if (colStride && !one(colStride) && !one(stride)) return fail("TSK1174", spanOf(call), [args[3]!.getText(), args[4]!.getText()]);
  return [{ kind: "matrixLoad", fragment, source, offset, stride, ...(colStride && !one(colStride) ? { colStride } : {}), ldmatrix: {}, span }];
}

/** Barriers declared with `shared.barriers`, as the first argument of `what` (TSK1096 otherwise). */
function lowerBarriers(context: FunctionContext, node: Expression, what: string): ArrayRef {
  const binding = Node.isIdentifier(node) ? context.scope.lookup(node.getText()) : undefined;
  if (binding?.kind !== "array" || !binding.array.barriers) {
    return fail("TSK1096", spanOf(node), [what, binding?.kind === "array" ? `'${binding.array.name}', an array` : `'${node.getText()}'`]);
  }
  return binding.array;
}

/** The mbarrier statements, or undefined when `name` is not one. */
export function lowerBarrierOperation(context: FunctionContext, name: string, call: CallExpression): Stmt[] | undefined {
  const ops = { initBarrier: "init", arriveBarrier: "arrive", arriveAfterCopies: "arriveCopies", arriveExpectBytes: "arriveExpect", waitBarrier: "wait" } as const;
  if (name === "setMaxRegisters") return lowerSetMaxRegisters(context, call);
  if (name === "copyTile") return lowerCopyTile(context, call);
  if (name === "storeTile") return lowerStoreTile(context, call);
  if (name === "waitTileStores") return lowerWaitTileStores(context, call);
  if (!(name in ops)) return undefined;
  const op = ops[name as keyof typeof ops];
  const span = spanOf(call);
  const what = `${name}()`;
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  const expected =
    op === "init" ? [3, "3 arguments (barriers, an index and a count)"] : op === "wait" ? [3, "3 arguments (barriers, an index and a parity)"] : op === "arriveExpect" ? [3, "3 arguments (barriers, an index and a number of bytes)"] : [2, "2 arguments (barriers and an index)"];
  // arriveBarrier(bars, i, { block: r }): the barrier of block r of the cluster.
  const remote = op === "arrive" && args.length === 3 ? optionsOf(args[2]!, what, ["block"]).get("block") : undefined;
  if (args.length !== expected[0] && !(op === "arrive" && args.length === 3)) return fail("TSK2008", span, [what, op === "arrive" ? "2 arguments (barriers and an index), and optionally { block: rank } in a kernel with clusters" : expected[1]!, `${args.length} argument(s)`]);
  const barriers = lowerBarriers(context, args[0]!, what);
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const index = integer(args[1]!, "index");
  const value = op === "init" ? integer(args[2]!, "count") : op === "wait" ? integer(args[2]!, "parity") : op === "arriveExpect" ? integer(args[2]!, "number of bytes") : undefined;
  const block = remote ? integer(remote, "block rank") : undefined;
  return [{ kind: "barrierOp", op, barriers, index, ...(value ? { value } : {}), ...(block ? { block } : {}), span }];
}

/** `setMaxRegisters(count)`, with a constant count that setmaxnreg accepts. */
function lowerSetMaxRegisters(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  if (context.kind === "helper") return fail("TSK1031", span, ["setMaxRegisters()", context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 1) return fail("TSK2008", span, ["setMaxRegisters()", "1 argument (registers a thread)", `${args.length} argument(s)`]);
  const count = lowerExpr(context, args[0]!, "i32");
  if (count.kind !== "literal" || !Number.isInteger(count.value) || count.value % 8 !== 0 || count.value < 24 || count.value > 256) return fail("TSK1097", spanOf(args[0]!), [args[0]!.getText()]);
  return [{ kind: "setMaxRegisters", count: count.value, span }];
}

/** `copyTile(target, offset, source, map, x, y, barriers, index)` (ir.ts's TileCopyStmt). */
function lowerCopyTile(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  const what = "copyTile()";
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 8 && args.length !== 9) return fail("TSK2008", span, [what, "8 arguments (a shared array, an offset, a buffer, its tensor map, x, y, barriers and an index), and optionally { multicast: mask }", `${args.length} argument(s)`]);
  const arrayArg = (node: Expression, want: string, ok: (array: ArrayRef) => boolean): ArrayRef => {
    const binding = Node.isIdentifier(node) ? context.scope.lookup(node.getText()) : undefined;
    if (binding?.kind === "array" && !binding.array.barriers && !binding.array.fragment && ok(binding.array)) return binding.array;
    return fail("TSK1098", spanOf(node), [want, `'${node.getText()}'`]);
  };
  const target = arrayArg(args[0]!, "a 1-D shared array of f32, bf16, f16, e4m3 or e5m2 as its first argument", (a) => a.space === "shared" && a.dims.length === 1 && copyTileElements.has(a.elementType));
  const source = arrayArg(args[2]!, `a global buffer of ${target.elementType} (the shared array's type) as its third argument`, (a) => a.space === "global" && a.elementType === target.elementType);
  const map = arrayArg(args[3]!, "a read-only global u32 buffer (the tensor map) as its fourth argument", (a) => a.space === "global" && a.elementType === "u32" && a.access === "read");
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const offset = integer(args[1]!, "offset");
  const x = integer(args[4]!, "column");
  const y = integer(args[5]!, "row");
  const barriers = lowerBarriers(context, args[6]!, what);
  const index = integer(args[7]!, "barrier index");
  // { multicast: mask }: the blocks of the cluster (bit r for rank r) that each receive the box.
  const maskArg = args.length === 9 ? optionsOf(args[8]!, what, ["multicast"]).get("multicast") : undefined;
  const multicast = maskArg ? integer(maskArg, "multicast mask") : undefined;
  return [{ kind: "tileCopy", target, offset, source, map, x, y, barriers, index, ...(multicast ? { multicast } : {}), span }];
}

/** The element types a tile copy or store moves: 128-byte rows of 32 f32 or 64 bf16/f16. */
const tileElements: ReadonlySet<ElementType> = new Set<ElementType>(["f32", "bf16", "f16"]);
/** A tile copy also brings in 8-bit float operands (128-byte rows of 128 codes) for the k32 wgmma. */
const copyTileElements: ReadonlySet<ElementType> = new Set<ElementType>([...tileElements, "e4m3", "e5m2"]);

/**
 * A 1-D shared array of a 16-bit float type (bf16 or f16), as `what`'s `position` (TSK2060 otherwise); with
 * `eightBit`, of an 8-bit float type (e4m3 or e5m2) for the k32 shapes (TSK2065 otherwise).
 */
function lowerShared16(context: FunctionContext, node: Expression, what: string, position: string, eightBit = false): ArrayRef {
  const binding = Node.isIdentifier(node) ? context.scope.lookup(node.getText()) : undefined;
  const elements = eightBit ? wgmma8Elements : wgmma16Elements;
  if (binding?.kind === "array" && binding.array.space === "shared" && binding.array.dims.length === 1 && !binding.array.barriers && elements.has(binding.array.elementType)) return binding.array;
  const found =
    binding?.kind === "array"
      ? `'${binding.array.name}', ${binding.array.space === "shared" ? (binding.array.dims.length !== 1 ? "a 2-D shared array" : `a shared array of ${binding.array.elementType}`) : `a ${binding.array.space} array`}`
      : `'${node.getText()}'`;
  return fail(eightBit ? "TSK2065" : "TSK2060", spanOf(node), [what, position, found]);
}

/**
 * The literal options object `{ key: value, … }` of a matrix call: each property's initializer, by name; an
 * unknown name or another syntax is TSK1171.
 */
function optionsOf(node: Expression, what: string, known: readonly string[]): Map<string, Expression> {
  if (!Node.isObjectLiteralExpression(node)) return fail("TSK1171", spanOf(node), [what, known.join(", "), node.getText()]);
  const out = new Map<string, Expression>();
  for (const property of node.getProperties()) {
    // `{ alpha }` names the value by its variable, as `{ alpha: alpha }` does.
    const named = Node.isPropertyAssignment(property) || Node.isShorthandPropertyAssignment(property) ? property : undefined;
    if (!named || !known.includes(named.getName())) return fail("TSK1171", spanOf(property), [what, known.join(", "), property.getText()]);
    out.set(named.getName(), Node.isPropertyAssignment(named) ? named.getInitializerOrThrow() : named.getNameNode());
  }
  return out;
}

/**
 * `wgmma(acc, A, aOffset, B, bOffset[, { bMajor: "n", bBoxRows }])`: the 16-bit shapes, both operands in shared
 * memory; and the 8-bit shapes (k32), both operands in shared arrays of e4m3 or e5m2 (A and B each of either),
 * both K-major (`{ bMajor: "n" }` is TSK2066: wgmma transposes only 16-bit operands).
 */
function lowerWgmma16(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  const what = "wgmma()";
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length > 6) return fail("TSK2008", span, [what, "5 or 6 arguments (acc, A, its offset, B, its offset and B's layout)", `${args.length} argument(s)`]);
  const accumulator = lowerFragmentRef(context, args[0]!, what, "first argument", "accumulator");
  const shape = accumulator.array.fragment!.shape;
  if (!isWarpgroupShape(shape) || warpgroupDepth(shape) === 8) return fail("TSK2035", spanOf(args[0]!), [what, "a 16-bit shape (m64n64k16, m64n128k16 or m64n256k16) or an 8-bit one (m64n64k32, m64n128k32 or m64n256k32) when A is in shared memory", accumulator.array.name, shape]);
  const eightBit = warpgroupDepth(shape) === 32;
  const a = lowerShared16(context, args[1]!, what, "A (its second argument)", eightBit);
  const b = lowerShared16(context, args[3]!, what, "B (its fourth argument)", eightBit);
  // The 8-bit shapes take A and B of different types (e4m3 · e5m2); the 16-bit ones one type.
  if (!eightBit && a.elementType !== b.elementType) return fail("TSK2061", spanOf(args[3]!), [a.name, a.elementType, b.name, b.elementType]);
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const aOffset = integer(args[2]!, "offset of A");
  const bOffset = integer(args[4]!, "offset of B");
  const layout = args[5] ? lowerBLayout(context, args[5], what) : {};
  if (eightBit && layout.bMajor === "n") return fail("TSK2066", spanOf(args[5]!), [shape, b.name]);
  return [{ kind: "wgmma", accumulator, a: { kind: "sharedOperand", array: a, offset: aOffset }, b, offset: bOffset, ...layout, span }];
}

/** Whether a call's argument is `frag[i]` of a fragment array (wgmma's A from registers). */
function isFragmentArgument(context: FunctionContext, node: Expression): boolean {
  if (!Node.isElementAccessExpression(node)) return false;
  const base = node.getExpression();
  const binding = Node.isIdentifier(base) ? context.scope.lookup(base.getText()) : undefined;
  return binding?.kind === "array" && binding.array.fragment !== undefined;
}

/**
 * `wgmma(acc, a, B, bOffset[, { bMajor: "n", bBoxRows }])`: a k16 shape with A from a bf16 or f16 A fragment
 * (64×16 in registers) and B from a shared array of the same type, K-major or N-major as lowerWgmma16 reads it.
 */
function lowerWgmma16RegisterA(context: FunctionContext, call: CallExpression, accumulator: FragmentRef, a: FragmentRef): Stmt[] {
  const span = spanOf(call);
  const what = "wgmma()";
  const args = call.getArguments() as Expression[];
  if (args.length !== 4 && args.length !== 5) return fail("TSK2008", span, [what, "4 or 5 arguments (acc, a, B, its offset and B's layout) with an A fragment", `${args.length} argument(s)`]);
  const b = lowerShared16(context, args[2]!, what, "B (its third argument)");
  const element = a.array.fragment!.element;
  if (element !== b.elementType) return fail("TSK2061", spanOf(args[2]!), [a.array.name, element, b.name, b.elementType]);
  const offset = lowerExpected(context, args[3]!, "i32", (found) => fail("TSK2008", spanOf(args[3]!), [what, "an i32 offset of B", found.type]));
  const layout = args[4] ? lowerBLayout(context, args[4], what) : {};
  return [{ kind: "wgmma", accumulator, a, b, offset, ...layout, span }];
}

/** B's layout option of a 16-bit wgmma: `{ bMajor: "k" }` (as none) or `{ bMajor: "n", bBoxRows }`. */
function lowerBLayout(context: FunctionContext, node: Expression, what: string): { bMajor?: "n"; bBoxRows?: Expr } {
  const options = optionsOf(node, what, ["bMajor", "bBoxRows"]);
  const major = options.get("bMajor");
  const majorText = major && (Node.isStringLiteral(major) || Node.isNoSubstitutionTemplateLiteral(major)) ? major.getLiteralText() : undefined;
  if (majorText !== "k" && majorText !== "n") return fail("TSK1171", spanOf(major ?? node), [what, 'bMajor: "k" or "n"', major?.getText() ?? "no bMajor"]);
  const rows = options.get("bBoxRows");
  if (majorText === "k") {
    if (rows) return fail("TSK1171", spanOf(rows), [what, "bBoxRows only with bMajor: \"n\"", rows.getText()]);
    return {};
  }
  if (!rows) return fail("TSK1171", spanOf(node), [what, "bBoxRows (the rows of B's boxes) with bMajor: \"n\"", node.getText()]);
  const bBoxRows = lowerExpected(context, rows, "i32", (found) => fail("TSK2008", spanOf(rows), [what, "an i32 bBoxRows", found.type]));
  return { bMajor: "n", bBoxRows };
}

/** `storeFragment(acc, array, offset, { swizzle: 128, boxRows })`: an accumulator into the swizzled box layout. */
function lowerBoxStore(context: FunctionContext, call: CallExpression, fragment: FragmentRef): Stmt[] {
  const span = spanOf(call);
  const what = "storeFragment()";
  const args = call.getArguments() as Expression[];
  if (args.length !== 4) return fail("TSK2008", span, [what, "4 arguments when the layout is an options object (a fragment, a shared array, an offset and { swizzle: 128, boxRows })", `${args.length} argument(s)`]);
  const binding = Node.isIdentifier(args[1]!) ? context.scope.lookup(args[1]!.getText()) : undefined;
  if (binding?.kind !== "array" || binding.array.space !== "shared" || binding.array.dims.length !== 1 || binding.array.barriers || !tileElements.has(binding.array.elementType)) {
    return fail("TSK2008", spanOf(args[1]!), [what, "a 1-D shared array of f32, bf16 or f16 as its second argument with a swizzled layout", `'${args[1]!.getText()}'`]);
  }
  const target = binding.array;
  const options = optionsOf(args[3]!, what, ["swizzle", "boxRows", "alpha", "beta"]);
  const swizzle = options.get("swizzle");
  if (!swizzle || swizzle.getText() !== "128") return fail("TSK1171", spanOf(swizzle ?? args[3]!), [what, "swizzle: 128", swizzle?.getText() ?? "no swizzle"]);
  const rows = options.get("boxRows");
  if (!rows) return fail("TSK1171", spanOf(args[3]!), [what, "boxRows (the rows of a box)", args[3]!.getText()]);
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const offset = integer(args[2]!, "offset");
  const boxRows = integer(rows, "boxRows");
  // The stride of a box's rows is one 128-byte row (ir.ts, MatrixStoreStmt).
  const stride: Expr = { kind: "literal", type: "i32", value: 128 / arrayStride(target.elementType), span: boxRows.span };
  const scalar = (name: "alpha" | "beta") => {
    const node = options.get(name);
    return node ? { [name]: lowerExpected(context, node, "f32", (found) => fail("TSK2008", spanOf(node), [what, `an f32 ${name}`, found.type])) } : {};
  };
  return [{ kind: "matrixStore", fragment, target, offset, stride, boxRows, ...scalar("alpha"), ...scalar("beta"), span }];
}

/** `storeTile(target, map, x, y, source, offset)` (ir.ts's TileStoreStmt). */
function lowerStoreTile(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  const what = "storeTile()";
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 6) return fail("TSK2008", span, [what, "6 arguments (a buffer, its tensor map, x, y, a shared array and an offset)", `${args.length} argument(s)`]);
  const arrayArg = (node: Expression, want: string, ok: (array: ArrayRef) => boolean): ArrayRef => {
    const binding = Node.isIdentifier(node) ? context.scope.lookup(node.getText()) : undefined;
    if (binding?.kind === "array" && !binding.array.barriers && !binding.array.fragment && ok(binding.array)) return binding.array;
    return fail("TSK1172", spanOf(node), [want, `'${node.getText()}'`]);
  };
  const source = arrayArg(args[4]!, "a 1-D shared array of f32, bf16 or f16 as its fifth argument", (a) => a.space === "shared" && a.dims.length === 1 && tileElements.has(a.elementType));
  const target = arrayArg(args[0]!, `a writable global buffer of ${source.elementType} (the shared array's type) as its first argument`, (a) => a.space === "global" && a.access !== "read" && a.elementType === source.elementType);
  const map = arrayArg(args[1]!, "a read-only global u32 buffer (the tensor map) as its second argument", (a) => a.space === "global" && a.elementType === "u32" && a.access === "read");
  const integer = (arg: Expression, role: string) => lowerExpected(context, arg, "i32", (found) => fail("TSK2008", spanOf(arg), [what, `an i32 ${role}`, found.type]));
  const x = integer(args[2]!, "column");
  const y = integer(args[3]!, "row");
  const offset = integer(args[5]!, "offset");
  return [{ kind: "tileStore", target, map, x, y, source, offset, span }];
}

/** `waitTileStores(pending)`, a constant from 0 to 7. */
function lowerWaitTileStores(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  if (context.kind === "helper") return fail("TSK1031", span, ["waitTileStores()", context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 1) return fail("TSK2008", span, ["waitTileStores()", "1 argument (the stores that may still read their source)", `${args.length} argument(s)`]);
  const pending = lowerExpr(context, args[0]!, "i32");
  if (pending.kind !== "literal" || !Number.isInteger(pending.value) || pending.value < 0 || pending.value > 7) return fail("TSK1173", spanOf(args[0]!), [args[0]!.getText()]);
  return [{ kind: "tileStoreWait", pending: pending.value, span }];
}

/** `setFragmentElement(frag, e, value)`: element e of the thread's part of a fragment (an f32; rounded to TF32, bf16 or f16 in such a fragment). */
function lowerSetFragmentElement(context: FunctionContext, call: CallExpression): Stmt[] {
  const span = spanOf(call);
  const what = "setFragmentElement()";
  if (context.kind === "helper") return fail("TSK1031", span, [what, context.name]);
  const args = call.getArguments() as Expression[];
  if (args.length !== 3) return fail("TSK2008", span, [what, "3 arguments (a fragment, an element index and a value)", `${args.length} argument(s)`]);
  const fragment = lowerFragmentRef(context, args[0]!, what, "first argument");
  const e = elementIndex(context, args[1]!, what);
  const value = lowerExpected(context, args[2]!, "f32", (found) => fail("TSK2008", spanOf(args[2]!), [what, "an f32 value", found.type]));
  const stored = roundFragmentValue(fragment.array.fragment!.element, value);
  return [{ kind: "store", array: fragment.array, indices: [elementSlot(fragment, e, span)], value: stored, span }];
}
