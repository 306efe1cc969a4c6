/**
 * The error measure of the device checks that run `matmul()` / `scaledMatmul()` through the runtime on a GPU
 * (bench/tf32-check.ts, tensor-map-check.ts, hgemm-any-check.ts, scaled-matmul-check.ts): the normwise relative error
 * ‖got − want‖ / ‖want‖ over every `step`-th row of an m×n result (all its columns), with `want` computed in float64
 * there, and how many of those elements of `got` are not finite (a NaN left by a poisoned C counts).
 */

export interface SampledError {
  readonly error: number;
  readonly nonFinite: number;
}

/** `want(i, j)` and `got(i, j)` give element (i, j) of the reference and of the result. */
export function sampledNormwiseError(m: number, n: number, step: number, want: (i: number, j: number) => number, got: (i: number, j: number) => number): SampledError {
  let num = 0;
  let den = 0;
  let nonFinite = 0;
  for (let i = 0; i < m; i += step) {
    for (let j = 0; j < n; j++) {
      const reference = want(i, j);
      const value = got(i, j);
      if (!Number.isFinite(value)) nonFinite++;
      num += (value - reference) ** 2;
      den += reference ** 2;
    }
  }
  return { error: Math.sqrt(num / den), nonFinite };
}

/** Row i, column j of A·B for row-major A (m×k) and B (k×n), summed in float64. */
export function productElement(A: ArrayLike<number>, B: ArrayLike<number>, n: number, k: number, i: number, j: number): number {
  let sum = 0;
  for (let p = 0; p < k; p++) sum += A[i * k + p]! * B[p * n + j]!;
  return sum;
}
