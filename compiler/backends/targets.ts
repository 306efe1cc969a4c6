/**
 * Target differences as data. Each backend reads its row of these tables instead of branching on the
 * target: type names, operator and intrinsic spellings, builtin variables, the barrier, literal suffixes,
 * reserved words, resource limits the validator checks, and which legalizations the target needs.
 */

import type { AtomicOp, BinaryOp, IntrinsicName, UnaryOp } from "../ir/ir.ts";
import { targetScalars, type ElementScalar, type ScalarType, type TargetName } from "../ir/types.ts";
import type { LegalizeOptions } from "../passes/legalize.ts";
import type { CheckOptions } from "../passes/checks.ts";
import { packedNames } from "./wgsl-packed.ts";
import { cudaHalfConversion, cudaHalfConversions, cudaHalfNames, cudaHalfOperators } from "./cuda-halves.ts";
import { cudaFloat8Names } from "./cuda-float8.ts";

export { targetNames, type TargetName } from "../ir/types.ts";

export interface TargetLimits {
  /** Shared (workgroup) memory per block above which compilation fails. */
  readonly maxSharedBytes: number;
  /** Above this a warning says the kernel needs an adapter with more than the default (WebGPU). */
  readonly portableSharedBytes?: number;
  readonly maxThreadsPerBlock: number;
  readonly portableThreadsPerBlock?: number;
  readonly maxBlockDims: readonly [number, number, number];
  /**
   * Kernels with subgroup operations need blocks of whole subgroups: a fixed block's thread count must be a
   * multiple of this (CUDA's warps are 32 lanes; WebGPU's subgroups are powers of two from 4 to 128, which the
   * runtime checks against the adapter). `subgroupSizes` says so in messages.
   */
  readonly subgroupMultiple?: number;
  readonly subgroupSizes?: string;
  /** The deepest code the target's compiler accepts, in the levels of validate/code-depth.ts. */
  readonly maxCodeDepth?: number;
  /** Bytes of private (`local.*`) arrays one thread may have in all. */
  readonly maxPrivateBytes?: number;
  /** Bytes one private array may have. */
  readonly maxPrivateArrayBytes?: number;
  /** Bindings of the one bind group: one per buffer parameter, one more for the scalars' uniform. */
  readonly maxBindings?: number;
  /** Bytes of a kernel's parameter list, laid out with each parameter aligned to its size. */
  readonly maxParamBytes?: number;
  /** Whether the target has warp-level matrix operations (`mma`); without them such kernels fail (TSK3048). */
  readonly matrixOperations: boolean;
  /** Whether `threadFence()` has a device-scope fence to become (WGSL has none: TSK3050). */
  readonly deviceScopeFence: boolean;
  /** mbarriers in shared memory and warpgroup roles (`shared.barriers`, `warpgroupIdx`): CUDA and the CPU. */
  readonly warpgroupRoles: boolean;
}

export interface TargetInfo {
  readonly name: TargetName;
  readonly displayName: string;
  readonly limits: TargetLimits;
  readonly legalize: LegalizeOptions;
  /** Unroll `unroll:` loops in the IR (true) or leave them to a pragma in the output (false). */
  readonly unrollInIR: boolean;
  /** Where `unrollInIR` is false: unroll only the short innermost `unroll:` loops (passes/unroll.ts, unrollShortLoops). */
  readonly unrollShortLoops?: { readonly maxTrips: number; readonly maxStatements: number };
  /** Replace private arrays with constant indices by one local per element (passes/scalarize.ts). */
  readonly scalarizePrivateArrays: boolean;
  /** Compute vectors and structs lane by lane, as scalars (passes/scalarize-vectors.ts); otherwise the target prints them. */
  readonly scalarizeVectors: boolean;
  /**
   * How a checked build checks the target's kernels (passes/checks.ts); absent where the target has no checked
   * build of that kind (the CPU's checked mode is a JS build of its own, backends/js.ts).
   */
  readonly checks?: CheckOptions;
}

