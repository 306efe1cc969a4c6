/**
 * The typed IR that every pass reads and every backend prints.
 *
 * A `Module` is what one source file compiles to: its kernels and the helper functions they call. A kernel
 * body is a tree of statements over pure expressions:
 *
 * - Expressions (`Expr`) have no side effects. Every expression carries its type (types.ts: a scalar, a
 *   vector or a struct), decided by the frontend (literals already took the type their context needs, and
 *   no implicit conversions remain: a `convert` node stands wherever a value changes type). Array reads
 *   (`load`) are expressions. Vectors and structs are values: `construct` builds one, `swizzle` and `field`
 *   read parts of one, and the operators and intrinsics of vectors work lane by lane on operands of one
 *   type (the frontend turns a scalar operand into a broadcast `construct`).
 * - Statements (`Stmt`) hold every side effect: declarations and assignments of locals, stores to global or
 *   shared arrays, atomics, barriers, control flow. `++`, `--` and compound assignment are statements, never
 *   values. An atomic whose old value the kernel uses, and a *collective* (an operation that every thread of
 *   a group takes part in at once, such as `subgroupAdd`), declare a local that holds the result: the
 *   frontend moves such calls out of the expressions they were written in, into statements before them.
 * - Locals are `Variable` objects shared by identity between their declaration and every use; names are
 *   only hints for the backends' namers. Kernel parameters are variables too (scalars, vectors, structs:
 *   values passed by value) or `ArrayRef`s. An assignment or a store may write a part of a vector or struct
 *   (`path`: `v.x = …`, `p[i].pos = …`) without touching the rest.
 * - Compile-time constants appear as `constRef` expressions until the specialization pass replaces each with
 *   a literal; the validator rejects a module in which any remain.
 *
 * Every node keeps the span of the TypeScript it came from, so later passes and the validator point at the
 * user's code, and the CUDA backend can write `#line` directives. Passes build new nodes and carry spans
 * along; none drops them.
 */

import type { Span } from "../diagnostics/span.ts";
import type { ManifestSignature } from "../lang/manifest.ts";

export type { Span };

// The types themselves, and every fact about them, are data in types.ts.
export {
  arrayStride,
  isFloat,
  isInteger,
  isFloat8,
  isNarrowInt,
  isStorageOnly,
  isNumeric,
  isScalar,
  isStruct,
  isVector,
  scalars,
  scalarTypes,
  type ElementScalar,
  type ElementType,
  type Float8Type,
  type NarrowIntType,
  type ScalarType,
  type StructType,
  type Type,
  type VectorType,
  valueTypeOf,
} from "./types.ts";
import type { ElementScalar, ElementType, ScalarType, StructType, Type, VectorType } from "./types.ts";
import { scalars } from "./types.ts";

// ---------------------------------------------------------------------------------------------------------
// Storage

/** Global buffers, shared (workgroup) arrays, and private arrays: one per thread, kept in registers where possible. */
export type AddressSpace = "global" | "shared" | "private";

/** A global buffer parameter or a shared array. Referenced by identity from `load` and `store`. */
export interface ArrayRef {
  readonly kind: "array";
  readonly name: string;
  /**
   * Narrow integers (i8, u8, i16, u16) load as i32/u32 and store truncated (types.ts). Vectors and structs lie
   * in memory as types.ts lays them out (WGSL's storage layout), on every target.
   */
  readonly elementType: ElementType;
  readonly space: AddressSpace;
  /** Global buffers are `read` (ReadonlyFloat32Array and friends) or `read_write`; shared arrays are `read_write`. */
  readonly access: "read" | "read_write";
  /** Shared arrays: one expression per dimension (outermost first), constant after specialization. Global: []. */
  readonly dims: readonly Expr[];
  /**
   * Set on a private array that `fragment.a/b/accumulator(…)` declared: it holds that many matrix fragments,
   * `fragmentLayouts[role].perLane` consecutive elements each (matrix.ts), and only matrix statements and the
   * stores `fillFragment` lowers to touch it.
   */
  readonly fragment?: FragmentType;
  /**
   * Set on a shared array that `shared.barriers(n)` declared: n mbarriers (8 bytes each on CUDA), reached
   * only through the barrier statements (`BarrierOpStmt`), never indexed. Its element type is u32, for the
   * passes that size shared memory; each backend lays it out itself.
   */
  readonly barriers?: true;
  /**
   * Set where the CPU's scalarization (passes/scalarize-vectors.ts) reads a buffer of vectors or structs
   * through typed views: this array is the view of its element type over the bytes of the buffer parameter
   * `viewOf`, indexed in units of its element (element i of the buffer, field at byte offset o, is at
   * (i · stride + o) / size).
   */
  readonly viewOf?: ArrayRef;
  readonly span: Span;
}

/** The operand of a warp-level matrix multiply-accumulate a fragment holds: D = A·B + C, with C and D the accumulator. */
export type FragmentRole = "a" | "b" | "accumulator";
/**
 * The m×n×k shapes of the matrix operations: m16n8k8 (TF32 inputs) and m16n8k16 (bf16 or f16 inputs) are
 * `mma.sync`'s (a warp of 32 threads holds each fragment); m64n64k8, m64n128k8 and m64n256k8 are `wgmma.mma_async`'s with TF32 inputs (a warpgroup of 128
 * threads holds each fragment, and B is read from shared memory, so these shapes have no B fragments), and
 * m64n64k16, m64n128k16 and m64n256k16 its shapes with 16-bit inputs (bf16 or f16), whose B is read from
 * shared memory and whose A is read from shared memory too or held in registers (an A fragment of bf16 or
 * f16 elements), and m64n64k32, m64n128k32 and m64n256k32 its shapes with 8-bit float inputs (e4m3 or e5m2, A
 * and B each of either), both read K-major from shared memory.
 */
