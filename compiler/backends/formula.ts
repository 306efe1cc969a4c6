/**
 * Prints the integer formulas of a declared launch (a kernel's `grid` and `requires`, as the manifest holds
 * them) for one specialization: its constants are substituted and what they make constant is folded, with C's
 * truncating division, so that `cdiv(rows, ROWS)` with ROWS = 1 prints as `rows`. Python reads sizes from a
 * dict `s` and divides through the runtime's `div`/`mod`/`cdiv`, which truncate as C does; C prints the
 * formula with `int` arithmetic. Both read the same trees, so the PyTorch module and the `.cuh` grid
 * functions cannot disagree about a grid.
 */

import type { ManifestFormula } from "../lang/manifest.ts";

type Constants = ReadonlyMap<string, number | boolean> | Readonly<Record<string, number | boolean>>;

function constantOf(constants: Constants, name: string): number | boolean | undefined {
  return constants instanceof Map ? constants.get(name) : (constants as Readonly<Record<string, number | boolean>>)[name];
}

/** The value of an operation on whole numbers, as C computes it; undefined for a division by zero. */
export function applyFormulaOp(op: string, args: readonly number[]): number | undefined {
  const [a = 0, b = 0] = args;
  switch (op) {
    case "neg":
      return -a;
    case "!":
      return a === 0 ? 1 : 0;
    case "&&":
      return a !== 0 && b !== 0 ? 1 : 0;
    case "||":
      return a !== 0 || b !== 0 ? 1 : 0;
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return b === 0 ? undefined : Math.trunc(a / b);
    case "%":
      return b === 0 ? undefined : a - b * Math.trunc(a / b);
    case "cdiv":
      return b === 0 ? undefined : Math.ceil(a / b);
    case "min":
      return Math.min(a, b);
    case "max":
      return Math.max(a, b);
    case "<":
      return a < b ? 1 : 0;
    case "<=":
      return a <= b ? 1 : 0;
    case ">":
      return a > b ? 1 : 0;
    case ">=":
      return a >= b ? 1 : 0;
    case "==":
      return a === b ? 1 : 0;
    case "!=":
      return a !== b ? 1 : 0;
    default:
      throw new Error(`unknown formula operation '${op}'`);
  }
}

/** The formula with the constants substituted (bools as 1 and 0) and constant parts folded. */
export function foldFormula(formula: ManifestFormula, constants: Constants): ManifestFormula {
  if (typeof formula === "number") return formula;
  if (typeof formula === "string") {
    const value = constantOf(constants, formula);
    return value === undefined ? formula : typeof value === "boolean" ? (value ? 1 : 0) : value;
  }
  const [op, ...rest] = formula;
  const args = rest.map((arg) => foldFormula(arg, constants));
  if (args.every((arg) => typeof arg === "number")) {
    const value = applyFormulaOp(op, args as number[]);
    if (value !== undefined) return value;
  }
  // Identities that constants often leave: x·1, x/1, cdiv(x, 1), x + 0, x − 0, and a condition decided by a
  // constant side (GUARD == 1 || …).
  const [a, b] = args;
  if (op === "&&" || op === "||") {
    const decided = op === "||" ? 1 : 0;
    for (const [known, other] of [[a, b], [b, a]] as const) {
      if (typeof known !== "number") continue;
      return (known !== 0 ? 1 : 0) === decided ? decided : asCondition(other!);
    }
  }
  if ((op === "*" || op === "/" || op === "cdiv") && b === 1) return a!;
  if (op === "*" && a === 1) return b!;
  if ((op === "+" || op === "-") && b === 0) return a!;
  if (op === "+" && a === 0) return b!;
  return [op, ...args];
}

const conditions = new Set(["<", "<=", ">", ">=", "==", "!=", "&&", "||", "!"]);

/** A formula as a condition, 1 or 0: itself if it is one already, else `x != 0`. */
function asCondition(formula: ManifestFormula): ManifestFormula {
  if (typeof formula === "number") return formula !== 0 ? 1 : 0;
  return typeof formula !== "string" && conditions.has(formula[0]) ? formula : ["!=", formula, 0];
}

