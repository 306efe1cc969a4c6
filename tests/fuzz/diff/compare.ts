/**
 * How a backend's output is judged against the reference (evaluate.ts), and the documented differences
 * between targets, each with its reason. Integers must agree bit for bit; exact floats exactly (NaN with
 * NaN, and +0 with -0, whose sign no target promises); an inexact float within the stated bound of its top
 * operation on that backend (`bounds`). Everything not explained by `documentedDifferences` is a mismatch.
 */

import type { InexactOp, OutputBuffer } from "./program.ts";
import type { Expected } from "./evaluate.ts";

export type Backend = "cpu" | "cpu-checked" | "webgpu" | "cuda";

/**
 * The differences between targets that docs/language.md documents (§6, §20, §22), and what the harness
 * does about each. `avoided`: the generator never produces the case; `bounded`: `bounds` allows for it;
 * `exempt`: outputs it affects are not compared on the backends named.
 */
export const documentedDifferences = [
  { id: "shift-amount", doc: "§22", handling: "avoided", reason: "shift amounts outside 0..31 give 0 on CUDA and the amount modulo 32 elsewhere; the generator masks amounts with & 31 or writes 0..31" },
  { id: "integer-division-by-zero", doc: "§6", handling: "avoided", reason: "integer division and remainder by zero, and -2147483648 / -1, have no defined result; divisors are made non-zero and dividends odd beside a divisor that may be -1" },
  { id: "select-evaluates-both-sides", doc: "§22", handling: "avoided", reason: "WGSL evaluates both arms of ?:, which only matters for out-of-bounds reads, and the generator's indices are always in bounds" },
  { id: "pow-negative-base", doc: "§22", handling: "avoided", reason: "WGSL's pow is undefined for a negative base; the generator's bases are at least 0.5" },
  { id: "fma-unfused", doc: "§22", handling: "bounded", reason: "WGSL's fma need not be fused (SwiftShader rounds the product first): the bound adds an ulp of the product" },
  { id: "fma-double-rounding", doc: "§22", handling: "bounded", reason: "the CPU backend computes fma in double precision and rounds once more to f32: one ulp" },
  { id: "transcendental-accuracy", doc: "§20", handling: "bounded", reason: "Math functions have target-specific accuracy: the bounds are those of WGSL's accuracy table, CUDA's math library and double-precision JavaScript rounded to f32" },
  { id: "fma-contraction", doc: "§20", handling: "avoided", reason: "CUDA contracts a*b+c into an FMA; every f32 value that flows on is exact (its products too), so contraction cannot change it, and rounding operations appear only at the top of an output" },
  { id: "webgpu-finite-math", doc: "§22", handling: "exempt on webgpu", reason: "WebGPU implementations may assume finite f32 values and flush subnormals (SwiftShader does): outputs whose arithmetic or comparisons met NaN, an infinity or a subnormal (the reference marks them) are not compared there; conversions, copies and selects of such values still are" },
  { id: "swiftshader-atan2-negative-zero", doc: "§22", handling: "exempt on webgpu", reason: "SwiftShader's atan2(y, x) is off by π when y is -0 (π for x > 0, 0 for x < 0), and a WebGPU implementation may also give a zero the other sign (nsz): atan2 outputs with y = ±0 are not compared there" },
  { id: "shared-memory-initial-contents", doc: "§9", handling: "avoided", reason: "shared memory starts undefined; each thread writes its element before a barrier and any read" },
  { id: "half-nan-payload", doc: "§26", handling: "avoided", reason: "a NaN widened from f16 or bf16 keeps the target's payload, and a copied element keeps its bits on CUDA and WGSL but not on the CPU; the generator's 16-bit values are finite unless they overflow to ±infinity (and make a NaN from it), and outputs compare NaN as NaN, never its bits" },
  { id: "half-subnormals-webgpu", doc: "§26", handling: "avoided", reason: "WGSL may flush f32 subnormals, and so bf16's; the generator's bf16 values are sums and products of exact values at least 2^-8 apart from 0, never subnormal" },
  { id: "f16-and-f64-on-webgpu", doc: "§26", handling: "avoided", reason: "WGSL has no f64, and the adapters tested lack shader-f16: programs with f16 and f64 outputs (`wide`, targets cuda and js) run on CUDA and the CPU only" },
  { id: "float-min-max-nan", doc: "§12", handling: "bounded", reason: "CUDA's Math.min/max of floats are fminf/fmaxf, which give the other operand where one is NaN; the CPU's propagate the NaN, as JavaScript's do. The generator's f16 and bf16 expressions can overflow to ±infinity and make a NaN (inf − inf, inf · 0) that min or max then meets: CUDA's outputs are compared with the reference evaluated under CUDA's rule (H100 run of 2026-11-26: all 5843 recorded mismatches of 255 of 2100 programs were this), WebGPU's are exempt (finite math)" },
  { id: "f64-contraction", doc: "§26", handling: "avoided", reason: "CUDA contracts f64 a*b+c as f32's; the f64 outputs are sums of two products of values of at most 24 significant bits, exact in f64 in any order, so contraction cannot change them" },
] as const;

