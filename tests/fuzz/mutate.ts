/**
 * The mutation fuzzer's operators. Each takes a seed program (an example or a codegen case) and returns a
 * changed text: tokens deleted, duplicated, swapped or replaced; lines deleted, duplicated or swapped;
 * syntax-tree subtrees deleted, duplicated, swapped, wrapped or replaced by subtrees of other seeds; type
 * names and literals changed to neighbours and edge values; operators exchanged; and constructs the
 * language does not support inserted. Most results are invalid in some way, which is the point: the
 * compiler must reject each with located, coded diagnostics, or accept it and emit code nvcc and Dawn take.
 */

import { ts } from "ts-morph";
import type { Rng } from "./rng.ts";

interface Token {
  readonly kind: ts.SyntaxKind;
  readonly start: number;
  readonly end: number;
}

function tokens(text: string): Token[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  const out: Token[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    out.push({ kind, start: scanner.getTokenStart(), end: scanner.getTokenEnd() });
    if (out.length > 200_000) break;
  }
  return out;
}

function splice(text: string, start: number, end: number, replacement: string): string {
  return text.slice(0, start) + replacement + text.slice(end);
}

/** Nodes of a parse, by category, for subtree mutations. */
interface Nodes {
  readonly statements: ts.Node[];
  readonly expressions: ts.Node[];
  readonly types: ts.Node[];
}

function nodesOf(text: string): Nodes {
  const nodes: Nodes = { statements: [], expressions: [], types: [] };
  let file: ts.SourceFile;
  try {
    file = ts.createSourceFile("m.ts", text, ts.ScriptTarget.ES2022, true);
  } catch {
    // A seed too deep for TypeScript's parser (the nesting regression cases) offers no subtrees.
    return nodes;
  }
  const stack: ts.Node[] = [file];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (ts.isStatement(node)) nodes.statements.push(node);
    else if (ts.isExpression(node) && !ts.isOmittedExpression(node)) nodes.expressions.push(node);
    else if (ts.isTypeNode(node)) nodes.types.push(node);
    ts.forEachChild(node, (child) => {
      stack.push(child);
    });
  }
  return nodes;
}

function textOf(node: ts.Node): string {
  return node.getText();
}

const typeNames = [
  "f32", "i32", "u32", "bool", "boolean", "number", "Const<i32>", "Const<f32>", "Const<u32>", "Const<bool>", "Const<number>",
  "Float32Array", "Int32Array", "Uint32Array", "ReadonlyFloat32Array", "ReadonlyInt32Array", "ReadonlyUint32Array",
  "Readonly<Float32Array>", "Float64Array", "string", "any", "unknown", "never", "f32[]", "Dim3", "void",
];

/** Literals at and around the edges of every type and limit the compiler knows. */
export const edgeLiterals = [
  "0", "-0", "1", "-1", "2", "3", "4", "7", "8", "15", "16", "17", "31", "32", "33", "63", "64", "65", "127", "128", "255", "256", "257",
  "1023", "1024", "1025", "4096", "16384", "65535", "65536", "232448", "232449", "1048576",
  "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296", "9007199254740993",
  "0x7fffffff", "0xffffffff", "0x100000000", "0b101", "0o17", "1_000", "1e3", "1e10", "1e38", "3.4028235e38", "3.5e38",
  "1e39", "1e308", "1e309", "1e-45", "1e-46", "1.4e-45", "0.1", "0.5", "1.5", "-1.5", "2.5", ".5", "5.", "1e+3",
  "123456789012345678901234567890", `${"9".repeat(400)}`, "0.0000001", "NaN", "Infinity", "-Infinity", "true", "false",
];

const binaryOperators = [
  "+", "-", "*", "/", "%", "**", "&", "|", "^", "<<", ">>", ">>>", "===", "!==", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
  "??", ",", "=", "+=", "-=", "*=", "/=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", ">>>=", "&&=", "||=", "??=", "in", "instanceof",
];

