/**
 * The PyTorch module of one kernel file (`tskernel build --target torch`): for every kernel that declares its
 * launch (the options `tensors` and `grid`), a `torch.library.custom_op` whose implementation checks the
 * tensors, allocates the outputs and launches the kernel through the runtime beside it (tskernel_torch.py),
 * a fake implementation that gives torch.compile the outputs' shapes, and for a kernel with a `backward`
 * kernel the `register_autograd` pairing. It is printed from the manifest's entries of the file, which hold
 * everything a launch needs (parameters, block, dynamic shared memory, functions, cubin and PTX files, the
 * declaration), rather than from IR: it is host glue, like the `.cuh` launchers, and reads what they read.
 * The grid and requirements become Python functions of the sizes per specialization (formula.ts).
 */

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

interface Operator {
  readonly kernel: string;
  readonly opName: string;
  readonly specializations: readonly ManifestKernel[];
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
  const sizes = new Set(params.filter((p) => p.kind === "scalar" && inputSizes.has(p.name)).map((p) => p.name));
  return {
    kernel: first.name,
    opName: snakeCase(first.name),
    specializations,
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
  const operators = declared.map(operatorOf);
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
  out.line(`${handle} = _rt.Kernel(`);
  indented(out, () => {
    out.line("_images,");
    out.line(`${JSON.stringify(`${namespace}::${op.opName}`)},`);
    out.line("params=(");
    indented(out, () => {
      for (const p of op.params) {
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
      for (const spec of op.specializations) {
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
  });
  out.line(")");
  out.line();
  out.line();
  const mutated = op.arguments.filter((p) => p.kind === "buffer" && p.access === "read_write").map((p) => JSON.stringify(pythonName(p.name)));
  const args = op.arguments.map((p) => `${pythonName(p.name)}: ${p.kind === "buffer" ? "Tensor" : annotationOf(p.type)}`).join(", ");
  const names = op.arguments.map((p) => pythonName(p.name)).join(", ");
  const tensors = op.arguments.filter((p) => p.kind === "buffer").map((p) => pythonName(p.name)).join(", ");
  const returns = op.outputs.length === 0 ? "None" : op.outputs.length === 1 ? "Tensor" : `_typing.Tuple[${op.outputs.map(() => "Tensor").join(", ")}]`;
  const describe = (p: ManifestParam) => {
    if (p.kind !== "buffer") return `${p.name} (${p.type})`;
    return `${p.name} ${shapeText(op.tensors.get(p.name)!)} (${p.elementType}${p.access === "read_write" ? ", written in place" : ""})`;
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

function emitAutograd(out: Writer, forward: Operator, backward: Operator): void {
  const gradient = (name: string) => `grad${name.charAt(0).toUpperCase()}${name.slice(1)}`;
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
      const of = forward.outputs.findIndex((t) => gradient(t.param) === p.name);
      return `_rt.contiguous(grads[${of}])`;
    });
    const results = backward.outputs.map((t) => pythonName(t.param));
    out.line(`${results.join(", ")} = ${backward.opName}(${args.join(", ")})`);
    const returned = forward.arguments.map((p) => {
      const produced = backward.outputs.find((t) => t.param === gradient(p.name));
      return produced ? pythonName(produced.param) : "None";
    });
    out.line(`return ${returned.join(", ")}${returned.length === 1 ? "," : ""}`);
  });
  out.line();
  out.line();
  out.line(`_${forward.opName}_op.register_autograd(${base}_gradients, setup_context=${base}_setup_context)`);
  out.line(`_${forward.opName}_autograd = _rt.eager_autograd(_kernel_${forward.opName}.launch, ${base}_setup_context, ${base}_gradients)`);
}
