/**
 * The PyTorch module of one kernel file (`tskernel build --target torch`): for every kernel that declares its
 * launch (the options `tensors` and `grid`), a `torch.library.custom_op` whose implementation checks the
 * tensors, allocates the outputs and launches the kernel through the runtime beside it (tskernel_torch.py),
 * a fake implementation that gives torch.compile the outputs' shapes, and for a kernel with a `backward`
 * kernel the `register_autograd` pairing. It is printed from the manifest's entries of the file, which hold
 * everything a launch needs (parameters, block, dynamic shared memory, functions, cubin and PTX files, the
 * declaration), rather than from IR: it is host glue, like the `.cuh` launchers, and reads what they read.
 * The grid and requirements become Python functions of the sizes per specialization (formula.ts).
 *
 * A kernel whose specializations name several element types (`T: "f32"`, `T: "bf16"`) is one operator: its
 * specializations are grouped by the types of their parameters into builds (one `_rt.Kernel` each, in the
 * order of their first specialization), and `_rt.Dispatch` sends a call to the build whose input tensors'
 * types are the arguments' dtypes. A kernel whose builds the dtypes cannot tell apart, or whose backward kernel
 * lacks a build for the forward's types, gets a diagnostic (TSK4016, TSK4017) and no operator.
 */

import { makeDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import type { ManifestKernel, ManifestParam, ManifestSignature, ManifestTensor } from "../lang/manifest.ts";
import { pythonFormula } from "./formula.ts";
import { Writer } from "./writer.ts";

export interface TorchModuleInput {
  /** The kernel file, as the manifest's `source` names it. */
  readonly displayPath: string;
  /** The Python module's name (the file's stem, made an identifier). */
  readonly moduleName: string;
  /** The manifest's entries of this file, in manifest order. */
  readonly kernels: readonly ManifestKernel[];
  /** Where the kernels that cannot be operators are reported (TSK4016, TSK4017); the module leaves them out. */
  readonly diagnostics?: Diagnostic[];
}

const pythonKeywords = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(" "),
);
/** Names the generated code uses itself, which a parameter or operator must not take. */
const taken = new Set(["torch", "Tensor", "ctx", "grads", "inputs", "output"]);

/** A TypeScript identifier as a Python one: `$` is not allowed there, and keywords get a `_`. */
export function pythonName(name: string): string {
  const plain = name.replace(/\$/g, "_S");
  return pythonKeywords.has(plain) || taken.has(plain) ? `${plain}_` : plain;
}

/** camelCase to snake_case, the Python spelling of an operator: layerNormBackward → layer_norm_backward. */
export function snakeCase(name: string): string {
  return pythonName(
    name
      .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
      .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
      .toLowerCase(),
  );
}

/** The module name for a file stem: `layer-norm` → `layer_norm`. */
export function pythonModuleName(stem: string): string {
  const name = stem.replace(/[^A-Za-z0-9_]/g, "_");
  return pythonName(/^\d/.test(name) ? `_${name}` : name);
}

const scalarAnnotation: Readonly<Record<string, string>> = { f32: "float", f16: "float", bf16: "float", f64: "float", bool: "bool" };
const annotationOf = (type: string) => scalarAnnotation[type] ?? "int";

/** The specializations of one operator that take the same parameter types: one `_rt.Kernel`. */
interface Build {
  readonly specializations: readonly ManifestKernel[];
  /** The non-const parameters with this build's types. */
  readonly params: readonly ManifestParam[];
}

interface Operator {
  readonly kernel: string;
  readonly opName: string;
  /** One per combination of parameter types, in the order of their first specialization. */
  readonly builds: readonly Build[];
  readonly signature: ManifestSignature;
  readonly params: readonly ManifestParam[];
  readonly tensors: ReadonlyMap<string, ManifestTensor>;
  /** Parameter names that receive a size from the tensors' shapes (not arguments). */
  readonly sizes: ReadonlySet<string>;
  /** The operator's arguments, in parameter order: input and mutated tensors and scalar arguments. */
  readonly arguments: readonly ManifestParam[];
  readonly outputs: readonly ManifestTensor[];
  readonly zeroed: ReadonlySet<string>;
}