export type MatrixShape = WarpShape | WarpgroupShape;
/** The warp (mma.sync) shapes: TF32 (k8) and 16-bit (k16) inputs. */
export type WarpShape = "m16n8k8" | "m16n8k16";
/** The warpgroup (wgmma) shapes: TF32 (k8), 16-bit (k16) and 8-bit float (k32) inputs. */
export type WarpgroupShape = "m64n64k8" | "m64n128k8" | "m64n256k8" | "m64n64k16" | "m64n128k16" | "m64n256k16" | "m64n64k32" | "m64n128k32" | "m64n256k32";
/**
 * The element type of a fragment: tf32 inputs (f32 rounded to 10 mantissa bits), f32 accumulators, and bf16
 * or f16 inputs (the A fragments of the k16 shapes, and m16n8k16's B fragments). Every fragment array holds f32 values in the IR; a store
 * into a tf32, bf16 or f16 fragment rounds the value to the type first (ir/matrix.ts, roundFragmentValue).
 */
export type FragmentElement = "tf32" | "f32" | "bf16" | "f16";

export interface FragmentType {
  readonly role: FragmentRole;
  readonly shape: MatrixShape;
  readonly element: FragmentElement;
}

/** One fragment of a fragment array: `acc[i]` in the source. */
export interface FragmentRef {
  readonly array: ArrayRef;
  readonly index: Expr;
}

/** A local or a run-time value parameter: a scalar, a vector or a struct. */
export interface Variable {
  readonly kind: "variable";
  readonly name: string;
  readonly type: Type;
  /** `const` locals and parameters are immutable. */
  readonly mutable: boolean;
  readonly span: Span;
}

// ---------------------------------------------------------------------------------------------------------
// Expressions

export type BuiltinName = "threadIdx" | "blockIdx" | "blockDim" | "gridDim";
export type Axis = "x" | "y" | "z";

export type UnaryOp = "neg" | "not" | "bitnot";

export type BinaryOp =
  | "add" | "sub" | "mul" | "div" | "rem"
  | "and" | "or" | "xor" | "shl" | "shr"
  | "eq" | "ne" | "lt" | "le" | "gt" | "ge"
  | "logand" | "logor";

export const comparisonOps: ReadonlySet<BinaryOp> = new Set(["eq", "ne", "lt", "le", "gt", "ge"]);

/** Intrinsic functions: each backend maps them through its table. Typing rules live in the frontend. */
export type IntrinsicName =
  | "sqrt" | "abs" | "min" | "max" | "floor" | "ceil" | "round" | "trunc"
  | "exp" | "exp2" | "log" | "log2" | "pow" | "sin" | "cos" | "tan" | "tanh" | "atan2" | "fma" | "sign"
  // The same 32 bits as another type: f32 → u32 (bitcastU32) and u32 → f32 (bitcastF32).
  | "bitcastU32" | "bitcastF32"
  // Not a user function: legalize writes it where a matrix load rounds an f32 to tf32 (cvt.rna.tf32.f32).
  | "roundTf32"
  // WGSL's functions, on scalars and vectors alike (ir/vector-functions.ts defines each lane by lane).
  | "clamp" | "mix" | "fract" | "step" | "smoothstep" | "inverseSqrt" | "saturate"
  // Vectors only: geometry, and the reductions of bool vectors.
  | "dot" | "cross" | "length" | "distance" | "normalize" | "reflect" | "faceForward" | "all" | "any";

interface ExprBase {
  readonly type: Type;
  readonly span: Span;
}

export interface LiteralExpr extends ExprBase {
  readonly kind: "literal";
  /** Literals are scalars; a vector of constants is a `construct` of them. */
  readonly type: ScalarType;
  /** For bool: 0 or 1. For f32: a value already rounded to f32. For integers: within the type's range. */
  readonly value: number;
}

export interface VariableExpr extends ExprBase {
  readonly kind: "variable";
  readonly variable: Variable;
}

export interface ConstRefExpr extends ExprBase {
  readonly kind: "constRef";
  readonly type: ScalarType;
  readonly name: string;
}

export interface BuiltinExpr extends ExprBase {
  readonly kind: "builtin";
  readonly builtin: BuiltinName;
  readonly axis: Axis;
}

/**
 * `subgroupSize` (the lanes of a subgroup: 32 on CUDA, the adapter's on WebGPU, configurable on the CPU) and
 * `subgroupInvocationId` (the thread's lane: its linear index in the block modulo the size). Both i32.
 */
export interface SubgroupBuiltinExpr extends ExprBase {
  readonly kind: "subgroupBuiltin";
  /**
   * `warpgroupIdx` is the thread's warpgroup: its linear index in the block divided by 128 (CUDA and the CPU
   * only). The same for the 128 threads of a warpgroup, so a branch on it splits the block into roles
   * (docs/language.md, "Barriers in shared memory and roles"). `clusterRank` is the block's rank in its
   * cluster (x fastest), the same for all its threads (CUDA `%cluster_ctarank`; kernels with clusters only).
   */
  readonly builtin: "subgroupSize" | "subgroupInvocationId" | "warpgroupIdx" | "clusterRank";
}

export interface UnaryExpr extends ExprBase {
  readonly kind: "unary";
  readonly op: UnaryOp;
  readonly operand: Expr;
}

export interface BinaryExpr extends ExprBase {
  readonly kind: "binary";
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
}

