/**
 * Vectors and structs in the CUDA output. A vector is a small struct of its lanes, `tsk_vec3f { float x, y,
 * z; }`, laid out as CUDA's `float3` (and `tsk_vec4f` as `float4`, aligned to 16; static_asserts say so), and
 * a struct declares each field `alignas` its WGSL alignment, with its offsets and size static_asserted
 * against the layout every target shares (ir/types.ts). An array of bare vec3 (a buffer, a shared or private
 * array) has 16-byte elements, `tsk_vec3f_padded { tsk_vec3f v; }`, as WGSL's stride is 16 (8 for vec3h). The
 * f16 vectors are of cuda-halves.ts's `tsk_f16` lanes, each operation rounded to f16 as a scalar one is.
 *
 * Operations on vectors are inline helpers: C++ operators for the operators (`a + b`, `a < b` gives a
 * `tsk_vec3b`), overloaded functions for the rest (`tsk_dot(a, b)`, `tsk_select(f, t, c)`, `tsk_zyx(v)`,
 * `tsk_make_vec4f(v, 1.0f)`, `tsk_to_vec3i(v)`). Each helper's body is IR: its lanes from the definitions in
 * ir/vector-functions.ts, legalized as any CUDA code is (i32 lanes wrap through unsigned arithmetic), and
 * printed by cuda.ts like a user helper, so a lane means the same here as on the CPU. Only the helpers the
 * module uses are printed.
 *
 * Why helpers rather than scalarizing as the CPU does (the target property `scalarizeVectors`, which
 * scalarize-vectors.ts would honour for kernels with scalar buffers): nvcc inlines the helpers and keeps
 * every lane in a register, so what it makes is what it makes of scalars. Measured with nvcc 13.0 for sm_90
 * on an all-pairs accumulation (dot, inverseSqrt, add, mul in the loop; cross, normalize, mix, clamp after):
 * 173 PTX instructions through the helpers against 174 scalarized, the same 99 floating-point ones, 32
 * registers both. And the `.cu` reads as the kernel was written, and a whole vector or struct moves in one
 * piece: copying an element of `Body[]` (examples/struct-bodies.ts) is `ld.global.v4.f32`s, not lane loads.
 */

