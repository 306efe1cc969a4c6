/**
 * f16 and bf16 in the CUDA output, with no includes. NVRTC 13 has no cuda_fp16.h or cuda_bf16.h on its
 * search path ("could not open source file "cuda_fp16.h" (no directories in search list)", on the H100,
 * 2026-11-26), and the generated `.cu` must compile there as it does with nvcc. So a module that uses the
 * half types prints its own: `tsk_f16` and `tsk_bf16`, 2-byte structs of the encoding with the layout of
 * CUDA's `__half` and `__nv_bfloat16` (the `.cuh` launchers take those and pass them on), and the
 * conversions below. Every operation computes in f32 and rounds once (docs/language.md, "Half precision"),
 * which is correctly rounded for + − × ÷ and sqrt and gives the CPU's and WGSL's bits on every GPU from
 * sm_75 on: f32 → f16 is the hardware's `cvt.rn.f16.f32`; f32 → bf16 the hardware's `cvt.rn.bf16.f32` from sm_80
 * on (one instruction where the integer rounding WGSL and the CPU use takes about six, which counts in the bf16
 * memory-bound kernels: a quarter of examples/softmax-bf16.ts's PTX instructions otherwise, 963 against 723) and
 * that integer rounding before; and a double (or an integer through its exact double) is rounded to odd in f32
 * first, which a second rounding to nearest at fewer than 22 bits cannot spoil.
 */

import type { ScalarType } from "../ir/ir.ts";

/** The helpers, printed once before the kernels of a module that uses f16 or bf16. */
export const cudaHalfHelpers: readonly string[] = [
  "// f16 and bf16 as their 16-bit encodings, with the layout of CUDA's __half and __nv_bfloat16 (cuda-halves.ts).",
  "#ifndef TSK_HALF_TYPES",
  "#define TSK_HALF_TYPES",
  "struct __align__(2) tsk_f16 { unsigned short bits; };",
  "struct __align__(2) tsk_bf16 { unsigned short bits; };",
  "#endif",
  '__device__ __forceinline__ float tsk_f16_to_f32(tsk_f16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits)); return f; }',
  "// Rounded to nearest even; a NaN becomes the canonical 0x7fff.",
  '__device__ __forceinline__ tsk_f16 tsk_f32_to_f16(float f) { tsk_f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h; }',
  "__device__ __forceinline__ float tsk_bf16_to_f32(tsk_bf16 h) { return __uint_as_float((unsigned int)h.bits << 16); }",
  "// Rounded to nearest even; a NaN becomes the canonical 0x7fff: one cvt from sm_80 on,",
  "// the integer carry into the upper half before.",
  "__device__ __forceinline__ tsk_bf16 tsk_f32_to_bf16(float f) {",
  "  tsk_bf16 h;",
  "#if __CUDA_ARCH__ >= 800",
  '  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));',
  "#else",
  "  unsigned int u = __float_as_uint(f);",
  "  h.bits = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)0x7fffu : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);",
  "#endif",
  "  return h;",
  "}",
  "// The f32 nearest d rounded to odd: truncated, its last bit set where that lost anything.",
  "__device__ __forceinline__ float tsk_f64_to_f32_odd(double d) {",
  "  float t = __double2float_rz(d);",
  "  return ((double)t != d && t == t) ? __uint_as_float(__float_as_uint(t) | 1u) : t;",
  "}",
];

/** The names the helpers take. */
export const cudaHalfNames: readonly string[] = ["tsk_f16", "tsk_bf16", "tsk_f16_to_f32", "tsk_f32_to_f16", "tsk_bf16_to_f32", "tsk_f32_to_bf16", "tsk_f64_to_f32_odd"];

/** How a half type widens to f32 and how an f32 rounds to it. */
export const cudaHalfConversions: Readonly<Record<"f16" | "bf16", { readonly widen: string; readonly narrow: string; readonly cType: string }>> = {
  f16: { widen: "tsk_f16_to_f32", narrow: "tsk_f32_to_f16", cType: "__half" },
  bf16: { widen: "tsk_bf16_to_f32", narrow: "tsk_f32_to_bf16", cType: "__nv_bfloat16" },
};

/** A half type's arithmetic and comparisons as templates ($0, $1): in f32, rounded once (comparisons need no rounding). */
export function cudaHalfOperators(type: "f16" | "bf16"): Partial<Record<import("../ir/ir.ts").BinaryOp, string>> {
  const { widen, narrow } = cudaHalfConversions[type];
  const a = `${widen}($0)`;
  const b = `${widen}($1)`;
  const compare = (op: string) => `(${a} ${op} ${b})`;
  return {
    add: `${narrow}(${a} + ${b})`,
    sub: `${narrow}(${a} - ${b})`,
    mul: `${narrow}(${a} * ${b})`,
    div: `${narrow}(${a} / ${b})`,
    rem: `${narrow}(fmodf(${a}, ${b}))`,
    eq: compare("=="), ne: compare("!="), lt: compare("<"), le: compare("<="), gt: compare(">"), ge: compare(">="),
  };
}

/**
 * A conversion to or from a half type ($0 the value), or undefined where a C cast does. From f64 and the
 * integers to bf16, and from f64 to f16, through the f32 rounded to odd; from i32/u32 to f16 through the
 * nearest f32, which is exact below 2^24 and overflows f16 in either case above it.
 */
export function cudaHalfConversion(from: ScalarType, to: ScalarType): string | undefined {
  if (to === "f16" || to === "bf16") {
    const { narrow } = cudaHalfConversions[to];
    switch (from) {
      case "f32":
        return `${narrow}($0)`;
      case "f16":
      case "bf16":
        return from === to ? "$0" : `${narrow}(${cudaHalfConversions[from].widen}($0))`;
      case "f64":
        return `${narrow}(tsk_f64_to_f32_odd($0))`;
      case "i32":
      case "u32":
        return to === "f16" ? `${narrow}((float)($0))` : `${narrow}(tsk_f64_to_f32_odd((double)($0)))`;
      case "bool":
        return `${narrow}($0 ? 1.0f : 0.0f)`;
    }
  }
  if (from === "f16" || from === "bf16") {
    const widened = `${cudaHalfConversions[from].widen}($0)`;
    switch (to) {
      case "f32":
        return widened;
      case "f64":
        return `(double)${widened}`;
      case "i32":
        return `__float2int_rz(${widened})`;
      case "u32":
        return `__float2uint_rz(${widened})`;
      default:
        return undefined;
    }
  }
  return undefined;
}
