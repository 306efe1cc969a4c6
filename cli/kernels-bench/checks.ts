/**
 * The float64 checks of the memory-bound suite: each case states how its f32 result may differ from a float64
 * reference, and why (cases.ts), and this file compares a result with that reference in chunks, so that
 * 2^28-element outputs need no 2 GiB reference array. Three kinds of check:
 * - relative: |out − ref| ≤ maxRelative · max(|ref|, floor) for every element;
 * - exact: out = ref bit for bit (data movement: transpose), or with `type` out = ref rounded to that type (a
 *   product that is exact in f32 and rounded once to bf16: the dequantization);
 * - rounded: |out − ref| ≤ ½·ulp_T(ref) + maxRelative · max(|ref|, floor) for an output of the 16-bit float
 *   type T: the store's rounding to T, plus the f32 computation's own error before it;
 * - bound: |out − ref| ≤ γ(depth) · S for every element, where S is the sum of the magnitudes of the terms
 *   the element adds up and γ(d) = d·u / (1 − d·u) with u = 2⁻²⁴: the worst-case error of any summation
 *   tree of depth d in f32 (Higham, "Accuracy and Stability of Numerical Algorithms", §4.2).
 */

import { roundToBf16, roundToF16 } from "../../compiler/lang/float16.ts";

/** The 16-bit float types an output may be stored in. */
export type HalfType = "bf16" | "f16";

/** How a case's result may differ from float64, and why (shown in reports and docs). */
export type CheckSpec =
  | { readonly kind: "relative"; readonly maxRelative: number; readonly floor: number; readonly why: string }
  | { readonly kind: "exact"; readonly type?: HalfType; readonly why: string }
  | { readonly kind: "rounded"; readonly type: HalfType; readonly maxRelative: number; readonly floor: number; readonly why: string }
  | { readonly kind: "bound"; readonly depth: number; readonly why: string };

/**
 * A float64 reference produced in consecutive chunks: `fill(start, ref, scale)` writes the reference of
 * elements start … start + ref.length − 1 into `ref`, and for a bound check their S into `scale`. Calls come
 * in order, from start 0, so a reference may carry state from one chunk to the next (a running sum).
 */
export interface ChunkedReference {
  readonly length: number;
  fill(start: number, ref: Float64Array, scale: Float64Array): void;
}

export interface CheckResult {
  readonly kind: CheckSpec["kind"];
  readonly pass: boolean;
  readonly elements: number;
  /** Elements that are NaN or infinite (the output was poisoned with NaN before the run). */
  readonly nonFinite: number;
  /** Elements outside their allowed error. */
  readonly failures: number;
  /** Largest |out − ref| / max(|ref|, floor) (relative checks), or largest |out − ref| / allowed (bound, rounded). */
  readonly maxRelative?: number;
  readonly maxOfAllowed?: number;
  /** ‖out − ref‖₂ / ‖ref‖₂ over finite elements. */
  readonly normwiseRelative: number;
  /** The element with the largest error: index, value, reference. */
  readonly worst?: { readonly index: number; readonly value: number; readonly expected: number };
  readonly tolerance: string;
}

const unitRoundoff = 2 ** -24;

/** Significant bits (the implicit one included) and the smallest normal exponent of each 16-bit float type. */
const halfFormats: Readonly<Record<HalfType, { readonly bits: number; readonly minExponent: number }>> = {
  bf16: { bits: 8, minExponent: -126 },
  f16: { bits: 11, minExponent: -14 },
};

/** The spacing of T's numbers at |x|: 2^(e − bits + 1) for 2^e ≤ |x| < 2^(e+1), that of the subnormals below. */
export function ulpOf(type: HalfType, x: number): number {
  const { bits, minExponent } = halfFormats[type];
  const magnitude = Math.abs(x);
  let e = magnitude > 0 ? Math.floor(Math.log2(magnitude)) : minExponent;
  // log2 may round across a power of two.
  if (2 ** e > magnitude) e--;
  else if (2 ** (e + 1) <= magnitude) e++;
  return 2 ** (Math.max(e, minExponent) - bits + 1);
}

