/**
 * The format of `manifest.json`, the contract between `tskernel build` (compiler/manifest.ts writes it) and
 * whatever launches the generated code: the runtime (in Node, or the browser entry `tskernel/webgpu`, which
 * has no compiler), a build script, a C++ project. Types only, with no imports, so that code reading a
 * manifest never pulls in the compiler, not even its declarations. docs/cli.md describes every field.
 */

/** The targets, as `tskernel build --target` and the `targets` kernel option name them. */
export type ManifestTarget = "cuda" | "wgsl" | "js";

/** The scalar types of the kernel language, as the manifest spells them (compiler/ir/types.ts). */
export type ManifestScalarType = "f32" | "i32" | "u32" | "bool" | "f16" | "bf16" | "f64";

/** The element types of buffers: the scalars but bool, the 8- and 16-bit integers and the 8-bit floats (storage only). */
export type ManifestElementType = Exclude<ManifestScalarType, "bool"> | "i8" | "u8" | "i16" | "u16" | "e4m3" | "e5m2";

/**
 * How a vector or struct lies in memory: WGSL's storage layout, which every target shares (buffers, the
 * CUDA parameter of that type, the `.cuh`'s structs), or in a WebGPU uniform parameter's entry the uniform
 * layout (struct members aligned to 16). `size` and `align` in bytes; `stride` is an array element's size.
 */
export type ManifestLayout = ManifestVectorLayout | ManifestStructLayout;

export interface ManifestVectorLayout {
  readonly kind: "vector";
  /** `vec3f`, `vec4u`, … */
  readonly name: string;
  readonly element: ManifestScalarType;
  readonly lanes: 2 | 3 | 4;
  readonly size: number;
  readonly align: number;
  readonly stride: number;
}

export interface ManifestStructLayout {
  readonly kind: "struct";
  /** The struct's name in the kernel's file. */
  readonly name: string;
  readonly size: number;
  readonly align: number;
  readonly stride: number;
  /** The fields in declaration order: a scalar type's name, or the layout of a vector or struct. */
  readonly fields: readonly { readonly name: string; readonly offset: number; readonly type: ManifestScalarType | ManifestLayout }[];
}

export type ManifestParam =
  | { readonly name: string; readonly kind: "buffer"; readonly elementType: ManifestElementType; readonly access: "read" | "read_write"; readonly layout?: undefined }
  /** A buffer of vectors or structs: `elementType` is the layout's name. */
  | { readonly name: string; readonly kind: "buffer"; readonly elementType: string; readonly access: "read" | "read_write"; readonly layout: ManifestLayout }
  | { readonly name: string; readonly kind: "scalar"; readonly type: ManifestScalarType; readonly layout?: undefined }
  /** A vector or struct passed by value: `type` is the layout's name. */
  | { readonly name: string; readonly kind: "scalar"; readonly type: string; readonly layout: ManifestLayout }
  | { readonly name: string; readonly kind: "const"; readonly type: ManifestScalarType };

/** One storage buffer of a kernel's WebGPU bind group (group 0), in parameter order. */
export interface ManifestWgslBinding {
  readonly binding: number;
  readonly param: string;
  readonly type: "storage" | "read-only-storage";
  /** A scalar type, or the name of a vector or struct (its layout is the parameter's). */
  readonly elementType: ManifestElementType | string;
}

/**
 * One value parameter in the uniform buffer: a scalar in 4 bytes at `offset` (bools stored as u32 0 or 1,
 * f16 and bf16 as f32), or a vector or struct at `offset` in its uniform `layout`.
 */
export type ManifestWgslUniformField =
  | { readonly param: string; readonly type: ManifestScalarType; readonly wgslType: "f32" | "i32" | "u32"; readonly offset: number; readonly layout?: undefined }
  | { readonly param: string; readonly type: string; readonly wgslType?: undefined; readonly offset: number; readonly layout: ManifestLayout };