/** The element types a target packs several to a storage word, with how many (ir/types.ts, perStorageElement). */
function packedElements(target: TargetName): Partial<Record<ElementScalar, number>> {
  return Object.fromEntries(Object.entries(targetScalars[target]).flatMap(([type, cell]) => ((cell.perStorageElement ?? 1) > 1 ? [[type, cell.perStorageElement!]] : [])));
}

export const targets: Readonly<Record<TargetName, TargetInfo>> = {
  cuda: {
    name: "cuda",
    displayName: "CUDA",
    // Up to 48 KB is declared statically; above, the backend switches to dynamic shared memory, which
    // Hopper allows up to 227 KB per block (Ampere 163 KB: the runtime checks the GPU's own limit).
    // Local memory is at most 512 KB per thread (CUDA programming guide, compute capability 9.0).
    // Kernel parameters may fill 32764 bytes since CUDA 12.1 on Volta and later (nvcc: "Formal parameter
    // space overflowed (32800 bytes required, max 32764 bytes allowed)"; 4095 pointers and an int fit).
    limits: { maxSharedBytes: 227 * 1024, maxThreadsPerBlock: 1024, maxBlockDims: [1024, 1024, 64], subgroupMultiple: 32, subgroupSizes: "warps of 32 threads on CUDA", maxPrivateBytes: 512 * 1024, maxParamBytes: 32764, matrixOperations: true, deviceScopeFence: true, warpgroupRoles: true },
    // C++ leaves signed overflow and shifts by 32 or more undefined, and nvcc optimizes on it: i32 arithmetic
    // goes through unsigned and shift amounts are masked, as the language defines them (wrap-integers.ts).
    legalize: { shiftAmountU32: false, dropUnsignedAbs: true, splitVectorAccesses: false, synchronousCopies: false, wrapSignedArithmetic: true, maskShiftAmounts: true, splitMatrixAccesses: true, ldmatrix: true, splitSwizzleStores: true, expandFunctions: true, nativeF32Functions: new Set(["inverseSqrt"]) },
    unrollInIR: false,
    scalarizePrivateArrays: false,
    // Small structs with inline helpers (cuda-vectors.ts): nvcc keeps their lanes in registers as it would
    // scalars, and the .cu reads as the kernel was written.
    scalarizeVectors: false,
    // C's `?:` evaluates one side; __syncthreads_count counts who reached a barrier for the price of the
    // barrier. __activemask cannot tell a warp operation that part of the warp misses from one whose lanes
    // have not reconverged yet (independent thread scheduling): measured as a false report on the H100.
    checks: { eagerSelect: false, divergence: true },
  },
  wgsl: {
    name: "wgsl",
    displayName: "WebGPU",
    // WebGPU guarantees 16 KB and 256 invocations; desktop adapters offer 32–64 KB and 1024.
    limits: {
      maxSharedBytes: 64 * 1024,
      portableSharedBytes: 16 * 1024,
      maxThreadsPerBlock: 1024,
      portableThreadsPerBlock: 256,
      maxBlockDims: [1024, 1024, 64],
      subgroupMultiple: 4,
      subgroupSizes: "at least 4 threads on WebGPU, as many as the adapter's subgroups",
      // Tint stops at 128 nested expressions and braces (127 statements); measured through Dawn, the
      // shallowest construct it rejects is 128 levels deep, and legalization may add a level or two.
      maxCodeDepth: 120,
      // Dawn refuses a function-scope variable of more than 64 KiB (and arrays of 65536 elements or more).
      maxPrivateArrayBytes: 64 * 1024,
      // Dawn caps maxBindingsPerBindGroup at 1000 ("Binding number (1103) exceeds the maxBindingsPerBindGroup
      // limit (1000) - 1", found by the fuzzer); tskernel binds everything in group 0.
      maxBindings: 1000,
      // Dawn here exposes no subgroup-matrix feature (WGSL's proposed `subgroup_matrix` types), so no tensor cores.
      matrixOperations: false,
      // WGSL's atomics are relaxed, storageBarrier() orders memory within one workgroup only, and nothing
      // promises that a workgroup waiting on another lets that one run.
      deviceScopeFence: false,
      warpgroupRoles: false,
    },
    // Arrays are of f32, or of vec4<f32> when only vector accesses touch them, or of atomic<i32|u32> when
    // atomics do; no async copies.
    legalize: { shiftAmountU32: true, dropUnsignedAbs: false, splitVectorAccesses: true, vectorArrays: true, elementsPerWord: packedElements("wgsl"), synchronousCopies: true, atomicAccesses: true, loopCondition: true, splitSwizzleStores: true, laneConversions: true },
    unrollInIR: true,
    scalarizePrivateArrays: false,
    // WGSL has vectors and structs.
    scalarizeVectors: false,
    // `select` evaluates both sides; a barrier or subgroup operation that part of the workgroup misses cannot
    // be counted (Tint's uniformity analysis refuses what the compiler's does not). An access past an array's
    // end stays inside it (robust buffer access), so a checked vector load needs no branch around it. A thread
    // keeps its first failure only, recorded without a branch (wgsl.ts, checkFunction): an access's two checks
    // are both evaluated.
    checks: { eagerSelect: true, divergence: false, boundedLoads: true, eagerConjunction: true },
  },
  js: {
    name: "js",
    displayName: "the CPU backend",
    // The CPU runs one block at a time with ordinary arrays; CUDA's limits keep kernels portable.
    // Kernel parameters may fill 32764 bytes since CUDA 12.1 on Volta and later (nvcc: "Formal parameter
    // space overflowed (32800 bytes required, max 32764 bytes allowed)"; 4095 pointers and an int fit).
    // Matrix operations are emulated exactly as docs/language.md section 25 defines them.
    limits: { maxSharedBytes: 227 * 1024, maxThreadsPerBlock: 1024, maxBlockDims: [1024, 1024, 64], maxPrivateBytes: 512 * 1024, maxParamBytes: 32764, matrixOperations: true, deviceScopeFence: true, warpgroupRoles: true },
    legalize: { shiftAmountU32: false, dropUnsignedAbs: false, splitVectorAccesses: true, synchronousCopies: true, keepAsyncFences: true, collectiveArgsInLocals: true, splitMatrixAccesses: true },
    // Unrolled code runs no faster under V8, and large unrolled bodies exceed what its optimizing compiler
    // takes on (the 2-D blocktiling kernel ran ~100× slower unrolled): JS keeps loops as loops, except the
    // small ones whose unrolling turns a private array into locals, and the short innermost ones, whose every
    // iteration would check each typed array again (unrollShortLoops).
    unrollInIR: false,
    unrollShortLoops: { maxTrips: 2, maxStatements: 16 },
    scalarizePrivateArrays: true,
    // An object per vector would allocate in every operation: a local per lane is a register to V8.
    scalarizeVectors: true,
  },
};