/** x rounded to T: to nearest, ties to even, once from the exact value. */
export function roundTo(type: HalfType, x: number): number {
  return type === "bf16" ? roundToBf16(x) : roundToF16(x);
}

/** γ(d) = d·u / (1 − d·u). */
export function gamma(depth: number): number {
  return (depth * unitRoundoff) / (1 - depth * unitRoundoff);
}

export function describeTolerance(spec: CheckSpec): string {
  if (spec.kind === "exact") return spec.type ? `exact: the reference rounded to ${spec.type}` : "bit-exact";
  if (spec.kind === "rounded") return `|err| ≤ ½ ulp_${spec.type}(ref) + ${spec.maxRelative.toExponential(0)}·max(|ref|, ${spec.floor})`;
  if (spec.kind === "relative") return `|err| ≤ ${spec.maxRelative.toExponential(0)}·max(|ref|, ${spec.floor})`;
  return `|err| ≤ γ(${spec.depth})·Σ|terms| (γ = ${gamma(spec.depth).toExponential(2)})`;
}

const chunkSize = 1 << 20;

export function checkResult(actual: ArrayLike<number>, reference: ChunkedReference, spec: CheckSpec): CheckResult {
  if (actual.length !== reference.length) throw new RangeError(`tskernel: result has ${actual.length} elements, the reference ${reference.length}`);
  const ref = new Float64Array(Math.min(chunkSize, reference.length));
  const scale = new Float64Array(ref.length);
  const allowedFactor = spec.kind === "bound" ? gamma(spec.depth) : 0;
  let nonFinite = 0;
  let failures = 0;
  let worstScore = -1;
  let worst: CheckResult["worst"];
  let diffSquares = 0;
  let refSquares = 0;
  for (let start = 0; start < reference.length; start += chunkSize) {
    const count = Math.min(chunkSize, reference.length - start);
    const refChunk = count === ref.length ? ref : ref.subarray(0, count);
    const scaleChunk = count === scale.length ? scale : scale.subarray(0, count);
    reference.fill(start, refChunk, scaleChunk);
    for (let j = 0; j < count; j++) {
      const value = actual[start + j]!;
      const expected = refChunk[j]!;
      let score: number;
      if (!Number.isFinite(value)) {
        nonFinite++;
        failures++;
        score = Number.POSITIVE_INFINITY;
      } else {
        const diff = Math.abs(value - expected);
        diffSquares += diff * diff;
        refSquares += expected * expected;
        if (spec.kind === "exact") {
          // Whole numbers (counts) compare as they are; f32 data as the f32 of the reference; with a type, the
          // reference rounded to it.
          score = spec.type ? (value === roundTo(spec.type, expected) ? 0 : 1) : Object.is(value, expected) || Object.is(value, Math.fround(expected)) ? 0 : 1;
          if (score > 0) failures++;
        } else if (spec.kind === "rounded") {
          const allowed = 0.5 * ulpOf(spec.type, expected) + spec.maxRelative * Math.max(Math.abs(expected), spec.floor);
          score = diff / allowed;
          if (!(score <= 1)) failures++;
        } else if (spec.kind === "relative") {
          score = diff / Math.max(Math.abs(expected), spec.floor);
          if (!(score <= spec.maxRelative)) failures++;
        } else {
          const allowed = allowedFactor * scaleChunk[j]!;
          // An element whose terms are all zero (out[0] of an exclusive scan) must be exactly zero.
          score = allowed > 0 ? diff / allowed : diff === 0 ? 0 : Number.POSITIVE_INFINITY;
          if (!(score <= 1)) failures++;
        }
      }
      if (score > worstScore) {
        worstScore = score;
        worst = { index: start + j, value, expected };
      }
    }
  }
  return {
    kind: spec.kind,
    pass: failures === 0,
    elements: reference.length,
    nonFinite,
    failures,
    ...(spec.kind === "relative" ? { maxRelative: worstScore } : {}),
    ...(spec.kind === "bound" || spec.kind === "rounded" ? { maxOfAllowed: worstScore } : {}),
    normwiseRelative: Math.sqrt(diffSquares) / Math.max(Math.sqrt(refSquares), Number.MIN_VALUE),
    ...(worst ? { worst } : {}),
    tolerance: describeTolerance(spec),
  };
}