/**
 * `cond ? whenTrue : whenFalse`. Both sides are pure, so a target may evaluate both. A bool-vector condition
 * (`select(f, t, cond)` on vectors) picks lane by lane between vectors of its size.
 */
export interface SelectExpr extends ExprBase {
  readonly kind: "select";
  readonly condition: Expr;
  readonly whenTrue: Expr;
  readonly whenFalse: Expr;
}

/**
 * A value conversion to `type`: float↔int truncates toward zero and saturates; int↔int keeps the bits. A
 * vector converts lane by lane to a vector of the same size (`vec3f(v)` of a vec3i).
 */
export interface ConvertExpr extends ExprBase {
  readonly kind: "convert";
  readonly value: Expr;
}

export interface IntrinsicExpr extends ExprBase {
  readonly kind: "intrinsic";
  readonly name: IntrinsicName;
  readonly args: readonly Expr[];
}

export interface CallExpr extends ExprBase {
  readonly kind: "call";
  readonly callee: HelperFunction;
  readonly args: readonly Expr[];
}

export interface LoadExpr extends ExprBase {
  readonly kind: "load";
  readonly array: ArrayRef;
  /** One index per dimension: one for global buffers, `dims.length` for shared arrays. */
  readonly indices: readonly Expr[];
  /**
   * Set on the first element of a vector access that a target split into elements: the last index must be
   * a multiple of this, as the vector access required (the CPU backend's checked mode verifies it).
   */
  readonly alignment?: number;
  /** Set by legalize where the target declares the array's elements atomic (WGSL): an atomic load. */
  readonly atomic?: boolean;
}

/**
 * Builds a vector or a struct (`type`). A vector's arguments are scalars and vectors of its element type
 * whose lanes, in order, fill it (`vec4f(v.xyz, 1)`), or one scalar that every lane takes (`vec3f(s)`). A
 * struct's arguments are its fields' values, in declaration order.
 */
export interface ConstructExpr extends ExprBase {
  readonly kind: "construct";
  readonly type: VectorType | StructType;
  readonly args: readonly Expr[];
}

/** Lanes of a vector (0 = x … 3 = w), in order: one lane is a scalar (`v.x`), more a vector (`v.zyx`). */
export interface SwizzleExpr extends ExprBase {
  readonly kind: "swizzle";
  readonly value: Expr;
  readonly lanes: readonly number[];
}

/** Field `field` (its index in the struct's declaration) of a struct value: `p.pos`. */
export interface FieldExpr extends ExprBase {
  readonly kind: "field";
  readonly value: Expr;
  readonly field: number;
}

/**
 * Only in checked builds (passes/checks.ts inserts it for the targets that have one): whether a rule of the
 * language holds here, `holds` (an index within its array, a divisor that is not zero, a shift amount below
 * 32, a 16-byte access at an aligned index). The value is `holds`; when it is false, the thread also records
 * the failure in the kernel's error buffer (the implicit `errors` parameter): the site (its place in the
 * kernel's table of checks, which says what was checked where), the launch (the implicit `launch`
 * parameter), its block and thread, and `values`, two u32 words that the site says how to read (the index and
 * the length, say). That record is the one effect an expression may have: no kernel code reads the buffer, so
 * the kernel's meaning is unchanged, and a target may evaluate a check whose result it discards. (Where a
 * target evaluates both sides of a `select`, the pass makes a check on a side count only when the condition
 * picks that side.)
 */
export interface CheckExpr extends ExprBase {
  readonly kind: "check";
  readonly type: "bool";
  readonly holds: Expr;
  readonly site: number;
  readonly values: readonly [Expr, Expr];
  readonly errors: ArrayRef;
  readonly launch: Variable;
}

export type Expr =
  | LiteralExpr
  | CheckExpr
  | VariableExpr
  | ConstRefExpr
  | BuiltinExpr
  | SubgroupBuiltinExpr
  | UnaryExpr
  | BinaryExpr
  | SelectExpr
  | ConvertExpr
  | IntrinsicExpr
  | CallExpr
  | LoadExpr
  | ConstructExpr
  | SwizzleExpr
  | FieldExpr;

/**
 * One step into a value that an assignment or a store writes: a field of a struct, or lanes of a vector
 * (distinct ones). `p[i].pos.x = v` writes element i of p, field pos, lane 0.
 */
export type Access = { readonly kind: "field"; readonly field: number } | { readonly kind: "swizzle"; readonly lanes: readonly number[] };

// ---------------------------------------------------------------------------------------------------------
// Statements

interface StmtBase {
  readonly span: Span;
}

/** Declares a local; `init` is absent only for `let x: T;`, which every backend zero-initializes. */
export interface DeclareStmt extends StmtBase {
  readonly kind: "declare";
  readonly variable: Variable;
  readonly init?: Expr;
}

/**
 * `variable = value` or, with `op`, `variable op= value` (also the lowering of `++` and `--`); with `path`,
 * the part of the variable it leads to (`v.x += 1`), whose type the value has.
 */
export interface AssignStmt extends StmtBase {
  readonly kind: "assign";
  readonly variable: Variable;
  readonly path?: readonly Access[];
  readonly op?: BinaryOp;
  readonly value: Expr;
}

