/**
 * The meaning of each operation, written once in JavaScript: the constant folder evaluates with these, and
 * the JS backend's runtime helpers share them, so a folded constant and a value computed at run time on the
 * CPU agree. They follow docs/language.md: integers wrap, integer division and remainder truncate toward
 * zero, float→int conversion truncates and saturates (NaN → 0), int↔int keeps the bits, shift amounts are
 * taken modulo 32, and every float operation rounds its exact result to its type (round to nearest, ties to
 * even), which for f16 and bf16 is computing in doubles and rounding once: a double carries more than twice
 * their significant bits plus two, so the double rounding is harmless for + − × ÷ and sqrt. Division by zero
 * is left unfolded (its result is target-defined).
 */

import type { BinaryOp, ScalarType, UnaryOp } from "./ir.ts";
import { roundToBinary } from "../lang/float16.ts";
import { isFloat, scalars, type FloatFormat } from "./types.ts";

/**
 * `value` rounded to the nearest value of a binary floating-point format (ties to even), with its subnormals,
 * overflowing to ±infinity; NaN stays NaN. `Math.fround` is this for f32. The one implementation is the
 * host's (compiler/lang/float16.ts), which the runtime's buffers and tskernel's `f16(x)` use too.
 */
export function roundToFormat(value: number, format: FloatFormat): number {
  return roundToBinary(value, format.exponentBits, format.mantissaBits, format.maxFinite);
}

export function wrap(type: ScalarType, value: number): number {
  switch (type) {
    case "f32":
      return Math.fround(value);
    case "f16":
    case "bf16":
      return roundToFormat(value, scalars[type].float!);
    case "f64":
      return value;
    case "i32":
      return value | 0;
    case "u32":
      return value >>> 0;
    case "bool":
      return value ? 1 : 0;
  }
}

/** Evaluates `a op b` for operands of `type`; undefined when the result is not defined the same everywhere. */
export function evalBinary(op: BinaryOp, type: ScalarType, a: number, b: number): number | undefined {
  const integer = type === "i32" || type === "u32";
  switch (op) {
    case "add":
      return wrap(type, a + b);
    case "sub":
      return wrap(type, a - b);
    case "mul":
      return integer ? wrap(type, Math.imul(a, b)) : wrap(type, a * b);
    case "div":
      if (integer) return b === 0 || (type === "i32" && a === -2147483648 && b === -1) ? undefined : wrap(type, Math.trunc(a / b));
      return wrap(type, a / b);
    case "rem":
      if (integer) return b === 0 || (type === "i32" && b === -1) ? undefined : wrap(type, a % b);
      return undefined; // fmod on every target, but not worth trusting to the folder
    case "and":
      return wrap(type, a & b);
    case "or":
      return wrap(type, a | b);
    case "xor":
      return wrap(type, a ^ b);
    case "shl":
      return wrap(type, a << (b & 31));
    case "shr":
      return type === "u32" ? (a >>> (b & 31)) >>> 0 : a >> (b & 31);
    case "eq":
      return a === b ? 1 : 0;
    case "ne":
      return a !== b ? 1 : 0;
    case "lt":
      return a < b ? 1 : 0;
    case "le":
      return a <= b ? 1 : 0;
    case "gt":
      return a > b ? 1 : 0;
    case "ge":
      return a >= b ? 1 : 0;
    case "logand":
      return a && b ? 1 : 0;
    case "logor":
      return a || b ? 1 : 0;
  }
}

export function evalUnary(op: UnaryOp, type: ScalarType, a: number): number {
  switch (op) {
    case "neg":
      return wrap(type, -a);
    case "not":
      return a ? 0 : 1;
    case "bitnot":
      return wrap(type, ~a);
  }
}

export function evalConvert(from: ScalarType, to: ScalarType, value: number): number {
  if (isFloat(to)) return wrap(to, value);
  if (to === "bool") return value ? 1 : 0;
  if (isFloat(from)) {
    if (Number.isNaN(value)) return 0;
    const truncated = Math.trunc(value);
    return to === "i32" ? Math.min(Math.max(truncated, -2147483648), 2147483647) : Math.min(Math.max(truncated, 0), 4294967295);
  }
  return wrap(to, value);
}