export interface Bound {
  /** Units in the last place of the reference value. */
  readonly ulps: number;
  /** An absolute allowance on top (for bounds WGSL states in absolute terms). */
  readonly abs?: number;
}

/** ulp(x) of f32: the gap between |x| and the next f32, subnormals included. */
export function ulpOf(x: number): number {
  const a = Math.abs(x);
  if (a < 2 ** -126) return 2 ** -149;
  return 2 ** (Math.floor(Math.log2(a)) - 23);
}

const exactlyRounded: Bound = { ulps: 1 };

/**
 * The bound of each inexact operation per backend, given its arguments. The CPU computes in double and
 * rounds to f32 (under one ulp); CUDA's bounds are its math library's (CUDA C Programming Guide, "Mathematical
 * Functions", single precision, default flags: IEEE division and square root); WebGPU's are WGSL's accuracy
 * table (§15.6.2 of the WGSL specification), for the argument ranges the generator keeps to.
 */
export function bound(op: InexactOp, backend: Backend, args: readonly number[], reference: number): Bound {
  if (backend === "cpu" || backend === "cpu-checked") return exactlyRounded;
  const [x = 0, y = 0] = args;
  if (backend === "cuda") {
    const cuda: Record<InexactOp, number> = { div: 1, sqrt: 1, exp: 3, log: 2, log2: 2, pow: 5, sin: 3, cos: 3, tan: 5, tanh: 3, atan2: 4, fma: 1, rem: 0, fromInt: 1 };
    return { ulps: cuda[op] };
  }
  switch (op) {
    case "div":
      return { ulps: 3 };
    case "sqrt":
      // Inherited from 1.0 / inverseSqrt(x): 2 ulp, then a 2.5-ulp division.
      return { ulps: 5 };
    case "exp":
      return { ulps: 4 + 2 * Math.abs(x) };
    case "log":
    case "log2":
      return x >= 0.5 && x <= 2 ? { ulps: 1, abs: 2 ** -21 } : { ulps: 4 };
    case "pow": {
      // Inherited from exp2(y * log2(x)): log2's error, scaled by y, then exp2's.
      const z = y * Math.log2(x);
      const logError = Math.abs(y) * (x >= 0.5 && x <= 2 ? 2 ** -21 : 4 * ulpOf(Math.log2(x)));
      const relative = (4 + 2 * Math.abs(z)) * 2 ** -23 + Math.LN2 * (logError + ulpOf(z));
      return { ulps: 1, abs: relative * Math.abs(reference) };
    }
    case "sin":
    case "cos":
      return { ulps: 1, abs: 2 ** -11 };
    case "tan": {
      // Inherited from sin(x) / cos(x), each within 2^-11.
      const c = Math.abs(Math.cos(x));
      return { ulps: 3, abs: (2 ** -11 * (1 + Math.abs(Math.tan(x)))) / c };
    }
    case "tanh": {
      // Inherited from sinh(x) / cosh(x), each from exp within (3 + 2|x|) ulp.
      const e = (4 + 2 * Math.abs(x)) * 2 ** -23 * Math.exp(Math.abs(x));
      return { ulps: 3, abs: (2 * e) / Math.cosh(x) };
    }
    case "atan2":
      return { ulps: 4096 };
    case "fma":
      return { ulps: 1, abs: ulpOf(x * y) };
    case "rem":
      // Inherited from x - y * trunc(x / y): exact when the quotient is, which the generator does not ensure.
      return { ulps: 0 };
    case "fromInt":
      // Either neighbour of a value between two f32s.
      return { ulps: 1 };
  }
}

