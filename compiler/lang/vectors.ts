/**
 * Vectors as TypeScript sees them, re-exported by "tskernel" (index.ts): the types `vec2f` … `vec4u`, the f16
 * vectors `vec2h` … `vec4h`, and the bool vectors `vec2b` … `vec4b` (from comparisons), with their components and swizzles; the constructors of
 * the same names; and the functions on them: TypeGPU's names for component-wise arithmetic and comparisons
 * (`add`, `sub`, `mul`, `div`, `neg`, `eq` … `ge`, `and`, `or`, `not`, `all`, `any`, `select`) and WGSL's
 * functions with WGSL's names (`dot`, `cross`, `length`, `normalize`, `mix`, `clamp`, …), which take scalars
 * too. TypeScript has no operator overloading, so `a + b` on vectors is a TypeScript error; the functions
 * are the language. The compiler recognizes these names by origin and never runs this code: every function
 * here throws outside a kernel. docs/language.md, "Vectors", is the reference.
 *
 * The i32, u32 and f16 vectors have the same shape as the f32 ones to TypeScript (a `number` per lane), so
 * TypeScript accepts `add(vec3f, vec3i)`; the compiler does not (TSK2008): the types it checks are its own.
 */

type Lanes2 = "x" | "y";
type Lanes3 = "x" | "y" | "z";
type Lanes4 = "x" | "y" | "z" | "w";

/** The swizzles with distinct lanes, which an assignment may write (`v.xy = …`); the others are read-only (`v.xx`). */
type Distinct2<L extends string> = { [A in L]: `${A}${Exclude<L, A>}` }[L];
type Distinct3<L extends string> = { [A in L]: { [B in Exclude<L, A>]: `${A}${B}${Exclude<L, A | B>}` }[Exclude<L, A>] }[L];
type Distinct4<L extends string> = {
  [A in L]: { [B in Exclude<L, A>]: { [C in Exclude<L, A | B>]: `${A}${B}${C}${Exclude<L, A | B | C>}` }[Exclude<L, A | B>] }[Exclude<L, A>];
}[L];

/** Every swizzle of two to four of the lanes `L` (repeats allowed), typed as the vector of its length. */
type Swizzles<L extends string, V2, V3, V4> = { [K in Distinct2<L>]: V2 } & { readonly [K in Exclude<`${L}${L}`, Distinct2<L>>]: V2 } & {
  [K in Distinct3<L>]: V3;
} & { readonly [K in Exclude<`${L}${L}${L}`, Distinct3<L>>]: V3 } & { [K in Distinct4<L>]: V4 } & { readonly [K in Exclude<`${L}${L}${L}${L}`, Distinct4<L>>]: V4 };

/** Two f32 lanes. A value: assigning it copies it. */
export interface vec2f extends Swizzles<Lanes2, vec2f, vec3f, vec4f> { x: number; y: number }
/** Three f32 lanes (12 bytes, aligned to 16 in buffers and structs). */
export interface vec3f extends Swizzles<Lanes3, vec2f, vec3f, vec4f> { x: number; y: number; z: number }
/** Four f32 lanes. */
export interface vec4f extends Swizzles<Lanes4, vec2f, vec3f, vec4f> { x: number; y: number; z: number; w: number }
/** Two i32 lanes. */
export interface vec2i extends Swizzles<Lanes2, vec2i, vec3i, vec4i> { x: number; y: number }
/** Three i32 lanes. */
export interface vec3i extends Swizzles<Lanes3, vec2i, vec3i, vec4i> { x: number; y: number; z: number }
/** Four i32 lanes. */
export interface vec4i extends Swizzles<Lanes4, vec2i, vec3i, vec4i> { x: number; y: number; z: number; w: number }
/** Two u32 lanes. */
export interface vec2u extends Swizzles<Lanes2, vec2u, vec3u, vec4u> { x: number; y: number }
/** Three u32 lanes. */
export interface vec3u extends Swizzles<Lanes3, vec2u, vec3u, vec4u> { x: number; y: number; z: number }
/** Four u32 lanes. */
export interface vec4u extends Swizzles<Lanes4, vec2u, vec3u, vec4u> { x: number; y: number; z: number; w: number }
/** Two f16 lanes (4 bytes; f16 needs WebGPU's shader-f16). */
export interface vec2h extends Swizzles<Lanes2, vec2h, vec3h, vec4h> { x: number; y: number }
/** Three f16 lanes (6 bytes, aligned to 8 in buffers and structs). */
export interface vec3h extends Swizzles<Lanes3, vec2h, vec3h, vec4h> { x: number; y: number; z: number }
/** Four f16 lanes. */
export interface vec4h extends Swizzles<Lanes4, vec2h, vec3h, vec4h> { x: number; y: number; z: number; w: number }
/** Two bools: what comparisons of vectors give. Values only (no memory layout: not in buffers, structs or parameters). */
export interface vec2b extends Swizzles<Lanes2, vec2b, vec3b, vec4b> { x: boolean; y: boolean }
/** Three bools. */
export interface vec3b extends Swizzles<Lanes3, vec2b, vec3b, vec4b> { x: boolean; y: boolean; z: boolean }
/** Four bools. */
export interface vec4b extends Swizzles<Lanes4, vec2b, vec3b, vec4b> { x: boolean; y: boolean; z: boolean; w: boolean }