/** How a launch binds its arguments: the storage buffers, then one uniform buffer of all scalars (if any). */
export interface ManifestWgslLayout {
  readonly group: 0;
  readonly bindings: readonly ManifestWgslBinding[];
  readonly uniform: { readonly binding: number; readonly size: number; readonly fields: readonly ManifestWgslUniformField[] } | null;
}

/**
 * An integer formula over sizes and compile-time constants, as a kernel's `grid` and `requires` options write
 * it, parsed: a whole number, a name (a size from the tensors' shapes, or an integer or bool `Const`
 * parameter), or an operation and its operands. Operations: "+", "-", "*", "/" and "%" (integer, truncating
 * as in C), "neg", "cdiv" (division rounded up), "min", "max", and the comparisons "<", "<=", ">", ">=",
 * "==", "!=" (1 or 0). `["cdiv", "n", 256]` is cdiv(n, 256).
 */
export type ManifestFormula = number | string | readonly [string, ...ManifestFormula[]];

/**
 * One dimension of a declared tensor shape: a whole number, a size's name, or `{ rest: name }` for
 * `...name`, any number of dimensions (none included) whose product is the size `name`.
 */
export type ManifestDim = number | string | { readonly rest: string };

/** A buffer parameter as a tensor: its shape, and whether the operator allocates and returns it. */
export interface ManifestTensor {
  readonly param: string;
  /** An output is allocated by the caller of the launch (the PyTorch operator) and returned. */
  readonly output: boolean;
  readonly dims: readonly ManifestDim[];
}

/**
 * The launch a kernel declares in its options `tensors`, `grid`, `requires` and `backward`: the shape of
 * each buffer, from which the sizes follow (a scalar parameter named like a size receives it), the grid as
 * formulas of the sizes and constants, the conditions a specialization needs of the sizes, and the kernel that
 * computes its gradients. One declaration serves the PyTorch module, the `.cuh` grid functions and the runtime.
 */
export interface ManifestSignature {
  /** Every buffer parameter, in parameter order. */
  readonly tensors: readonly ManifestTensor[];
  /** x, y, z. */
  readonly grid: readonly [ManifestFormula, ManifestFormula, ManifestFormula];
  /** Each condition as written and parsed; all must hold (be non-zero) for a specialization to be launched. */
  readonly requires: readonly { readonly text: string; readonly formula: ManifestFormula }[];
  /** The kernel of the same file that computes this one's gradients (see docs/torch.md for how it is paired). */
  readonly backward?: string;
}

/**
 * A parameter a checked build adds after the kernel's own, which the runtime passes itself (CUDA: extra
 * arguments in this order; WebGPU: a storage binding and uniform fields of these names in `layout`): the error
 * buffer (u32 words), the launch's tag (u32) its records carry, and the length in elements (u32) of the buffer
 * parameter `of`.
 */
export type ManifestImplicitParam =
  | { readonly name: string; readonly kind: "errors" }
  | { readonly name: string; readonly kind: "launch" }
  | { readonly name: string; readonly kind: "length"; readonly of: string };

/**
 * One check of a checked build: what a failure there reports. Its record holds two u32 values whose meaning
 * the kind gives (docs/language.md, "Checked GPU builds"): an index and a buffer's length, two indices of a
 * 2-D shared array, a vector access's start, a shift amount, the threads that reached a barrier.
 */
export interface ManifestCheckSite {
  readonly kind: "out-of-bounds" | "misaligned-vector-access" | "division-by-zero" | "shift-out-of-range" | "barrier-divergence";
  /** The TypeScript `file:line:column` of the access or operation. */
  readonly location: string;
  readonly access?: "read of" | "write to" | "atomic on";
  readonly array?: string;
  readonly space?: "global" | "shared" | "private";
  /** A shared or private array's sizes. */
  readonly dims?: readonly number[];
  /** A vector access's elements. */
  readonly lanes?: number;
  /** Whether each recorded value is an i32. */
  readonly signed: readonly [boolean, boolean];
  /** Division and shifts: the operator, and the operation's source text. */
  readonly operator?: string;
  readonly text?: string;
}

