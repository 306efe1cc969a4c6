/**
 * Lowers one source file to an IR module: finds each `export const NAME = kernel(options?, fn)`, reads the
 * options literally (block shape, specializations, targets), types the parameters (buffers, scalars, compile-time
 * constants), and lowers the body. Kernels come out generic: compile-time constants are `constRef`s until
 * the specialization pass gives them values.
 */

import { Node, SyntaxKind, type Expression, type ParameterDeclaration, type SourceFile } from "ts-morph";
import { AlreadyReported, DiagnosticError, fail, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { isVector, type BlockDimSpec, type BlockShapeExpr, type ConstValue, type Kernel, type KernelParam, type Module, type ScalarType, type Span } from "../ir/ir.ts";
import { resolveTypeNode, Scope, spanOf, type FunctionContext, type ModuleState, type TypeArgs } from "./context.ts";
import { elementScalars, type ElementScalar } from "../ir/types.ts";
import { isLiteralLike, lowerExpected, lowerExpr, lowerIndexedArray, makeLiteral } from "./lower-expr.ts";
import { lowerBlock } from "./lower-stmt.ts";
import { findKernelCalls } from "./program.ts";
import { targetNames, type TargetName } from "../backends/targets.ts";
import { readSignature, type SignatureNodes } from "./signature.ts";
import type { ManifestSignature } from "../lang/manifest.ts";

export interface LoweredFile {
  readonly module: Module;
  readonly diagnostics: Diagnostic[];
}

export function lowerFile(file: SourceFile): LoweredFile {
  const diagnostics: Diagnostic[] = [];
  const state: ModuleState = { helpers: new Map(), helperOrder: [], helperStack: [], diagnostics, lower: { expected: lowerExpected, expr: lowerExpr, indexedArray: lowerIndexedArray, isLiteralLike, block: lowerBlock } };
  const kernels: Kernel[] = [];
  const seen = new Map<string, Span>();
  for (const found of findKernelCalls(file)) {
    try {
      if (!found.exported || !found.declarationName) fail("TSK1003", spanOf(found.call));
      const name = found.declarationName!;
      const span = spanOf(found.call.getParentOrThrow());
      const previous = seen.get(name);
      if (previous) fail("TSK1020", span, [name], { related: [{ span: previous, message: "first declared here" }] });
      seen.set(name, span);
      kernels.push(...lowerKernelInstances(state, name, found.call as import("ts-morph").CallExpression, diagnostics));
    } catch (error) {
      if (error instanceof AlreadyReported) continue;
      if (!(error instanceof DiagnosticError)) throw error;
      diagnostics.push(error.diagnostic);
    }
  }
  return { module: { sourceFile: file.getFilePath(), kernels, helpers: state.helperOrder }, diagnostics };
}

interface KernelOptionsIR {
  block?: [BlockDimSpec, BlockDimSpec, BlockDimSpec];
  blockSpan?: Span;
  cluster?: [number, number, number];
  clusterSpan?: Span;
  specializations: Record<string, ConstValue>[];
  specializationsSpan?: Span;
  targets?: TargetName[];
  signature?: ManifestSignature;
  backwardSpan?: Span;
}

/**
 * A kernel, or for a kernel written over element types (`<T extends DType>`) one kernel per element type its
 * specializations name, each lowered with its type parameters bound (`typeArgs`) and given the specializations
 * that name those types.
 */
function lowerKernelInstances(state: ModuleState, name: string, call: import("ts-morph").CallExpression, diagnostics: Diagnostic[]): Kernel[] {
  const args = call.getArguments() as Expression[];
  const fnNode = args[args.length - 1];
  const declared = fnNode && (Node.isArrowFunction(fnNode) || Node.isFunctionExpression(fnNode)) ? fnNode.getTypeParameters() : [];
  const typeParams = declared.map((p) => p.getName());
  if (typeParams.length === 0) return [lowerKernel(state, name, call, diagnostics)];
  const bindings = typeBindings(args.length === 2 ? args[0]! : undefined, typeParams, name, spanOf(declared[0]!));
  const distinct = new Map<string, Map<string, ElementScalar>>();
  for (const binding of bindings) distinct.set(JSON.stringify([...binding]), binding);
  return [...distinct.values()].map((binding) => {
    const kernel = lowerKernel(state, name, call, diagnostics, binding);
    const key = JSON.stringify([...binding]);
    // Each instance builds the specializations that name its types (the type names taken out).
    const specializations = kernel.specializations.filter((_, index) => JSON.stringify([...bindings[index]!]) === key);
    return { ...kernel, specializations, typeArgs: binding };
  });
}

/** The element types each specialization gives the kernel's type parameters, in order (TSK1140, TSK1141). */
function typeBindings(optionsNode: Expression | undefined, typeParams: readonly string[], kernelName: string, span: Span): Map<string, ElementScalar>[] {
  const list = optionsNode && Node.isObjectLiteralExpression(optionsNode) ? optionsNode.getProperty("specializations") : undefined;
  const value = list && Node.isPropertyAssignment(list) ? list.getInitializer() : undefined;
  const example = `specializations: [{ ${typeParams[0]}: "f32" }, { ${typeParams[0]}: "bf16" }]`;
  if (!value || !Node.isArrayLiteralExpression(value) || value.getElements().length === 0) {
    return fail("TSK1140", span, [kernelName, typeParams.join(", ")], { notes: [`name the element types to build it for: \`${example}\``] });
  }
  return value.getElements().map((element) => {
    const binding = new Map<string, ElementScalar>();
    if (!Node.isObjectLiteralExpression(element)) return binding; // readOptions reports it
    for (const typeParam of typeParams) {
      const entry = element.getProperty(typeParam);
      const initializer = entry && Node.isPropertyAssignment(entry) ? entry.getInitializer() : undefined;
      if (!initializer) return fail("TSK1140", spanOf(element), [kernelName, typeParam], { notes: [`name the element types to build it for: \`${example}\``] });
      const type = Node.isStringLiteral(initializer) ? initializer.getLiteralValue() : undefined;
      if (type === undefined || !(elementScalars as readonly string[]).includes(type)) {
        return fail("TSK1141", spanOf(initializer), [initializer.getText(), typeParam, elementScalars.map((t) => `"${t}"`).join(", ")]);
      }
      binding.set(typeParam, type as ElementScalar);
    }
    return binding;
  });
}

function lowerKernel(state: ModuleState, name: string, call: import("ts-morph").CallExpression, diagnostics: Diagnostic[], typeArgs?: TypeArgs): Kernel {
  const args = call.getArguments() as Expression[];
  const fnNode = args[args.length - 1];
  if (args.length < 1 || args.length > 2 || !fnNode) {
    return fail("TSK2008", spanOf(call), ["kernel(...)", "an options object and a function", `${args.length} argument(s)`]);
  }
  if (!Node.isArrowFunction(fnNode) && !Node.isFunctionExpression(fnNode)) {
    return fail("TSK1003", spanOf(fnNode), [], { notes: ["the last argument of kernel(...) must be a function written in place"] });
  }
  const body = fnNode.getBody();
  if (!Node.isBlock(body)) return fail("TSK1001", spanOf(body), ["an expression-bodied kernel"], { notes: ["write the body in braces"] });
  if (fnNode.isAsync()) return fail("TSK1001", spanOf(fnNode), ["an async kernel"]);

  const scope = new Scope();
  const params = fnNode.getParameters().map((param) => lowerParam(param, scope, typeArgs));
  const options = args.length === 2 ? readOptions(args[0]!, params, name, new Set(typeArgs?.keys())) : { specializations: [] };

  const context: FunctionContext = { module: state, kind: "kernel", name, shared: [], locals: [], scope, loopDepth: 0, typeArgs };
  const statements = lowerBlock(context, body.getStatements(), diagnostics, true);
  return {
    kind: "kernel",
    name,
    sourceFile: call.getSourceFile().getFilePath(),
    params,
    shared: context.shared,
    locals: context.locals,
    body: statements,
    block: options.block,
    blockSpan: options.blockSpan,
    ...(options.cluster ? { cluster: options.cluster, clusterSpan: options.clusterSpan } : {}),
    specializations: options.specializations,
    specializationsSpan: options.specializationsSpan,
    targets: options.targets,
    ...(options.signature ? { signature: options.signature } : {}),
    ...(options.backwardSpan ? { backwardSpan: options.backwardSpan } : {}),
    constValues: new Map(),
    span: spanOf(call.getParentOrThrow()),
  };
}

function lowerParam(param: ParameterDeclaration, scope: Scope, typeArgs?: TypeArgs): KernelParam {
  const nameNode = param.getNameNode();
  if (!Node.isIdentifier(nameNode)) return fail("TSK1001", spanOf(nameNode), ["destructuring"]);
  const name = nameNode.getText();
  const span = spanOf(param);
  if (param.isRestParameter() || param.hasQuestionToken()) return fail("TSK1001", span, ["optional and rest parameters"]);
  const typeNode = param.getTypeNode();
  if (!typeNode) return fail("TSK1009", span, [name]);
  const type = resolveTypeNode(typeNode, typeArgs);
  if (!type) {
    return fail("TSK1008", spanOf(typeNode), [name, typeNode.getText()], {
      notes: typeNode.getKind() === SyntaxKind.NumberKeyword ? ["`number` is ambiguous in a kernel: write f32, i32 or u32"] : [],
    });
  }
  const init = param.getInitializer();
  switch (type.kind) {
    case "buffer": {
      if (init) fail("TSK1001", spanOf(init), ["a default value for a buffer parameter"]);
      const array = { kind: "array", name, elementType: type.elementType, space: "global", access: type.access, dims: [], span } as const;
      scope.declare(name, { kind: "array", array });
      return { kind: "buffer", array };
    }
    case "scalar": {
      if (init) fail("TSK1001", spanOf(init), ["a default value for a run-time parameter"], { notes: ["only Const<…> parameters take defaults"] });
      // A vector or struct parameter is passed in memory (a uniform buffer, the kernel's parameter space).
      if (isVector(type.type) && type.type.element === "bool") fail("TSK1159", spanOf(typeNode), [type.type, "a kernel parameter"], { notes: ["pass a vector of u32 (0 or 1), and compare it: ne(v, 0)"] });
      const variable = { kind: "variable", name, type: type.type, mutable: false, span: spanOf(nameNode) } as const;
      scope.declare(name, { kind: "variable", variable, why: "kernel parameters are read-only; copy it into a `let`" });
      return { kind: "scalar", variable };
    }
    case "const": {
      const defaultValue = init ? constantValue(init, type.type, name, "TSK1027") : undefined;
      scope.declare(name, { kind: "const", name, type: type.type });
      return { kind: "const", name, type: type.type, defaultValue, span };
    }
  }
}

/** A literal written in kernel options or as a constant's default: a (negated) number or true/false. */
function constantValue(node: Expression, type: ScalarType, name: string, notLiteral: "TSK1004" | "TSK1027" = "TSK1004"): ConstValue {
  if (Node.isTrueLiteral(node) || Node.isFalseLiteral(node)) {
    if (type !== "bool") fail("TSK2010", spanOf(node), [name, type, node.getText()]);
    return Node.isTrueLiteral(node);
  }
  let negate = false;
  let literal: Node = node;
  if (Node.isPrefixUnaryExpression(node) && node.getOperatorToken() === SyntaxKind.MinusToken) {
    negate = true;
    literal = node.getOperand();
  }
  if (!Node.isNumericLiteral(literal)) {
    return notLiteral === "TSK1027" ? fail("TSK1027", spanOf(node), [name]) : fail("TSK1004", spanOf(node), ["a constant must be a number or true/false literal"]);
  }
  const value = (negate ? -1 : 1) * literal.getLiteralValue();
  if (type === "bool") return fail("TSK2010", spanOf(node), [name, type, node.getText()]);
  const expr = makeLiteral(value, type, spanOf(node), node.getText());
  return expr.kind === "literal" ? expr.value : value;
}

/**
 * Parses a block-shape formula: numbers and names joined by `*` and `/` (left to right) with parentheses.
 * Returns undefined when the text is not such a formula; `checkName` reports unknown names.
 */
function parseBlockShape(text: string, checkName: (name: string) => void): BlockShapeExpr | undefined {
  const tokens = text.match(/\d+|[A-Za-z_$][\w$]*|[*/()]|\S/g) ?? [];
  let position = 0;
  const primary = (): BlockShapeExpr | undefined => {
    const token = tokens[position++];
    if (token === undefined) return undefined;
    if (/^\d+$/.test(token)) return Number(token);
    if (/^[A-Za-z_$]/.test(token)) {
      checkName(token);
      return token;
    }
    if (token !== "(") return undefined;
    const inner = product();
    return tokens[position++] === ")" ? inner : undefined;
  };
  const product = (): BlockShapeExpr | undefined => {
    let left = primary();
    while (left !== undefined && (tokens[position] === "*" || tokens[position] === "/")) {
      const op = tokens[position++] as "*" | "/";
      const right = primary();
      left = right === undefined ? undefined : { op, left, right };
    }
    return left;
  };
  const formula = product();
  return position === tokens.length ? formula : undefined;
}

/**
 * The `targets` option: target names as the command line spells them (`--target cuda,wgsl,js`), each once.
 * Read literally, like the other options, because the driver decides from it which targets build the kernel.
 */
function readTargets(value: Expression, kernelName: string): TargetName[] {
  const example = 'targets: ["cuda", "js"]';
  const found = (node: Node) => {
    const text = node.getText().replace(/\s+/g, " ");
    return `found \`${text.length > 40 ? `${text.slice(0, 37)}...` : text}\``;
  };
  if (!Node.isArrayLiteralExpression(value)) return fail("TSK1090", spanOf(value), [found(value)], { notes: [`write, for example, \`${example}\``] });
  const elements = value.getElements();
  if (elements.length === 0) {
    return fail("TSK1093", spanOf(value), [kernelName], { notes: ["leave the option out to build the kernel for every target a build asks for"] });
  }
  const names: TargetName[] = [];
  const spans = new Map<string, Span>();
  for (const element of elements) {
    if (!Node.isStringLiteral(element)) return fail("TSK1090", spanOf(element), [found(element)], { notes: [`write, for example, \`${example}\``] });
    const name = element.getLiteralValue();
    if (!(targetNames as readonly string[]).includes(name)) {
      // The runtime's backend names are the likeliest slip: say which target each one runs.
      const backend = ({ webgpu: "wgsl", cpu: "js" } as Record<string, string>)[name];
      return fail("TSK1091", spanOf(element), [name, kernelName, targetNames.join(", ")], {
        notes: backend ? [`the ${name} backend runs the ${backend} target: write "${backend}"`] : [],
      });
    }
    const first = spans.get(name);
    if (first) return fail("TSK1092", spanOf(element), [name, kernelName], { related: [{ span: first, message: "first listed here" }] });
    spans.set(name, spanOf(element));
    names.push(name as TargetName);
  }
  return names;
}

function readOptions(node: Expression, params: readonly KernelParam[], kernelName: string, typeParams: ReadonlySet<string> = new Set()): KernelOptionsIR {
  if (!Node.isObjectLiteralExpression(node)) return fail("TSK1004", spanOf(node), ["expected an object literal"]);
  const constParams = new Map(params.flatMap((p) => (p.kind === "const" ? [[p.name, p] as const] : [])));
  const options: KernelOptionsIR = { specializations: [] };
  // The launch declaration (signature.ts) is read once every option is known: it needs the block.
  const signatureNodes: SignatureNodes = {};
  for (const property of node.getProperties()) {
    if (!Node.isPropertyAssignment(property)) return fail("TSK1004", spanOf(property), ["write each option as `name: value`"]);
    const key = property.getName();
    const value = property.getInitializerOrThrow();
    if (key === "block") {
      if (!Node.isArrayLiteralExpression(value) || value.getElements().length < 1 || value.getElements().length > 3) {
        return fail("TSK1004", spanOf(value), ["block is an array of 1 to 3 numbers or constant names"]);
      }
      const dims: BlockDimSpec[] = value.getElements().map((element) => {
        if (Node.isNumericLiteral(element)) return element.getLiteralValue();
        if (Node.isStringLiteral(element)) {
          // A constant's name or a formula of names and numbers: "TILE", "BS * BS", "BM * BN / (TM * TN)".
          const text = element.getLiteralValue();
          const formula = parseBlockShape(text, (name) => {
            const param = constParams.get(name);
            if (!param) return fail("TSK1022", spanOf(element), [name, "the block shape"]);
            if (param.type !== "i32" && param.type !== "u32") fail("TSK1004", spanOf(element), [`'${name}' must be an integer constant`]);
          });
          if (formula === undefined) return fail("TSK1004", spanOf(element), [`cannot read the block entry "${text}": write numbers and constant names joined by *, / and parentheses`]);
          return { formula, text };
        }
        return fail("TSK1004", spanOf(element), ["block entries are numbers, or formulas of Const parameters in quotes (\"TILE\", \"BS * BS\", \"BM * BN / (TM * TN)\")"]);
      });
      while (dims.length < 3) dims.push(1);
      options.block = dims as [BlockDimSpec, BlockDimSpec, BlockDimSpec];
      options.blockSpan = spanOf(value);
    } else if (key === "specializations") {
      if (!Node.isArrayLiteralExpression(value)) return fail("TSK1004", spanOf(value), ["specializations is an array of objects"]);
      options.specializationsSpan = spanOf(value);
      for (const element of value.getElements()) {
        if (!Node.isObjectLiteralExpression(element)) return fail("TSK1004", spanOf(element), ["each specialization is an object literal"]);
        const values: Record<string, ConstValue> = {};
        for (const entry of element.getProperties()) {
          if (!Node.isPropertyAssignment(entry)) return fail("TSK1004", spanOf(entry), ["write each value as `NAME: value`"]);
          // A type parameter's element type chose the instance (lowerKernelInstances): it is not a constant.
          if (typeParams.has(entry.getName())) continue;
          const param = constParams.get(entry.getName());
          if (!param) return fail("TSK1022", spanOf(entry.getNameNode()), [entry.getName(), "the specialization"]);
          values[entry.getName()] = constantValue(entry.getInitializerOrThrow(), param.type, entry.getName());
        }
        options.specializations.push(values);
      }
    } else if (key === "cluster") {
      // Blocks launched together (sm_90 thread block clusters): 1 to 3 positive integers, at most 8 blocks in all
      // (the size every sm_90 GPU runs without asking for more).
      const elements = Node.isArrayLiteralExpression(value) ? value.getElements() : [];
      const dims = elements.map((element) => (Node.isNumericLiteral(element) ? element.getLiteralValue() : Number.NaN));
      if (elements.length < 1 || elements.length > 3 || dims.some((d) => !Number.isInteger(d) || d < 1) || dims.reduce((a, b) => a * b, 1) > 8) {
        return fail("TSK1004", spanOf(value), ["cluster is an array of 1 to 3 positive integers of at most 8 blocks in all, as in `cluster: [2]`"]);
      }
      while (dims.length < 3) dims.push(1);
      options.cluster = dims as [number, number, number];
      options.clusterSpan = spanOf(value);
    } else if (key === "targets") {
      options.targets = readTargets(value, kernelName);
    } else if (key === "tensors" || key === "grid" || key === "requires" || key === "backward") {
      signatureNodes[key] = value;
    } else {
      return fail("TSK1004", spanOf(property), [`unknown option '${key}' (the options are block, cluster, specializations, targets, tensors, grid, requires and backward)`]);
    }
  }
  const declared = readSignature(signatureNodes, params, kernelName, options.block !== undefined);
  if (declared) {
    options.signature = declared.signature;
    options.backwardSpan = declared.backwardSpan;
  }
  return options;
}