/** Any vector of numbers (the f32, i32, u32 and f16 vectors have one shape to TypeScript). */
export type NumericVector = vec2f | vec3f | vec4f | vec2i | vec3i | vec4i | vec2u | vec3u | vec4u | vec2h | vec3h | vec4h;
/** Any vector of floats. */
export type FloatVector = vec2f | vec3f | vec4f | vec2h | vec3h | vec4h;
/** Any vector of bools. */
export type BoolVector = vec2b | vec3b | vec4b;
/** The bool vector of a vector's size, or bool for a scalar. */
export type BoolOf<T> = T extends { w: unknown } ? vec4b : T extends { z: unknown } ? vec3b : T extends { y: unknown } ? vec2b : boolean;

/** The arguments of a constructor: none (zero), one scalar (every lane), or scalars and vectors filling its lanes; or one vector of the same size to convert. */
type Parts2<S, V2> = [] | [S] | [S, S] | [V2];
type Parts3<S, V2, V3> = [] | [S] | [S, S, S] | [V2, S] | [S, V2] | [V3];
type Parts4<S, V2, V3, V4> = [] | [S] | [S, S, S, S] | [V2, S, S] | [S, V2, S] | [S, S, V2] | [V2, V2] | [V3, S] | [S, V3] | [V4];

function outsideKernel(what: string): never {
  throw new Error(`tskernel: ${what} may only be used inside a kernel compiled by tskernel`);
}

/** A function that exists for TypeScript only: the compiler lowers its calls; calling it elsewhere throws. */
function builtin<F>(name: string): F {
  return ((..._args: unknown[]) => outsideKernel(`${name}()`)) as F;
}

export const vec2f = builtin<(...parts: Parts2<number, vec2f>) => vec2f>("vec2f");
export const vec3f = builtin<(...parts: Parts3<number, vec2f, vec3f>) => vec3f>("vec3f");
export const vec4f = builtin<(...parts: Parts4<number, vec2f, vec3f, vec4f>) => vec4f>("vec4f");
export const vec2i = builtin<(...parts: Parts2<number, vec2i>) => vec2i>("vec2i");
export const vec3i = builtin<(...parts: Parts3<number, vec2i, vec3i>) => vec3i>("vec3i");
export const vec4i = builtin<(...parts: Parts4<number, vec2i, vec3i, vec4i>) => vec4i>("vec4i");
export const vec2u = builtin<(...parts: Parts2<number, vec2u>) => vec2u>("vec2u");
export const vec3u = builtin<(...parts: Parts3<number, vec2u, vec3u>) => vec3u>("vec3u");
export const vec4u = builtin<(...parts: Parts4<number, vec2u, vec3u, vec4u>) => vec4u>("vec4u");
export const vec2h = builtin<(...parts: Parts2<number, vec2h>) => vec2h>("vec2h");
export const vec3h = builtin<(...parts: Parts3<number, vec2h, vec3h>) => vec3h>("vec3h");
export const vec4h = builtin<(...parts: Parts4<number, vec2h, vec3h, vec4h>) => vec4h>("vec4h");
export const vec2b = builtin<(...parts: Parts2<boolean, vec2b>) => vec2b>("vec2b");
export const vec3b = builtin<(...parts: Parts3<boolean, vec2b, vec3b>) => vec3b>("vec3b");
export const vec4b = builtin<(...parts: Parts4<boolean, vec2b, vec3b, vec4b>) => vec4b>("vec4b");

