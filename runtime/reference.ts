/**
 * The float64 reference every result is checked against, and the error report of the CUDA introduction
 * article (largest and average relative error per element) plus the normwise relative error
 * ‖C − C_ref‖_F / ‖C_ref‖_F, which is the meaningful one for sums that cancel.
 */

/** C = alpha·A·B + beta·C0 in float64, all row-major: A is m×k, B is k×n, C0 and the result m×n. */
export function referenceGemm(
  m: number,
  n: number,
  k: number,
  A: ArrayLike<number>,
  B: ArrayLike<number>,
  alpha = 1,
  beta = 0,
  C0?: ArrayLike<number>,
): Float64Array {
  const C = new Float64Array(m * n);
  const row = new Float64Array(n);
  for (let i = 0; i < m; i++) {
    row.fill(0);
    for (let p = 0; p < k; p++) {
      const a = A[i * k + p]!;
      const offset = p * n;
      for (let j = 0; j < n; j++) row[j]! += a * B[offset + j]!;
    }
    for (let j = 0; j < n; j++) C[i * n + j] = alpha * row[j]! + (beta !== 0 && C0 ? beta * C0[i * n + j]! : 0);
  }
  return C;
}

/** float64 values of C = A·B (A m×k, B k×n, row-major) at the given flat indices of C only: a cheap check at sizes where the whole product would take minutes. */
export function referenceGemmAt(n: number, k: number, A: ArrayLike<number>, B: ArrayLike<number>, indices: readonly number[]): Float64Array {
  return Float64Array.from(indices, (index) => {
    const i = Math.floor(index / n);
    const j = index % n;
    let sum = 0;
    for (let p = 0; p < k; p++) sum += A[i * k + p]! * B[p * n + j]!;
    return sum;
  });
}

export interface ErrorReport {
  readonly maxRelative: number;
  readonly averageRelative: number;
  readonly normwiseRelative: number;
  /** Elements that are NaN or infinite where the reference is finite. */
  readonly nonFinite: number;
}

/** Relative errors are taken against max(|ref|, floor) so that elements near zero do not dominate. */
export function compareToReference(actual: ArrayLike<number>, reference: ArrayLike<number>, floor = 1e-6): ErrorReport {
  if (actual.length !== reference.length) throw new RangeError(`length ${actual.length} does not match the reference's ${reference.length}`);
  let maxRelative = 0;
  let sumRelative = 0;
  let diffSquares = 0;
  let refSquares = 0;
  let nonFinite = 0;
  for (let i = 0; i < reference.length; i++) {
    const ref = reference[i]!;
    const value = actual[i]!;
    if (!Number.isFinite(value)) {
      nonFinite++;
      continue;
    }
    const diff = Math.abs(value - ref);
    const relative = diff / Math.max(Math.abs(ref), floor);
    maxRelative = Math.max(maxRelative, relative);
    sumRelative += relative;
    diffSquares += diff * diff;
    refSquares += ref * ref;
  }
  return {
    maxRelative: nonFinite > 0 ? Number.POSITIVE_INFINITY : maxRelative,
    averageRelative: sumRelative / Math.max(1, reference.length - nonFinite),
    normwiseRelative: nonFinite > 0 ? Number.POSITIVE_INFINITY : Math.sqrt(diffSquares) / Math.max(Math.sqrt(refSquares), Number.MIN_VALUE),
    nonFinite,
  };
}