export interface Mismatch {
  readonly backend: Backend;
  readonly buffer: OutputBuffer;
  readonly index: number;
  readonly expected: number | undefined;
  readonly got: number;
  readonly detail: string;
}

/** Where the reference has no value (a thread returned first) the output keeps the poison written before. */
export const poison = { outI: -0x21524111, outU: 0xdeadbeef, outF: Number.NaN, outH: Number.NaN, outB: 0x5a, outW: 0xbeef, outX: Number.NaN, outD: Number.NaN } as const;

/** The outputs compared exactly (NaN with NaN, +0 with −0): integers and the 16-bit and f64 values, all exact. */
const exactOutputs = ["outI", "outU", "outH", "outB", "outW", "outX", "outD"] as const;

/** Every element of one backend's outputs that the reference and the bounds do not explain. */
export function compareOutputs(backend: Backend, expected: Expected, got: Partial<Record<OutputBuffer, ArrayLike<number>>> & { outI: ArrayLike<number>; outU: ArrayLike<number>; outF: ArrayLike<number> }, finiteMathOnly: boolean): { mismatches: Mismatch[]; worstUlps: Partial<Record<InexactOp, number>> } {
  const mismatches: Mismatch[] = [];
  const worstUlps: Partial<Record<InexactOp, number>> = {};
  for (const buffer of exactOutputs) {
    const values = got[buffer];
    // The outputs a program does not have (f16 and f64 outside wide programs).
    if (!values) continue;
    expected[buffer].forEach((value, index) => {
      const actual = values[index]!;
      const want = value ?? poison[buffer];
      if (actual === want || (Number.isNaN(actual) && Number.isNaN(want))) return;
      if (finiteMathOnly && expected.nonFinite[buffer][index]) return;
      mismatches.push({ backend, buffer, index, expected: want, got: actual, detail: buffer === "outI" || buffer === "outU" ? "integer" : `exact ${buffer}` });
    });
  }
  expected.outF.forEach((value, index) => {
    const actual = got.outF[index]!;
    const check = expected.checks[index];
    if (value === undefined || !check) {
      if (!Number.isNaN(actual)) mismatches.push({ backend, buffer: "outF", index, expected: undefined, got: actual, detail: "an element no thread writes was written" });
      return;
    }
    if (finiteMathOnly && expected.nonFinite.outF[index]) return;
    if (check.kind !== "inexact") {
      if (actual === value || (Number.isNaN(actual) && Number.isNaN(value))) return;
      mismatches.push({ backend, buffer: "outF", index, expected: value, got: actual, detail: check.kind });
      return;
    }
    if (backend === "webgpu" && check.op === "atan2" && expected.args[index]?.[0] === 0) return;
    const limit = bound(check.op, backend, expected.args[index] ?? [], value);
    const error = Math.abs(actual - value);
    const ulps = error / ulpOf(value);
    const allowed = limit.ulps * ulpOf(value) + (limit.abs ?? 0);
    worstUlps[check.op] = Math.max(worstUlps[check.op] ?? 0, Number.isFinite(ulps) ? ulps : Infinity);
    if (error <= allowed) return;
    // The remainder may be off by one whole divisor where WGSL's x - y * trunc(x / y) rounds the quotient.
    mismatches.push({ backend, buffer: "outF", index, expected: value, got: actual, detail: `${check.op}: ${ulps.toFixed(2)} ulp, allowed ${limit.ulps} ulp + ${limit.abs ?? 0} (args ${(expected.args[index] ?? []).join(", ")})` });
  });
  return { mismatches, worstUlps };
}
