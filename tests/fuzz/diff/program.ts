/**
 * The differential fuzzer's programs: a small typed syntax tree of one kernel (and its helpers) that the
 * generator builds, the printer turns into tskernel TypeScript, and the reference evaluator (evaluate.ts)
 * runs with the semantics of docs/language.md. The tree is the fuzzer's own, independent of the compiler's
 * IR, so that the reference shares no code with any backend.
 *
 * Vector expressions (`VecExpr`: constructions, broadcasts, component-wise arithmetic, swizzles, lane
 * conversions, comparisons and choices) stand inside scalar ones through a lane, a `dot` or an `all`/`any`.
 *
 * Every kernel has the same parameters: outputs `outI`, `outU`, `outF` (each thread writes its own
 * `slots` elements of each), inputs `inI`, `inU`, `inF` (exact f32 values) and `inS` (special f32 values:
 * NaN, infinities, huge and tiny numbers), and the scalars `sI`, `sU`, `sF`, `sB`. Each thread's index is
 * the local `t`; its index in the block `tl`. The 16- and 8-bit types (docs/language.md §26) add the outputs
 * `outH` (bf16), `outB` (Int8Array) and `outW` (Uint16Array) and the inputs `inH` (bf16 values) and `inB`
 * (Int8Array): twelve storage buffers in all, WebGPU's usual limit per stage; a program made `wide` (for CUDA and the CPU: WGSL has no f64, and the
 * WebGPU adapters tested lack shader-f16) also has `outX` (f16) and `outD` (f64).
 */

export type Ty = "i32" | "u32" | "f32" | "bool" | HalfTy | "f64";
/** The 16-bit float types. */
export type HalfTy = "bf16" | "f16";

export type Unary = "neg" | "not" | "bitnot" | "plus";
export type Binary =
  | "add" | "sub" | "mul" | "div" | "rem" | "and" | "or" | "xor" | "shl" | "shr" | "ushr"
  | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "logand" | "logor";
export type MathFn = "sqrt" | "abs" | "min" | "max" | "floor" | "ceil" | "trunc" | "exp" | "log" | "log2" | "pow" | "sin" | "cos" | "tan" | "tanh" | "atan2" | "sign" | "fma";
export type InputBuffer = "inI" | "inU" | "inF" | "inS" | "inH" | "inB";
export type OutputBuffer = "outI" | "outU" | "outF" | "outH" | "outB" | "outW" | "outX" | "outD";
/** The outputs every program has, and those of wide programs (f16, f64). */
export const narrowOutputs = ["outH", "outB", "outW"] as const;
export const wideOutputs = ["outX", "outD"] as const;

export type Expr =
  | { readonly k: "lit"; readonly ty: Ty; readonly v: number }
  | { readonly k: "var"; readonly ty: Ty; readonly name: string }
  | { readonly k: "builtin"; readonly ty: "i32"; readonly name: "threadIdx" | "blockIdx" | "blockDim" | "gridDim" }
  | { readonly k: "load"; readonly ty: Ty; readonly buf: InputBuffer; readonly index: Expr }
  | { readonly k: "shload"; readonly ty: Ty; readonly arr: string; readonly index: Expr }
  | { readonly k: "un"; readonly ty: Ty; readonly op: Unary; readonly a: Expr }
  | { readonly k: "bin"; readonly ty: Ty; readonly op: Binary; readonly a: Expr; readonly b: Expr }
  | { readonly k: "sel"; readonly ty: Ty; readonly c: Expr; readonly a: Expr; readonly b: Expr }
  | { readonly k: "conv"; readonly ty: Ty; readonly a: Expr }
  | { readonly k: "math"; readonly ty: Ty; readonly fn: MathFn; readonly args: readonly Expr[] }
  | { readonly k: "call"; readonly ty: Ty; readonly helper: string; readonly args: readonly Expr[] }
  /** A scalar from vectors: a lane (`v.y`), a `dot` of two, or `all`/`any` of a bool vector. */
  | { readonly k: "vec"; readonly ty: Ty; readonly reduce: "lane" | "dot" | "all" | "any"; readonly a: VecExpr; readonly b?: VecExpr; readonly lane?: number };

export type VecSize = 2 | 3 | 4;
export type VecOp = "add" | "sub" | "mul" | "min" | "max";
export type VecCompare = "eq" | "ne" | "lt" | "le" | "gt" | "ge";