function operatorOf(specializations: readonly ManifestKernel[]): Operator {
  const first = specializations[0]!;
  const signature = first.signature!;
  const tensors = new Map(signature.tensors.map((t) => [t.param, t]));
  const inputSizes = new Set(
    signature.tensors.filter((t) => !t.output).flatMap((t) => t.dims.flatMap((d) => (typeof d === "number" ? [] : [typeof d === "string" ? d : d.rest]))),
  );
  const params = first.params.filter((p) => p.kind !== "const");
  const builds = new Map<string, { specializations: ManifestKernel[]; params: readonly ManifestParam[] }>();
  for (const spec of specializations) {
    const own = spec.params.filter((p) => p.kind !== "const");
    const key = own.map(typeOf).join(",");
    const build = builds.get(key) ?? { specializations: [], params: own };
    build.specializations.push(spec);
    builds.set(key, build);
  }
  const sizes = new Set(params.filter((p) => p.kind === "scalar" && inputSizes.has(p.name)).map((p) => p.name));
  return {
    kernel: first.name,
    opName: snakeCase(first.name),
    builds: [...builds.values()],
    signature,
    params,
    tensors,
    sizes,
    arguments: params.filter((p) => (p.kind === "buffer" ? !tensors.get(p.name)!.output : !sizes.has(p.name))),
    outputs: signature.tensors.filter((t) => t.output),
    // Atomics add into these outputs, so they start as zeros.
    zeroed: new Set(first.atomics?.buffers ?? []),
  };
}

/** A parameter's type: a buffer's element type, a scalar's type. */
const typeOf = (param: ManifestParam) => (param.kind === "buffer" ? param.elementType : param.type);

/** The name of the backward kernel's parameter for the gradient of `name` (`out` → `gradOut`). */
const gradientName = (name: string) => `grad${name.charAt(0).toUpperCase()}${name.slice(1)}`;

/** The element types of a build's input and mutated tensors (what its operator dispatches on), by name. */
function inputTypes(op: Operator, build: Build): Map<string, string> {
  const types = new Map<string, string>();
  for (const p of build.params) if (p.kind === "buffer" && !op.tensors.get(p.name)!.output) types.set(p.name, p.elementType);
  return types;
}

const typesText = (types: ReadonlyMap<string, string>) => [...types].map(([name, type]) => `${name}: ${type}`).join(", ") || "no input tensors";

/** Why the operator cannot pick its builds by the dtypes of its tensors, or undefined when it can. */
function dispatchProblem(op: Operator): string | undefined {
  if (op.builds.length < 2) return undefined;
  const seen = new Map<string, Build>();
  for (const build of op.builds) {
    const key = typesText(inputTypes(op, build));
    const earlier = seen.get(key);
    if (earlier) {
      const a = earlier.specializations[0]!.outputs.cuda!.function;
      const b = build.specializations[0]!.outputs.cuda!.function;
      const differ = build.params.filter((p, i) => typeOf(p) !== typeOf(earlier.params[i]!)).map((p) => `'${p.name}'`);
      return `${a} and ${b} take the same input tensor types (${key}) and differ only in the type of ${differ.join(", ")}, so the dtypes of a call cannot choose between them`;
    }
    seen.set(key, build);
  }
  // (Scalars cannot be of a kernel's type parameter, so the schema's Python type of each is the same in every build.)
  return undefined;
}

/**
 * For each of the forward's builds, the types its backward kernel must take: the tensors it shares with the
 * forward have the forward's types, and the gradient of an output has the output's type. The first of the
 * forward's builds that the backward has no build for, as [forward types, backward types], or undefined.
 */