/** `array[indices] = value` or `array[indices] op= value`; with `path`, a part of the element (`p[i].pos = v`). */
export interface StoreStmt extends StmtBase {
  readonly kind: "store";
  readonly array: ArrayRef;
  readonly indices: readonly Expr[];
  readonly path?: readonly Access[];
  readonly op?: BinaryOp;
  readonly value: Expr;
  /** As for `LoadExpr.alignment`: the first element of a split vector store. */
  readonly alignment?: number;
  /**
   * Set where a target made `copyAsync4` a plain copy: the stored elements count as written only once a
   * `waitAsync` of the copying thread covers their group (the CPU backend's checked mode verifies reads).
   */
  readonly asynchronous?: boolean;
  /** As for `LoadExpr.atomic`: an atomic store, which legalize made from a plain one (never with `op`). */
  readonly atomic?: boolean;
}

export interface IfStmt extends StmtBase {
  readonly kind: "if";
  readonly condition: Expr;
  readonly then: readonly Stmt[];
  readonly else: readonly Stmt[];
}

/**
 * A C-style `for`. `init` declares or assigns the loop variables; `update` holds assignments only. `unroll`
 * records the user's `unroll:` label; the unroll pass or the backend acts on it.
 */
export interface ForStmt extends StmtBase {
  readonly kind: "for";
  readonly init: readonly Stmt[];
  readonly condition?: Expr;
  readonly update: readonly Stmt[];
  readonly body: readonly Stmt[];
  readonly unroll: boolean;
}

export interface WhileStmt extends StmtBase {
  readonly kind: "while";
  readonly condition: Expr;
  readonly body: readonly Stmt[];
}

export interface BreakStmt extends StmtBase {
  readonly kind: "break";
}

export interface ContinueStmt extends StmtBase {
  readonly kind: "continue";
}

/** In a kernel: ends the thread (no value). In a helper: returns `value`. */
export interface ReturnStmt extends StmtBase {
  readonly kind: "return";
  readonly value?: Expr;
}

/** `syncThreads()`: every thread of the block waits here; shared-memory accesses before it are visible after. */
export interface BarrierStmt extends StmtBase {
  readonly kind: "barrier";
  /**
   * "cluster" for `syncCluster()`: every thread of every block of the kernel's cluster waits here (CUDA
   * `barrier.cluster` arrive.release/wait.acquire); "warpgroup" for `syncWarpgroup()`: the 128 threads of the
   * thread's warpgroup (a named barrier a warpgroup); otherwise the block's `syncThreads()`.
   */
  readonly scope?: "cluster" | "warpgroup";
  /**
   * Checked builds on targets that can count the threads a barrier meets (CUDA's `__syncthreads_count`): the
   * site that records a barrier that not every thread of the block reached (passes/checks.ts).
   */
  readonly check?: DivergenceCheck;
}

/** Where a checked build records a barrier or subgroup operation that only part of the block or subgroup reached. */
export interface DivergenceCheck {
  readonly site: number;
  readonly errors: ArrayRef;
  readonly launch: Variable;
}

/**
 * `threadFence()`: a device-scope memory fence (CUDA `__threadfence()`). This thread's memory accesses before
 * it are seen by every thread of the grid before its accesses after it, where the other thread observes them
 * through atomics. Unlike a barrier it waits for no other thread, so it may stand in any control flow.
 * Targets without a device-scope fence (WGSL) reject it in the validator.
 */
export interface FenceStmt extends StmtBase {
  readonly kind: "fence";
}

/** The number of elements `copyAsync4` moves, and `load4`/`store4` on 32-bit elements: 16 bytes. */
export const vectorWidth = 4;

/**
 * The elements a vector access moves: its locals or values. 16 bytes of 32-, 16- or 8-bit elements (`load4`,
 * `load8`, `load16`), or 8 and 4 bytes where `load4` reads 16- and 8-bit elements.
 */
export function vectorLanes(stmt: VectorLoadStmt | VectorStoreStmt): number {
  return stmt.kind === "vectorLoad" ? stmt.targets.length : stmt.values.length;
}

/**
 * `const [x, y, z, w] = load4(array, …indices)`: declares four locals holding the elements at the last index
 * and the three after it, which must be a multiple of 4 (on CUDA one 16-byte load). `load8` and `load16`
 * declare eight or sixteen, from a multiple of that (16 bytes of 16- or 8-bit elements): `vectorLanes`.
 */
export interface VectorLoadStmt extends StmtBase {
  readonly kind: "vectorLoad";
  /** The four (eight, sixteen) locals, declared by this statement, in element order. */
  readonly targets: readonly Variable[];
  readonly array: ArrayRef;
  readonly indices: readonly Expr[];
  /**
   * A checked build's (passes/checks.ts, targets whose loads stay inside the array): where false, the targets
   * are 0. The load runs either way; the backend picks its words (one select per word), not each lane.
   */
  readonly zeroUnless?: Expr;
}

/** `store4(array, …indices, x, y, z, w)`: four consecutive elements from a multiple of 4 (one 16-byte store). */
export interface VectorStoreStmt extends StmtBase {
  readonly kind: "vectorStore";
  readonly array: ArrayRef;
  readonly indices: readonly Expr[];
  readonly values: readonly Expr[];
  /** As for `StoreStmt.asynchronous`. */
  readonly asynchronous?: boolean;
}

/**
 * `copyAsync4(shared, …indices, global, index)`: starts copying four elements from a global buffer into a
 * shared array (CUDA `cp.async` on sm_80 and later); `copyAsync8` and `copyAsync16` the 16 bytes of eight
 * 16-bit or sixteen 8-bit elements (`asyncCopyLanes`). The copy is complete once a later `waitAsync` says
 * so; targets without asynchronous copies copy at once, which satisfies the same contract.
 */
export interface AsyncCopyStmt extends StmtBase {
  readonly kind: "asyncCopy";
  readonly target: ArrayRef;
  readonly targetIndices: readonly Expr[];
  readonly source: ArrayRef;
  readonly sourceIndices: readonly Expr[];
}