/** Statements and expressions the language rejects (and some it accepts), to insert. */
const foreignStatements = [
  "switch (1) { case 1: break; default: }", "do { } while (false);", "for (const v of [1, 2]) { }", "for (const k in {}) { }",
  "try { } catch (e) { }", "throw 1;", "label: for (;;) { break label; }", "debugger;", "var z = 1;", "class C { }",
  "function inner(): f32 { return 1; }", "const s = \"text\";", "const t = `x${1}`;", "const o = { a: 1 };", "const arr = [1, 2];",
  "const big = 10n;", "const re = /a+/;", "enum E { A }", "const fn = () => 1;", "async function af() { }", "function* g() { yield 1; }",
  "const n0 = null;", "const u0 = undefined;", "let q;", "let w: number = 1;", "const m = Math.random();", "const r = Math.round(1.5);",
  "syncThreads();", "syncThreads(1);", "const sh = shared.f32(0);", "const sh2 = shared.f32(-4);", "const sh3 = shared.f32(1 << 30);",
  "const sh4 = shared.f32(7, 5, 3);", "const lo = local.f32(1 << 24);", "const lo2 = local.i32(0);", "commitAsync();", "waitAsync(8);",
  "waitAsync(-1);", "const [a0, a1, a2, a3] = load4(out, 1);", "const [b0, b1] = load4(out, 0);", "store4(out, 0, 1, 2, 3);",
  "return 1;", "return;", "break;", "continue;", "{ }", ";", "if (true) { } else { }", "while (false) { }", "for (;;) { break; }",
  "unroll: for (let u = 0; u < 65; u++) { }", "unroll: while (true) { break; }", "unrollX: for (let u = 0; u < 4; u++) { }",
  "unroll: for (let u = 0; u < 64; u++) { unrollB: for (let v = 0; v < 64; v++) { unrollC: for (let w2 = 0; w2 < 64; w2++) { } } }",
  "threadIdx.x = 1;", "blockDim = 1;", "Math.PI = 3;", "out = out;", "out.length;", "out[0]++;", "++out[0];", "out[0] **= 2;",
  "const x1 = threadIdx.w;", "const x2 = gridDim;", "const x3 = this;", "const x4 = typeof out;", "const x5 = void 0;",
  "with (Math) { }", "import(\"x\");", "export default 1;", "declare const dd: number;", "namespace NS { }",
];

const foreignExpressions = [
  "(1, 2)", "x ?? y", "typeof x", "void 0", "delete x", "new Float32Array(4)", "await x", "x!", "x as f32", "<f32>x", "this",
  "x?.y", "[1, 2]", "{ a: 1 }", "\"s\"", "`t`", "10n", "/re/", "() => 1", "function () { return 1; }", "x++", "--x", "(x = 3)",
  "Math.random()", "Math.round(x)", "Math.hypot(1, 2)", "Math.max()", "Math.min(1)", "Math.sqrt(1, 2)", "fma(1, 2)", "f32()",
  "i32(1, 2)", "u32(true)", "f32(x) + i32(x)", "threadIdx", "threadIdx.x.y", "out[0][1]", "out", "shared", "kernel", "syncThreads()",
  "x ? 1 : 2.5", "true + 1", "!1", "~1.5", "-true", "1 << 40", "1 >> -1", "1 / 0", "1 % 0", "-2147483648 / -1", "2 ** 0.5",
  "x === true", "1 < 2.5", "NaN", "Infinity", "undefined", "null", "Math.PI", "Math.E ** 2", "Math.abs(-2147483648)",
];

export type MutationName =
  | "deleteToken" | "duplicateToken" | "swapTokens" | "replaceToken" | "renameIdentifier"
  | "deleteLine" | "duplicateLine" | "swapLines"
  | "deleteStatement" | "duplicateStatement" | "swapStatements" | "deleteExpression" | "swapExpressions" | "wrapExpression" | "crossover"
  | "changeType" | "changeLiteral" | "changeOperator" | "insertStatement" | "insertExpression";

