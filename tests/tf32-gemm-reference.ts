/**
 * The references of the TF32 warpgroup GEMM tests (sgemm-wgmma-ws, sgemm-wgmma-cluster, bench/tf32-feeding): the
 * documented emulation (docs/language.md §25: the shared operand A truncated to TF32 by the tensor cores, or
 * rounded where the kernel rounds it first or its tensor map's copy rounds it (ties to even); B rounded, by the
 * kernel or by its map's copy and then the kernel; k ascending with one f32 rounding an addition; then α and β), and
 * the element-wise bound against float64 that tests/sgemm-wgmma.test.ts derives, with 3u for one truncated input
 * or 2u when both are rounded.
 */

import { roundTf32, roundTf32Even, truncateTf32 } from "../compiler/index.ts";

export interface Tf32Gemm {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Row-major M×K and K×N. */
  readonly A: Float32Array;
  readonly B: Float32Array;
  readonly alpha: number;
  readonly beta: number;
  /** C before the call (β ≠ 0 only). */
  readonly C0?: Float32Array;
  /**
   * How A reaches the tensor cores: "truncated" (the default: as copied into shared memory, the tensor cores drop
   * its low 13 bits), "rounded" (the kernel rounds it first, ties away from zero: roundTf32) or "even" (its tensor
   * map's copy rounds it, ties to even: createTensorMap's roundToTf32).
   */
  readonly a?: "truncated" | "rounded" | "even";
  /** True where B's tensor map rounds it as it copies (ties to even) before the kernel rounds it again (a no-op). */
  readonly bMapRounds?: boolean;
}

/** What the emulation computes, bit for bit. */
export function emulateTf32Gemm({ m, n, k, A, B, alpha, beta, C0, a: aWay = "truncated", bMapRounds = false }: Tf32Gemm): Float32Array {
  const a = A.map(aWay === "rounded" ? roundTf32 : aWay === "even" ? (x) => truncateTf32(roundTf32Even(x)) : truncateTf32);
  const b = B.map(bMapRounds ? (x) => roundTf32(roundTf32Even(x)) : roundTf32);
  const out = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum = Math.fround(sum + b[p * n + j]! * a[i * k + p]!);
      out[i * n + j] = beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * C0![i * n + j]!));
    }
  }
  return out;
}

/** The largest |error| / bound over C against float64 (at most 1 passes; a non-finite element is Infinity). */
export function tf32WorstRatio({ m, n, k, A, B, alpha, beta, C0, a = "truncated" }: Tf32Gemm, got: Float32Array): number {
  const u = 2 ** -11;
  const eps = 2 ** -24;
  const inputs = a !== "truncated" ? 2 * u + u * u : 3 * u + 2 * u * u;
  let worst = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let exact = 0;
      let magnitude = 0;
      for (let p = 0; p < k; p++) {
        exact += A[i * k + p]! * B[p * n + j]!;
        magnitude += Math.abs(A[i * k + p]! * B[p * n + j]!);
      }
      const c0 = C0 ? C0[i * n + j]! : 0;
      const bound = Math.abs(alpha) * (inputs + k * eps) * magnitude * (1 + 2 * u) + 3 * eps * (Math.abs(alpha * exact) + Math.abs(beta * c0));
      const value = got[i * n + j]!;
      worst = Math.max(worst, Number.isFinite(value) ? Math.abs(value - (alpha * exact + beta * c0)) / bound : Infinity);
    }
  }
  return worst;
}