// ---------------------------------------------------------------------------------------------------------
// Spellings shared by the C-like printers

/** The resource limits the validator holds a target's kernels to (shared memory, threads per block). */
export function targetLimits(target: TargetName): TargetLimits {
  return targets[target].limits;
}

export interface Spelling {
  /** The name of a value of each scalar type (ir/types.ts, `targetScalars`). */
  readonly types: Readonly<Record<ScalarType, string>>;
  /** The name of an array element of each type: the value's name, or the target's storage (ir/types.ts). */
  readonly elementTypes: Readonly<Record<ElementScalar, string>>;
  readonly unary: Readonly<Record<UnaryOp, string>>;
  readonly binary: Readonly<Record<BinaryOp, string>>;
  /**
   * Intrinsics per argument type: a function name, or a template with $0, $1, $2 for the arguments;
   * `intWithLiteral`, where given, spells an integer call that has a literal among its arguments.
   */
  readonly intrinsics: Readonly<Record<IntrinsicName, { readonly f32: string; readonly int: string; readonly intWithLiteral?: string; readonly f64?: string }>>;
  /** f32 operators the target spells as a call (C has no `%` on floats); $0 and $1 are the operands. */
  readonly floatCalls?: Partial<Record<BinaryOp, string>>;
  /**
   * The operators of other float types that the target spells as a template ($0, $1 the operands): CUDA
   * divides halves in f32 (its own half division is not correctly rounded), WGSL rounds every bf16 result.
   */
  readonly typedCalls?: Partial<Record<"f16" | "bf16" | "f64", Partial<Record<BinaryOp, string>>>>;
  /**
   * An f16 or bf16 math function from its f32 spelling (the f32 function rounded once, as docs/language.md
   * defines it). Absent for a type: the f32 spelling takes the type as it is (WGSL's builtins take f16).
   */
  readonly halfIntrinsic?: Partial<Record<"f16" | "bf16", (f32: string, arity: number) => string>>;
  /** Unary operators of the half types that the target spells as a template ($0), as for `typedCalls`. */
  readonly typedUnary?: Partial<Record<"f16" | "bf16", Partial<Record<UnaryOp, string>>>>;
  /**
   * Call arguments that are a `<` comparison print in parentheses: WGSL reads `f(a < b, c > d)` as the
   * template list `a<b, c>` ("parsed as template list", found by the differential fuzzer).
   */
  readonly lessThanArgumentsInParens?: boolean;
  readonly reserved: ReadonlySet<string>;
}