function backwardProblem(forward: Operator, backward: Operator): [string, string] | undefined {
  for (const build of forward.builds) {
    const typeOfTensor = new Map(build.params.flatMap((p) => (p.kind === "buffer" ? [[p.name, p.elementType] as const] : [])));
    const wanted = new Map<string, string>();
    for (const p of backward.params) {
      if (p.kind !== "buffer" || backward.tensors.get(p.name)!.output) continue;
      const output = forward.outputs.find((t) => gradientName(t.param) === p.name);
      const type = typeOfTensor.get(p.name) ?? (output ? typeOfTensor.get(output.param) : undefined);
      if (type !== undefined) wanted.set(p.name, type);
    }
    const matches = backward.builds.some((b) => {
      const have = inputTypes(backward, b);
      return [...wanted].every(([name, type]) => have.get(name) === type);
    });
    if (!matches) return [typesText(inputTypes(forward, build)), typesText(wanted)];
  }
  return undefined;
}

function roleOf(op: Operator, param: ManifestParam & { kind: "buffer" }): string {
  const tensor = op.tensors.get(param.name)!;
  if (tensor.output) return op.zeroed.has(param.name) ? "zeroed output" : "output";
  return param.access === "read_write" ? "mutated" : "input";
}

const dimText = (d: ManifestTensor["dims"][number]) => (typeof d === "number" ? String(d) : typeof d === "string" ? d : `...${d.rest}`);
const shapeText = (t: ManifestTensor) => `[${t.dims.map(dimText).join(", ")}]`;
/** Python's blocks: the body one level deeper, and no closing line. */
function block(out: Writer, open: string, body: () => void): void {
  out.line(open);
  indented(out, body);
}

function indented(out: Writer, body: () => void): void {
  out.indent();
  body();
  out.dedent();
}

