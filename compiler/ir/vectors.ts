/**
 * Facts about vector and struct values that the frontend, the passes and the backends share: lanes and
 * swizzles, the scalar a vector holds, the type of a part of a value (a field, some lanes), the scalar
 * leaves of a value in memory order with their byte offsets (how the CPU reads a struct buffer through
 * typed views), and the read of the place an assignment or store writes. The types themselves, and their
 * layout, are types.ts's.
 */

import { declaredVariables, type Access, type Expr, type Span, type Stmt } from "./ir.ts";
import { exprsOf, walkExpr, walkStmts } from "./rewrite.ts";
import { isStruct, isVector, layoutOf, scalars, structLayout, vectorType, type ElementType, type FieldType, type ScalarType, type StructType, type Type, type VectorElement, type VectorSize, type VectorType } from "./types.ts";

/** The lanes of a vector as kernels name them. */
export const laneNames = "xyzw";

/** The lanes a swizzle names (`zyx` → [2, 1, 0]); undefined when `name` is not a swizzle of a vector of `size` lanes. */
export function parseSwizzle(name: string, size: number): number[] | undefined {
  if (name.length < 1 || name.length > 4) return undefined;
  const lanes = [...name].map((letter) => laneNames.indexOf(letter));
  return lanes.every((lane) => lane >= 0 && lane < size) ? lanes : undefined;
}

/** The text of a swizzle: [2, 1, 0] → `zyx`. */
export function swizzleName(lanes: readonly number[]): string {
  return lanes.map((lane) => laneNames[lane]).join("");
}

/** The scalar a value holds lane by lane: a vector's element, or the scalar itself. Structs have none. */
export function elementOf(type: Type): ScalarType {
  if (typeof type === "string") return type;
  if (type.kind === "vector") return type.element;
  throw new Error(`internal: struct ${type.name} has no element type`);
}

/** Lanes of a scalar (1) or a vector. */
export function laneCount(type: Type): number {
  return typeof type === "string" ? 1 : type.kind === "vector" ? type.size : 0;
}

/** The type of `lanes` lanes of `element`: the scalar for one lane, else the vector. */
export function lanesOf(element: ScalarType, lanes: number): ScalarType | VectorType {
  return lanes === 1 ? element : vectorType(element as VectorElement, lanes as VectorSize);
}

/** The same shape as `type` (a scalar or a vector) with another element: the bool vector of a comparison. */
export function withElement(type: Type, element: ScalarType): ScalarType | VectorType {
  return lanesOf(element, laneCount(type));
}

/** The type of the part of a `type` value that `path` leads to. */
export function partType(type: Type | ElementType, path: readonly Access[] = []): Type {
  let current = type as Type;
  for (const step of path) {
    if (step.kind === "field") {
      if (!isStruct(current)) throw new Error("internal: a field of a value that is not a struct");
      current = current.fields[step.field]!.type as Type;
    } else {
      current = lanesOf(elementOf(current), step.lanes.length);
    }
  }
  return current;
}

/** A read of the part of `value` that `path` leads to. */
export function readPart(value: Expr, path: readonly Access[] = [], span: Span = value.span): Expr {
  let current = value;
  for (const step of path) {
    current =
      step.kind === "field"
        ? { kind: "field", type: partType(current.type, [step]), value: current, field: step.field, span }
        : { kind: "swizzle", type: partType(current.type, [step]), value: current, lanes: step.lanes, span };
  }
  return current;
}

/** The value an assignment or store writes into, as an expression (for `x op= v` written out as `x = x op v`). */
export function placeRead(stmt: Stmt & { kind: "assign" | "store" }): Expr {
  const whole: Expr =
    stmt.kind === "assign"
      ? { kind: "variable", type: stmt.variable.type, variable: stmt.variable, span: stmt.span }
      : { kind: "load", type: loadType(stmt.array.elementType), array: stmt.array, indices: stmt.indices, span: stmt.span };
  return readPart(whole, stmt.path, stmt.span);
}