const cBinary: Readonly<Record<BinaryOp, string>> = {
  add: "+", sub: "-", mul: "*", div: "/", rem: "%", and: "&", or: "|", xor: "^", shl: "<<", shr: ">>",
  eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", logand: "&&", logor: "||",
};

const cUnary: Readonly<Record<UnaryOp, string>> = { neg: "-", not: "!", bitnot: "~" };

/** A target's value spellings, read from the type table. */
function valueSpellings(target: TargetName): Record<ScalarType, string> {
  const row = targetScalars[target];
  return { bool: row.bool.value, i32: row.i32.value, u32: row.u32.value, f32: row.f32.value, f16: row.f16.value, bf16: row.bf16.value, f64: row.f64.value };
}

/** A target's array-element spellings, read from the type table. */
function elementSpellings(target: TargetName): Record<ElementScalar, string> {
  const row = targetScalars[target];
  const element = (name: ElementScalar) => row[name].storage ?? row[name].value;
  return {
    i32: element("i32"), u32: element("u32"), f32: element("f32"), f16: element("f16"), bf16: element("bf16"), f64: element("f64"),
    i8: element("i8"), u8: element("u8"), i16: element("i16"), u16: element("u16"), e4m3: element("e4m3"), e5m2: element("e5m2"),
  };
}

/** A CUDA half function from its f32 spelling: the arguments widened exactly, the result rounded once. */
function cudaHalfIntrinsic(type: "f16" | "bf16"): (f32: string, arity: number) => string {
  const { widen, narrow } = cudaHalfConversions[type];
  return (f32, arity) => {
    const call = f32.includes("$0") ? f32 : `${f32}(${Array.from({ length: arity }, (_, i) => `$${i}`).join(", ")})`;
    return `${narrow}(${call.replace(/\$(\d)/g, (_, i: string) => `${widen}($${i})`)})`;
  };
}