const pythonTuple = (items: readonly string[]) => (items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`);

export function emitTorchModule(input: TorchModuleInput): string {
  const out = new Writer("    ");
  const byName = new Map<string, ManifestKernel[]>();
  for (const kernel of input.kernels) {
    const list = byName.get(kernel.name) ?? [];
    list.push(kernel);
    byName.set(kernel.name, list);
  }
  const declared = [...byName.values()].filter((list) => list[0]!.signature && list[0]!.outputs.cuda);
  const undeclared = [...byName.values()].filter((list) => !list[0]!.signature).map((list) => list[0]!.name);
  const diagnostics = input.diagnostics ?? [];
  let operators = declared.map(operatorOf).filter((op) => {
    const problem = dispatchProblem(op);
    if (problem) diagnostics.push(makeDiagnostic("TSK4016", undefined, [op.kernel, problem]));
    return !problem;
  });
  // A forward whose backward kernel cannot take one of its builds' types is left out with its diagnostic.
  operators = operators.filter((op) => {
    const backward = op.signature.backward && operators.find((o) => o.kernel === op.signature.backward);
    const problem = backward ? backwardProblem(op, backward) : undefined;
    if (backward && problem) diagnostics.push(makeDiagnostic("TSK4017", undefined, [op.kernel, problem[0], backward.kernel, problem[1]]));
    return !problem;
  });
  const namespace = `tskernel_${input.moduleName.replace(/^_+/, "")}`;
  const cubins = new Map<string, string>();
  const ptx = new Map<string, string>();
  for (const k of input.kernels) {
    const cuda = k.outputs.cuda;
    if (cuda?.cubin) cubins.set(cuda.cubin.arch, cuda.cubin.file);
    if (cuda?.ptx) ptx.set(cuda.ptx.arch, cuda.ptx.file);
  }

  out.line(`# Generated by tskernel from ${input.displayPath}. Do not edit: change the TypeScript and rebuild.`);
  out.line(`"""PyTorch operators for the kernels of ${input.displayPath} (torch.ops.${namespace}).`);
  out.line();
  out.line("Each operator checks its tensors (dtype, CUDA device, contiguity, the declared shapes), allocates its outputs and");
  out.line("launches its kernel on the tensors' GPU and PyTorch's current stream, from the cubin for the GPU's architecture or");
  out.line("else the PTX. They are torch.library custom operators with fake implementations (and gradients where the kernel");
  out.line("names a backward kernel), so torch.compile traces them without a graph break; an eager call on plain tensors");
  out.line("skips the dispatcher. Needs PyTorch 2.4 or later and tskernel_torch.py beside this file (docs/torch.md).");
  out.line();
  for (const op of operators) {
    const args = op.arguments.map((p) => pythonName(p.name)).join(", ");
    const results = op.outputs.map((t) => pythonName(t.param)).join(", ") || "None";
    const backward = op.signature.backward ? `  (gradients: ${snakeCase(op.signature.backward)})` : "";
    out.line(`    ${op.opName}(${args}) -> ${results}${backward}`);
  }
  if (undeclared.length > 0) {
    out.line();
    out.line(`Not operators (they declare no tensors and grid): ${undeclared.join(", ")}.`);
  }
  out.line('"""');
  out.line();
  out.line("import os as _os");
  if (operators.some((op) => op.outputs.length > 1)) out.line("import typing as _typing");
  out.line();
  out.line("import torch");
  out.line("from torch import Tensor");
  out.line();
  block(out, "try:", () => out.line("from . import tskernel_torch as _rt"));
  block(out, "except ImportError:", () => out.line("import tskernel_torch as _rt"));
  out.line();
  out.line("_rt.require_custom_ops(torch)");
  out.line();
  out.line("_images = _rt.Images(");
  indented(out, () => {
    out.line("_os.path.dirname(_os.path.abspath(__file__)),");
    out.line(`cubins={${[...cubins].map(([arch, file]) => `${JSON.stringify(arch)}: ${JSON.stringify(file)}`).join(", ")}},`);
    out.line(`ptx={${[...ptx].map(([arch, file]) => `${JSON.stringify(arch)}: ${JSON.stringify(file)}`).join(", ")}},`);
  });
  out.line(")");
  for (const op of operators) emitOperator(out, op, namespace, input.displayPath);
  const pairs = operators.filter((op) => op.signature.backward);
  for (const op of pairs) {
    const backward = operators.find((o) => o.kernel === op.signature.backward);
    if (backward) emitAutograd(out, op, backward);
  }
  out.line();
  out.line();
  out.line(`__all__ = [${operators.map((op) => JSON.stringify(op.opName)).join(", ")}]`);
  return out.toString();
}