/** The elements an asynchronous copy moves: 16 bytes of its type (`copyAsync4`, `copyAsync8`, `copyAsync16`). */
export function asyncCopyLanes(stmt: AsyncCopyStmt): 4 | 8 | 16 {
  // The frontend admits only scalar elements of 4, 2 or 1 bytes (TSK2011).
  return (16 / scalars[stmt.target.elementType as ElementScalar].bytes) as 4 | 8 | 16;
}

/** `commitAsync()`: closes the group of asynchronous copies started since the last commit. */
export interface AsyncCommitStmt extends StmtBase {
  readonly kind: "asyncCommit";
}

/** `waitAsync(n)`: waits until at most `pending` committed groups of this thread's copies are unfinished. */
export interface AsyncWaitStmt extends StmtBase {
  readonly kind: "asyncWait";
  readonly pending: number;
  /**
   * `waitAsync(STAGES - 2)`: the count as written, an expression of compile-time constants, until specialization
   * folds it into `pending` (passes/specialize.ts); one that does not fold to 0…7 stays for the validator (TSK2008).
   */
  readonly pendingExpr?: Expr;
}

/** The statements that move memory in 16-byte units or asynchronously; targets print or legalize them. */
export type MemoryOperationStmt = VectorLoadStmt | VectorStoreStmt | AsyncCopyStmt | AsyncCommitStmt | AsyncWaitStmt;

/**
 * `loadFragment(frag, array, offset, stride)`: each lane of the warp reads its elements of the fragment's
 * matrix (rows × cols of its role, matrix.ts) from `array[offset + row * stride + col]`, a row-major matrix in
 * a global buffer or a 1-D shared array (of f32, or of a 16-bit fragment's own type); tf32 fragments round each
 * element as `cvt.rna.tf32.f32` does, bf16 and f16 ones from f32 to nearest even. Every
 * lane of the warp takes part (the validator's uniformity rule), so a target may load cooperatively.
 */
export interface MatrixLoadStmt extends StmtBase {
  readonly kind: "matrixLoad";
  readonly fragment: FragmentRef;
  readonly source: ArrayRef;
  readonly offset: Expr;
  readonly stride: Expr;
  /** The step between columns (the optional fifth argument): element (r, c) is at offset + r·stride + c·colStride. Absent: 1. */
  readonly colStride?: Expr;
  /**
   * Written as `loadMatrix` (an m16n8k16 A or B fragment from a shared 16-bit array, rows of 8 contiguous: colStride
   * absent, or stride 1): the same elements as `loadFragment`, which targets may load with `ldmatrix`. Legalize
   * keeps such a load whole for a target that prints ldmatrix (CUDA, unchecked builds) and sets `laneRow`: the
   * element index of the 8-element row this lane names to the instruction (ir/matrix.ts, ldmatrixPlan).
   */
  readonly ldmatrix?: { readonly laneRow?: Expr };
}

/**
 * `storeFragment(frag, array, offset, stride)`: the inverse of a load, for accumulators. Into a 16-bit float
 * array each element is rounded to its type (to nearest, ties to even). `storeFragment(frag, array, offset,
 * { swizzle: 128, boxRows })` stores into the 128-byte-swizzled boxes that copyTile fills and storeTile reads:
 * `stride` is then the elements of a 128-byte row, the columns go in boxes of that many, box j from offset +
 * j·boxRows·stride, and each element's index is swizzled (ir/matrix.ts, `boxIndex`); the options `alpha` and
 * `beta` make it a GEMM epilogue (C = alpha·acc + beta·C, rounded once).
 */
export interface MatrixStoreStmt extends StmtBase {
  readonly kind: "matrixStore";
  readonly fragment: FragmentRef;
  readonly target: ArrayRef;
  readonly offset: Expr;
  readonly stride: Expr;
  /** As for loads: absent means 1. */
  readonly colStride?: Expr;
  /** The rows of a box of the swizzled layout (absent: plain rows of `stride`). */
  readonly boxRows?: Expr;
  /**
   * The box layout's epilogue (f32 scalars): each element stored is alpha·acc (absent: acc) plus, when `beta` is
   * given, beta times the element the target held (read first), rounded once to the target's type.
   */
  readonly alpha?: Expr;
  readonly beta?: Expr;
}

/**
 * `mma(acc, a, b)`: acc = a·b + acc over the warp's fragments (`mma.sync` on CUDA). A collective of the warp:
 * every lane's result depends on the other lanes' fragments, so it stands only in uniform control flow and
 * the CPU backend cuts its thread loops at it, as at a subgroup operation. The fragment indices are uniform.
 */
export interface MmaStmt extends StmtBase {
  readonly kind: "mma";
  readonly accumulator: FragmentRef;
  readonly a: FragmentRef;
  readonly b: FragmentRef;
}