/** Component-wise on numbers or vectors; a scalar beside a vector stands for every lane. */
export interface NumericBinary {
  (a: number, b: number): number;
  <T extends NumericVector>(a: T, b: T | number): T;
  <T extends NumericVector>(a: number, b: T): T;
}
export interface FloatBinary {
  (a: number, b: number): number;
  <T extends FloatVector>(a: T, b: T | number): T;
  <T extends FloatVector>(a: number, b: T): T;
}
export interface NumericUnary {
  (x: number): number;
  <T extends NumericVector>(x: T): T;
}
export interface FloatUnary {
  (x: number): number;
  <T extends FloatVector>(x: T): T;
}
export interface NumericTernary {
  (a: number, b: number, c: number): number;
  <T extends NumericVector>(a: T | number, b: T | number, c: T | number): T;
}
export interface FloatTernary {
  (a: number, b: number, c: number): number;
  <T extends FloatVector>(a: T | number, b: T | number, c: T | number): T;
}
export interface Comparison {
  (a: number, b: number): boolean;
  <T extends NumericVector>(a: T, b: T | number): BoolOf<T>;
  <T extends NumericVector>(a: number, b: T): BoolOf<T>;
}
export interface Equality extends Comparison {
  (a: boolean, b: boolean): boolean;
  <T extends BoolVector>(a: T, b: T | boolean): T;
}
export interface BoolBinary {
  (a: boolean, b: boolean): boolean;
  <T extends BoolVector>(a: T, b: T | boolean): T;
  <T extends BoolVector>(a: boolean, b: T): T;
}

/** `a + b`, lane by lane (TypeGPU's name). Integers wrap. */
export const add = builtin<NumericBinary>("add");
/** `a - b`, lane by lane. */
export const sub = builtin<NumericBinary>("sub");
/** `a * b`, lane by lane. */
export const mul = builtin<NumericBinary>("mul");
/** `a / b`, lane by lane; integers truncate. */
export const div = builtin<NumericBinary>("div");
/** `-x`, lane by lane (f32 and i32). */
export const neg = builtin<NumericUnary>("neg");

/** `a === b`, lane by lane: a bool vector (or a bool for scalars). */
export const eq = builtin<Equality>("eq");
/** `a !== b`, lane by lane. */
export const ne = builtin<Equality>("ne");
/** `a < b`, lane by lane. */
export const lt = builtin<Comparison>("lt");
/** `a <= b`, lane by lane. */
export const le = builtin<Comparison>("le");
/** `a > b`, lane by lane. */
export const gt = builtin<Comparison>("gt");
/** `a >= b`, lane by lane. */
export const ge = builtin<Comparison>("ge");
/** Logical and of bools or bool vectors, lane by lane (both operands are evaluated). */
export const and = builtin<BoolBinary>("and");
/** Logical or, lane by lane. */
export const or = builtin<BoolBinary>("or");
/** Logical not, lane by lane. */
export const not = builtin<{ (x: boolean): boolean; <T extends BoolVector>(x: T): T }>("not");
/** Whether every lane is true. */
export const all = builtin<(v: BoolVector | boolean) => boolean>("all");
/** Whether some lane is true. */
export const any = builtin<(v: BoolVector | boolean) => boolean>("any");
/**
 * WGSL's `select(f, t, cond)`: `t` where `cond` is true, else `f` (note the order); a bool-vector `cond` picks
 * lane by lane.
 */
export const select = builtin<{
  (f: number, t: number, cond: boolean): number;
  (f: boolean, t: boolean, cond: boolean): boolean;
  <T extends NumericVector | BoolVector>(f: T, t: T, cond: boolean | BoolOf<T>): T;
}>("select");