function emitOperator(out: Writer, op: Operator, namespace: string, displayPath: string): void {
  const handle = `_kernel_${op.opName}`;
  out.line();
  out.line();
  out.line(`# ---- ${op.kernel} ----`);
  out.line();
  if (op.builds.length === 1) {
    out.line(`${handle} = _rt.Kernel(`);
    indented(out, () => emitKernel(out, op, op.builds[0]!, namespace));
    out.line(")");
  } else {
    // One kernel per combination of types; the dispatch picks one by the dtypes of the input tensors.
    out.line(`${handle} = _rt.Dispatch(`);
    indented(out, () => {
      out.line(`${JSON.stringify(`${namespace}::${op.opName}`)},`);
      out.line("(");
      indented(out, () => {
        for (const build of op.builds) {
          out.line("_rt.Kernel(");
          indented(out, () => emitKernel(out, op, build, namespace));
          out.line("),");
        }
      });
      out.line("),");
    });
    out.line(")");
  }
  out.line();
  out.line();
  const mutated = op.arguments.filter((p) => p.kind === "buffer" && p.access === "read_write").map((p) => JSON.stringify(pythonName(p.name)));
  const args = op.arguments.map((p) => `${pythonName(p.name)}: ${p.kind === "buffer" ? "Tensor" : annotationOf(p.type)}`).join(", ");
  const names = op.arguments.map((p) => pythonName(p.name)).join(", ");
  const tensors = op.arguments.filter((p) => p.kind === "buffer").map((p) => pythonName(p.name)).join(", ");
  const returns = op.outputs.length === 0 ? "None" : op.outputs.length === 1 ? "Tensor" : `_typing.Tuple[${op.outputs.map(() => "Tensor").join(", ")}]`;
  const describe = (p: ManifestParam) => {
    // The parameter's types over the builds: "f32 | bf16" for an operator that dispatches.
    const types = [...new Set(op.builds.map((b) => typeOf(b.params.find((q) => q.name === p.name)!)))].join(" | ");
    if (p.kind !== "buffer") return `${p.name} (${types})`;
    return `${p.name} ${shapeText(op.tensors.get(p.name)!)} (${types}${p.access === "read_write" ? ", written in place" : ""})`;
  };
  const results = op.outputs.map((t) => `${t.param} ${shapeText(t)}`).join(", ") || "nothing";
  block(out, `def ${op.opName}(${args}) -> ${returns}:`, () => {
    out.line(`"""${op.kernel} of ${displayPath}: ${op.arguments.map(describe).join(", ")} -> ${results}.`);
    out.line();
    out.line(`The operator torch.ops.${namespace}.${op.opName}; an eager call on plain tensors launches directly (_rt.route)."""`);
    out.line(`route = _rt.route(${tensors})`);
    block(out, "if route is _rt.LAUNCH:", () => out.line(`return ${handle}.launch(${names})`));
    if (op.signature.backward) block(out, "if route is _rt.AUTOGRAD:", () => out.line(`return _${op.opName}_autograd(${names})`));
    out.line(`return _${op.opName}_op(${names})`);
  });
  out.line();
  out.line();
  out.line(`@torch.library.custom_op(${JSON.stringify(`${namespace}::${op.opName}`)}, mutates_args=${pythonTuple(mutated).replace("(,)", "()")})`);
  block(out, `def _${op.opName}_op(${args}) -> ${returns}:`, () => out.line(`return ${handle}.launch(${names})`));
  out.line();
  out.line();
  out.line(`@_${op.opName}_op.register_fake`);
  block(out, `def _(${names}):`, () => out.line(`return ${handle}.fake(${names})`));
}

/** The arguments of one `_rt.Kernel`: the parameters with this build's types, and its specializations. */
function emitKernel(out: Writer, op: Operator, build: Build, namespace: string): void {
  out.line("_images,");
  out.line(`${JSON.stringify(`${namespace}::${op.opName}`)},`);
  out.line("params=(");
  indented(out, () => {
    for (const p of build.params) {
      if (p.kind === "buffer") {
        const tensor = op.tensors.get(p.name)!;
        const dims = pythonTuple(tensor.dims.map((d) => (typeof d === "number" ? String(d) : JSON.stringify(dimText(d)))));
        const role = roleOf(op, p);
        out.line(`_rt.Tensor(${JSON.stringify(p.name)}, ${JSON.stringify(p.elementType)}, ${dims}${role === "input" ? "" : `, role=${JSON.stringify(role)}`}),`);
      } else {
        out.line(`_rt.${op.sizes.has(p.name) ? "Size" : "Scalar"}(${JSON.stringify(p.name)}, ${JSON.stringify(p.type)}),`);
      }
    }
  });
  out.line("),");
  out.line("specializations=(");
  indented(out, () => {
    for (const spec of build.specializations) {
      // The constants, without the element types of a kernel written over them (those are in the entry's name).
      const constants = Object.fromEntries(Object.entries(spec.specialization).filter((entry): entry is [string, number | boolean] => typeof entry[1] !== "string"));
      const block = spec.block!;
      out.line("_rt.Specialization(");
      indented(out, () => {
        out.line(`${JSON.stringify(spec.outputs.cuda!.function)},`);
        out.line(`{${Object.entries(constants).map(([k, v]) => `${JSON.stringify(k)}: ${typeof v === "boolean" ? (v ? "True" : "False") : v}`).join(", ")}},`);
        out.line(`block=(${block.join(", ")}),`);
        out.line(`shared_bytes=${spec.outputs.cuda!.dynamicSharedBytes},`);
        out.line(`grid=lambda s: (${op.signature.grid.map((g) => pythonFormula(g, constants)).join(", ")}),`);
        if (op.signature.requires.length > 0) {
          out.line("requires=(");
          indented(out, () => {
            for (const r of op.signature.requires) out.line(`(${JSON.stringify(r.text)}, lambda s: ${pythonFormula(r.formula, constants)}),`);
          });
          out.line("),");
        }
      });
      out.line("),");
    }
  });
  out.line("),");
}