/** A vector of `size` lanes of `ty`. */
export type VecExpr =
  | { readonly vk: "make"; readonly ty: Ty; readonly size: VecSize; readonly lanes: readonly Expr[] }
  | { readonly vk: "splat"; readonly ty: Ty; readonly size: VecSize; readonly a: Expr }
  /** Component-wise; `b` a scalar stands for every lane. */
  | { readonly vk: "bin"; readonly ty: Ty; readonly size: VecSize; readonly op: VecOp; readonly a: VecExpr; readonly b: VecExpr | Expr }
  | { readonly vk: "neg"; readonly ty: Ty; readonly size: VecSize; readonly a: VecExpr }
  | { readonly vk: "swizzle"; readonly ty: Ty; readonly size: VecSize; readonly a: VecExpr; readonly lanes: readonly number[] }
  /** `vec3i(v)` of a float vector: each lane truncated and saturated. */
  | { readonly vk: "conv"; readonly ty: Ty; readonly size: VecSize; readonly a: VecExpr }
  | { readonly vk: "cmp"; readonly ty: "bool"; readonly size: VecSize; readonly op: VecCompare; readonly a: VecExpr; readonly b: VecExpr }
  /** WGSL's select(f, t, c), lane by lane. */
  | { readonly vk: "select"; readonly ty: Ty; readonly size: VecSize; readonly f: VecExpr; readonly t: VecExpr; readonly c: VecExpr };

/** How a float output is compared (compare.ts): exactly, or within the bound of its top operation. */
export type FloatCheck =
  | { readonly kind: "exact" }
  | { readonly kind: "special" }
  | { readonly kind: "inexact"; readonly op: InexactOp };

/** The operations whose f32 result may differ by rounding between targets, each with its own bound. */
export type InexactOp = "div" | "sqrt" | "exp" | "log" | "log2" | "pow" | "sin" | "cos" | "tan" | "tanh" | "atan2" | "fma" | "rem" | "fromInt";

export type Stmt =
  | { readonly k: "decl"; readonly name: string; readonly ty: Ty; readonly init: Expr; readonly mutable: boolean }
  | { readonly k: "assign"; readonly name: string; readonly value: Expr; readonly op?: Binary }
  | { readonly k: "out"; readonly buf: OutputBuffer; readonly slot: number; readonly value: Expr; readonly check?: FloatCheck }
  | { readonly k: "shstore"; readonly arr: string; readonly value: Expr }
  | { readonly k: "if"; readonly c: Expr; readonly then: readonly Stmt[]; readonly else: readonly Stmt[] }
  | { readonly k: "for"; readonly v: string; readonly count: Expr; readonly body: readonly Stmt[]; readonly unroll: boolean }
  | { readonly k: "while"; readonly v: string; readonly count: Expr; readonly body: readonly Stmt[] }
  | { readonly k: "break" }
  | { readonly k: "continue" }
  | { readonly k: "return" }
  | { readonly k: "barrier" };

export interface Helper {
  readonly name: string;
  readonly params: readonly { readonly name: string; readonly ty: Ty }[];
  readonly ret: Ty;
  readonly body: readonly Stmt[];
  readonly result: Expr;
}

export interface SharedArray {
  readonly name: string;
  readonly ty: "i32" | "u32" | "f32";
}