export const cudaSpelling: Spelling = {
  types: valueSpellings("cuda"),
  elementTypes: elementSpellings("cuda"),
  unary: cUnary,
  binary: cBinary,
  floatCalls: { rem: "fmodf($0, $1)" },
  // Halves compute in f32 and round once (cuda-halves.ts): the other targets' bits.
  typedCalls: { f16: cudaHalfOperators("f16"), bf16: cudaHalfOperators("bf16"), f64: { rem: "fmod($0, $1)" } },
  typedUnary: {
    f16: { neg: `${cudaHalfConversions.f16.narrow}(-${cudaHalfConversions.f16.widen}($0))` },
    bf16: { neg: `${cudaHalfConversions.bf16.narrow}(-${cudaHalfConversions.bf16.widen}($0))` },
  },
  halfIntrinsic: { f16: cudaHalfIntrinsic("f16"), bf16: cudaHalfIntrinsic("bf16") },
  intrinsics: {
    sqrt: { f32: "sqrtf", int: "", f64: "sqrt" },
    // Functions (cuda.ts prints them when used): ptxas folds `fabsf(x) >= 0.0f` to true for a NaN x, and
    // C++'s `abs` overflows on -2147483648, where the language wraps.
    abs: { f32: "tsk_fabsf", int: "tsk_abs", f64: "tsk_fabs" },
    // Functions (cuda.ts prints them when used): ptxas drops a negation when it fuses nested min/max. With a
    // literal operand the plain call is safe and lets NVVM bound loops by it (see cuda.ts, intrinsicHelpers).
    min: { f32: "fminf", int: "tsk_min", intWithLiteral: "min", f64: "fmin" },
    max: { f32: "fmaxf", int: "tsk_max", intWithLiteral: "max", f64: "fmax" },
    floor: { f32: "floorf", int: "", f64: "floor" },
    ceil: { f32: "ceilf", int: "", f64: "ceil" },
    round: { f32: "rintf", int: "", f64: "rint" },
    trunc: { f32: "truncf", int: "", f64: "trunc" },
    exp: { f32: "expf", int: "", f64: "exp" },
    // f32 through the hardware's ex2 with subnormal results flushed (cuda.ts's helper says why).
    exp2: { f32: "tsk_exp2f", int: "", f64: "exp2" },
    log: { f32: "logf", int: "", f64: "log" },
    log2: { f32: "log2f", int: "", f64: "log2" },
    pow: { f32: "powf", int: "", f64: "pow" },
    sin: { f32: "sinf", int: "", f64: "sin" },
    cos: { f32: "cosf", int: "", f64: "cos" },
    tan: { f32: "tanf", int: "", f64: "tan" },
    tanh: { f32: "tanhf", int: "", f64: "tanh" },
    atan2: { f32: "atan2f", int: "", f64: "atan2" },
    fma: { f32: "fmaf", int: "", f64: "fma" },
    // A function (cuda.ts prints it when used): a template would repeat its argument three times, and
    // nested Math.sign calls would grow the source exponentially.
    sign: { f32: "tsk_signf", int: "", f64: "tsk_sign" },
    // cvt.rna.tf32.f32 through inline PTX (cuda.ts prints the helper when used).
    roundTf32: { f32: "tsk_tf32", int: "" },
    bitcastU32: { f32: "", int: "__float_as_uint($0)" },
    bitcastF32: { f32: "__uint_as_float($0)", int: "" },
    // Never printed: legalize writes their scalar forms out (ir/vector-functions.ts), and on vectors they are
    // the helpers of cuda-vectors.ts.
    clamp: { f32: "", int: "" }, mix: { f32: "", int: "" }, fract: { f32: "", int: "" }, step: { f32: "", int: "" },
    smoothstep: { f32: "", int: "" }, saturate: { f32: "", int: "" },
    // f32 only, through the hardware's reciprocal square root (cuda.ts's helper says why); f16 lanes keep
    // the definition, rounded as every f16 operation is.
    inverseSqrt: { f32: "tsk_rsqrtf", int: "" },
    dot: { f32: "", int: "" }, cross: { f32: "", int: "" }, length: { f32: "", int: "" }, distance: { f32: "", int: "" },
    normalize: { f32: "", int: "" }, reflect: { f32: "", int: "" }, faceForward: { f32: "", int: "" }, all: { f32: "", int: "" }, any: { f32: "", int: "" },
  },
  reserved: new Set([
    // C++ keywords and common macros
    "alignas", "alignof", "and", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "class", "compl", "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do",
    "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend",
    "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
    "operator", "or", "private", "protected", "public", "register", "reinterpret_cast", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "NULL", "main",
    // CUDA builtins and the functions the printer calls
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "min", "max", "abs",
    "sqrtf", "fabsf", "fminf", "fmaxf", "floorf", "ceilf", "rintf", "truncf", "expf", "exp2f", "logf", "log2f",
    "powf", "sinf", "cosf", "tanf", "tanhf", "atan2f", "fmaf", "fmodf",
    // The C math library's names, which CUDA declares too: a kernel or helper may not take them.
    "sqrt", "fabs", "floor", "ceil", "round", "rint", "trunc", "exp", "exp2", "expf", "log", "log2", "log10", "pow",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "fma", "fmod", "fmin", "fmax",
    "hypot", "cbrt", "erf", "erfc", "lgamma", "tgamma", "copysign", "ldexp", "frexp", "modf", "isnan", "isinf",
    "isfinite", "signbit", "printf", "malloc", "free", "memcpy", "memset", "assert",
    // CUDA's own device math functions
    "rsqrt", "rsqrtf", "rcbrt", "rcbrtf", "sincos", "sincosf", "sincospi", "sinpi", "cospi", "exp10", "exp10f",
    "erfinv", "erfcinv", "normcdf", "normcdfinv", "saturate", "umin", "umax", "llmin", "llmax", "norm", "rnorm",
    // Vector types and the asynchronous-copy helpers the printer emits.
    "float4", "int4", "uint4", "make_float4", "make_int4", "make_uint4", "uint2", "make_uint2", "tsk_cp_async_16", "tsk_cp_async_commit", "tsk_cp_async_wait",
    // Atomics, warp intrinsics and the subgroup helpers the printer emits.
    "atomicAdd", "atomicSub", "atomicMin", "atomicMax", "atomicAnd", "atomicOr", "atomicXor", "atomicExch", "atomicCAS", "__threadfence",
    "__shfl_sync", "__shfl_xor_sync", "__shfl_up_sync", "__shfl_down_sync", "__ballot_sync", "__all_sync", "__any_sync",
    "tsk_lane_id", "tsk_subgroup_add", "tsk_subgroup_min", "tsk_subgroup_max", "tsk_subgroup_inclusive_add", "tsk_subgroup_exclusive_add",
    "tsk_check", "tsk_report", "tsk_arrived", "__syncthreads_count", "__activemask", "tsk_signf", "tsk_fabsf", "tsk_abs", "tsk_sign", "tsk_fabs", "fmod", ...cudaHalfNames, ...cudaFloat8Names, "tsk_min", "tsk_max", "__float2int_rz", "__float2uint_rz", "__int_as_float", "__float_as_int", "tsk_tf32", "tsk_mma_m16n8k8_tf32", "tsk_mma_m16n8k16_bf16", "tsk_mma_m16n8k16_f16", "tsk_ldmatrix_x1", "tsk_ldmatrix_x2", "tsk_ldmatrix_x4", "tsk_ldmatrix_x1_trans", "tsk_ldmatrix_x2_trans", "tsk_ldmatrix_x4_trans",
  ]),
};

