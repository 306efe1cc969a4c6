/**
 * The one catalogue of user-facing diagnostics. Every message the compiler shows a user comes from here,
 * under a stable code: TSK1xxx for the language surface (frontend), TSK2xxx for types, TSK3xxx for the
 * validator's checks, TSK4xxx for the command line, TSK9xxx for internal errors. Templates take positional
 * arguments `{0}`, `{1}`, … Tests and docs refer to codes, so a code is never reused for another meaning.
 */

export type Severity = "error" | "warning";

export interface CatalogueEntry {
  readonly severity: Severity;
  readonly template: string;
}

export const catalogue = {
  // Frontend: what the language accepts.
  TSK1001: { severity: "error", template: "kernels do not support {0}" },
  TSK1002: { severity: "error", template: "TypeScript: {0}" },
  TSK1003: { severity: "error", template: "a kernel must be declared as `export const NAME = kernel(...)`" },
  TSK1004: { severity: "error", template: "kernel options must be written literally: {0}" },
  TSK1005: { severity: "error", template: "unknown function '{0}'" },
  TSK1006: { severity: "error", template: "'{0}' is not a parameter, local variable or compile-time constant of this kernel" },
  TSK1007: { severity: "error", template: "'{0}' calls itself (through {1}); recursion is not supported on GPUs" },
  TSK1008: { severity: "error", template: "parameter '{0}' has type {1}; kernel parameters are typed arrays (Float32Array, BFloat16Array, Uint8Array…, or their Readonly… forms), arrays of vectors or structs, the scalars f32, i32, u32, bool, f16, bf16, f64, vectors, structs, or Const<…>" },
  TSK1009: { severity: "error", template: "parameter '{0}' needs a type annotation" },
  TSK1010: { severity: "error", template: "{0} arrays must be declared with `const` at the top level of a kernel body" },
  TSK1011: { severity: "error", template: "{0} is a statement in kernels and cannot be used as a value" },
  TSK1012: { severity: "error", template: "Math.{0} is not available in kernels" },
  TSK1014: { severity: "error", template: "cannot assign to '{0}': {1}" },
  TSK1015: { severity: "error", template: "the `unroll:` label must stand on a `for` loop" },
  TSK1016: { severity: "error", template: "no value for compile-time constant '{0}' of kernel '{1}'" },
  TSK1017: { severity: "error", template: "helper function '{0}': {1}" },
  TSK1018: { severity: "error", template: "syncThreads() may only be called in a kernel body, not in helper function '{0}'" },
  TSK1019: { severity: "error", template: "helper function '{0}' does not return a value on every path" },
  TSK1020: { severity: "error", template: "two kernels are named '{0}'" },
  TSK1021: { severity: "error", template: "a kernel returns nothing: `return;` ends the thread, `return {0}` is not allowed" },
  TSK1022: { severity: "error", template: "unknown compile-time constant '{0}' in {1}" },
  TSK1023: { severity: "error", template: "'{0}' must be declared before it is used" },
  TSK1024: { severity: "error", template: "variable '{0}' needs a type annotation or an initializer" },
  TSK1025: { severity: "error", template: "'{0}' is {1}; only its elements can be used" },
  TSK1026: { severity: "error", template: "variable '{0}' has type {1}; local variables are f32, i32, u32, bool, f16, bf16, f64, vectors or structs" },
  TSK1027: { severity: "error", template: "the default of compile-time constant '{0}' must be a number or true/false literal" },
  TSK1028: { severity: "error", template: "load4 gives four values, which must be declared at once: `const [x, y, z, w] = load4(…)`" },
  TSK1029: { severity: "error", template: "{0} copies from a global buffer into a shared array, but '{1}' is {2}" },
  TSK1030: { severity: "error", template: "{0} works on a writable global buffer or a shared array, but '{1}' is {2}" },
  TSK1031: { severity: "error", template: "{0} may only be called in a kernel body, not in helper function '{1}'" },
  TSK1032: { severity: "error", template: "{0} cannot be called {1}" },
  TSK1065: { severity: "error", template: "{0} takes a matrix fragment as its {1}: an element of an array that fragment.a, fragment.b or fragment.accumulator declared, like acc[0]; found '{2}'" },
  TSK1066: { severity: "error", template: "'{0}' holds matrix fragments, whose elements are spread over the lanes of a warp; only loadFragment, storeFragment, fillFragment and mma use it" },
  TSK1067: { severity: "error", template: "fragment.{0} takes {1}, found {2}" },
  TSK1075: { severity: "error", template: "wgmmaWait() takes the number of groups that may stay unfinished, a constant from 0 to 7; found {0}" },
  TSK1050: { severity: "error", template: "the code nests more than {0} levels deep here" },
  TSK1051: { severity: "error", template: "the compiler ran out of stack while {0} this file: the code nests too deeply here" },
  // Kernels over element types (`<T extends DType>`).
  TSK1140: { severity: "error", template: "kernel '{0}' is written over the element type {1}, so each of its specializations must name one" },
  TSK1141: { severity: "error", template: "{0} is not an element type for {1}; the element types are {2}" },
  // The `targets` kernel option.
  TSK1090: { severity: "error", template: "the targets option must be written in place as an array of target names in quotes: {0}" },
  TSK1091: { severity: "error", template: "unknown target '{0}' in the targets of kernel '{1}' (the targets are {2})" },
  TSK1092: { severity: "error", template: "target '{0}' is listed twice in the targets of kernel '{1}'" },
  TSK1093: { severity: "error", template: "kernel '{0}' declares an empty list of targets, so it would be built for none" },
  TSK1095: { severity: "error", template: "'{0}' holds mbarriers (shared.barriers), which only the barrier functions use (initBarrier, arriveBarrier, arriveAfterCopies, arriveExpectBytes, waitBarrier, copyTile)" },
  TSK1096: { severity: "error", template: "{0} takes barriers declared with shared.barriers(…) as its first argument; found {1}" },
  TSK1097: { severity: "error", template: "setMaxRegisters() takes a constant multiple of 8 from 24 to 256; found {0}" },
  TSK1098: { severity: "error", template: "copyTile() takes {0}; found {1}" },
  TSK1120: { severity: "error", template: "cannot read the shape \"{0}\" of '{1}': {2}" },
  TSK1121: { severity: "error", template: "'{0}' is not a buffer parameter of kernel '{1}', so it has no shape in tensors" },
  TSK1122: { severity: "error", template: "buffer parameter '{0}' of kernel '{1}' has no shape in tensors" },
  TSK1123: { severity: "error", template: "'{0}' is read-only, so it cannot be an output" },
  TSK1124: { severity: "error", template: "'{0}' in {1} is not a size, an integer scalar parameter or an integer compile-time constant of kernel '{2}'" },
  TSK1125: { severity: "error", template: "cannot read the formula \"{0}\" in {1}: {2}" },
  TSK1126: { severity: "error", template: "size '{0}' is also a {1} parameter of kernel '{2}'; a parameter that receives a size is an i32 or u32" },
  TSK1127: { severity: "error", template: "size '{0}' appears only in the shapes of outputs, so the inputs do not give it" },
  TSK1128: { severity: "error", template: "kernel '{0}' declares {1} but not {2}" },
  TSK1129: { severity: "error", template: "the backward kernel '{0}' of kernel '{1}' {2}" },
  // Vectors and structs.
  TSK1150: { severity: "error", template: "field '{0}' of struct '{1}' has type {2}; struct fields are f32, i32, u32, f16, vectors of them, or structs" },
  TSK1151: { severity: "error", template: "struct '{0}' has no fields" },
  TSK1152: { severity: "error", template: "struct '{0}' contains itself (through {1})" },
  TSK1153: { severity: "error", template: "struct '{0}': {1}" },
  TSK1154: { severity: "error", template: "{0} has no component '{1}': its components are {2}" },
  TSK1155: { severity: "error", template: "struct '{0}' has no field '{1}'" },
  TSK1156: { severity: "error", template: "cannot assign to '{0}': {1}" },
  TSK1157: { severity: "error", template: "a value of struct '{0}' written as an object literal {1}" },
  TSK1158: { severity: "error", template: "operator '{0}' is not defined for {1}: {2}" },
  TSK1159: { severity: "error", template: "{0} has no memory layout, so it cannot be {1}" },
  TSK1160: { severity: "error", template: "this object literal has no struct type: {0}" },
  TSK1161: { severity: "error", template: "parameter '{0}' of kernel '{1}' is {2}, which a PyTorch operator cannot take yet" },
  // 16-bit matrix operations (wgmma m64nNk16) and tile stores.
  TSK1170: { severity: "error", template: "fragment.a: the A fragments of the 16-bit shape {0} hold \"bf16\" or \"f16\", found {1} (tf32 A fragments have the k8 shapes)" },
  TSK1171: { severity: "error", template: "{0} takes {1} in its options object; found {2}" },
  TSK1172: { severity: "error", template: "storeTile() takes {0}; found {1}" },
  TSK1173: { severity: "error", template: "waitTileStores() takes the number of tile stores that may still read their source, a constant from 0 to 7; found {0}" },
  TSK1174: { severity: "error", template: "loadMatrix() reads rows of 8 contiguous elements (ldmatrix): leave colStride out, or give stride 1 and the columns' step as colStride; found stride {0} and colStride {1}" },

  // Types.
  TSK2001: { severity: "error", template: "operator '{0}' needs operands of one type, found {1} and {2}" },
  TSK2002: { severity: "error", template: "cannot assign a value of type {0} to '{1}' of type {2}" },
  TSK2003: { severity: "error", template: "{0} must be a bool, found {1}" },
  TSK2004: { severity: "error", template: "the literal {0} is not a valid {1}" },
  TSK2005: { severity: "error", template: "operator '{0}' is not defined for {1}" },
  TSK2006: { severity: "error", template: "an index must be i32 or u32, found {0}" },
  TSK2007: { severity: "error", template: "'{0}' has {1} dimension(s) but is indexed with {2}" },
  TSK2008: { severity: "error", template: "{0} expects {1}, found {2}" },
  TSK2009: { severity: "error", template: "'{0}' returns {1}, but this value is {2}" },
  TSK2010: { severity: "error", template: "compile-time constant '{0}' is {1}, but the value {2} was given" },
  TSK2011: { severity: "error", template: "{0} is not defined for {1} arrays" },
  TSK2020: { severity: "error", template: "{0} takes {1} as its {2}, but '{3}' is {4}" },
  TSK2021: { severity: "error", template: "{0} moves f32 elements, but '{1}' holds {2}" },
  TSK2035: { severity: "error", template: "{0} takes fragments of {1}, but '{2}' has shape {3}" },
  TSK2036: { severity: "error", template: "wgmma() reads B from a 1-D shared array of f32 elements; found {0}" },
  TSK2060: { severity: "error", template: "{0} takes a 1-D shared array of bf16 or f16 as {1}; found {2}" },
  TSK2061: { severity: "error", template: "wgmma() multiplies A and B of one type, but '{0}' holds {1} and '{2}' holds {3}" },
  TSK2062: { severity: "error", template: "mma() multiplies A and B of one type, but '{0}' holds {1} and '{2}' holds {3}" },
  TSK2063: { severity: "error", template: "{0} moves the {2} elements of '{1}' from an array of f32 or {2}, but '{3}' holds {4}" },
  TSK2065: { severity: "error", template: "{0} takes a 1-D shared array of e4m3 or e5m2 as {1} for an 8-bit shape (k32); found {2}" },
  TSK2066: { severity: "error", template: "wgmma() of shape {0} reads B from '{1}' K-major only: the tensor cores transpose 16-bit operands, not 8-bit ones" },

  // Validation.
  TSK3001: { severity: "error", template: "{0} is reached in non-uniform control flow" },
  TSK3002: { severity: "error", template: "kernel '{0}' uses {1} bytes of shared memory; {2} allows at most {3}" },
  TSK3003: { severity: "error", template: "the size of a {0} array must be a compile-time constant" },
  TSK3004: { severity: "error", template: "kernel '{0}' has a block of {1} threads; {2} allows at most {3}" },
  TSK3005: { severity: "error", template: "the size of a {1} array must be a positive integer, found {0}" },
  TSK3006: { severity: "warning", template: "kernel '{0}' uses {1} bytes of workgroup memory, more than WebGPU's default limit of {2}; it runs only on adapters that allow more" },
  TSK3007: { severity: "warning", template: "kernel '{0}' has a block of {1} threads, more than WebGPU's default limit of {2}; it runs only on adapters that allow more" },
  TSK3008: { severity: "error", template: "index {0} is out of bounds for dimension {1} of '{2}' (size {3})" },
  TSK3009: { severity: "error", template: "the block shape must be positive integers, found [{0}]" },
  TSK3010: { severity: "error", template: "shift by {0}: the amount must be from 0 to 31" },
  TSK3011: { severity: "error", template: "division by zero" },
  TSK3012: { severity: "error", template: "kernel '{0}' has a block {1} of {2}; {3} allows at most {4}" },
  TSK3013: { severity: "error", template: "{0} moves {3} elements from index {1} of '{2}', which is not a multiple of {3}" },
  TSK3014: { severity: "error", template: "{0} on the rows of '{1}' needs rows of a multiple of {3} elements; its rows have {2}" },
  TSK3015: { severity: "error", template: "{0} is reached in non-uniform control flow" },
  TSK3016: { severity: "error", template: "the lane of subgroupBroadcast must be a compile-time constant from 0 to 127, found {0}" },
  TSK3017: { severity: "error", template: "the {0} of {1} must be the same for every thread of the block" },
  TSK3018: { severity: "error", template: "kernel '{0}' uses subgroup operations, so its block must be a whole number of subgroups ({1}); it has {2} threads" },
  TSK3045: { severity: "error", template: "{0} is reached in non-uniform control flow: every thread of a warp must take part in a matrix operation" },
  TSK3046: { severity: "error", template: "fragment {0} is outside '{1}', which holds {2} fragment(s)" },
  TSK3047: { severity: "error", template: "kernel '{0}' uses matrix operations, so its block must be a whole number of warps of 32 threads; it has {1}" },
  TSK3048: { severity: "error", template: "{0} has no matrix operations, and kernel '{1}' uses {2}" },
  TSK3049: { severity: "error", template: "the fragment index of {0} must be the same for every thread of the block" },
  TSK3060: { severity: "error", template: "kernel '{0}' uses warpgroup matrix operations (wgmma), so its block must be a whole number of warpgroups of 128 threads; it has {1}" },
  TSK3061: { severity: "error", template: "wgmma() reads B at element offset {0} of '{1}': the offset must be a multiple of 8 in the first 128-byte row of a group of 8 (offset % 256 < 32)" },
  TSK3062: { severity: "error", template: "wgmma() reads B up to element {0} of '{1}', which has {2} elements" },
  TSK3063: { severity: "error", template: "the offset of wgmma()'s shared operand must be the same for every thread of the block" },
  TSK3085: { severity: "error", template: "{0} has no mbarriers or warpgroup roles, and kernel '{1}' uses {2}" },
  TSK3086: { severity: "error", template: "{0} is reached in control flow that differs within a warpgroup: the 128 threads of a warpgroup wait together" },
  TSK3087: { severity: "error", template: "the {0} of {1} must be the same for every thread of the warpgroup" },
  TSK3088: { severity: "error", template: "kernel '{0}' uses {2}, so its block must be a whole number of warpgroups of 128 threads; it has {1}" },
  TSK3089: { severity: "error", template: "barrier {0} is outside '{1}', which holds {2} barrier(s)" },
  TSK3090: { severity: "error", template: "setMaxRegisters() is reached in control flow that differs within a warpgroup" },
  TSK3091: { severity: "error", template: "kernel '{0}' calls setMaxRegisters(), so it must fix its block shape (the registers a warpgroup starts with are the block's share)" },
  TSK3092: { severity: "error", template: "copyTile() writes '{1}' from element {0}: the 128-byte swizzle needs a multiple of 256 elements (1024 bytes)" },
  // 16-bit matrix operands (wgmma m64nNk16) and tile stores.
  TSK3160: { severity: "error", template: "wgmma() reads {0} at element offset {1} of '{2}': the offset must be {3}" },
  TSK3161: { severity: "error", template: "wgmma() reads {0} up to element {1} of '{2}', which has {3} elements" },
  TSK3162: { severity: "error", template: "wgmma()'s bBoxRows must be a multiple of 8 from 16 to 256 (whole groups of 8 rows of 128 bytes); found {0}" },
  TSK3163: { severity: "error", template: "{0} '{1}' from element {2}: the 128-byte swizzle needs a multiple of {3} elements (1024 bytes)" },
  TSK3164: { severity: "error", template: "storeFragment()'s boxRows must be a multiple of 8 from 8 to 256 (whole groups of 8 rows of 128 bytes); found {0}" },
  TSK3165: { severity: "error", template: "loadMatrix() reads rows of 8 elements of '{0}' from {1} {2}: ldmatrix needs each row to start on 16 bytes, a multiple of 8 elements" },
  TSK3030: { severity: "error", template: "kernel '{0}' nests {1} levels deep here; {2} accepts at most {3}" },
  TSK3031: { severity: "error", template: "kernel '{0}' has {1} bytes of private arrays per thread; {2} allows at most {3}" },
  TSK3032: { severity: "error", template: "private array '{0}' has {1} bytes; {2} allows at most {3} per array" },
  TSK3033: { severity: "error", template: "kernel '{0}' needs {1} bindings for its parameters; {2} allows at most {3}" },
  TSK3034: { severity: "error", template: "kernel '{0}' has {1} bytes of parameters; {2} allows at most {3}" },
  TSK3050: { severity: "error", template: "threadFence() has no equivalent on {0}: it has no device-scope memory fence" },
  TSK3051: { severity: "error", template: "{0}'s atomics are relaxed only, and kernel '{1}' asks {2} for \"{3}\" order" },
  TSK3075: { severity: "error", template: "index {0} into '{1}' is negative, out of bounds of any buffer" },
  // Checked builds (passes/checks.ts).
  TSK3166: { severity: "error", template: "the warpgroups of kernel '{0}' ask setMaxRegisters() for {1} registers, but its block has {2}: a warpgroup that takes more than its share waits for registers the others give back, so on the GPU this block would wait forever" },
  TSK3167: { severity: "error", template: "{0} has no clusters of blocks, and kernel '{1}' runs in clusters of {2}" },
  TSK3168: { severity: "error", template: "kernel '{0}' uses {1}, which needs clusters of blocks, but it declares none" },
  TSK3170: { severity: "warning", template: "{0} in kernel '{1}' is not checked at run time in a checked build: {2}" },
  // Types a target refuses (ir/types.ts, targetScalars).
  TSK3120: { severity: "error", template: "{0} has no {1}, and kernel '{2}' uses it: {3}" },

  // Command line.
  TSK4001: { severity: "error", template: "cannot use {0}: {1}" },
  TSK4002: { severity: "error", template: "unknown target '{0}'; targets are {1}" },
  TSK4003: { severity: "error", template: "--define expects NAME=VALUE, found '{0}'" },
  TSK4004: { severity: "warning", template: "{0} declares no kernels" },
  TSK4005: { severity: "error", template: "--define {0}: no kernel in the build has a compile-time constant of that name" },
  TSK4006: { severity: "error", template: "no targets given; targets are {0}" },
  TSK4007: { severity: "error", template: "--cubin needs nvcc, which could not be run: {0}" },
  TSK4008: { severity: "error", template: "nvcc failed on {0}:\n{1}" },
  TSK4009: { severity: "error", template: "--cubin needs --target cuda" },
  TSK4010: { severity: "error", template: "no kernel files in {0}: a directory stands for the TypeScript files under it that import from \"tskernel\"" },
  TSK4011: { severity: "error", template: "no files match {0}" },
  TSK4013: { severity: "error", template: "--target torch needs --cubin or --ptx: the Python module loads the kernels from one of them" },
  TSK4014: { severity: "error", template: "--ptx needs --target cuda" },
  TSK4016: { severity: "error", template: "the PyTorch operator of '{0}' cannot choose its builds by dtype: {1}" },
  TSK4017: { severity: "error", template: "the PyTorch operator of '{0}' has a build for {1}, and its backward kernel '{2}' has none for the same types ({3}): add that specialization to '{2}'" },
  TSK4015: { severity: "warning", template: "--checked makes checked builds for cuda and wgsl; the js build is unchanged (the CPU backend's checked mode, createDevice({ backend: \"cpu\", checked: true }), has its own)" },

  // The bundler plugin.
  TSK4012: { severity: "warning", template: "'{0}' is exported by a kernel file but is not a kernel: the module the bundler plugin builds from {1} exports only its kernels" },

  // Internal.
  TSK9001: { severity: "error", template: "internal compiler error: {0}" },
} as const satisfies Record<string, CatalogueEntry>;

export type DiagnosticCode = keyof typeof catalogue;

/**
 * An argument of a message: text, a number, or a named thing (a vector or struct type, which messages call by
 * its name as kernels write it; scalar types are already their names).
 */
export type MessageArg = string | number | { readonly name: string };

export function formatMessage(code: DiagnosticCode, args: readonly MessageArg[]): string {
  return catalogue[code].template.replace(/\{(\d+)\}/g, (_, index: string) => {
    const arg = args[Number(index)];
    return arg === undefined ? `{${index}}` : typeof arg === "object" ? arg.name : String(arg);
  });
}