export const mutationNames: readonly MutationName[] = [
  "deleteToken", "duplicateToken", "swapTokens", "replaceToken", "renameIdentifier", "deleteLine", "duplicateLine", "swapLines",
  "deleteStatement", "duplicateStatement", "swapStatements", "deleteExpression", "swapExpressions", "wrapExpression", "crossover",
  "changeType", "changeLiteral", "changeOperator", "insertStatement", "insertExpression",
];

/** Applies one mutation; returns undefined when the text offers nothing for it (the caller tries another). */
export function mutateOnce(text: string, name: MutationName, rng: Rng, donors: readonly string[]): string | undefined {
  switch (name) {
    case "deleteToken":
    case "duplicateToken":
    case "swapTokens":
    case "replaceToken":
    case "renameIdentifier":
      return tokenMutation(text, name, rng);
    case "deleteLine":
    case "duplicateLine":
    case "swapLines":
      return lineMutation(text, name, rng);
    case "changeLiteral": {
      const literals = tokens(text).filter((t) => t.kind === ts.SyntaxKind.NumericLiteral || t.kind === ts.SyntaxKind.TrueKeyword || t.kind === ts.SyntaxKind.FalseKeyword);
      if (literals.length === 0) return undefined;
      const t = rng.pick(literals);
      return splice(text, t.start, t.end, rng.pick(edgeLiterals));
    }
    case "changeOperator": {
      const ops = tokens(text).filter((t) => binaryOperators.includes(text.slice(t.start, t.end)));
      if (ops.length === 0) return undefined;
      const t = rng.pick(ops);
      return splice(text, t.start, t.end, rng.pick(binaryOperators));
    }
    default:
      return treeMutation(text, name, rng, donors);
  }
}

function tokenMutation(text: string, name: MutationName, rng: Rng): string | undefined {
  const all = tokens(text);
  if (all.length < 2) return undefined;
  const t = rng.pick(all);
  const tokenText = (x: Token) => text.slice(x.start, x.end);
  switch (name) {
    case "deleteToken":
      return splice(text, t.start, t.end, "");
    case "duplicateToken":
      return splice(text, t.end, t.end, ` ${tokenText(t)}`);
    case "swapTokens": {
      // Neighbours most of the time (small, plausible edits), anywhere sometimes.
      const index = all.indexOf(t);
      const other = rng.chance(0.7) ? all[Math.min(all.length - 1, index + 1)]! : rng.pick(all);
      if (other === t) return undefined;
      const [first, second] = t.start < other.start ? [t, other] : [other, t];
      return text.slice(0, first.start) + tokenText(second) + text.slice(first.end, second.start) + tokenText(first) + text.slice(second.end);
    }
    case "replaceToken":
      return splice(text, t.start, t.end, tokenText(rng.pick(all)));
    default: {
      const identifiers = all.filter((x) => x.kind === ts.SyntaxKind.Identifier);
      if (identifiers.length < 2) return undefined;
      const target = rng.pick(identifiers);
      return splice(text, target.start, target.end, tokenText(rng.pick(identifiers)));
    }
  }
}

function lineMutation(text: string, name: MutationName, rng: Rng): string | undefined {
  const lines = text.split("\n");
  if (lines.length < 2) return undefined;
  const i = rng.int(lines.length);
  switch (name) {
    case "deleteLine":
      lines.splice(i, 1);
      break;
    case "duplicateLine":
      lines.splice(i, 0, lines[i]!);
      break;
    default: {
      const j = rng.int(lines.length);
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    }
  }
  return lines.join("\n");
}