import type { ArrayRef, BinaryOp, Expr, Span, Stmt, Variable } from "../ir/ir.ts";
import { childExprs, exprsOf, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { arrayStride, layoutOf, structLayout, targetScalars, type ElementType, type ScalarType, type StructType, type Type, type VectorType } from "../ir/types.ts";
import { expandIntrinsic } from "../ir/vector-functions.ts";
import { elementOf, laneCount, laneNames, swizzleName } from "../ir/vectors.ts";
import { legalize } from "../passes/legalize.ts";
import type { Namer } from "./namer.ts";
import { targets } from "./targets.ts";

/** A helper function for vectors, as IR for cuda.ts to print: `__device__ __forceinline__ <result> <name>(<params>)`. */
export interface VectorHelper {
  /** The C++ name: an operator (`operator+`) or a function. */
  readonly name: string;
  readonly params: readonly Variable[];
  readonly result: Type;
  readonly body: readonly Stmt[];
}

const span: Span = { file: "", start: 0, end: 0 };

/** The C++ operator of each binary and unary operation on vectors. */
const operators: Readonly<Record<string, string>> = {
  add: "+", sub: "-", mul: "*", div: "/", rem: "%", eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", and: "&", or: "|",
};
const unaryOperators: Readonly<Record<string, string>> = { neg: "-", not: "!" };

export class CudaVectors {
  private readonly helpers = new Map<string, VectorHelper>();
  private readonly structNames = new Map<StructType, string>();
  private readonly fieldNames = new Map<StructType, string[]>();
  private readonly vectors = new Set<VectorType>();
  private readonly padded = new Set<VectorType>();

  constructor(
    private readonly names: Namer,
    private readonly makeFieldNamer: () => Namer,
  ) {}

  // -------------------------------------------------------------------------------------------------------
  // Types

  /** The C++ type of a value. */
  type(type: Type | ElementType): string {
    if (typeof type === "string") return targetScalars.cuda[type].value;
    if (type.kind === "vector") {
      this.vectors.add(type);
      return `tsk_${type.name}`;
    }
    return this.struct(type);
  }

  /** The C++ type of an array element: vec3 elements are padded to WGSL's stride (16 bytes, 8 for vec3h). */
  element(type: ElementType): string {
    if (typeof type === "string") return targetScalars.cuda[type].storage ?? targetScalars.cuda[type].value;
    if (type.kind === "vector" && type.size === 3) {
      this.vectors.add(type);
      this.padded.add(type);
      return `tsk_${type.name}_padded`;
    }
    return this.type(type);
  }

  /** Whether an array's elements are padded vec3 (its elements print as `a[i].v`). */
  isPadded(array: ArrayRef): boolean {
    return typeof array.elementType === "object" && array.elementType.kind === "vector" && array.elementType.size === 3;
  }

  struct(type: StructType): string {
    let name = this.structNames.get(type);
    if (!name) {
      name = this.names.name(type, type.name);
      this.structNames.set(type, name);
      const fields = this.makeFieldNamer();
      this.fieldNames.set(type, type.fields.map((field) => fields.name(field, field.name)));
      for (const field of type.fields) this.type(field.type);
    }
    return name;
  }

  field(type: StructType, index: number): string {
    this.struct(type);
    return this.fieldNames.get(type)![index]!;
  }

  /**
   * The declarations of the vector types used (with include guards: a translation unit may include several
   * generated headers) and of `structs` (each after those it contains), with their layouts asserted.
   */
  declarations(structs: readonly StructType[]): string[] {
    for (const struct of structs) this.struct(struct);
    const lines: string[] = [];
    const order = [...this.vectors].sort((a, b) => vectorOrder(a) - vectorOrder(b));
    for (const vector of order) {
      const name = `tsk_${vector.name}`;
      const { size, align } = layoutOf(vector);
      const scalar = targetScalars.cuda[vector.element].value;
      const lanes = [...laneNames.slice(0, vector.size)].join(", ");
      // vec2 and vec4 are aligned as their size (float2, float4); vec3 as its scalar (float3): 12 bytes.
      const alignment = vector.element === "bool" || vector.size === 3 ? "" : `alignas(${align}) `;
      lines.push(`#ifndef TSK_${vector.name.toUpperCase()}_DEFINED`, `#define TSK_${vector.name.toUpperCase()}_DEFINED`);
      lines.push(`struct ${alignment}${name} { ${scalar} ${lanes}; };`);
      const builtin = cudaBuiltinVector(vector);
      if (builtin) lines.push(`static_assert(sizeof(${name}) == sizeof(${builtin}) && alignof(${name}) == alignof(${builtin}), "${name} is laid out as ${builtin}");`);
      else if (vector.element !== "bool") lines.push(`static_assert(sizeof(${name}) == ${size}, "${name} is ${size} bytes");`);
      if (this.padded.has(vector)) {
        // WGSL's stride: 16 bytes for vec3 of 4-byte lanes, 8 for vec3h.
        const stride = arrayStride(vector);
        lines.push(`struct alignas(${stride}) ${name}_padded { ${name} v; };`);
        lines.push(`static_assert(sizeof(${name}_padded) == ${stride}, "arrays of ${vector.name} have WGSL's ${stride}-byte stride");`);
      }
      lines.push("#endif");
    }
    for (const struct of structs) {
      const name = this.struct(struct);
      const { offsets, size, align } = structLayout(struct);
      const declaration = [`struct ${name} {`, ...struct.fields.map((field, index) => `  alignas(${layoutOf(field.type).align}) ${this.type(field.type)} ${this.field(struct, index)};`), "};"];
      // The layout every target shares (WGSL's storage rules): a buffer's bytes mean the same here. NVRTC
      // (CUDA 13) has no offsetof, not even GCC's __builtin_offsetof, which nvcc's front end takes: it failed
      // every struct kernel on the H100 (bench/results/2026-11-26-particles-gpu-h100-run1-log.txt). So the
      // offsets are asserted where nvcc compiles (every golden .cu in CI, a .cuh in host code, build-time
      // cubins) and NVRTC checks the size and alignment of the same declaration.
      const checks = struct.fields.map((_, index) => `__builtin_offsetof(${name}, ${this.field(struct, index)}) == ${offsets[index]}`);
      declaration.push(`static_assert(sizeof(${name}) == ${size} && alignof(${name}) == ${align}, "${name} has the size and alignment of WGSL's ${struct.name}");`);
      declaration.push("#ifndef __CUDACC_RTC__", `static_assert(${checks.join(" && ")}, "${name} has the field offsets of WGSL's ${struct.name}");`, "#endif");
      // Guarded by the declaration's own text: a translation unit may include the .cuh and the .cu (or two
      // headers with the same struct), and another struct of the same name stays a redefinition error.
      const guard = `TSK_STRUCT_${name}_${fingerprint(declaration.join("\n"))}`;
      lines.push(`#ifndef ${guard}`, `#define ${guard}`, ...declaration, "#endif");
    }
    return lines;
  }

  // -------------------------------------------------------------------------------------------------------
  // Operations

  /**
   * Records the helpers an expression needs (called on every expression of the module before printing), so
   * that they can be printed first.
   */
  collect(expr: Expr): void {
    this.helperFor(expr);
  }

  /** The helpers the module's code uses, in the order they were first needed. */
  helperList(): VectorHelper[] {
    return [...this.helpers.values()];
  }

  /**
   * How an operation on vectors prints: through a helper (`tsk_dot(a, b)`), or undefined where the common
   * form works (operators, which the helpers overload; reads of variables, elements, fields, calls).
   */
  call(expr: Expr, print: (expr: Expr) => string): string | undefined {
    const helper = this.helperFor(expr);
    if (!helper || helper.name.startsWith("operator")) return undefined;
    // The helper's parameters: WGSL's order for select (false, true, condition), the operands' otherwise.
    const operands = expr.kind === "select" ? [expr.whenFalse, expr.whenTrue, expr.condition] : childExprs(expr);
    return `${helper.name}(${operands.map(print).join(", ")})`;
  }

  private helperFor(expr: Expr): VectorHelper | undefined {
    switch (expr.kind) {
      case "binary": {
        const operand = expr.left.type;
        if (laneCount(operand) < 2) return undefined;
        const op = laneOp(expr.op, elementOf(operand));
        return this.helper(`operator${operators[expr.op]}`, [operand, operand], expr.type, ([a, b]) =>
          lanesOf(expr.type, (i) => ({ kind: "binary", op, type: elementOf(expr.type), left: lane(a!, i), right: lane(b!, i), span })),
        );
      }
      case "unary":
        if (laneCount(expr.type) < 2) return undefined;
        return this.helper(`operator${unaryOperators[expr.op]}`, [expr.type], expr.type, ([a]) =>
          lanesOf(expr.type, (i) => ({ kind: "unary", op: expr.op, type: elementOf(expr.type), operand: lane(a!, i), span })),
        );
      case "select": {
        if (laneCount(expr.type) < 2) return undefined;
        const vectorCondition = laneCount(expr.condition.type) > 1;
        return this.helper("tsk_select", [expr.type, expr.type, expr.condition.type], expr.type, ([f, t, c]) =>
          lanesOf(expr.type, (i) => ({ kind: "select", type: elementOf(expr.type), condition: vectorCondition ? lane(c!, i) : read(c!), whenTrue: lane(t!, i), whenFalse: lane(f!, i), span })),
        );
      }
      case "convert":
        if (laneCount(expr.type) < 2) return undefined;
        return this.helper(`tsk_to_${(expr.type as VectorType).name}`, [expr.value.type], expr.type, ([v]) =>
          lanesOf(expr.type, (i) => ({ kind: "convert", type: elementOf(expr.type), value: lane(v!, i), span })),
        );
      case "swizzle":
        if (expr.lanes.length < 2) return undefined;
        return this.helper(`tsk_${swizzleName(expr.lanes)}`, [expr.value.type], expr.type, ([v]) => lanesOf(expr.type, (i) => lane(v!, expr.lanes[i]!)));
      case "construct": {
        if (expr.type.kind !== "vector") return undefined;
        const vector = expr.type;
        // Scalars filling every lane print as `tsk_vec3f{x, y, z}`; a broadcast or a mix with vectors needs a helper.
        if (expr.args.length === vector.size) return undefined;
        return this.helper(`tsk_make_${vector.name}`, expr.args.map((arg) => arg.type), vector, (params) => {
          const parts = params.flatMap((param) => (laneCount(param.type) > 1 ? Array.from({ length: laneCount(param.type) }, (_, i) => lane(param, i)) : [read(param)]));
          return lanesOf(vector, (i) => parts[parts.length === 1 ? 0 : i]!);
        });
      }
      case "intrinsic": {
        const first = expr.args[0]!.type;
        if (laneCount(first) < 2) return undefined;
        return this.helper(`tsk_${expr.name}`, expr.args.map((arg) => arg.type), expr.type, (params, bind) => {
          const args = params.map((param) => Array.from({ length: laneCount(param.type) }, (_, i) => lane(param, i)));
          const native = elementOf(first) === "f32" && targets.cuda.legalize.nativeF32Functions?.has(expr.name);
          const lanes = native ? args[0]!.map((a): Expr => ({ kind: "intrinsic", name: expr.name, type: "f32", args: [a], span })) : expandIntrinsic(expr.name, elementOf(first), args, span, bind);
          return lanes.length === 1 ? lanes[0]! : { kind: "construct", type: expr.type as VectorType, args: lanes, span };
        });
      }
      default:
        return undefined;
    }
  }

  /**
   * The helper `name` for operand types `params` (C++ overloads by them), made on first use: its body returns
   * what `result` builds from the parameters, legalized for CUDA.
   */
  private helper(name: string, params: readonly Type[], result: Type, build: (params: Variable[], bind: (expr: Expr, name: string) => Expr) => Expr): VectorHelper {
    const key = `${name}(${params.map(typeKey).join(",")})`;
    const existing = this.helpers.get(key);
    if (existing) return existing;
    for (const type of [...params, result]) this.type(type);
    const variables = params.map((type, index): Variable => ({ kind: "variable", name: "abcd"[index]!, type, mutable: false, span }));
    const locals: Stmt[] = [];
    const bind = (expr: Expr, local: string): Expr => {
      if (expr.kind === "literal" || expr.kind === "variable") return expr;
      const variable: Variable = { kind: "variable", name: local, type: expr.type, mutable: false, span };
      locals.push({ kind: "declare", variable, init: expr, span });
      return read(variable);
    };
    const value = build(variables, bind);
    const body = legalize([...locals, { kind: "return", value, span }], targets.cuda.legalize);
    const helper: VectorHelper = { name, params: variables, result, body };
    this.helpers.set(key, helper);
    return helper;
  }
}

/** A vector of `type` built lane by lane (a scalar type: its one lane). */
function lanesOf(type: Type, laneValue: (lane: number) => Expr): Expr {
  if (laneCount(type) === 1) return laneValue(0);
  return { kind: "construct", type: type as VectorType, args: Array.from({ length: laneCount(type) }, (_, lane) => laneValue(lane)), span };
}

/** Lane `index` of a vector parameter. */
function lane(variable: Variable, index: number): Expr {
  return { kind: "swizzle", type: elementOf(variable.type), value: read(variable), lanes: [index], span };
}

function read(variable: Variable): Expr {
  return { kind: "variable", type: variable.type, variable, span };
}

/** A bool vector's `and`/`or` is, lane by lane, `&&`/`||`. */
function laneOp(op: BinaryOp, element: ScalarType): BinaryOp {
  return element === "bool" && op === "and" ? "logand" : element === "bool" && op === "or" ? "logor" : op;
}

function typeKey(type: Type): string {
  return typeof type === "string" ? type : type.name;
}

/** The CUDA built-in vector a tskernel vector matches in layout (`float4` for vec4f), for the static_assert. */
function cudaBuiltinVector(vector: VectorType): string | undefined {
  const base = { f32: "float", i32: "int", u32: "uint" } as Partial<Record<string, string>>;
  const name = base[vector.element];
  return name ? `${name}${vector.size}` : undefined;
}

/** A short hash of a text (FNV-1a, 32 bits, hexadecimal), for include guards. */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0");
}

/** Declaration order of vector types: by element, then size (stable output). */
function vectorOrder(vector: VectorType): number {
  return ["f32", "i32", "u32", "f16", "bool"].indexOf(vector.element) * 10 + vector.size;
}

/** Every expression of the bodies, for `collect`. */
export function everyExpression(bodies: readonly (readonly Stmt[])[], visit: (expr: Expr) => void): void {
  for (const body of bodies) walkStmts(body, (stmt) => exprsOf(stmt).forEach((expr) => walkExpr(expr, visit)));
}