/**
 * `wgmma(acc, a, shared, offset)`: acc = a·B + acc over a warpgroup's fragments (`wgmma.mma_async` on sm_90a),
 * where B (8 × n of the shape) is read from the shared f32 array `b` in the K-major, 128-byte-swizzled layout:
 * B[k][col] = b[swizzle128(offset + 32·col + k)] (ir/matrix.ts, docs/language.md §25), its elements used as
 * TF32 by dropping their low 13 bits, as the tensor cores do. Asynchronous on CUDA: the result may be read,
 * and the operands changed, only after a `wgmmaWait` that covers its group (`wgmmaCommit`). A collective of
 * the warpgroup, in uniform control flow; the CPU backend cuts its thread loops at it, as at an `mma`.
 *
 * The 16-bit shapes (k16) take A from shared memory too (`a` is a `SharedOperand`): `wgmma(acc, A, aOffset,
 * B, bOffset)`, both arrays of the same 16-bit float type, A (64 × 16) K-major and B (16 × n) K-major or,
 * with `bMajor` "n", N-major in boxes of `bBoxRows` rows (ir/matrix.ts, `wgmmaOperandIndex`); or A from a
 * register fragment of bf16 or f16 elements (`wgmma(acc, a, B, bOffset[, layout])`, `a` a `FragmentRef` of
 * the accumulator's shape, B of the fragment's element type). The 8-bit shapes (k32) take A (64 × 32) and B
 * (32 × n) from shared arrays of e4m3 or e5m2 (each of either), both K-major.
 */
export interface WgmmaStmt extends StmtBase {
  readonly kind: "wgmma";
  readonly accumulator: FragmentRef;
  readonly a: FragmentRef | SharedOperand;
  readonly b: ArrayRef;
  readonly offset: Expr;
  /** B's major order: "k" (absent) or "n", N-major in boxes of 64 columns and `bBoxRows` rows (16-bit shapes only). */
  readonly bMajor?: "n";
  readonly bBoxRows?: Expr;
}

/** A matrix operand that the tensor cores read from a shared array, from `offset`. */
export interface SharedOperand {
  readonly kind: "sharedOperand";
  readonly array: ArrayRef;
  readonly offset: Expr;
}

/** True when wgmma's A is a register fragment (TF32 shapes, and 16-bit ones so written), false when it is read from shared memory. */
export function isFragmentOperand(a: FragmentRef | SharedOperand): a is FragmentRef {
  return !("kind" in a);
}

/**
 * `wgmmaCommit()` closes the group of this warpgroup's `wgmma`s issued since the last commit; `wgmmaWait(n)`
 * waits until at most `pending` committed groups are unfinished. No-ops where `wgmma` completes at once (CPU).
 */
export interface WgmmaSyncStmt extends StmtBase {
  readonly kind: "wgmmaSync";
  readonly op: "commit" | "wait";
  readonly pending: number;
}

/**
 * The operations on an mbarrier (`shared.barriers(n)`, element `index`): `init` sets the arrivals a phase
 * expects (`value`) and starts phase 0; `arrive` is one arrival of this thread; `arriveCopies` arrives once
 * every `copyAsync4` this thread started before it is complete (`cp.async.mbarrier.arrive.noinc`: the
 * arrival counts against the expected ones); `wait` blocks until the phase of parity `value` (0 or 1) has
 * completed, that is until the barrier's current phase has the other parity. A completed phase makes the
 * shared-memory writes of the threads that arrived (and the copies they arrived for) visible to the threads
 * that waited. `wait` stands in control flow that is the same across each warpgroup (the validator).
 */
export interface BarrierOpStmt extends StmtBase {
  readonly kind: "barrierOp";
  readonly op: "init" | "arrive" | "arriveCopies" | "arriveExpect" | "wait";
  readonly barriers: ArrayRef;
  readonly index: Expr;
  /** `init`: the expected arrivals; `wait`: the parity; `arriveExpect`: the bytes the phase also waits for. */
  readonly value?: Expr;
  /**
   * `arrive` only, in a kernel with clusters: the rank of the cluster's block whose barrier `index` this arrival
   * counts on (`arriveBarrier(bars, i, { block: r })`; the thread's own block when absent).
   */
  readonly block?: Expr;
}

/**
 * `copyTile(target, offset, source, map, x, y, barriers, index)`: one thread starts copying a box of the 2-D
 * f32 tensor `source` (row-major) that the tensor map `map` describes (a read-only u32 buffer the runtime's
 * `createTensorMap` filled: rows, columns, box rows, box columns of 32 f32 = 128 bytes), from column x and row
 * y, into the shared array `target` from `offset` (a multiple of 256 elements) in the 128-byte swizzle:
 * element (r, c) of the box at target[offset + swizzle128(32·r + c)]; elements outside the tensor are zero.
 * The copy's bytes count against barrier `index`'s phase (`arriveExpectBytes`); the phase's waiters see them.
 * (`cp.async.bulk.tensor` on sm_90, the tensor memory accelerator; on CUDA `source` only names the data that
 * the map points to.)
 */
export interface TileCopyStmt extends StmtBase {
  readonly kind: "tileCopy";
  readonly target: ArrayRef;
  readonly offset: Expr;
  readonly source: ArrayRef;
  readonly map: ArrayRef;
  readonly x: Expr;
  readonly y: Expr;
  readonly barriers: ArrayRef;
  readonly index: Expr;
  /**
   * In a kernel with clusters (`copyTile(…, { multicast: mask })`): the ranks of the cluster's blocks, bit r
   * for rank r, that each receive the box at `offset` of their own `target`, its bytes counted on their own
   * barrier `index` (CUDA `.multicast::cluster`). Absent: this block only.
   */
  readonly multicast?: Expr;
}

/**
 * `storeTile(target, map, x, y, source, offset)`: one thread starts copying a box of the shared array `source`
 * (from `offset`, in the 128-byte swizzle that copyTile writes) into the 2-D tensor `target` that the tensor map
 * describes, at column x and row y (`cp.async.bulk.tensor` to global memory, the tensor memory accelerator);
 * elements of the box outside the tensor are not written. Asynchronous on CUDA: the source may be rewritten,
 * and the kernel may end, only after `waitTileStores` (TileStoreWaitStmt) by the same thread. Shared memory
 * that ordinary stores wrote is published to the copy engine by the barrier before the store (CUDA prints
 * `fence.proxy.async` before each barrier arrival of a kernel that stores tiles that follows this thread's
 * ordinary writes to shared memory: cuda-barriers.ts, storeFences).
 */