function treeMutation(text: string, name: MutationName, rng: Rng, donors: readonly string[]): string | undefined {
  const nodes = nodesOf(text);
  const statement = () => (nodes.statements.length > 0 ? rng.pick(nodes.statements) : undefined);
  const expression = () => (nodes.expressions.length > 0 ? rng.pick(nodes.expressions) : undefined);
  switch (name) {
    case "deleteStatement": {
      const s = statement();
      return s && splice(text, s.getStart(), s.getEnd(), "");
    }
    case "duplicateStatement": {
      const s = statement();
      return s && splice(text, s.getEnd(), s.getEnd(), `\n${textOf(s)}`);
    }
    case "swapStatements":
    case "swapExpressions": {
      const pool = name === "swapStatements" ? nodes.statements : nodes.expressions;
      if (pool.length < 2) return undefined;
      const a = rng.pick(pool);
      const b = rng.pick(pool);
      // Overlapping nodes (one inside the other) cannot swap places.
      if (a.getEnd() > b.getStart() && b.getEnd() > a.getStart()) return undefined;
      const [first, second] = a.getStart() < b.getStart() ? [a, b] : [b, a];
      return text.slice(0, first.getStart()) + textOf(second) + text.slice(first.getEnd(), second.getStart()) + textOf(first) + text.slice(second.getEnd());
    }
    case "deleteExpression": {
      const e = expression();
      return e && splice(text, e.getStart(), e.getEnd(), rng.chance(0.5) ? "" : rng.pick(["0", "1.0", "x", "true", "i", "n"]));
    }
    case "wrapExpression": {
      const e = expression();
      if (!e) return undefined;
      const inner = textOf(e);
      const wrappers = [
        `(${inner})`, `-${inner}`, `!${inner}`, `~${inner}`, `f32(${inner})`, `i32(${inner})`, `u32(${inner})`, `(${inner} + ${inner})`,
        `(${inner} * 2)`, `Math.sqrt(${inner})`, `Math.abs(${inner})`, `Math.min(${inner}, ${inner})`, `(true ? ${inner} : ${inner})`,
        `(${inner} === ${inner})`, `(${inner} << 1)`, `(${inner} / ${inner})`, `(${inner} % 3)`, `fma(${inner}, ${inner}, ${inner})`,
      ];
      return splice(text, e.getStart(), e.getEnd(), rng.pick(wrappers));
    }
    case "crossover": {
      // An expression or statement of another seed in place of one of this file.
      const donor = nodesOf(rng.pick(donors));
      const useStatement = rng.chance(0.5) && donor.statements.length > 0 && nodes.statements.length > 0;
      const target = useStatement ? statement() : expression();
      const pool = useStatement ? donor.statements : donor.expressions;
      if (!target || pool.length === 0) return undefined;
      return splice(text, target.getStart(), target.getEnd(), textOf(rng.pick(pool)));
    }
    case "changeType": {
      if (nodes.types.length === 0) return undefined;
      const t = rng.pick(nodes.types);
      return splice(text, t.getStart(), t.getEnd(), rng.pick(typeNames));
    }
    case "insertStatement": {
      const s = statement();
      if (!s) return undefined;
      const at = rng.chance(0.5) ? s.getStart() : s.getEnd();
      return splice(text, at, at, `\n${rng.pick(foreignStatements)}\n`);
    }
    case "insertExpression": {
      const e = expression();
      return e && splice(text, e.getStart(), e.getEnd(), rng.pick(foreignExpressions));
    }
    default:
      return undefined;
  }
}

/** One to four stacked mutations of a seed. */
export function mutate(seed: string, rng: Rng, donors: readonly string[]): { text: string; mutations: MutationName[] } {
  let text = seed;
  const applied: MutationName[] = [];
  const count = rng.weighted([[6, 1], [3, 2], [2, 3], [1, 4]] as const);
  for (let attempt = 0; applied.length < count && attempt < count * 4; attempt++) {
    const name = rng.pick(mutationNames);
    const next = mutateOnce(text, name, rng, donors);
    if (next === undefined || next === text) continue;
    text = next;
    applied.push(name);
  }
  return { text, mutations: applied };
}
