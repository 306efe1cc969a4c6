/**
 * Vector and struct types as kernels write them in annotations: a vector by tskernel's name (`vec3f`), a
 * struct by the name of an `interface` or a `type` alias of an object type declared in the project
 * (`interface Particle { pos: vec3f; mass: f32 }`), and arrays of either as global buffers (`Particle[]`,
 * `readonly vec4f[]`, `Array<…>`, `ReadonlyArray<…>`). Each struct declaration becomes one `StructType`,
 * made once and shared by every kernel and helper that names it, so struct types compare with `===`.
 * context.ts asks here about any annotation that is not a scalar one.
 */

import { Node, SyntaxKind, type InterfaceDeclaration, type TypeAliasDeclaration, type TypeNode } from "ts-morph";
import { fail } from "../diagnostics/diagnostic.ts";
import type { Span } from "../diagnostics/span.ts";
import { scalars, vectorTypes, type FieldType, type StructField, type StructType, type VectorType } from "../ir/types.ts";
import { originOf } from "./program.ts";

/** What an annotation of a vector or struct type stands for: a value, or a global buffer of such elements. */
export type CompositeAnnotation =
  | { readonly kind: "value"; readonly type: VectorType | StructType }
  | { readonly kind: "buffer"; readonly elementType: VectorType | StructType; readonly access: "read" | "read_write" };

function spanOf(node: Node): Span {
  return { file: node.getSourceFile().getFilePath(), start: node.getStart(), end: node.getEnd() };
}

/** The vector or struct type an annotation names, or a buffer of them; undefined for anything else. */
export function resolveCompositeType(typeNode: TypeNode): CompositeAnnotation | undefined {
  if (Node.isArrayTypeNode(typeNode)) return bufferOf(typeNode.getElementTypeNode(), "read_write");
  if (Node.isTypeOperatorTypeNode(typeNode) && typeNode.getOperator() === SyntaxKind.ReadonlyKeyword) {
    const inner = typeNode.getTypeNode();
    return Node.isArrayTypeNode(inner) ? bufferOf(inner.getElementTypeNode(), "read") : undefined;
  }
  if (!Node.isTypeReference(typeNode)) return undefined;
  const nameNode = typeNode.getTypeName();
  if (!Node.isIdentifier(nameNode)) return undefined;
  const origin = originOf(nameNode);
  const typeArgs = typeNode.getTypeArguments();
  if (origin.kind === "tskernel") {
    const vector = vectorTypes.get(origin.name);
    return vector && typeArgs.length === 0 ? { kind: "value", type: vector } : undefined;
  }
  if (origin.kind === "global") {
    if ((origin.name === "Array" || origin.name === "ReadonlyArray") && typeArgs.length === 1) {
      return bufferOf(typeArgs[0]!, origin.name === "Array" ? "read_write" : "read");
    }
    if (origin.name === "Readonly" && typeArgs.length === 1) {
      const inner = resolveCompositeType(typeArgs[0]!);
      return inner?.kind === "buffer" ? { ...inner, access: "read" } : undefined;
    }
    return undefined;
  }
  if (origin.kind !== "user" || typeArgs.length > 0) return undefined;
  const declaration = origin.declaration;
  if (Node.isInterfaceDeclaration(declaration)) return { kind: "value", type: structOf(declaration) };
  if (Node.isTypeAliasDeclaration(declaration)) {
    const aliased = declaration.getTypeNode();
    if (Node.isTypeLiteral(aliased!)) return { kind: "value", type: structOf(declaration) };
    // `type Vec = vec3f`: another name for what it aliases.
    return aliased && declaration.getTypeParameters().length === 0 ? resolveCompositeType(aliased) : undefined;
  }
  return undefined;
}

function bufferOf(elementNode: TypeNode, access: "read" | "read_write"): CompositeAnnotation | undefined {
  const element = resolveCompositeType(elementNode);
  if (element?.kind !== "value") return undefined;
  // bool vectors have no memory layout the targets share: they exist only as values.
  if (element.type.kind === "vector" && element.type.element === "bool") return undefined;
  return { kind: "buffer", elementType: element.type, access };
}

// ---------------------------------------------------------------------------------------------------------
// Struct declarations

const structs = new WeakMap<Node, StructType>();
/** Declarations whose fields are being read, to find a struct that contains itself. */
const resolving: { node: Node; name: string }[] = [];