const precedence: Readonly<Record<string, number>> = { "||": -1, "&&": 0, "<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1, "+": 2, "-": 2, "*": 3, "/": 3, "%": 3 };

interface Spelling {
  name(name: string): string;
  not(operand: string): string;
  /** The spelling of an infix operator, when it is not the formula's. */
  infix?: Readonly<Record<string, string>>;
  /** An operation that is not an infix operator of the target (or whose infix form differs): a call. */
  call(op: string, args: readonly string[]): string | undefined;
}

function print(formula: ManifestFormula, spelling: Spelling, context = -2): string {
  if (typeof formula === "number") return String(formula);
  if (typeof formula === "string") return spelling.name(formula);
  const [op, ...rest] = formula;
  if (op === "neg") return `-${print(rest[0]!, spelling, 4)}`;
  if (op === "!") return spelling.not(print(rest[0]!, spelling, 4));
  const called = spelling.call(op, rest.map((arg) => print(arg, spelling)));
  if (called !== undefined) return called;
  const level = precedence[op]!;
  // Arithmetic is left-associative: its right operand at the same level needs parentheses. Comparisons do
  // not associate (Python chains them): either operand that is one is parenthesized.
  const left = level === 1 ? level + 1 : level;
  const text = `${print(rest[0]!, spelling, left)} ${spelling.infix?.[op] ?? op} ${print(rest[1]!, spelling, level + 1)}`;
  return level < context ? `(${text})` : text;
}

/** Python, for the generated module: sizes are `s["name"]`; `/`, `%` and cdiv are the runtime's (`_rt`). */
export function pythonFormula(formula: ManifestFormula, constants: Constants): string {
  return print(foldFormula(formula, constants), {
    name: (name) => `s[${JSON.stringify(name)}]`,
    not: (operand) => `(not ${operand})`,
    infix: { "&&": "and", "||": "or" },
    call: (op, args) => {
      // Python's `and`/`or` give an operand rather than 1 or 0: the same truth, which is how conditions are read.
      if (op === "&&" || op === "||") return undefined;
      if (op === "/") return `_rt.div(${args.join(", ")})`;
      if (op === "%") return `_rt.mod(${args.join(", ")})`;
      if (op === "cdiv") return `_rt.cdiv(${args.join(", ")})`;
      if (op === "min" || op === "max") return `${op}(${args.join(", ")})`;
      return undefined;
    },
  });
}

/** C, for the `.cuh` grid functions: sizes are `int` parameters of their names. */
export function cFormula(formula: ManifestFormula, constants: Constants): string {
  return print(foldFormula(formula, constants), {
    name: (name) => name,
    not: (operand) => `!${operand}`,
    call: (op, args) => {
      const [a, b] = args;
      if (op === "cdiv") return `((${a}) + (${b}) - 1) / (${b})`;
      if (op === "min") return `((${a}) < (${b}) ? (${a}) : (${b}))`;
      if (op === "max") return `((${a}) > (${b}) ? (${a}) : (${b}))`;
      return undefined;
    },
  });
}

/** The formula as a kernel's options write it (`cdiv(n, 256)`), for comments. */
export function sourceFormula(formula: ManifestFormula): string {
  return print(formula, { name: (name) => name, not: (operand) => `!${operand}`, call: (op, args) => (op === "cdiv" || op === "min" || op === "max" ? `${op}(${args.join(", ")})` : undefined) });
}

/** The names a formula still uses once the constants are substituted, in order of first use. */
export function freeNames(formula: ManifestFormula, constants: Constants, into: string[] = []): string[] {
  const folded = foldFormula(formula, constants);
  const walk = (f: ManifestFormula) => {
    if (typeof f === "string") {
      if (!into.includes(f)) into.push(f);
    } else if (typeof f !== "number") for (const arg of f.slice(1) as ManifestFormula[]) walk(arg);
  };
  walk(folded);
  return into;
}