function emitAutograd(out: Writer, forward: Operator, backward: Operator): void {
  const argumentIndex = new Map(forward.arguments.map((p, i) => [p.name, i]));
  const outputIndex = new Map(forward.outputs.map((t, i) => [t.param, i]));
  // What the backward kernel reads of the forward call: tensors (saved) and scalars (kept on ctx).
  const saved = backward.arguments.filter((p) => p.kind === "buffer" && forward.tensors.has(p.name)).map((p) => p.name);
  const scalars = backward.arguments.filter((p) => p.kind === "scalar").map((p) => p.name);
  const base = `_${forward.opName}`;
  out.line();
  out.line();
  out.line(`# ---- ${forward.kernel}'s gradients: ${backward.kernel} ----`);
  out.line();
  out.line();
  block(out, `def ${base}_setup_context(ctx, inputs, output):`, () => {
    const source = (name: string) => {
      const index = argumentIndex.get(name);
      if (index !== undefined) return `inputs[${index}]`;
      return forward.outputs.length === 1 ? "output" : `output[${outputIndex.get(name)}]`;
    };
    out.line(`ctx.save_for_backward(${saved.map(source).join(", ")})${saved.length > 0 ? `  # ${saved.join(", ")}` : ""}`);
    if (scalars.length > 0) out.line(`ctx.scalars = {${scalars.map((name) => `${JSON.stringify(name)}: inputs[${argumentIndex.get(name)}]`).join(", ")}}`);
  });
  out.line();
  out.line();
  block(out, `def ${base}_gradients(ctx, *grads):`, () => {
    if (saved.length > 0) out.line(`${saved.map(pythonName).join(", ")}${saved.length === 1 ? "," : ""} = ctx.saved_tensors`);
    const args = backward.arguments.map((p) => {
      if (p.kind === "scalar") return `ctx.scalars[${JSON.stringify(p.name)}]`;
      if (forward.tensors.has(p.name)) return pythonName(p.name);
      const of = forward.outputs.findIndex((t) => gradientName(t.param) === p.name);
      return `_rt.contiguous(grads[${of}])`;
    });
    const results = backward.outputs.map((t) => pythonName(t.param));
    out.line(`${results.join(", ")} = ${backward.opName}(${args.join(", ")})`);
    const returned = forward.arguments.map((p) => {
      const produced = backward.outputs.find((t) => t.param === gradientName(p.name));
      return produced ? pythonName(produced.param) : "None";
    });
    out.line(`return ${returned.join(", ")}${returned.length === 1 ? "," : ""}`);
  });
  out.line();
  out.line();
  out.line(`_${forward.opName}_op.register_autograd(${base}_gradients, setup_context=${base}_setup_context)`);
  out.line(`_${forward.opName}_autograd = _rt.eager_autograd(_kernel_${forward.opName}.launch, ${base}_setup_context, ${base}_gradients)`);
}