export interface TileStoreStmt extends StmtBase {
  readonly kind: "tileStore";
  readonly target: ArrayRef;
  readonly map: ArrayRef;
  readonly x: Expr;
  readonly y: Expr;
  readonly source: ArrayRef;
  readonly offset: Expr;
}

/**
 * `waitTileStores(pending)`: waits until at most `pending` of this thread's tile stores still read their shared
 * source (pending 0 at the end of the kernel: until every store has completed). No-op on the CPU, where a
 * tile store completes at once.
 */
export interface TileStoreWaitStmt extends StmtBase {
  readonly kind: "tileStoreWait";
  readonly pending: number;
}

/**
 * `setMaxRegisters(count)`: from here on the warpgroup's threads hold at most `count` registers each
 * (`setmaxnreg` on sm_90a: fewer than the block's share gives registers back, more takes them from those
 * given back, waiting until there are enough). A warpgroup-wide operation, in control flow that is the same
 * across the warpgroup; `count` is a constant multiple of 8 from 24 to 256 (the frontend). No-op on the CPU.
 */
export interface SetMaxRegistersStmt extends StmtBase {
  readonly kind: "setMaxRegisters";
  readonly count: number;
}

/** The matrix statements (warp and warpgroup). */
export type MatrixStmt = MatrixLoadStmt | MatrixStoreStmt | MmaStmt | WgmmaStmt | WgmmaSyncStmt;

/**
 * The operations of atomics: read-modify-writes (`compareExchange` stores `value` only where the old value is
 * `expected`), and `load` and `store`, a read or a write of the whole element that no thread sees half done
 * and that the target may not cache, merge or move out of a loop (a flag polled in a spin loop).
 */
export type AtomicOp = "add" | "sub" | "min" | "max" | "and" | "or" | "xor" | "exchange" | "compareExchange" | "load" | "store" | "wait";

/**
 * An atomic's memory order beyond relaxed (lang/index.ts's MemoryOrder), at the scope of the whole GPU: loads
 * and waits acquire, stores release, read-modify-writes any of the three.
 */
export type AtomicOrder = "acquire" | "release" | "acqRel";

/**
 * `atomicAdd(array, index, value)` and its siblings: one indivisible read-modify-write of one element of a
 * writable global buffer or a shared array (`indices`: one per dimension, as for a store). Threads may update
 * one element at once, in any order. `result`, declared by this statement, receives the old value when the
 * kernel uses it.
 */
export interface AtomicStmt extends StmtBase {
  readonly kind: "atomic";
  readonly op: AtomicOp;
  readonly array: ArrayRef;
  readonly indices: readonly Expr[];
  /** Absent for `load` only; for `wait` (`waitFlag`), the value waited for. */
  readonly value?: Expr;
  /** `compareExchange` only: the value the element must hold for `value` to be stored. */
  readonly expected?: Expr;
  readonly result?: Variable;
  /** Absent: relaxed. A `wait` always acquires (and carries "acquire" here). */
  readonly order?: AtomicOrder;
}

/**
 * The collective operations: every thread of a group (here always a subgroup) runs one together, and each
 * gets a result that depends on the other threads' arguments. The rules of barriers apply (every thread of
 * the group must reach it, so it stands only in uniform control flow) and the CPU backend cuts its thread
 * loops at them as it does at barriers. Argument and result types are the frontend's (lower-atomics-subgroups.ts).
 */
export type CollectiveOp =
  | "subgroupAdd" | "subgroupMin" | "subgroupMax" | "subgroupInclusiveAdd" | "subgroupExclusiveAdd"
  | "subgroupBroadcast" | "subgroupShuffle" | "subgroupShuffleXor" | "subgroupShuffleUp" | "subgroupShuffleDown"
  | "subgroupBallot" | "subgroupAll" | "subgroupAny"
  // The first thread's value in every thread of the warpgroup (a collective over 128 threads).
  | "warpgroupBroadcast";

/** `const s = subgroupAdd(x)`: a collective whose value `result` (declared here) receives. */
export interface CollectiveStmt extends StmtBase {
  readonly kind: "collective";
  readonly op: CollectiveOp;
  readonly args: readonly Expr[];
  readonly result: Variable;
  /**
   * warpgroupBroadcast only: the shared array (8 i32, one a warpgroup of the largest block) through which CUDA
   * hands the value over, declared once a kernel by the frontend so that the shared memory it takes is counted.
   */
  readonly words?: ArrayRef;
}

/** A nested `{ … }` block: a scope for the declarations inside it. */
export interface BlockStmt extends StmtBase {
  readonly kind: "block";
  readonly body: readonly Stmt[];
}

export type Stmt =
  | DeclareStmt
  | AssignStmt
  | StoreStmt
  | IfStmt
  | ForStmt
  | WhileStmt
  | BreakStmt
  | ContinueStmt
  | ReturnStmt
  | BarrierStmt
  | FenceStmt
  | BlockStmt
  | VectorLoadStmt
  | VectorStoreStmt
  | AsyncCopyStmt
  | AsyncCommitStmt
  | AsyncWaitStmt
  | AtomicStmt
  | CollectiveStmt
  | MatrixLoadStmt
  | MatrixStoreStmt
  | MmaStmt
  | WgmmaStmt
  | WgmmaSyncStmt
  | BarrierOpStmt
  | SetMaxRegistersStmt
  | TileCopyStmt
  | TileStoreStmt
  | TileStoreWaitStmt;