/**
 * CUDA caps statically declared `__shared__` memory at 48 KB per block. A kernel that needs more gets its
 * shared arrays carved out of one dynamic `extern __shared__` buffer instead, and its launches must ask for
 * that many bytes (after raising the function's limit with cuFuncSetAttribute).
 */
export const cudaStaticSharedLimit = 48 * 1024;

/**
 * CUDA's atomic functions: each takes the element's address, then (for compareExchange) the expected value, then the
 * value. Atomic loads and stores are volatile accesses (cuda.ts).
 */
export const cudaAtomics: Readonly<Record<Exclude<AtomicOp, "load" | "store" | "wait">, string>> = {
  add: "atomicAdd", sub: "atomicSub", min: "atomicMin", max: "atomicMax", and: "atomicAnd", or: "atomicOr", xor: "atomicXor",
  exchange: "atomicExch", compareExchange: "atomicCAS",
};

/** WGSL's atomic functions; compareExchange is a loop over `atomicCompareExchangeWeak` (wgsl-atomics.ts). */
export const wgslAtomics: Readonly<Record<Exclude<AtomicOp, "compareExchange" | "wait">, string>> = {
  add: "atomicAdd", sub: "atomicSub", min: "atomicMin", max: "atomicMax", and: "atomicAnd", or: "atomicOr", xor: "atomicXor",
  exchange: "atomicExchange", load: "atomicLoad", store: "atomicStore",
};

/** CUDA's f32 → integer conversions: truncating, saturating, NaN → 0 (`cvt.rzi`), as docs/language.md §5 says. */
export const cudaFloatToInt: Readonly<Record<"i32" | "u32", string>> = { i32: "__float2int_rz", u32: "__float2uint_rz" };