/** |x|, lane by lane (integers wrap: abs of the smallest i32 is itself). */
export const abs = builtin<NumericUnary>("abs");
/** The smaller of a and b, lane by lane. */
export const min = builtin<NumericBinary>("min");
/** The larger of a and b, lane by lane. */
export const max = builtin<NumericBinary>("max");
/** `min(max(x, low), high)`, lane by lane. */
export const clamp = builtin<NumericTernary>("clamp");
/** -1, 0 or 1 by the sign of x (0 for ±0 and NaN), lane by lane. */
export const sign = builtin<FloatUnary>("sign");
/** Lane by lane: rounding down. */
export const floor = builtin<FloatUnary>("floor");
/** Lane by lane: rounding up. */
export const ceil = builtin<FloatUnary>("ceil");
/** Lane by lane: rounding toward zero. */
export const trunc = builtin<FloatUnary>("trunc");
/** `x - floor(x)`, lane by lane. */
export const fract = builtin<FloatUnary>("fract");
/** Square root, lane by lane. */
export const sqrt = builtin<FloatUnary>("sqrt");
/** `1 / sqrt(x)`, lane by lane. */
export const inverseSqrt = builtin<FloatUnary>("inverseSqrt");
/** e^x, lane by lane. */
export const exp = builtin<FloatUnary>("exp");
/** 2^x, lane by lane. */
export const exp2 = builtin<FloatUnary>("exp2");
/** Natural logarithm, lane by lane. */
export const log = builtin<FloatUnary>("log");
/** Base-2 logarithm, lane by lane. */
export const log2 = builtin<FloatUnary>("log2");
/** Lane by lane. */
export const sin = builtin<FloatUnary>("sin");
/** Lane by lane. */
export const cos = builtin<FloatUnary>("cos");
/** Lane by lane. */
export const tan = builtin<FloatUnary>("tan");
/** Lane by lane. */
export const tanh = builtin<FloatUnary>("tanh");
/** `clamp(x, 0, 1)`, lane by lane. */
export const saturate = builtin<FloatUnary>("saturate");
/** a^b, lane by lane. */
export const pow = builtin<FloatBinary>("pow");
/** The angle of (b, a), as Math.atan2(a, b), lane by lane. */
export const atan2 = builtin<FloatBinary>("atan2");
/** `x >= edge ? 1 : 0`, lane by lane (WGSL's order: edge first). */
export const step = builtin<FloatBinary>("step");
/** `a * (1 - t) + b * t`, lane by lane. */
export const mix = builtin<FloatTernary>("mix");
/** Hermite interpolation from 0 at `low` to 1 at `high`: t = clamp((x - low) / (high - low), 0, 1), t·t·(3 - 2t). */
export const smoothstep = builtin<FloatTernary>("smoothstep");
/** The Euclidean length of a vector (|x| of a scalar). */
export const length = builtin<{ (x: number): number; (x: FloatVector): number }>("length");
/** `length(a - b)`. */
export const distance = builtin<{ (a: number, b: number): number; <T extends FloatVector>(a: T, b: T): number }>("distance");
/** The sum of the lanes' products. */
export const dot = builtin<<T extends NumericVector>(a: T, b: T) => number>("dot");
/** The cross product of two vec3f (or vec3h). */
export const cross = builtin<{ (a: vec3f, b: vec3f): vec3f; (a: vec3h, b: vec3h): vec3h }>("cross");
/** `v / length(v)`. */
export const normalize = builtin<<T extends FloatVector>(v: T) => T>("normalize");
/** The reflection of `e1` about the normal `e2`: `e1 - 2 * dot(e2, e1) * e2`. */
export const reflect = builtin<<T extends FloatVector>(e1: T, e2: T) => T>("reflect");
/** `e1` if `dot(e2, e3) < 0`, else `-e1`. */
export const faceForward = builtin<<T extends FloatVector>(e1: T, e2: T, e3: T) => T>("faceForward");

/** The vector types by name, for the allocators. */
interface VectorsByName {
  vec2f: vec2f;
  vec3f: vec3f;
  vec4f: vec4f;
  vec2i: vec2i;
  vec3i: vec3i;
  vec4i: vec4i;
  vec2u: vec2u;
  vec3u: vec3u;
  vec4u: vec4u;
  vec2h: vec2h;
  vec3h: vec3h;
  vec4h: vec4h;
}

/** The names of the vectors that arrays may hold (not the bool vectors). */
export const vectorAllocatorNames: readonly (keyof VectorsByName)[] = ["vec2f", "vec3f", "vec4f", "vec2i", "vec3i", "vec4i", "vec2u", "vec3u", "vec4u", "vec2h", "vec3h", "vec4h"];

/** Shared arrays of vectors (`shared.vec4f(n)`, `shared.vec2f(rows, cols)`) and of any element type (`shared.array<Particle>(n)`). */
export type SharedVectorAllocators = { [K in keyof VectorsByName]: { (length: number): VectorsByName[K][]; (rows: number, cols: number): VectorsByName[K][][] } } & {
  /** An array of `T`: a struct, a vector or a scalar type. */
  array<T>(length: number): T[];
  array<T>(rows: number, cols: number): T[][];
};

/** Private arrays of vectors (`local.vec3f(n)`) and of any element type (`local.array<Particle>(n)`). */
export type LocalVectorAllocators = { [K in keyof VectorsByName]: (length: number) => VectorsByName[K][] } & {
  /** An array of `T`: a struct, a vector or a scalar type. */
  array<T>(length: number): T[];
};
