/**
 * How the WGSL backend spells types beyond scalars: vectors as `vec3<f32>`, structs by their (namer-given)
 * names, declared once per module with their fields in declaration order, which WGSL lays out exactly as
 * ir/types.ts does (storage rules: the layout every target shares). A struct that a kernel takes as a uniform
 * parameter must also obey the uniform address space's rules (a struct member aligned to 16, the member
 * after it 16-byte multiples later); where that changes its layout it gets a second declaration,
 * `Name_uniform`, with `@align`/`@size` on its struct members, and a function that copies it into the
 * storage form the kernel computes with.
 */

import type { Namer } from "./namer.ts";
import { targetScalars, layoutOf, structLayout, type ElementType, type StructType, type Type } from "../ir/types.ts";
import { structsIn } from "../ir/vectors.ts";

export class WgslTypes {
  private readonly structNames = new Map<StructType, string>();
  private readonly fieldNames = new Map<StructType, string[]>();
  private readonly uniformNames = new Map<StructType, string>();
  private readonly selectNames = new Map<StructType, string>();

  constructor(
    private readonly names: Namer,
    private readonly makeFieldNamer: () => Namer,
  ) {}

  /** The WGSL type of a value. */
  name(type: Type | ElementType): string {
    if (typeof type === "string") return targetScalars.wgsl[type].value;
    if (type.kind === "vector") return `vec${type.size}<${targetScalars.wgsl[type.element].value}>`;
    return this.struct(type);
  }

  /** A struct's name, given on first use. */
  struct(type: StructType): string {
    let name = this.structNames.get(type);
    if (!name) {
      name = this.names.name(type, type.name);
      this.structNames.set(type, name);
      const fields = this.makeFieldNamer();
      this.fieldNames.set(type, type.fields.map((field) => fields.name(field, field.name)));
    }
    return name;
  }

  field(type: StructType, index: number): string {
    this.struct(type);
    return this.fieldNames.get(type)![index]!;
  }

  /** The declarations of `structs` (each after those it contains), then the uniform forms that `uniform` need. */
  declarations(structs: readonly StructType[], uniform: readonly StructType[], selected: readonly StructType[] = []): string[] {
    const lines: string[] = [];
    for (const struct of structs) {
      lines.push(`struct ${this.struct(struct)} {`);
      struct.fields.forEach((field, index) => lines.push(`  ${this.field(struct, index)}: ${this.name(field.type)},`));
      lines.push("}");
    }
    // `c ? a : b` of structs: both operands are pure, so a function of both is the same choice.
    for (const struct of selected) {
      const name = this.struct(struct);
      lines.push(`fn ${this.selectFunction(struct)}(f: ${name}, t: ${name}, c: bool) -> ${name} {`, "  if (c) { return t; }", "  return f;", "}");
    }
    const variants = uniform.flatMap((struct) => structsIn(struct)).filter((struct, index, all) => all.indexOf(struct) === index && needsUniformForm(struct));
    for (const struct of variants) {
      const name = this.names.name({ uniformOf: struct }, `${this.struct(struct)}_uniform`);
      this.uniformNames.set(struct, name);
      lines.push(`struct ${name} {`);
      struct.fields.forEach((field, index) => {
        const last = index === struct.fields.length - 1;
        lines.push(`  ${uniformMemberAttributes(field.type, last)}${this.field(struct, index)}: ${this.uniformName(field.type)},`);
      });
      lines.push("}");
      // The storage form the kernel computes with, field by field.
      lines.push(`fn tsk_from_${name}(u: ${name}) -> ${this.struct(struct)} {`);
      const args = struct.fields.map((field, index) => this.fromUniform(field.type, `u.${this.field(struct, index)}`));
      lines.push(`  return ${this.struct(struct)}(${args.join(", ")});`);
      lines.push("}");
    }
    return lines;
  }

  /** The function that chooses between two values of a struct (`select` in WGSL takes no structs). */
  selectFunction(struct: StructType): string {
    let name = this.selectNames.get(struct);
    if (!name) this.selectNames.set(struct, (name = this.names.name({}, `tsk_select_${this.struct(struct)}`)));
    return name;
  }

  /** The type of a value in a uniform struct: its uniform form where it has one. */
  uniformName(type: Type | ElementType): string {
    return typeof type === "object" && type.kind === "struct" ? (this.uniformNames.get(type) ?? this.struct(type)) : this.name(type);
  }

  /** A uniform value (text) as the storage form of its type. */
  fromUniform(type: Type | ElementType, text: string): string {
    return typeof type === "object" && type.kind === "struct" && this.uniformNames.has(type) ? `tsk_from_${this.uniformNames.get(type)}(${text})` : text;
  }
}

/** Whether a struct lies otherwise under the uniform rules than under the storage rules (itself or a struct in it). */
function needsUniformForm(struct: StructType): boolean {
  const storage = structLayout(struct);
  const uniform = structLayout(struct, "uniform");
  return storage.size !== uniform.size || storage.offsets.some((offset, index) => offset !== uniform.offsets[index]) || struct.fields.some((field) => typeof field.type === "object" && field.type.kind === "struct" && needsUniformForm(field.type));
}

/**
 * `@align(16) @size(…)` for a struct-typed member of a uniform struct: WGSL checks the uniform rules but lays
 * out by the storage ones, so the attributes ask for what the rules require (ir/types.ts computes the same).
 */
export function uniformMemberAttributes(type: Type | ElementType, last: boolean): string {
  if (typeof type !== "object" || type.kind !== "struct") return "";
  const { size, align } = layoutOf(type, "uniform");
  const attributes = [`@align(${Math.ceil(align / 16) * 16})`];
  if (!last) attributes.push(`@size(${Math.ceil(size / 16) * 16})`);
  return `${attributes.join(" ")} `;
}