/**
 * CUDA's conversions where a C cast would not do ($0: the value): float → integer saturates (`cvt.rzi`,
 * NaN → 0), and every conversion to or from f16 and bf16 goes through the helpers of cuda-halves.ts. Others
 * are C casts.
 */
export function cudaConversion(from: ScalarType, to: ScalarType): string | undefined {
  const half = cudaHalfConversion(from, to);
  if (half) return half;
  if ((to === "i32" || to === "u32") && (from === "f32" || from === "f64")) return `${from === "f32" ? cudaFloatToInt[to] : cudaDoubleToInt[to]}($0)`;
  return undefined;
}

/** CUDA's f64 → integer conversions, saturating as the f32 ones. */
const cudaDoubleToInt: Readonly<Record<"i32" | "u32", string>> = { i32: "__double2int_rz", u32: "__double2uint_rz" };

/** CUDA's 16-byte vector type of each 32-bit element type, and its constructor, for `load4`/`store4`. */
export const cudaVectorTypes: Readonly<Partial<Record<ElementScalar, { readonly type: string; readonly make: string }>>> = {
  f32: { type: "float4", make: "make_float4" },
  i32: { type: "int4", make: "make_int4" },
  u32: { type: "uint4", make: "make_uint4" },
};

/** WGSL's bf16 arithmetic: the f32 operation, rounded to bf16 (wgsl-packed.ts). */
const wgslBf16Operators: Partial<Record<BinaryOp, string>> = Object.fromEntries(
  (["add", "sub", "mul", "div", "rem"] as const).map((op) => [op, `tsk_round_bf16($0 ${cBinary[op]} $1)`]),
);

