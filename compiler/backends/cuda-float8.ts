/**
 * e4m3 and e5m2 (OCP FP8) in the CUDA output: arrays of the codes as `unsigned char`, a load decoded to the f32
 * it stands for and a store's f32 encoded as compiler/lang/float8.ts encodes (nearest, ties to even, saturating
 * to the largest finite value, infinities included; NaN 0x7f), which is what `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`
 * does. Written in integer and f32 operations rather than cuda_fp8.h (NVRTC has no CUDA headers on its search
 * path: cuda-halves.ts) or that cvt (sm_89 and later only, and its NaN's sign not checked on a GPU yet), so
 * the same text runs on every architecture; tests/float8.test.ts compiles these lines for the host and checks
 * them against lang/float8.ts on every code and on every rounding midpoint. They avoid f32 subnormals, which
 * a flush-to-zero build would lose: subnormal codes are integers scaled by a power of two.
 */

import type { Float8Type } from "../ir/types.ts";

/** The helpers, printed once before the kernels of a module that uses e4m3 or e5m2. */
export const cudaFloat8Helpers: readonly string[] = [
  "// e4m3 and e5m2 codes to and from f32 (cuda-float8.ts): stores round to nearest even and saturate; NaN is 0x7f.",
  "__device__ __forceinline__ float tsk_e4m3_to_f32(unsigned int c) {",
  "  const unsigned int m = c & 0x7fu;",
  "  const float v = m == 0x7fu ? __uint_as_float(0x7fffffffu) : m < 0x08u ? (float)m * 0.001953125f : __uint_as_float((m << 20) + 0x3c000000u);",
  "  return (c & 0x80u) ? -v : v;",
  "}",
  "__device__ __forceinline__ float tsk_e5m2_to_f32(unsigned int c) {",
  "  const unsigned int m = c & 0x7fu;",
  "  const float v = m > 0x7cu ? __uint_as_float(0x7fffffffu) : m == 0x7cu ? __uint_as_float(0x7f800000u) : m < 0x04u ? (float)m * 0.0000152587890625f : __uint_as_float((m << 21) + 0x38000000u);",
  "  return (c & 0x80u) ? -v : v;",
  "}",
  "// From 448 on (the largest e4m3, which every larger value and infinity saturate to) 0x7e; normals by the",
  "// integer carry of the f32's bits; below 2^-6 the multiple of 2^-9, rounded to even by rintf.",
  "__device__ __forceinline__ unsigned int tsk_f32_to_e4m3(float f) {",
  "  const unsigned int u = __float_as_uint(f);",
  "  const unsigned int sign = (u >> 24) & 0x80u;",
  "  const unsigned int a = u & 0x7fffffffu;",
  "  if (a > 0x7f800000u) return 0x7fu;",
  "  if (a >= 0x43e00000u) return sign | 0x7eu;",
  "  if (a >= 0x3c800000u) { const unsigned int m = a - 0x3c000000u; return sign | ((m + 0x7ffffu + ((m >> 20) & 1u)) >> 20); }",
  "  return sign | (unsigned int)rintf(__uint_as_float(a) * 512.0f);",
  "}",
  "// The same for e5m2: from 57344 on 0x7b (never infinity), below 2^-14 multiples of 2^-16.",
  "__device__ __forceinline__ unsigned int tsk_f32_to_e5m2(float f) {",
  "  const unsigned int u = __float_as_uint(f);",
  "  const unsigned int sign = (u >> 24) & 0x80u;",
  "  const unsigned int a = u & 0x7fffffffu;",
  "  if (a > 0x7f800000u) return 0x7fu;",
  "  if (a >= 0x47600000u) return sign | 0x7bu;",
  "  if (a >= 0x38800000u) { const unsigned int m = a - 0x38000000u; return sign | ((m + 0xfffffu + ((m >> 21) & 1u)) >> 21); }",
  "  return sign | (unsigned int)rintf(__uint_as_float(a) * 65536.0f);",
  "}",
];

/** The names the helpers take. */
export const cudaFloat8Names: readonly string[] = ["tsk_e4m3_to_f32", "tsk_e5m2_to_f32", "tsk_f32_to_e4m3", "tsk_f32_to_e5m2"];

/** How a code widens to f32 and how an f32 is stored as a code. */
export const cudaFloat8Conversions: Readonly<Record<Float8Type, { readonly widen: string; readonly narrow: string }>> = {
  e4m3: { widen: "tsk_e4m3_to_f32", narrow: "tsk_f32_to_e4m3" },
  e5m2: { widen: "tsk_e5m2_to_f32", narrow: "tsk_f32_to_e5m2" },
};