/** The struct type of an interface or object type alias: made on first use, the same object afterwards. */
export function structOf(declaration: InterfaceDeclaration | TypeAliasDeclaration): StructType {
  const existing = structs.get(declaration);
  if (existing) return existing;
  const name = declaration.getName();
  const span = spanOf(declaration.getNameNode());
  const cycle = resolving.findIndex((entry) => entry.node === declaration);
  if (cycle >= 0) fail("TSK1152", span, [name, [...resolving.slice(cycle).map((entry) => entry.name), name].join(" → ")]);
  if (declaration.getTypeParameters().length > 0) fail("TSK1153", span, [name, "generic structs are not supported"]);
  if (Node.isInterfaceDeclaration(declaration) && declaration.getExtends().length > 0) {
    fail("TSK1153", spanOf(declaration.getExtends()[0]!), [name, "a struct cannot extend another type: write its fields, or make the other struct a field"]);
  }
  const members = Node.isInterfaceDeclaration(declaration) ? declaration.getMembers() : (declaration.getTypeNode() as import("ts-morph").TypeLiteralNode).getMembers();
  resolving.push({ node: declaration, name });
  try {
    const fields: StructField[] = members.map((member) => {
      if (!Node.isPropertySignature(member)) return fail("TSK1153", spanOf(member), [name, "its members must be fields (`name: type`), not methods or index signatures"]);
      const nameNode = member.getNameNode();
      if (!Node.isIdentifier(nameNode)) return fail("TSK1153", spanOf(nameNode), [name, "field names must be identifiers"]);
      if (member.hasQuestionToken()) return fail("TSK1153", spanOf(member), [name, `field '${member.getName()}' is optional; every field of a struct is always there`]);
      const typeNode = member.getTypeNode();
      if (!typeNode) return fail("TSK1150", spanOf(member), [member.getName(), name, "no type"]);
      return { name: member.getName(), type: fieldType(typeNode, member.getName(), name), span: spanOf(member) };
    });
    if (fields.length === 0) fail("TSK1151", span, [name]);
    const struct: StructType = { kind: "struct", name, fields, span };
    structs.set(declaration, struct);
    return struct;
  } finally {
    resolving.pop();
  }
}

/**
 * The scalar field types: those every target lays out alike (bool has no shared layout; bf16 and the narrow
 * integers WGSL packs into words; f64 WGSL lacks, and the CPU's views of structs are of 4- and 2-byte words).
 */
const fieldScalars: ReadonlySet<string> = new Set(["f32", "i32", "u32", "f16"]);

/** A field's type: a scalar of fieldScalars, a vector of numbers, or a struct. */
function fieldType(typeNode: TypeNode, field: string, struct: string): FieldType {
  const text = typeNode.getText();
  if (Node.isTypeReference(typeNode) && Node.isIdentifier(typeNode.getTypeName()) && typeNode.getTypeArguments().length === 0) {
    const origin = originOf(typeNode.getTypeName() as import("ts-morph").Identifier);
    const scalar = origin.kind === "tskernel" ? Object.values(scalars).find((info) => info.typescript.annotation === origin.name) : undefined;
    if (scalar && fieldScalars.has(scalar.name)) return scalar.name as FieldType;
    if (scalar && scalar.name !== "bool") {
      return fail("TSK1150", spanOf(typeNode), [field, struct, text], {
        notes: [scalar.name === "f64" ? "f64 fields are not supported yet (WebGPU has no f64): use f32, or a buffer of its own" : `WGSL would have to unpack a ${scalar.name} from a u32 word: store it in a u32 field (or an f32) and convert`],
      });
    }
  }
  const composite = resolveCompositeType(typeNode);
  if (composite?.kind === "value" && !(composite.type.kind === "vector" && composite.type.element === "bool")) return composite.type;
  const isBool = typeNode.getKind() === SyntaxKind.BooleanKeyword || /^(bool|vec[234]b)$/.test(text);
  return fail("TSK1150", spanOf(typeNode), [field, struct, text], {
    notes: isBool
      ? ["bool has no memory layout that every target shares: store a u32 (0 or 1) and compare it"]
      : typeNode.getKind() === SyntaxKind.NumberKeyword
        ? ["`number` is ambiguous in a kernel: write f32, i32 or u32"]
        : [],
  });
}
