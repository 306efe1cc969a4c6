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

/** The element types of buffers: the scalars but bool, and the 8- and 16-bit integers (storage only). */
export type ManifestElementType = Exclude<ManifestScalarType, "bool"> | "i8" | "u8" | "i16" | "u16";

export type ManifestParam =
  | { readonly name: string; readonly kind: "buffer"; readonly elementType: ManifestElementType; readonly access: "read" | "read_write" }
  | { readonly name: string; readonly kind: "scalar"; readonly type: ManifestScalarType }
  | { readonly name: string; readonly kind: "const"; readonly type: ManifestScalarType };

/** One storage buffer of a kernel's WebGPU bind group (group 0), in parameter order. */
export interface ManifestWgslBinding {
  readonly binding: number;
  readonly param: string;
  readonly type: "storage" | "read-only-storage";
  readonly elementType: ManifestElementType;
}

/** One scalar parameter in the uniform buffer: 4 bytes at `offset`; bools are stored as u32 0 or 1, f16 and bf16 as f32. */
export interface ManifestWgslUniformField {
  readonly param: string;
  readonly type: ManifestScalarType;
  readonly wgslType: "f32" | "i32" | "u32";
  readonly offset: number;
}

/** How a launch binds its arguments: the storage buffers, then one uniform buffer of all scalars (if any). */
export interface ManifestWgslLayout {
  readonly group: 0;
  readonly bindings: readonly ManifestWgslBinding[];
  readonly uniform: { readonly binding: number; readonly size: number; readonly fields: readonly ManifestWgslUniformField[] } | null;
}

export interface ManifestKernel {
  readonly name: string;
  readonly entryName: string;
  readonly source: string;
  readonly specialization: Readonly<Record<string, number | boolean>>;
  readonly params: readonly ManifestParam[];
  readonly block: readonly [number, number, number] | null;
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
  readonly outputs: {
    readonly cuda?: {
      readonly file: string;
      readonly header: string;
      readonly function: string;
      /** Bytes of dynamic shared memory each launch needs (the kernel's shared arrays above 48 KB), else 0. */
      readonly dynamicSharedBytes: number;
      /** A cubin nvcc built from `file` at build time (`--cubin`), loadable with no NVRTC present. */
      readonly cubin?: { readonly file: string; readonly arch: string };
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
    };
  };
}

export interface Manifest {
  readonly version: number;
  readonly generator: string;
  readonly kernels: readonly ManifestKernel[];
}