/** The type of the place an assignment or store writes: the variable or element, or the part its path leads to. */
export function placeType(stmt: Stmt & { kind: "assign" | "store" }): Type {
  return partType(stmt.kind === "assign" ? stmt.variable.type : loadType(stmt.array.elementType), stmt.path);
}

/** What a load of an array element gives: narrow integers widen to i32/u32, 8-bit floats to f32; vectors and structs are themselves. */
export function loadType(element: ElementType): Type {
  if (typeof element !== "string") return element;
  return scalars[element].valueType;
}

/** One scalar of a value's memory: its path from the whole value, its scalar type and its byte offset. */
export interface Leaf {
  readonly path: readonly Access[];
  readonly type: ScalarType;
  readonly offset: number;
}

/**
 * The scalars of a value in memory order, with their byte offsets in WGSL's storage layout (a struct's
 * fields in declaration order, each vector lane by lane). Scalars give one leaf at offset 0.
 */
export function leavesOf(type: Type | ElementType): Leaf[] {
  if (typeof type === "string") return [{ path: [], type: type === "bool" ? type : (loadType(type) as ScalarType), offset: 0 }];
  if (type.kind === "vector") {
    const bytes = layoutOf(type).size / type.size;
    return Array.from({ length: type.size }, (_, lane) => ({ path: [{ kind: "swizzle", lanes: [lane] }], type: type.element, offset: lane * bytes }));
  }
  const { offsets } = structLayout(type);
  return type.fields.flatMap((field, index) =>
    leavesOf(field.type).map((leaf) => ({ path: [{ kind: "field" as const, field: index }, ...leaf.path], type: leaf.type, offset: offsets[index]! + leaf.offset })),
  );
}

/** The structs a type mentions (itself, its fields' structs), each after the structs it contains. */
export function structsIn(type: Type | ElementType | FieldType, into: StructType[] = []): StructType[] {
  if (isStruct(type) && !into.includes(type)) {
    for (const field of type.fields) structsIn(field.type, into);
    into.push(type);
  }
  return into;
}

/** Whether a type is a vector or a struct: a value that the scalar-only parts of the compiler do not take. */
export function isComposite(type: Type | ElementType): type is VectorType | StructType {
  return isVector(type) || isStruct(type);
}

/**
 * Every struct a module's code names, each after the structs it contains: those of the given types
 * (parameters, arrays) and of every local and expression of the bodies. What a backend declares.
 */
export function structsOf(types: Iterable<Type | ElementType>, bodies: Iterable<readonly Stmt[]>): StructType[] {
  const found: StructType[] = [];
  for (const type of types) structsIn(type, found);
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      for (const variable of declaredVariables(stmt)) structsIn(variable.type, found);
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => structsIn(e.type, found));
    });
  }
  return found;
}

/**
 * Lane `lane` of a vector expression, read through what built it where that is plain: the argument of a
 * construction that holds it (`vec3f(a, b, c)` → b), the source lane of a swizzle (`v.zyx` lane 0 → `v.z`);
 * otherwise `expr.x`-style swizzle of the expression.
 */
export function laneOf(expr: Expr, lane: number): Expr {
  if (expr.kind === "swizzle") return laneOf(expr.value, expr.lanes[lane]!);
  if (expr.kind === "construct" && expr.type.kind === "vector") {
    if (expr.args.length === 1 && laneCount(expr.args[0]!.type) === 1) return expr.args[0]!;
    let first = 0;
    for (const arg of expr.args) {
      const lanes = laneCount(arg.type);
      if (lane < first + lanes) return lanes === 1 ? arg : laneOf(arg, lane - first);
      first += lanes;
    }
  }
  return { kind: "swizzle", type: elementOf(expr.type), value: expr, lanes: [lane], span: expr.span };
}