/** What a checked build's code of a kernel checks, and the error buffer its failures go to. */
export interface ManifestChecks {
  /** u32 words of the error buffer: the count of failed checks, then `records` records of `recordWords` words. */
  readonly errorWords: number;
  readonly records: number;
  /** site, launch tag, block x y z, thread x y z, two values. */
  readonly recordWords: number;
  readonly implicit: readonly ManifestImplicitParam[];
  readonly sites: readonly ManifestCheckSite[];
}

export interface ManifestKernel {
  readonly name: string;
  readonly entryName: string;
  readonly source: string;
  /** The constants' values, and the element types of a kernel's type parameters (`T: "bf16"`). */
  readonly specialization: Readonly<Record<string, number | boolean | string>>;
  readonly params: readonly ManifestParam[];
  readonly block: readonly [number, number, number] | null;
  /** The kernel's clusters of blocks (its `cluster` option): the grid must be a multiple of them. */
  readonly cluster?: readonly [number, number, number];
  readonly sharedBytes: number;
  /**
   * Present when the kernel uses subgroup operations or builtins: launches need blocks of whole subgroups,
   * and WebGPU devices the `subgroups` feature.
   */
  readonly subgroups?: true;
  /**
   * Present when the kernel uses matrix operations: "warp" (mma, fragments of a warp of 32 threads) or
   * "warpgroup" (wgmma, four warps, 128 threads). A block chosen at launch must be whole warps or warpgroups,
   * as the validator requires of a fixed block (TSK3047, TSK3060).
   */
  readonly matrix?: "warp" | "warpgroup";
  /** Present when atomics touch some of the kernel's arrays: their names (buffer parameters, shared arrays). */
  readonly atomics?: { readonly buffers: readonly string[]; readonly shared: readonly string[] };
  /**
   * The targets the kernel declares in its options (`targets: ["cuda", "js"]`); absent when it declares none
   * and is built for every target of the build. A runtime names them when asked to launch it elsewhere.
   */
  readonly declaredTargets?: readonly ManifestTarget[];
  /**
   * The targets this build has code for, in `outputs`: the build's `--target` list, less those the kernel's
   * `declaredTargets` leave out (the build skipped it there). Empty when the build made none of them.
   */
  readonly builtFor: readonly ManifestTarget[];
  /** Present when the kernel declares its tensors and grid (the options `tensors` and `grid`). */
  readonly signature?: ManifestSignature;
  readonly outputs: {
    readonly cuda?: {
      readonly file: string;
      readonly header: string;
      readonly function: string;
      /** Bytes of dynamic shared memory each launch needs (the kernel's shared arrays above 48 KB), else 0. */
      readonly dynamicSharedBytes: number;
      /** A cubin nvcc built from `file` at build time (`--cubin`), loadable with no NVRTC present. */
      readonly cubin?: { readonly file: string; readonly arch: string };
      /** PTX nvcc made from `file` at build time (`--ptx`), for the driver to compile for the GPU it runs on. */
      readonly ptx?: { readonly file: string; readonly arch: string };
      /** A checked build (`--checked`): its checks and the parameters it adds after the kernel's. */
      readonly checks?: ManifestChecks;
    };
    readonly js?: { readonly file: string; readonly function: string };
    readonly wgsl?: {
      readonly file: string;
      readonly entryPoint: string;
      readonly workgroupSizeOverrides: readonly string[] | null;
      /** A JSON array: for each WGSL line, the TypeScript `file:line:column` it came from (or null). */
      readonly lineMap?: string;
      readonly layout: ManifestWgslLayout;
      /** WebGPU features the device must have (`shader-f16` for a kernel with f16); absent when none. */
      readonly features?: readonly string[];
      /** A checked build (`--checked`): its checks; `layout` binds the error buffer and has the implicit fields. */
      readonly checks?: ManifestChecks;
    };
  };
}

export interface Manifest {
  readonly version: number;
  readonly generator: string;
  readonly kernels: readonly ManifestKernel[];
}