export interface Program {
  readonly name: string;
  readonly block: number;
  readonly grid: number;
  /** Output elements per thread in each output buffer. */
  readonly slots: number;
  /** Input elements per thread in each input buffer (inputs are read at `t * inputs + k`). */
  readonly inputs: number;
  readonly helpers: readonly Helper[];
  readonly shared: readonly SharedArray[];
  readonly body: readonly Stmt[];
  /** f16 and f64 outputs too (CUDA and the CPU only). */
  readonly wide: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Printing as tskernel TypeScript

const binarySpelling: Readonly<Record<Binary, string>> = {
  add: "+", sub: "-", mul: "*", div: "/", rem: "%", and: "&", or: "|", xor: "^", shl: "<<", shr: ">>", ushr: ">>>",
  eq: "===", ne: "!==", lt: "<", le: "<=", gt: ">", ge: ">=", logand: "&&", logor: "||",
};
const unarySpelling: Readonly<Record<Unary, string>> = { neg: "-", not: "!", bitnot: "~", plus: "+" };

/**
 * A literal's text. Numeric literals take their type from the context, and an expression made only of
 * literals is typed as a whole by its context (`f32(7 / 2)` is 3.5, `i32(0.5)` an error): so a literal is
 * bare only beside an operand that is not a literal (`bare`: that operand's type is the literal's), and
 * written as a conversion elsewhere (`i32(7)`, `f32(0.5)`); u32 literals are always `u32(…)`.
 */
function literal(ty: Ty, v: number, bare: boolean): string {
  if (ty === "bool") return v ? "true" : "false";
  if (ty === "u32") return `u32(${v >>> 0})`;
  let text = Object.is(v, -0) ? "-0.0" : String(v);
  if (ty !== "i32" && !/[.e]/.test(text)) text = `${text}.0`;
  if (!bare) return `${ty}(${text})`;
  return v < 0 || Object.is(v, -0) ? `(${text})` : text;
}

export function printExpr(e: Expr, bare = false): string {
  switch (e.k) {
    case "lit":
      return literal(e.ty, e.v, bare);
    case "var":
      return e.name;
    case "builtin":
      return `${e.name}.x`;
    case "load":
      return `${e.buf}[${printExpr(e.index)}]`;
    case "shload":
      return `${e.arr}[${printExpr(e.index)}]`;
    case "un":
      return `(${unarySpelling[e.op]}${printExpr(e.a)})`;
    case "bin": {
      // Beside === and !==, TypeScript narrows a variable to a bare literal's type, and then calls a later
      // comparison with another literal unintentional (TS2367: "the types '-0.5' and '1' have no overlap",
      // seed 20261123, program 1672); a conversion (`f32(-0.5)`) or a negation (`!false`) has the wide type.
      const equality = e.op === "eq" || e.op === "ne";
      const side = (x: Expr, other: Expr) => (equality && x.k === "lit" ? (x.ty === "bool" ? `(!${x.v ? "false" : "true"})` : literal(x.ty, x.v, false)) : printExpr(x, other.k !== "lit"));
      const a = side(e.a, e.b);
      let b = side(e.b, e.a);
      // `f(x) << (((y > (z)) …` reads to TypeScript as a call with type arguments, `f(x)<<(…)>(z)`: a unary
      // plus (no change of value) on the right keeps it an operator.
      if ((e.op === "lt" || e.op === "shl") && a.endsWith(")") && b.startsWith("(")) b = `+${b}`;
      return `(${a} ${binarySpelling[e.op]} ${b})`;
    }
    case "sel":
      return `(${printExpr(e.c)} ? ${printExpr(e.a)} : ${printExpr(e.b)})`;
    case "conv":
      return `${e.ty}(${printExpr(e.a)})`;
    case "math":
      return e.fn === "fma" ? `fma(${e.args.map((x) => printExpr(x)).join(", ")})` : `Math.${e.fn}(${e.args.map((x) => printExpr(x)).join(", ")})`;
    case "call":
      return `${e.helper}(${e.args.map((x) => printExpr(x)).join(", ")})`;
    case "vec":
      if (e.reduce === "lane") return `${printVec(e.a)}.${"xyzw"[e.lane!]}`;
      return e.reduce === "dot" ? `dot(${printVec(e.a)}, ${printVec(e.b!)})` : `${e.reduce}(${printVec(e.a)})`;
  }
}

const vectorSuffix: Readonly<Partial<Record<Ty, string>>> = { f32: "f", i32: "i", u32: "u", bool: "b" };

/** A vector expression as tskernel TypeScript: constructors, TypeGPU's and WGSL's functions, swizzles. */
export function printVec(e: VecExpr): string {
  const name = `vec${e.size}${vectorSuffix[e.ty]}`;
  switch (e.vk) {
    case "make":
      return `${name}(${e.lanes.map((lane) => printExpr(lane)).join(", ")})`;
    case "splat":
      return `${name}(${printExpr(e.a)})`;
    case "bin":
      return `${e.op}(${printVec(e.a)}, ${"vk" in e.b ? printVec(e.b) : printExpr(e.b)})`;
    case "neg":
      return `neg(${printVec(e.a)})`;
    case "swizzle":
      return `${printVec(e.a)}.${e.lanes.map((lane) => "xyzw"[lane]).join("")}`;
    case "conv":
      return `${name}(${printVec(e.a)})`;
    case "cmp":
      return `${e.op}(${printVec(e.a)}, ${printVec(e.b)})`;
    case "select":
      return `select(${printVec(e.f)}, ${printVec(e.t)}, ${printVec(e.c)})`;
  }
}

/** `unrolled`: how many `unroll:` loops enclose these statements (TypeScript forbids a label inside the same label). */
function printStmts(stmts: readonly Stmt[], indent: string, out: string[], slots: number, unrolled = 0): void {
  for (const s of stmts) {
    switch (s.k) {
      case "decl":
        out.push(`${indent}${s.mutable ? "let" : "const"} ${s.name}: ${s.ty} = ${printExpr(s.init)};`);
        break;
      case "assign":
        out.push(`${indent}${s.name} ${s.op ? binarySpelling[s.op] : ""}= ${printExpr(s.value)};`);
        break;
      case "out":
        out.push(`${indent}${s.buf}[t * ${slots} + ${s.slot}] = ${printExpr(s.value)};`);
        break;
      case "shstore":
        out.push(`${indent}${s.arr}[tl] = ${printExpr(s.value)};`);
        break;
      case "if":
        out.push(`${indent}if (${printExpr(s.c)}) {`);
        printStmts(s.then, `${indent}  `, out, slots, unrolled);
        if (s.else.length > 0) {
          out.push(`${indent}} else {`);
          printStmts(s.else, `${indent}  `, out, slots, unrolled);
        }
        out.push(`${indent}}`);
        break;
      case "for":
        out.push(`${indent}${s.unroll ? `unroll${unrolled > 0 ? unrolled : ""}: ` : ""}for (let ${s.v} = 0; ${s.v} < ${printExpr(s.count)}; ${s.v}++) {`);
        printStmts(s.body, `${indent}  `, out, slots, unrolled + (s.unroll ? 1 : 0));
        out.push(`${indent}}`);
        break;
      case "while":
        out.push(`${indent}let ${s.v}: i32 = 0;`);
        out.push(`${indent}while (${s.v} < ${printExpr(s.count)}) {`);
        out.push(`${indent}  ${s.v}++;`);
        printStmts(s.body, `${indent}  `, out, slots, unrolled);
        out.push(`${indent}}`);
        break;
      case "break":
      case "continue":
      case "return":
        out.push(`${indent}${s.k};`);
        break;
      case "barrier":
        out.push(`${indent}syncThreads();`);
        break;
    }
  }
}

/** The kernel's parameters, in the order the harness passes its arguments (harness.ts). */
export function programParameters(wide: boolean): string {
  return [
    "outI: Int32Array", "outU: Uint32Array", "outF: Float32Array", "outH: BFloat16Array", "outB: Int8Array", "outW: Uint16Array",
    ...(wide ? ["outX: Float16Array", "outD: Float64Array"] : []),
    "inI: ReadonlyInt32Array", "inU: ReadonlyUint32Array", "inF: ReadonlyFloat32Array", "inS: ReadonlyFloat32Array",
    "inH: ReadonlyBFloat16Array", "inB: ReadonlyInt8Array",
    "sI: i32", "sU: u32", "sF: f32", "sB: bool",
  ].join(", ");
}

/** The program as a kernel file: its helpers, then `export const <name> = kernel(…)`. */
export function printProgram(p: Program): string {
  const out: string[] = [
    `// Generated by the differential fuzzer (tests/fuzz/diff): ${p.grid} block(s) of ${p.block} threads.`,
    'import { bf16, blockDim, blockIdx, f16, f32, f64, fma, gridDim, i32, kernel, shared, syncThreads, threadIdx, u32, type bool, type BFloat16Array, type Float16Array, type ReadonlyBFloat16Array, type ReadonlyFloat32Array, type ReadonlyInt32Array, type ReadonlyInt8Array, type ReadonlyUint32Array } from "tskernel";',
    'import { add, all, any, dot, eq, ge, gt, le, lt, max, min, mul, ne, neg, select, sub, vec2b, vec2f, vec2i, vec2u, vec3b, vec3f, vec3i, vec3u, vec4b, vec4f, vec4i, vec4u } from "tskernel";',
    "",
  ];
  for (const h of p.helpers) {
    out.push(`function ${h.name}(${h.params.map((q) => `${q.name}: ${q.ty}`).join(", ")}): ${h.ret} {`);
    printStmts(h.body, "  ", out, p.slots);
    out.push(`  return ${printExpr(h.result)};`, "}", "");
  }
  out.push(
    `export const ${p.name} = kernel({ block: [${p.block}]${p.wide ? ', targets: ["cuda", "js"]' : ""} }, (${programParameters(p.wide)}) => {`,
    "  const tl = threadIdx.x;",
    "  const t = blockIdx.x * blockDim.x + tl;",
  );
  for (const a of p.shared) out.push(`  const ${a.name} = shared.${a.ty}(${p.block});`);
  printStmts(p.body, "  ", out, p.slots);
  out.push("});", "");
  return out.join("\n");
}