export const wgslSpelling: Spelling = {
  types: valueSpellings("wgsl"),
  elementTypes: elementSpellings("wgsl"),
  unary: cUnary,
  binary: cBinary,
  typedCalls: { bf16: wgslBf16Operators },
  // f16's functions are WGSL's own; bf16's are the f32 function's result rounded once.
  halfIntrinsic: { bf16: (f32, arity) => `tsk_round_bf16(${f32.includes("$0") ? f32 : `${f32}(${Array.from({ length: arity }, (_, i) => `$${i}`).join(", ")})`})` },
  lessThanArgumentsInParens: true,
  intrinsics: {
    sqrt: { f32: "sqrt", int: "" },
    abs: { f32: "abs", int: "abs" },
    min: { f32: "min", int: "min" },
    max: { f32: "max", int: "max" },
    floor: { f32: "floor", int: "" },
    ceil: { f32: "ceil", int: "" },
    round: { f32: "round", int: "" },
    trunc: { f32: "trunc", int: "" },
    exp: { f32: "exp", int: "" },
    exp2: { f32: "exp2", int: "" },
    log: { f32: "log", int: "" },
    log2: { f32: "log2", int: "" },
    pow: { f32: "pow", int: "" },
    sin: { f32: "sin", int: "" },
    cos: { f32: "cos", int: "" },
    tan: { f32: "tan", int: "" },
    tanh: { f32: "tanh", int: "" },
    atan2: { f32: "atan2", int: "" },
    fma: { f32: "fma", int: "" },
    sign: { f32: "sign", int: "" },
    // Never printed (WebGPU has no matrix operations, TSK3048); the same rounding on the f32 bits.
    roundTf32: { f32: "bitcast<f32>((bitcast<u32>($0) + 4096u) & 4294959104u)", int: "" },
    bitcastU32: { f32: "", int: "bitcast<u32>($0)" },
    bitcastF32: { f32: "bitcast<f32>($0)", int: "" },
    // WGSL's own, on scalars and vectors (an integer's `dot` and `clamp` too; `all` and `any` take bools).
    clamp: { f32: "clamp", int: "clamp" }, mix: { f32: "mix", int: "" }, fract: { f32: "fract", int: "" }, step: { f32: "step", int: "" },
    smoothstep: { f32: "smoothstep", int: "" }, inverseSqrt: { f32: "inverseSqrt", int: "" }, saturate: { f32: "saturate", int: "" },
    dot: { f32: "dot", int: "dot" }, cross: { f32: "cross", int: "" }, length: { f32: "length", int: "" }, distance: { f32: "distance", int: "" },
    normalize: { f32: "normalize", int: "" }, reflect: { f32: "reflect", int: "" }, faceForward: { f32: "faceForward", int: "" }, all: { f32: "all", int: "all" }, any: { f32: "any", int: "any" },
  },
  reserved: new Set([
    // Keywords
    "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default", "diagnostic",
    "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop", "override", "requires", "return",
    "struct", "switch", "true", "var", "while",
    // Reserved words
    "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm", "asm_fragment", "async",
    "attribute", "auto", "await", "become", "cast", "catch", "class", "co_await", "co_return", "co_yield",
    "coherent", "column_major", "common", "compile", "compile_fragment", "concept", "const_cast", "consteval",
    "constexpr", "constinit", "crate", "debugger", "decltype", "delete", "demote", "demote_to_helper", "do",
    "dynamic_cast", "enum", "explicit", "export", "extends", "extern", "external", "fallthrough", "filter",
    "final", "finally", "friend", "from", "fxgroup", "get", "goto", "groupshared", "highp", "impl",
    "implements", "import", "inline", "instanceof", "interface", "layout", "lowp", "macro", "macro_rules",
    "match", "mediump", "meta", "mod", "module", "move", "mut", "mutable", "namespace", "new", "nil",
    "noexcept", "noinline", "nointerpolation", "non_coherent", "noncoherent", "noperspective", "null",
    "nullptr", "of", "operator", "package", "packoffset", "partition", "pass", "patch", "pixelfragment",
    "precise", "precision", "premerge", "priv", "protected", "pub", "public", "readonly", "ref", "regardless",
    "register", "reinterpret_cast", "require", "resource", "restrict", "self", "set", "shared", "sizeof",
    "smooth", "snorm", "static", "static_assert", "static_cast", "std", "subroutine", "super", "target",
    "template", "this", "thread_local", "throw", "trait", "try", "type", "typedef", "typeid", "typename",
    "typeof", "union", "unless", "unorm", "unsafe", "unsized", "use", "using", "varying", "virtual",
    "volatile", "wgsl", "where", "with", "writeonly", "yield",
    // Predeclared types and the builtin functions the printer calls (a local may not shadow them)
    "f32", "f16", "i32", "u32", "bool", "vec2", "vec3", "vec4", "mat2x2", "mat3x3", "mat4x4", "array", "atomic",
    "ptr", "sampler", "select", "bitcast", "sqrt", "abs", "min", "max", "floor", "ceil", "round", "trunc",
    "exp", "exp2", "log", "log2", "pow", "sin", "cos", "tan", "tanh", "atan2", "fma", "sign",
    "workgroupBarrier", "storageBarrier", "arrayLength",
    "atomicLoad", "atomicStore", "atomicAdd", "atomicSub", "atomicMin", "atomicMax", "atomicAnd", "atomicOr", "atomicXor",
    "atomicExchange", "atomicCompareExchangeWeak", "subgroupAdd", "subgroupMin", "subgroupMax", "subgroupInclusiveAdd",
    "subgroupExclusiveAdd", "subgroupBroadcast", "subgroupShuffle", "subgroupShuffleXor", "subgroupShuffleUp",
    "subgroupShuffleDown", "subgroupBallot", "subgroupAll", "subgroupAny",
    "workgroupBarrier", "storageBarrier", "arrayLength", "bitcast",
    // The float-to-integer conversions the printer emits (wgsl.ts)
    "tsk_f32_to_i32", "tsk_f32_to_u32", "tsk_runtime_f32", "tsk_runtime_i32", "tsk_runtime_u32", "tsk_runtime_bool",
    "tsk_runtime_f16", "tsk_runtime_bf16", "extractBits", "firstLeadingBit", "ldexp", ...packedNames,
    // Names the printer gives the entry point's builtin inputs
    "local_id", "group_id", "num_groups", "sg_size", "sg_lane",
  ]),
};
