/**
 * Launches from a kernel's declaration (its options `tensors`, `grid`, `requires`; the manifest's
 * `signature`): given each buffer with its shape and the scalar arguments, `declaredLaunch` binds the sizes
 * from the shapes as the PyTorch module does (a `...name` is the product of the dimensions it covers), checks
 * that the shapes agree and the buffers hold them, picks the first specialization of the library whose
 * requirements hold, and returns it with its grid and arguments in parameter order. The formulas are
 * evaluated here with C's integer arithmetic, the same as the compiler folds them and the Python module and
 * the `.cuh` grid functions compute them. No compiler and no Node: the browser entry may use it too.
 */

import type { ManifestFormula, ManifestKernel } from "../compiler/lang/manifest.ts";
import type { DeviceBuffer, KernelArg, KernelHandle } from "./device.ts";
import { LaunchError } from "./launch-check.ts";

/** An integer formula's value for these names (sizes and constants); bools count as 1 and 0. */
export function evaluateFormula(formula: ManifestFormula, names: Readonly<Record<string, number | boolean>>): number {
  if (typeof formula === "number") return formula;
  if (typeof formula === "string") {
    const value = names[formula];
    if (value === undefined) throw new Error(`tskernel: the formula names '${formula}', which has no value here`);
    return typeof value === "boolean" ? (value ? 1 : 0) : value;
  }
  const [op, ...operands] = formula;
  const [a = 0, b = 0] = operands.map((operand) => evaluateFormula(operand, names));
  const divide = () => {
    if (b === 0) throw new Error("tskernel: a formula of the declared launch divides by zero");
    return Math.trunc(a / b);
  };
  switch (op) {
    case "neg":
      return -a;
    case "!":
      return a === 0 ? 1 : 0;
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return divide();
    case "%":
      return a - b * divide();
    case "cdiv":
      return b === 0 ? divide() : Math.ceil(a / b);
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
    case "&&":
      return a !== 0 && b !== 0 ? 1 : 0;
    case "||":
      return a !== 0 || b !== 0 ? 1 : 0;
    default:
      throw new Error(`tskernel: unknown formula operation '${op}'`);
  }
}

export interface DeclaredTensor {
  readonly buffer: DeviceBuffer;
  /** The tensor's shape, as its declaration names the dimensions. */
  readonly shape: readonly number[];
}

export interface DeclaredLaunch {
  readonly kernel: KernelHandle;
  readonly grid: [number, number, number];
  readonly args: KernelArg[];
  /** The sizes bound from the shapes, and the integer scalar arguments. */
  readonly sizes: Readonly<Record<string, number>>;
}

/**
 * The specialization (of `kernels`, one kernel's handles in the order to try them), grid and arguments that
 * launch a declared kernel on these tensors (every buffer parameter, by name) and scalar arguments (the scalar
 * parameters that no shape gives, by name).
 */
export function declaredLaunch(kernels: readonly KernelHandle[], tensors: Readonly<Record<string, DeclaredTensor>>, scalars: Readonly<Record<string, number | boolean>> = {}): DeclaredLaunch {
  const first = kernels[0];
  if (!first) throw new Error("tskernel: declaredLaunch needs the kernel's specializations");
  const description: ManifestKernel = first.description;
  const name = description.name;
  const signature = description.signature;
  if (!signature) throw new LaunchError(description.entryName, "the kernel declares no tensors and grid (its options tensors and grid)");
  const sizes: Record<string, number> = {};
  const sources: Record<string, string> = {};
  for (const tensor of signature.tensors) {
    const given = tensors[tensor.param];
    if (!given) throw new LaunchError(name, `missing tensor for parameter '${tensor.param}'`);
    const shape = given.shape;
    const rest = tensor.dims.findIndex((d) => typeof d === "object");
    const fixed = tensor.dims.length - (rest >= 0 ? 1 : 0);
    if (rest < 0 ? shape.length !== fixed : shape.length < fixed) {
      throw new LaunchError(name, `parameter '${tensor.param}' must have ${rest < 0 ? fixed : `${fixed} or more`} dimension(s), got shape [${shape.join(", ")}]`);
    }
    const extra = shape.length - fixed;
    let position = 0;
    for (const dim of tensor.dims) {
      let value: number;
      let size: string;
      if (typeof dim === "object") {
        value = shape.slice(position, position + extra).reduce((p, v) => p * v, 1);
        position += extra;
        size = dim.rest;
      } else {
        value = shape[position++]!;
        if (typeof dim === "number") {
          if (value !== dim) throw new LaunchError(name, `parameter '${tensor.param}' must have ${dim} there, got shape [${shape.join(", ")}]`);
          continue;
        }
        size = dim;
      }
      if (size in sizes && sizes[size] !== value) {
        throw new LaunchError(name, `parameter '${tensor.param}' gives size ${size} = ${value}, but '${sources[size]}' gave ${size} = ${sizes[size]}`);
      }
      sizes[size] = value;
      sources[size] ??= tensor.param;
    }
    const elements = shape.reduce((p, v) => p * v, 1);
    if (given.buffer.length < elements) throw new LaunchError(name, `parameter '${tensor.param}' has ${given.buffer.length} elements, its shape [${shape.join(", ")}] needs ${elements}`);
  }
  for (const param of description.params) {
    if (param.kind === "scalar" && !(param.name in sizes) && (param.type === "i32" || param.type === "u32")) {
      const value = scalars[param.name];
      if (typeof value === "number") sizes[param.name] = value;
    }
  }
  for (const kernel of kernels) {
    // The constants (a kernel written over element types also names them: those are no sizes).
    const constants = Object.fromEntries(Object.entries(kernel.description.specialization).filter((entry): entry is [string, number | boolean] => typeof entry[1] !== "string"));
    const names = { ...sizes, ...constants };
    const constantsAgree = Object.entries(constants).every(([k, v]) => !(k in sizes) || sizes[k] === v);
    if (!constantsAgree || !signature.requires.every((r) => evaluateFormula(r.formula, names) !== 0)) continue;
    const grid = signature.grid.map((g) => evaluateFormula(g, names)) as [number, number, number];
    const args = description.params.flatMap((param): KernelArg[] => {
      if (param.kind === "buffer") return [tensors[param.name]!.buffer];
      if (param.kind === "const") return [];
      if (param.name in sizes && !(param.name in scalars)) return [sizes[param.name]!];
      const value = scalars[param.name];
      if (value === undefined) throw new LaunchError(name, `missing argument for parameter '${param.name}'`);
      return [value];
    });
    return { kernel, grid, args, sizes };
  }
  const shown = Object.entries(sizes).map(([k, v]) => `${k} = ${v}`).join(", ");
  throw new LaunchError(name, `no specialization takes ${shown} (requires: ${signature.requires.map((r) => r.text).join("; ")})`);
}