/** The locals a statement declares itself (not those of nested statements). */
export function declaredVariables(stmt: Stmt): readonly Variable[] {
  switch (stmt.kind) {
    case "declare":
      return [stmt.variable];
    case "vectorLoad":
      return stmt.targets;
    case "atomic":
      return stmt.result ? [stmt.result] : [];
    case "collective":
      return [stmt.result];
    default:
      return [];
  }
}

// ---------------------------------------------------------------------------------------------------------
// Functions and modules

export type KernelParam =
  | { readonly kind: "buffer"; readonly array: ArrayRef; readonly implicit?: ImplicitParam }
  /** A run-time value, passed by value: a scalar, or a vector or struct (then in WGSL's uniform layout). */
  | { readonly kind: "scalar"; readonly variable: Variable; readonly implicit?: ImplicitParam }
  | {
      readonly kind: "const";
      readonly name: string;
      readonly type: ScalarType;
      /** The TypeScript default value (`TILE: Const<i32> = 16`), used when no specialization gives one. */
      readonly defaultValue?: ConstValue;
      readonly span: Span;
    };

/**
 * The parameters a checked build adds after the kernel's own (passes/checks.ts), which the runtime passes
 * itself: the error buffer (u32 words), the launch's tag (u32) that its records carry, and the length of a
 * buffer parameter (u32, in elements) that the checks compare indices with.
 */
export type ImplicitParam = { readonly kind: "errors" } | { readonly kind: "launch" } | { readonly kind: "length"; readonly of: string };

/** A compile-time constant's value. */
export type ConstValue = number | boolean;

/**
 * A block-shape formula over constant parameters: a number, a constant's name, or a product or quotient
 * (`"BM * BN / (TM * TN)"` is `{ op: "/", left: BM * BN, right: TM * TN }`).
 */
export type BlockShapeExpr =
  | number
  | string
  | { readonly op: "*" | "/"; readonly left: BlockShapeExpr; readonly right: BlockShapeExpr };

/** One block-shape entry before specialization: a number, or a formula over constant parameters with its source text. */
export type BlockDimSpec = number | { readonly formula: BlockShapeExpr; readonly text: string };

export interface Kernel {
  readonly kind: "kernel";
  readonly name: string;
  readonly sourceFile: string;
  readonly params: readonly KernelParam[];
  /** Shared arrays, declared at the top level of the body, in source order. */
  readonly shared: readonly ArrayRef[];
  /** Private (per-thread, register) arrays, declared at the top level of the body, in source order. */
  readonly locals: readonly ArrayRef[];
  readonly body: readonly Stmt[];
  /** The fixed block shape [x, y, z], or undefined when the launch chooses it. */
  readonly block?: readonly [BlockDimSpec, BlockDimSpec, BlockDimSpec];
  /** Span of the `block` option, for diagnostics about the block shape. */
  readonly blockSpan?: Span;
  /**
   * The `cluster` option: blocks [x, y, z] launched together on one GPU processing cluster, which can reach
   * each other's shared memory and barriers (`clusterRank`, `syncCluster`, multicast `copyTile`, remote
   * `arriveBarrier`); the grid must be a multiple of it. CUDA `__cluster_dims__`; the CPU runs a cluster's blocks
   * together. Undefined: every block alone.
   */
  readonly cluster?: readonly [number, number, number];
  readonly clusterSpan?: Span;
  /** The specializations the kernel's options ask for (possibly partial; defaults fill the rest). */
  readonly specializations: readonly Readonly<Record<string, ConstValue>>[];
  /** Span of the `specializations` option, for diagnostics about its values. */
  readonly specializationsSpan?: Span;
  /**
   * The targets the kernel declares it is built for (its `targets` option), in the order written; undefined
   * when it declares none, and is then built for every target a compilation asks for.
   */
  readonly targets?: readonly ("cuda" | "wgsl" | "js")[];
  /** Values of the constant parameters once specialized; empty before. */
  readonly constValues: ReadonlyMap<string, ConstValue>;
  /**
   * For a kernel written over element types (`<T extends DType>`): the element type each type parameter stands
   * for in this instance. The frontend lowers one instance per element type the specializations name.
   */
  readonly typeArgs?: ReadonlyMap<string, ElementScalar>;
  /**
   * The launch the kernel declares (its options `tensors`, `grid`, `requires`, `backward`), already in the
   * manifest's form, which is what every consumer reads; `backwardSpan` locates `backward` for the pairing check.
   */
  readonly signature?: ManifestSignature;
  readonly backwardSpan?: Span;
  readonly span: Span;
}

export interface HelperFunction {
  readonly kind: "helper";
  readonly name: string;
  readonly params: readonly Variable[];
  readonly returnType: Type;
  /** Mutable only while the frontend fills it in (helpers may be referenced before they are lowered). */
  body: readonly Stmt[];
  readonly span: Span;
  /**
   * A checked build's copy of a helper for one kernel (passes/checks.ts): its checks record into that kernel's
   * error buffer, which CUDA passes it after its own arguments with the launch's tag.
   */
  readonly checks?: { readonly errors: ArrayRef; readonly launch: Variable };
}

export interface Module {
  readonly sourceFile: string;
  readonly kernels: readonly Kernel[];
  /** Helpers in dependency order: a helper comes after every helper it calls. */
  readonly helpers: readonly HelperFunction[];
}

export function assertNever(value: never, what = "value"): never {
  throw new Error(`internal: unexpected ${what}: ${JSON.stringify((value as { kind?: unknown })?.kind ?? value)}`);
}
