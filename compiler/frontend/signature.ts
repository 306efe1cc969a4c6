/**
 * The launch a kernel declares beside its code, read literally from its options: `tensors` (each buffer's
 * shape in named sizes, and which buffers are outputs), `grid` (formulas of the sizes and constants),
 * `requires` (conditions on the sizes that a specialization needs) and `backward` (the kernel of the same file
 * that computes the gradients). It is kept in the manifest's form (lang/manifest.ts), since every consumer
 * (the PyTorch module, the `.cuh` grid functions, the runtime) reads it from there. Formulas are parsed here
 * into the manifest's operator trees; a name they use must be a size, an integer scalar parameter or an
 * integer or bool constant, so that a consumer can evaluate them from what a launch knows.
 */

import { Node, type Expression } from "ts-morph";
import { fail, makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import type { Kernel, KernelParam, Span } from "../ir/ir.ts";
import type { ManifestDim, ManifestFormula, ManifestSignature, ManifestTensor } from "../lang/manifest.ts";
import { typeName } from "../ir/types.ts";
import { spanOf } from "./context.ts";

/** The option nodes as written; each is optional. */
export interface SignatureNodes {
  tensors?: Expression;
  grid?: Expression;
  requires?: Expression;
  backward?: Expression;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

/** The prefix of a backward kernel's parameters that carry gradients: `gradOut` is the gradient of `out`. */
export function gradientName(name: string): string {
  return `grad${name.charAt(0).toUpperCase()}${name.slice(1)}`;
}

// ---- formulas ------------------------------------------------------------------------------------------------

const functions: Readonly<Record<string, number>> = { cdiv: 2, min: 2, max: 2 };
const comparisons = new Set(["<", "<=", ">", ">=", "==", "!="]);

/** Parses an integer formula (see ManifestFormula); returns the reason when the text is not one. */
export function parseFormula(text: string): { formula: ManifestFormula } | { error: string } {
  const tokens = text.match(/\d+|[A-Za-z_$][\w$]*|<=|>=|==|!=|&&|\|\||[-+*/%(),<>!]|\S/g) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  class Stop extends Error {}
  const stop = (why: string): never => {
    throw new Stop(why);
  };
  const primary = (): ManifestFormula => {
    const token = tokens[position++];
    if (token === undefined) return stop("it ends too early");
    if (/^\d+$/.test(token)) return Number(token);
    if (token === "(") {
      const inner = either();
      if (tokens[position++] !== ")") stop("a parenthesis is not closed");
      return inner;
    }
    if (token === "-") return ["neg", primary()];
    if (token === "!") return ["!", primary()];
    if (!identifier.test(token)) return stop(`'${token}' is not a number, name, operator or parenthesis`);
    if (peek() !== "(") return token;
    const arity = functions[token];
    if (arity === undefined) return stop(`'${token}' is not a function (the functions are cdiv, min and max)`);
    position++;
    const args: ManifestFormula[] = [either()];
    while (peek() === ",") {
      position++;
      args.push(either());
    }
    if (tokens[position++] !== ")") stop(`the call of ${token} is not closed`);
    if (args.length !== arity) stop(`${token} takes ${arity} arguments, found ${args.length}`);
    return [token, ...args];
  };
  const product = (): ManifestFormula => {
    let left = primary();
    while (peek() === "*" || peek() === "/" || peek() === "%") {
      const op = tokens[position++]!;
      left = [op, left, primary()];
    }
    return left;
  };
  const sum = (): ManifestFormula => {
    let left = product();
    while (peek() === "+" || peek() === "-") {
      const op = tokens[position++]!;
      left = [op, left, product()];
    }
    return left;
  };
  const comparison = (): ManifestFormula => {
    const left = sum();
    const op = peek();
    if (op === undefined || !comparisons.has(op)) return left;
    position++;
    return [op, left, sum()];
  };
  const both = (): ManifestFormula => {
    let left = comparison();
    while (peek() === "&&") {
      position++;
      left = ["&&", left, comparison()];
    }
    return left;
  };
  const either = (): ManifestFormula => {
    let left = both();
    while (peek() === "||") {
      position++;
      left = ["||", left, both()];
    }
    return left;
  };
  try {
    if (tokens.length === 0) return { error: "it is empty" };
    const formula = either();
    if (position !== tokens.length) return { error: `'${tokens[position]}' is not expected there` };
    return { formula };
  } catch (error) {
    if (error instanceof Stop) return { error: error.message };
    throw error;
  }
}

/** The names a formula uses, in order of first use. */
export function formulaNames(formula: ManifestFormula, into: string[] = []): string[] {
  if (typeof formula === "string") {
    if (!into.includes(formula)) into.push(formula);
  } else if (typeof formula !== "number") {
    for (const operand of formula.slice(1) as ManifestFormula[]) formulaNames(operand, into);
  }
  return into;
}

// ---- the options ---------------------------------------------------------------------------------------------

interface ParamKinds {
  readonly buffers: Map<string, "read" | "read_write">;
  readonly scalars: Map<string, string>;
  readonly consts: Map<string, string>;
}

function kindsOf(params: readonly KernelParam[]): ParamKinds {
  const kinds: ParamKinds = { buffers: new Map(), scalars: new Map(), consts: new Map() };
  for (const param of params) {
    if (param.kind === "buffer") kinds.buffers.set(param.array.name, param.array.access);
    else if (param.kind === "scalar") kinds.scalars.set(param.variable.name, typeName(param.variable.type));
    else kinds.consts.set(param.name, param.type);
  }
  return kinds;
}

const isInteger = (type: string | undefined) => type === "i32" || type === "u32";

/** One tensor's shape: `[rows, cols]`, `[...n]`, `output [...rows, cols]`, `[16]`, `[]`. */
function readTensor(name: string, value: Node, kinds: ParamKinds, kernelName: string): ManifestTensor {
  const span = spanOf(value);
  if (!Node.isStringLiteral(value) && !Node.isNoSubstitutionTemplateLiteral(value)) {
    return fail("TSK1004", span, [`the shape of '${name}' is a string in quotes, such as "[rows, cols]" or "output [...n]"`]);
  }
  const text = value.getLiteralValue();
  const match = /^\s*(output\s+)?\[(.*)\]\s*$/.exec(text);
  if (!match) return fail("TSK1120", span, [text, name, 'write the dimensions in brackets, "output" first for an output: "[rows, cols]", "output [...n]"']);
  const output = match[1] !== undefined;
  if (output && kinds.buffers.get(name) === "read") {
    return fail("TSK1123", span, [name], { notes: ["the kernel writes its outputs: declare the parameter as a writable array (Float32Array, …)"] });
  }
  const inner = match[2]!.trim();
  const dims: ManifestDim[] = [];
  let rest = false;
  for (const part of inner === "" ? [] : inner.split(",").map((p) => p.trim())) {
    if (/^\d+$/.test(part)) {
      dims.push(Number(part));
      continue;
    }
    const spread = /^\.\.\.\s*(.*)$/.exec(part);
    const dimName = spread ? spread[1]! : part;
    if (!identifier.test(dimName)) return fail("TSK1120", span, [text, name, `'${part}' is not a whole number, a size's name or ...name`]);
    if (spread) {
      if (rest) return fail("TSK1120", span, [text, name, "a shape may have one ...name at most"]);
      if (kinds.consts.has(dimName)) return fail("TSK1120", span, [text, name, `...${dimName} stands for a size, and '${dimName}' is a compile-time constant`]);
      rest = true;
    }
    checkSizeName(dimName, kinds, kernelName, span, `the shape of '${name}'`);
    dims.push(spread ? { rest: dimName } : dimName);
  }
  return { param: name, output, dims };
}

/** A name in a shape is a size (new, or received by an integer scalar) or an integer constant. */
function checkSizeName(name: string, kinds: ParamKinds, kernelName: string, span: Span, where: string): void {
  if (kinds.buffers.has(name)) return fail("TSK1124", span, [name, where, kernelName], { notes: [`'${name}' is a buffer parameter`] });
  const scalar = kinds.scalars.get(name);
  if (scalar !== undefined && !isInteger(scalar)) return fail("TSK1126", span, [name, scalar, kernelName]);
  const constant = kinds.consts.get(name);
  if (constant !== undefined && !isInteger(constant)) return fail("TSK1124", span, [name, where, kernelName], { notes: [`'${name}' is a Const<${constant}>; shapes take integer constants`] });
}

function dimNames(tensor: ManifestTensor): string[] {
  return tensor.dims.flatMap((dim) => (typeof dim === "number" ? [] : [typeof dim === "string" ? dim : dim.rest]));
}

function readFormulaNode(node: Node, where: string, allowed: ReadonlySet<string>, kernelName: string): { text: string; formula: ManifestFormula } {
  const span = spanOf(node);
  if (Node.isNumericLiteral(node)) {
    const value = node.getLiteralValue();
    if (!Number.isInteger(value) || value < 0) return fail("TSK1125", span, [node.getText(), where, "a number here must be a whole number"]);
    return { text: node.getText(), formula: value };
  }
  if (!Node.isStringLiteral(node) && !Node.isNoSubstitutionTemplateLiteral(node)) {
    return fail("TSK1004", span, [`each entry of ${where} is a whole number or a formula in quotes, such as "cdiv(n, 256)"`]);
  }
  const text = node.getLiteralValue();
  const parsed = parseFormula(text);
  if ("error" in parsed) return fail("TSK1125", span, [text, where, parsed.error]);
  for (const name of formulaNames(parsed.formula)) {
    if (!allowed.has(name)) {
      return fail("TSK1124", span, [name, where, kernelName], {
        notes: [`a formula names sizes from the tensors' shapes, integer scalar parameters and integer or bool compile-time constants${allowed.size > 0 ? `: ${[...allowed].join(", ")}` : ""}`],
      });
    }
  }
  return { text, formula: parsed.formula };
}

/**
 * Reads the launch declaration of one kernel from its option nodes, or returns undefined when it declares
 * none. Throws (through `fail`) the first problem found.
 */
export function readSignature(
  nodes: SignatureNodes,
  params: readonly KernelParam[],
  kernelName: string,
  hasFixedBlock: boolean,
): { signature: ManifestSignature; backwardSpan?: Span } | undefined {
  if (!nodes.tensors) {
    const other = nodes.grid ? "grid" : nodes.requires ? "requires" : nodes.backward ? "backward" : undefined;
    if (other) fail("TSK1128", spanOf(nodes[other]!), [kernelName, other, "tensors"], { notes: ["the other options of a launch declaration name the sizes that tensors declares"] });
    return undefined;
  }
  if (!nodes.grid) return fail("TSK1128", spanOf(nodes.tensors), [kernelName, "tensors", "grid"], { notes: ['give the grid as formulas of the sizes: grid: ["cdiv(n, 256)"]'] });
  if (!hasFixedBlock) return fail("TSK1128", spanOf(nodes.tensors), [kernelName, "tensors", "a fixed block"], { notes: ["a declared launch uses the kernel's block option: write block: [256] or block: [\"THREADS\"]"] });
  const kinds = kindsOf(params);
  // The Python runtime's tensors and scalars are of the scalar types: a vector or struct has no dtype there yet.
  for (const param of params) {
    const type = param.kind === "buffer" ? param.array.elementType : param.kind === "scalar" ? param.variable.type : undefined;
    if (type !== undefined && typeof type === "object") {
      const [name, what] = param.kind === "buffer" ? [param.array.name, `a buffer of ${type.name}`] : [(param as { variable: { name: string } }).variable.name, `a ${type.name}`];
      fail("TSK1161", spanOf(nodes.tensors), [name, kernelName, what], {
        notes: ["declare the launch of kernels whose parameters are f32, i32, u32 and bool buffers and scalars; pass a struct's fields as buffers of their own"],
      });
    }
  }

  if (!Node.isObjectLiteralExpression(nodes.tensors)) return fail("TSK1004", spanOf(nodes.tensors), ['tensors is an object literal of shapes: { out: "output [...n]", input: "[...n]" }']);
  const byName = new Map<string, ManifestTensor>();
  for (const property of nodes.tensors.getProperties()) {
    if (!Node.isPropertyAssignment(property)) return fail("TSK1004", spanOf(property), ["write each shape as `name: \"[…]\"`"]);
    const name = property.getName().replace(/^["']|["']$/g, "");
    if (!kinds.buffers.has(name)) {
      return fail("TSK1121", spanOf(property.getNameNode()), [name, kernelName], { notes: kinds.scalars.has(name) || kinds.consts.has(name) ? [`'${name}' is a scalar: name it as a size in the shapes instead`] : [] });
    }
    if (byName.has(name)) return fail("TSK1004", spanOf(property), [`'${name}' has two shapes in tensors`]);
    byName.set(name, readTensor(name, property.getInitializerOrThrow(), kinds, kernelName));
  }
  const tensors: ManifestTensor[] = [];
  for (const name of kinds.buffers.keys()) {
    const tensor = byName.get(name);
    if (!tensor) return fail("TSK1122", spanOf(nodes.tensors), [name, kernelName]);
    tensors.push(tensor);
  }

  // Sizes an input's shape gives; the others must be arguments (integer scalars of the kernel).
  const inputSizes = new Set(tensors.filter((t) => !t.output).flatMap(dimNames).filter((n) => !kinds.consts.has(n)));
  for (const name of tensors.filter((t) => t.output).flatMap(dimNames)) {
    if (!kinds.consts.has(name) && !inputSizes.has(name) && !isInteger(kinds.scalars.get(name))) {
      return fail("TSK1127", spanOf(nodes.tensors), [name], { notes: [`declare an i32 parameter '${name}' to take it as an argument of the launch`] });
    }
  }
  const allowed = new Set<string>([
    ...inputSizes,
    ...[...kinds.scalars].filter(([, type]) => isInteger(type)).map(([name]) => name),
    ...[...kinds.consts].filter(([, type]) => isInteger(type) || type === "bool").map(([name]) => name),
  ]);

  if (!Node.isArrayLiteralExpression(nodes.grid) || nodes.grid.getElements().length < 1 || nodes.grid.getElements().length > 3) {
    return fail("TSK1004", spanOf(nodes.grid), ['grid is an array of 1 to 3 whole numbers or formulas in quotes: grid: ["cdiv(n, 256)"]']);
  }
  const grid = nodes.grid.getElements().map((element) => readFormulaNode(element, "the grid", allowed, kernelName).formula);
  while (grid.length < 3) grid.push(1);

  const requires: { text: string; formula: ManifestFormula }[] = [];
  if (nodes.requires) {
    if (!Node.isArrayLiteralExpression(nodes.requires)) return fail("TSK1004", spanOf(nodes.requires), ['requires is an array of conditions in quotes: requires: ["cols % 4 == 0"]']);
    for (const element of nodes.requires.getElements()) {
      if (!Node.isStringLiteral(element) && !Node.isNoSubstitutionTemplateLiteral(element)) {
        return fail("TSK1004", spanOf(element), ['each condition of requires is a formula in quotes, such as "cols <= 4 * THREADS"']);
      }
      requires.push(readFormulaNode(element, "requires", allowed, kernelName));
    }
  }

  let backward: string | undefined;
  let backwardSpan: Span | undefined;
  if (nodes.backward) {
    if (!Node.isStringLiteral(nodes.backward)) return fail("TSK1004", spanOf(nodes.backward), ["backward is the name of a kernel of the same file, in quotes"]);
    backward = nodes.backward.getLiteralValue();
    backwardSpan = spanOf(nodes.backward);
  }
  return {
    signature: { tensors, grid: grid as [ManifestFormula, ManifestFormula, ManifestFormula], requires, ...(backward !== undefined ? { backward } : {}) },
    ...(backwardSpan ? { backwardSpan } : {}),
  };
}

// ---- pairing a kernel with its backward kernel --------------------------------------------------------------

/** The sizes of a declared kernel: every name in its tensors' shapes that is not a constant. */
export function signatureSizes(kernel: Kernel): Set<string> {
  const consts = new Set(kernel.params.flatMap((p) => (p.kind === "const" ? [p.name] : [])));
  return new Set(kernel.signature?.tensors.flatMap(dimNames).filter((name) => !consts.has(name)) ?? []);
}

/**
 * Checks each `backward` of a file's kernels: it names a declared kernel of the file whose parameters are
 * the forward kernel's tensors (saved by the operator), `grad<Output>` for the gradient of each output it
 * reads, `grad<Input>` outputs for the gradients it computes, and the forward kernel's scalar arguments.
 */
export function checkBackwardPairs(kernels: readonly Kernel[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const byName = new Map(kernels.map((k) => [k.name, k]));
  for (const forward of kernels) {
    const name = forward.signature?.backward;
    if (name === undefined) continue;
    const span = forward.backwardSpan ?? forward.span;
    const problem = (why: string, notes: string[] = []) => diagnostics.push(makeDiagnostic("TSK1129", span, [name, forward.name, why], { notes }));
    const backward = byName.get(name);
    if (!backward) {
      problem("is not a kernel of this file", [`the kernels of this file are ${kernels.map((k) => k.name).join(", ")}`]);
      continue;
    }
    if (backward === forward) {
      problem("is the kernel itself");
      continue;
    }
    if (!backward.signature) {
      problem("declares no tensors", ["give the backward kernel its own tensors and grid options"]);
      continue;
    }
    const forwardTensors = new Map(forward.signature!.tensors.map((t) => [t.param, t]));
    const inputs = forward.signature!.tensors.filter((t) => !t.output).map((t) => t.param);
    const outputs = forward.signature!.tensors.filter((t) => t.output).map((t) => t.param);
    const forwardSizes = signatureSizes(forward);
    const forwardArguments = new Set(forward.params.flatMap((p) => (p.kind === "scalar" && !forwardSizes.has(p.variable.name) ? [p.variable.name] : [])));
    const backwardSizes = signatureSizes(backward);
    const naming = `its parameters are ${forward.name}'s tensors (${[...forwardTensors.keys()].join(", ")}), the gradients of its outputs (${outputs.map(gradientName).join(", ") || "none"}) as inputs, the gradients of its inputs (${inputs.map(gradientName).join(", ")}) as outputs, and ${forward.name}'s scalar arguments`;
    for (const tensor of backward.signature.tensors) {
      const ok = tensor.output ? inputs.some((n) => gradientName(n) === tensor.param) : forwardTensors.has(tensor.param) || outputs.some((n) => gradientName(n) === tensor.param);
      if (!ok) problem(`has ${tensor.output ? "an output" : "an input"} '${tensor.param}' that is none of ${forward.name}'s`, [naming]);
    }
    for (const param of backward.params) {
      if (param.kind !== "scalar" || backwardSizes.has(param.variable.name) || forwardArguments.has(param.variable.name)) continue;
      problem(`takes the scalar '${param.variable.name}', which is not a scalar argument of ${forward.name}`, [naming]);
    }
    if (!backward.signature.tensors.some((t) => t.output)) problem("has no outputs", [naming]);
  }
  return diagnostics;
}
