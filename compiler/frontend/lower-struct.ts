/**
 * Lowers what kernels do with struct values (docs/language.md, "Structs"): reading a field (`p.pos`, also of
 * a buffer element: `particles[i].mass`) and building a value from an object literal whose type the context
 * gives (`const p: Particle = { pos, vel: vec3f(0), mass: 1 }`, `particles[i] = { … }`, a helper's argument
 * or return). The struct types themselves come from composite-types.ts; assignments to fields are
 * statements (lower-stmt.ts). Members of values in general (a field, or a vector's lanes) go through
 * `lowerMember`.
 */

import { Node, type Expression, type ObjectLiteralExpression } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import type { Expr, Span, Type } from "../ir/ir.ts";
import { isStruct, typeName, type StructType } from "../ir/types.ts";
import { laneCount } from "../ir/vectors.ts";
import { spanOf, type FunctionContext } from "./context.ts";
import { lowerSwizzle } from "./lower-vector.ts";

/** `value.name`: a field of a struct or lanes of a vector; undefined for other values (the caller says why). */
export function lowerMember(value: Expr, name: string, nameSpan: Span, span: Span): Expr | undefined {
  if (isStruct(value.type)) {
    const field = fieldIndex(value.type, name, nameSpan);
    return { kind: "field", type: value.type.fields[field]!.type as Type, value, field, span };
  }
  if (laneCount(value.type) > 1) return lowerSwizzle(value, name, nameSpan, span);
  return undefined;
}

/** The index of a struct's field by name; TSK1155 when it has none of that name. */
export function fieldIndex(struct: StructType, name: string, span: Span): number {
  const index = struct.fields.findIndex((field) => field.name === name);
  if (index < 0) return fail("TSK1155", span, [struct.name, name], { notes: [`its fields are ${struct.fields.map((field) => field.name).join(", ")}`] });
  return index;
}

/**
 * An object literal as a value of `struct`: every field given once, by `name: value` or shorthand `name`, each
 * value of the field's type. The IR builds it in declaration order; the values are pure, so the order in
 * which they were written does not matter.
 */
export function lowerStructLiteral(context: FunctionContext, node: ObjectLiteralExpression, struct: StructType): Expr {
  const span = spanOf(node);
  const values = new Map<number, Expr>();
  for (const property of node.getProperties()) {
    let nameNode: Node;
    let valueNode: Expression;
    if (Node.isPropertyAssignment(property)) {
      nameNode = property.getNameNode();
      valueNode = property.getInitializerOrThrow();
    } else if (Node.isShorthandPropertyAssignment(property)) {
      nameNode = property.getNameNode();
      valueNode = property.getNameNode();
    } else {
      return fail("TSK1157", spanOf(property), [struct.name, "gives each field as `name: value` or `name`; spreads, methods and accessors are not supported"]);
    }
    if (!Node.isIdentifier(nameNode)) return fail("TSK1157", spanOf(nameNode), [struct.name, "names its fields with identifiers"]);
    const index = fieldIndex(struct, nameNode.getText(), spanOf(nameNode));
    if (values.has(index)) return fail("TSK1157", spanOf(property), [struct.name, `gives field '${nameNode.getText()}' twice`]);
    const field = struct.fields[index]!;
    const value = context.module.lower.expected(context, valueNode, field.type as Type, (found) =>
      fail("TSK2002", spanOf(valueNode), [typeName(found.type), `${struct.name}.${field.name}`, typeName(field.type)]),
    );
    values.set(index, value);
  }
  const missing = struct.fields.filter((_, index) => !values.has(index)).map((field) => field.name);
  if (missing.length > 0) return fail("TSK1157", span, [struct.name, `misses ${missing.length === 1 ? "field" : "fields"} ${missing.map((name) => `'${name}'`).join(", ")}`]);
  return { kind: "construct", type: struct, args: struct.fields.map((_, index) => values.get(index)!), span };
}

/** An object literal where no struct type is expected: TSK1157, saying how to give it one. */
export function structLiteralWithoutType(node: ObjectLiteralExpression, hint: Type | undefined): never {
  return fail("TSK1160", spanOf(node), [hint === undefined ? "nothing here expects a struct" : `a ${typeName(hint)} is expected here`], {
    notes: ["annotate the variable (`const p: Particle = { … }`), or write it where a struct is expected: a store to a struct buffer, a helper's struct argument or return"],
  });
}
