/**
 * The WGSL backend: prints a validated, specialized, legalized module as one WGSL module with an entry
 * point per kernel specialization. Resources follow `wgslLayout` (wgsl-layout.ts): each buffer parameter
 * is a storage binding in parameter order, the scalar parameters share one uniform struct bound after the
 * buffers, all in group 0. Module-scope names (bindings, workgroup arrays, block-size overrides) carry the
 * entry point's name as a prefix, since one module holds several kernels. A fixed block shape is the
 * `@workgroup_size`; otherwise the size comes from pipeline-overridable constants the runtime sets. A buffer
 * that the kernel only accesses four elements at a time (`load4`/`store4`, which legalize keeps for such
 * buffers) is bound as `array<vec4<T>>`, and a workgroup array accessed only that way is declared with
 * `vec4<T>` elements, so that those accesses are single 16-byte loads and stores. An array that atomics
 * touch has `atomic<i32>` or `atomic<u32>` elements (f32 arrays hold their bits in `atomic<u32>`) and every
 * access to it is an atomic function; WGSL has no float atomics, so f32 `atomicAdd` is a compare-exchange
 * loop on the bits, and it has only a weak compare-exchange, so `atomicCompareExchange` retries until the
 * outcome is not a spurious failure. Subgroup operations are WGSL's own, under `enable subgroups;`.
 */

import { isFloat, isInteger, type ElementScalar, type ElementType, type ScalarType, type StructType, type Type } from "../ir/types.ts";
import { typesUsed } from "../ir/types-used.ts";
import { structsOf, swizzleName } from "../ir/vectors.ts";
import { featuresRequired } from "../validate/target-types.ts";
import { elementsPerWord, isPacked, packedVectorArrays, packWord, storedPackedArrays, packedFunctions, packedStore, roundBf16, unpackFunction, unpackLane, wordShift, wrapNarrow } from "./wgsl-packed.ts";
import { uniformMemberAttributes, WgslTypes } from "./wgsl-types.ts";
import { valueTypeOf, type Access, type ArrayRef, type AtomicStmt, type BuiltinExpr, type CollectiveStmt, type Expr, type HelperFunction, type MemoryOperationStmt, type Span, type Stmt, type SubgroupBuiltinExpr, type Variable } from "../ir/ir.ts";
import { atomicArrays, walkExpr, walkStmts, exprsOf, usesSubgroups } from "../ir/rewrite.ts";
import { vectorOnlyArrays } from "../passes/legalize.ts";
import { binaryCall, ExprPrinter, f32Digits, type Printed } from "./expr-printer.ts";
import { runtimeFunctions, runtimeLeaves } from "./wgsl-constants.ts";
import { Namer } from "./namer.ts";
import { targets, wgslAtomics, wgslSpelling } from "./targets.ts";
import { wgslLayout } from "./wgsl-layout.ts";
import { Writer } from "./writer.ts";
import type { KernelUnit } from "./unit.ts";
import type { SourceLocator } from "../diagnostics/span.ts";
import { printCStatements } from "./c-statements.ts";

export type WgslKernelUnit = KernelUnit;

export interface WgslModuleInput {
  readonly displayPath: string;
  /** Where each span lies, to map each WGSL line back to `file:line:column` of the TypeScript. */
  readonly locator: SourceLocator;
  /** Helpers in dependency order, each with its body prepared for this target. */
  readonly helpers: readonly { readonly helper: HelperFunction; readonly body: readonly Stmt[] }[];
  readonly kernels: readonly WgslKernelUnit[];
}

export interface WgslEntryInfo {
  readonly entryPoint: string;
  /** Names of the overridable constants that set the workgroup size, when the kernel does not fix it. */
  readonly workgroupSizeOverrides?: readonly [string, string, string];
}

export interface WgslOutput {
  readonly source: string;
  /** WebGPU features the module needs, for every entry point in it (`shader-f16` where a kernel uses f16). */
  readonly features: readonly string[];
  /** For each line of `source` (index = line − 1), the TypeScript `file:line:column` it came from. */
  readonly lineSources: readonly (string | undefined)[];
  readonly entries: readonly WgslEntryInfo[];
}

const types = wgslSpelling.types;
const elementTypes = wgslSpelling.elementTypes;

/** Entry-point inputs for each builtin the kernel reads. */
const builtinInputs = {
  threadIdx: { name: "local_id", attribute: "local_invocation_id" },
  blockIdx: { name: "group_id", attribute: "workgroup_id" },
  gridDim: { name: "num_groups", attribute: "num_workgroups" },
} as const;

const subgroupInputs = {
  subgroupSize: { name: "sg_size", attribute: "subgroup_size" },
  subgroupInvocationId: { name: "sg_lane", attribute: "subgroup_invocation_id" },
} as const;

export function emitWgsl(input: WgslModuleInput): WgslOutput {
  const out = new Writer();
  // The builtin functions the module calls may not be shadowed by its names: the scalar ones always, and
  // WGSL's vector functions (`dot`, `length`, …) where the module uses them.
  const moduleNames = new Namer(new Set([...wgslSpelling.reserved, ...calledFunctions([...input.kernels.map((unit) => unit.kernel.body), ...input.helpers.map((h) => h.body)])]));
  for (const unit of input.kernels) moduleNames.name(unit, unit.entryName);
  for (const { helper } of input.helpers) moduleNames.name(helper, helper.name);
  const entries: WgslEntryInfo[] = [];
  const locate = (span: Span) => input.locator.location(span);

  out.line(`// Generated by tskernel from ${input.displayPath}. Do not edit: change the TypeScript and rebuild.`);
  const used = new Set(input.kernels.flatMap((unit) => typesUsed(unit.kernel).map((use) => use.type)));
  // f16 is WGSL's own under the extension (adapters with shader-f16; the runtime asks for it).
  if (used.has("f16")) out.line("enable f16;");
  if (input.kernels.some((unit) => usesSubgroups(unit.kernel.body))) out.line("enable subgroups;");
  const packed = packedFunctions(used);
  if (packed.length > 0) {
    out.line();
    for (const line of packed) out.line(line);
  }
  if ([...input.kernels.map((unit) => unit.kernel.body), ...input.helpers.map((h) => h.body)].some(convertsFloatToInt)) {
    out.line();
    for (const line of floatToIntFunctions) out.line(line);
  }
  const runtime = new Map<object, Set<Expr>>([
    ...input.helpers.map(({ helper, body }) => [helper, runtimeLeaves(body)] as const),
    ...input.kernels.map((unit) => [unit, runtimeLeaves(unit.kernel.body)] as const),
  ]);
  const runtimeTypes = new Set([...runtime.values()].flatMap((leaves) => [...leaves].map((leaf) => leaf.type as ScalarType)));
  if (runtimeTypes.size > 0) {
    out.line();
    for (const line of runtimeFunctions(runtimeTypes)) out.line(line);
  }

  // Structs, each after those it contains; then the uniform forms of the struct parameters that need one.
  const typeNames = new WgslTypes(moduleNames, () => new Namer(wgslSpelling.reserved));
  const structTypes = [
    ...input.kernels.flatMap((unit) => [...unit.kernel.params.flatMap((param) => (param.kind === "buffer" ? [param.array.elementType] : param.kind === "scalar" ? [param.variable.type] : [])), ...[...unit.kernel.shared, ...unit.kernel.locals].map((array) => array.elementType)]),
    ...input.helpers.flatMap(({ helper }) => [helper.returnType, ...helper.params.map((param) => param.type)]),
  ];
  const structs = structsOf(structTypes, [...input.kernels.map((unit) => unit.kernel.body), ...input.helpers.map((h) => h.body)]);
  const uniformStructs = input.kernels.flatMap((unit) => unit.kernel.params.flatMap((param) => (param.kind === "scalar" && typeof param.variable.type === "object" && param.variable.type.kind === "struct" ? [param.variable.type] : [])));
  const selected = new Set<StructType>();
  for (const body of [...input.kernels.map((unit) => unit.kernel.body), ...input.helpers.map((h) => h.body)]) {
    walkStmts(body, (stmt) => exprsOf(stmt).forEach((expr) => walkExpr(expr, (e) => e.kind === "select" && typeof e.type === "object" && e.type.kind === "struct" && selected.add(e.type))));
  }
  const declarations = typeNames.declarations(structs, uniformStructs, [...selected]);
  if (declarations.length > 0) {
    out.line();
    for (const line of declarations) out.line(line);
  }

  const printHelper = ({ helper, body }: (typeof input.helpers)[number], check?: { readonly name: string; readonly secondValue: boolean }) => {
    const names = moduleNames.child();
    const printer = makePrinter(names, moduleNames, new Map(), () => "", runtime.get(helper)!, typeNames, new Map(), new Set(), new Set(), check);
    const params = helper.params.map((param) => `${names.name(param, param.name)}: ${typeNames.name(param.type)}`).join(", ");
    out.setSource(undefined).line();
    out.setSource(locate(helper.span)).line(`fn ${moduleNames.lookup(helper)}(${params}) -> ${typeNames.name(helper.returnType)} {`);
    out.indent();
    printStmts(body, { out, names, printer, arrays: new Map(), locate, types: typeNames, sizes: new Map(), packedVectors: new Set(), stored: new Set() });
    out.dedent();
    out.line("}");
  };
  // A checked build's copies of helpers call their kernel's check function: printed beside it (emitEntry).
  for (const helper of input.helpers) if (!helper.helper.checks) printHelper(helper);

  for (const unit of input.kernels) {
    const errors = unit.kernel.params.find((param) => param.kind === "buffer" && param.implicit?.kind === "errors");
    const copies = input.helpers.filter(({ helper }) => errors?.kind === "buffer" && helper.checks?.errors === errors.array);
    entries.push(emitEntry(unit, out, moduleNames, locate, runtime.get(unit)!, typeNames, (check) => copies.forEach((copy) => printHelper(copy, check))));
  }
  const features = [...new Set(input.kernels.flatMap((unit) => featuresRequired(unit.kernel, "wgsl")))].sort();
  return { source: out.toString(), entries, lineSources: out.sources, features };
}

function emitEntry(
  unit: WgslKernelUnit,
  out: Writer,
  moduleNames: Namer,
  locate: (span: Span) => string,
  runtime: ReadonlySet<Expr>,
  typeNames: WgslTypes,
  printHelperCopies: (check: { readonly name: string; readonly secondValue: boolean }) => void,
): WgslEntryInfo {
  const { kernel } = unit;
  const entry = moduleNames.lookup(unit);
  const layout = wgslLayout(kernel);
  const arrays = new Map<ArrayRef, string>();
  const moduleName = (base: string) => moduleNames.name({}, `${entry}_${base}`);

  out.setSource(undefined).line();
  out.setSource(locate(kernel.span));
  const specialization = [...kernel.constValues].map(([name, value]) => `${name} = ${value}`).join(", ");
  out.line(`// Kernel ${kernel.name}${specialization ? ` specialized for ${specialization}` : ""}.`);
  const buffers = kernel.params.flatMap((param) => (param.kind === "buffer" ? [param.array] : []));
  // Packed arrays are vec4<u32> where every access is a vector access of whole words (wgsl-packed.ts).
  const packedVectors = packedVectorArrays(kernel.body);
  const vectorArrays = new Set([...vectorOnlyArrays(kernel.body).values()].filter((array) => !isPacked(array)).concat([...packedVectors]));
  const atomic = atomicArrays(kernel.body);
  // The element type an array is declared with: vec4 for vector-only arrays, atomic for those atomics touch.
  const stored = storedPackedArrays(kernel.body);
  // The element type an array is declared with: vec4 for vector-only arrays, atomic for those atomics touch,
  // u32 words for packed types (atomic where the kernel stores into them: wgsl-packed.ts).
  // A checked build's error buffer (passes/checks.ts): words that every failing thread updates atomically.
  const errors = kernel.params.find((param) => param.kind === "buffer" && param.implicit?.kind === "errors");
  const elementOf = (array: ArrayRef) =>
    errors?.kind === "buffer" && array === errors.array ? "atomic<u32>"
    : isPacked(array) ? (vectorArrays.has(array) ? "vec4<u32>" : stored.has(array) ? "atomic<u32>" : "u32")
    : vectorArrays.has(array) ? `vec4<${elementTypes[array.elementType as ElementScalar]}>`
    : atomic.has(array) ? `atomic<${array.elementType === "i32" ? "i32" : "u32"}>`
    : typeof array.elementType === "string" ? elementTypes[array.elementType] : typeNames.name(array.elementType);
  buffers.forEach((array, index) => {
    const name = moduleName(array.name);
    arrays.set(array, name);
    const access = array.access === "read" ? "read" : "read_write";
    const element = elementOf(array);
    out.line(`@group(0) @binding(${layout.bindings[index]!.binding}) var<storage, ${access}> ${name}: array<${element}>;`);
  });

  let uniformName: string | undefined;
  const fieldNames = new Map<Variable, string>();
  if (layout.uniform) {
    const structName = moduleName("Params");
    uniformName = moduleName("params");
    const fields = new Namer(wgslSpelling.reserved);
    out.block(`struct ${structName} {`, () => {
      layout.uniform!.fields.forEach((field, index) => {
        const fieldName = fields.name(field.variable, field.variable.name);
        fieldNames.set(field.variable, fieldName);
        // A struct member follows the uniform address space's rules (wgsl-types.ts).
        const attributes = field.wgslType ? "" : uniformMemberAttributes(field.type, index === layout.uniform!.fields.length - 1);
        out.line(`${attributes}${fieldName}: ${field.wgslType ?? typeNames.uniformName(field.type)},`);
      });
    });
    out.line(`@group(0) @binding(${layout.uniform.binding}) var<uniform> ${uniformName}: ${structName};`);
  }

  for (const array of kernel.shared) {
    const name = moduleName(array.name);
    arrays.set(array, name);
    const sizes = [...(unit.sharedSizes.get(array) ?? [])];
    // Only vector accesses touch it: four elements per vec4 along the last dimension (a multiple of 4 for
    // 2-D arrays, TSK3014; a 1-D array rounds up to whole vec4s). A packed array counts its words below.
    const vector = vectorArrays.has(array);
    if (vector && !isPacked(array)) sizes[sizes.length - 1] = Math.ceil(sizes[sizes.length - 1]! / 4);
    const element = elementOf(array);
    // A packed array is one run of words, indexed by the element's flat index.
    const type = isPacked(array)
      ? `array<${element}, ${Math.ceil(sizes.reduce((a, b) => a * b, 1) / elementsPerWord(array.elementType as ElementScalar) / (vector ? 4 : 1))}>`
      : sizes.reduceRight((inner, size) => `array<${inner}, ${size}>`, element);
    out.line(`var<workgroup> ${name}: ${type};`);
  }

  let overrides: [string, string, string] | undefined;
  let workgroupSize: string;
  if (unit.block) {
    workgroupSize = unit.block.join(", ");
  } else {
    overrides = [moduleName("block_x"), moduleName("block_y"), moduleName("block_z")];
    for (const name of overrides) out.line(`override ${name}: u32 = 1u;`);
    workgroupSize = overrides.join(", ");
  }

  const used = usedBuiltins(kernel.body);
  // A failed check records the block and thread (checkFunction).
  if (errors) {
    used.add("threadIdx");
    used.add("blockIdx");
  }
  const inputs = [
    ...(Object.keys(builtinInputs) as (keyof typeof builtinInputs)[])
      .filter((builtin) => used.has(builtin))
      .map((builtin) => `@builtin(${builtinInputs[builtin].attribute}) ${builtinInputs[builtin].name}: vec3<u32>`),
    ...(Object.keys(subgroupInputs) as (keyof typeof subgroupInputs)[])
      .filter((builtin) => used.has(builtin))
      .map((builtin) => `@builtin(${subgroupInputs[builtin].attribute}) ${subgroupInputs[builtin].name}: u32`),
  ];

  const names = moduleNames.child();
  const blockDim = (axis: "x" | "y" | "z"): string => {
    const index = axis === "x" ? 0 : axis === "y" ? 1 : 2;
    return unit.block ? `${unit.block[index]}i` : `i32(${overrides![index]})`;
  };
  const check = errors?.kind === "buffer" ? moduleName("tsk_check") : undefined;
  const uniformValue = (variable: Variable) => (uniformName && fieldNames.has(variable) ? `${uniformName}.${fieldNames.get(variable)}` : undefined);
  const secondValues = check ? siteDeterminedValues(kernel.body, uniformValue) : undefined;
  if (check) for (const line of checkFunction(check, arrays.get((errors as { array: ArrayRef }).array)!, secondValues)) out.line(line);
  // The copies of helpers this kernel's checked build made record through the same function (their checks' second
  // values are literals, so they leave secondValues as the kernel's body makes it).
  const checkCall = check ? { name: check, secondValue: !secondValues } : undefined;
  if (checkCall) printHelperCopies(checkCall);
  const printer = makePrinter(names, moduleNames, arrays, blockDim, runtime, typeNames, unit.sharedSizes, stored, packedVectors, checkCall);

  out.line(`@compute @workgroup_size(${workgroupSize})`);
  out.line(`fn ${entry}(${inputs.join(", ")}) {`);
  out.indent();
  for (const param of kernel.params) {
    if (param.kind !== "scalar") continue;
    const variable = param.variable;
    const field = `${uniformName}.${fieldNames.get(variable)}`;
    // The uniform holds bools as u32 and f16 as f32 (wgsl-layout.ts); bf16 values are f32 in WGSL anyway.
    const value = variable.type === "bool" ? `${field} != 0u` : variable.type === "f16" ? `f16(${field})` : typeNames.fromUniform(variable.type, field);
    out.line(`let ${names.name(variable, variable.name)}: ${typeNames.name(variable.type)} = ${value};`);
  }
  for (const array of kernel.locals) {
    const name = names.name(array, array.name);
    arrays.set(array, name);
    // Private arrays hold values: a bf16 as its f32, a narrow integer as its i32 or u32.
    const element = typeof array.elementType === "string" ? types[valueTypeOf(array.elementType)] : typeNames.name(array.elementType);
    out.line(`var ${name}: array<${element}, ${unit.sharedSizes.get(array)?.[0] ?? 0}>;`);
  }
  const launch = kernel.params.find((param) => param.kind === "scalar" && param.implicit?.kind === "launch");
  const flush = check && launch?.kind === "scalar" ? `${check}_flush(${names.lookup(launch.variable)}, ${builtinInputs.blockIdx.name}, ${builtinInputs.threadIdx.name});` : undefined;
  if (check && !flush) throw new Error("internal: a checked WGSL kernel without its launch tag");
  printStmts(kernel.body, { out, names, printer, arrays, locate, types: typeNames, sizes: unit.sharedSizes, packedVectors, stored, beforeReturn: flush });
  if (flush) out.line(flush);
  out.dedent();
  out.line("}");
  return { entryPoint: entry, workgroupSizeOverrides: overrides };
}

/**
 * A checked build's check (passes/checks.ts), one per entry point since each has its own error buffer. A thread
 * keeps its first failed check in private words: the site (plus 1: 0 while none failed), the first value (an
 * index, a shift amount) and, unless the site alone determines it, the second (the length of a global buffer,
 * from the uniform, or a constant: siteDeterminedValues). Each check updates them with selects, without a
 * branch, so that the straight-line code of an unrolled body (the loads of a blur's rows) stays one block the
 * GPU's compiler schedules as the plain build's; the launch tag, block and thread, the same at every site of a
 * thread, are written only by `NAME_flush(…)`, printed before each `return;` of the kernel and at its end,
 * which counts the failure in the error buffer's first word and keeps the first 8 such records of 10 words, as
 * CUDA's tsk_report does for each failure. Every private word counts: through Dawn on the H100 (2026-11-27,
 * bench/results/2026-11-27-checked-h100-state-log.txt) a checked blur of 36 unrolled rows of 8 sites ran ×2.25
 * its plain build with three words, ×1.12 with the site alone; a branch of private stores per site, before,
 * ×3.0–3.4, and the error buffer's atomics at every site ×3.0–3.2. The check returns `holds` whatever it
 * records, and its result depends on nothing else, so WGSL's uniformity analysis sees a check as it sees
 * `holds`.
 */
function checkFunction(name: string, errors: string, secondValues: ReadonlyMap<string, readonly number[]> | undefined): string[] {
  const words = ["site - 1u", "launch", "group.x", "group.y", "group.z", "thread.x", "thread.y", "thread.z", "a", "b"];
  // Where every site determines its second value, flush looks it up by the site.
  const secondByCase = secondValues
    ? [...secondValues].filter(([text]) => text !== "0u").map(([text, sites]) => `    case ${sites.map((site) => `${site + 1}u`).join(", ")}: { b = ${text}; }`)
    : [];
  return [
    `var<private> ${name}_site: u32;`,
    `var<private> ${name}_a: u32;`,
    ...(secondValues ? [] : [`var<private> ${name}_b: u32;`]),
    `fn ${name}(holds: bool, site: u32, a: u32${secondValues ? "" : ", b: u32"}) -> bool {`,
    `  let first = !holds & (${name}_site == 0u);`,
    `  ${name}_site = select(${name}_site, site, first);`,
    `  ${name}_a = select(${name}_a, a, first);`,
    ...(secondValues ? [] : [`  ${name}_b = select(${name}_b, b, first);`]),
    "  return holds;",
    "}",
    `fn ${name}_flush(launch: u32, group: vec3<u32>, thread: vec3<u32>) {`,
    `  let site = ${name}_site;`,
    `  let a = ${name}_a;`,
    ...(!secondValues ? [`  let b = ${name}_b;`] : secondByCase.length === 0 ? ["  let b = 0u;"] : ["  var b = 0u;", "  switch site {", ...secondByCase, "    default: {}", "  }"]),
    "  if (site != 0u) {",
    `    let slot = atomicAdd(&${errors}[0], 1u);`,
    "    if (slot < 8u) {",
    "      let at = 1u + slot * 10u;",
    ...words.map((word, i) => `      atomicStore(&${errors}[at + ${i}u], ${word});`),
    "    }",
    "  }",
    "}",
  ];
}

/**
 * The second value of every check, by its WGSL text (a u32 literal, or a field of the kernel's uniform: a global
 * buffer's length), with the sites that report it; undefined where some site's second value is only known at
 * run time (the column of a 2-D shared array's index), which the thread then keeps as it keeps the first.
 */
function siteDeterminedValues(body: readonly Stmt[], uniformValue: (variable: Variable) => string | undefined): Map<string, number[]> | undefined {
  const values = new Map<string, number[]>();
  const seen = new Set<number>();
  let dynamic = false;
  walkStmts(body, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => {
      if (e.kind !== "check") return;
      const second = e.values[1];
      const text = second.kind === "literal" && second.type === "u32" ? `${second.value}u` : second.kind === "variable" ? uniformValue(second.variable) : undefined;
      if (text === undefined) dynamic = true;
      // A check may be reached twice (a vector load's check also zeroes its words).
      else if (!seen.has(e.site)) values.set(text, [...(values.get(text) ?? []), e.site]);
      seen.add(e.site);
    });
  });
  return dynamic ? undefined : values;
}

/**
 * f32 → i32/u32 as docs/language.md §5 defines it: truncated, saturated to the integer type's range, NaN 0.
 * WGSL's own conversion saturates to the largest f32 inside the range instead (2147483520, 4294967040), and
 * a WebGPU implementation may assume that no value is NaN or infinite; the tests here read the bits, which
 * no such assumption can change. (Found by the differential fuzzer, tests/fuzz/diff.)
 */
const floatToIntFunctions = [
  "fn tsk_f32_to_i32(x: f32) -> i32 {",
  "  let bits = bitcast<u32>(x);",
  "  let magnitude = bits & 0x7fffffffu;",
  "  if (magnitude > 0x7f800000u) { return 0i; }",
  "  if (magnitude >= 0x4f000000u) { return select(2147483647i, i32(-2147483648), bits != magnitude); }",
  "  return i32(x);",
  "}",
  "fn tsk_f32_to_u32(x: f32) -> u32 {",
  "  let bits = bitcast<u32>(x);",
  "  if (bits >= 0x80000000u || bits > 0x7f800000u) { return 0u; }",
  "  if (bits >= 0x4f800000u) { return 4294967295u; }",
  "  return u32(x);",
  "}",
];

/** The names of the intrinsics that bodies call, as WGSL spells them. */
function calledFunctions(bodies: readonly (readonly Stmt[])[]): Set<string> {
  const names = new Set<string>();
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "intrinsic" && names.add(wgslSpelling.intrinsics[e.name].f32 || wgslSpelling.intrinsics[e.name].int));
    });
  }
  return names;
}

function convertsFloatToInt(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => {
      if (e.kind === "convert" && isFloat(e.value.type) && (e.type === "i32" || e.type === "u32")) found = true;
    });
  });
  return found;
}

function usedBuiltins(body: readonly Stmt[]): Set<BuiltinExpr["builtin"] | SubgroupBuiltinExpr["builtin"]> {
  const used = new Set<BuiltinExpr["builtin"] | SubgroupBuiltinExpr["builtin"]>();
  walkStmts(body, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => (e.kind === "builtin" || e.kind === "subgroupBuiltin") && used.add(e.builtin));
  });
  return used;
}

function literalText(type: ScalarType, value: number): Printed {
  switch (type) {
    case "bool":
      return { text: value ? "true" : "false", kind: "atom" };
    case "f32": {
      const text = `${f32Digits(value)}f`;
      return { text, kind: text.startsWith("-") ? "unary" : "atom" };
    }
    case "i32":
      // The i suffix would apply to 2147483648 before the minus, which does not fit.
      if (value === -2147483648) return { text: "i32(-2147483648)", kind: "atom" };
      return { text: `${value}i`, kind: value < 0 ? "unary" : "atom" };
    case "u32":
      return { text: `${value}u`, kind: "atom" };
    case "f16": {
      // An f16 value is exactly an f32, whose shortest spelling therefore reads back as the same f16.
      const text = `${f32Digits(value)}h`;
      return { text, kind: text.startsWith("-") ? "unary" : "atom" };
    }
    case "bf16": {
      // Emulated (ir/types.ts): a bf16 value is held in an f32.
      const text = `${f32Digits(value)}f`;
      return { text, kind: text.startsWith("-") ? "unary" : "atom" };
    }
    case "f64":
      throw new Error("internal: an f64 literal reached WGSL, which refuses f64 (the validator)");
  }
}

function makePrinter(
  names: Namer,
  moduleNames: Namer,
  arrays: ReadonlyMap<ArrayRef, string>,
  blockDim: (axis: "x" | "y" | "z") => string,
  /** Leaves printed through an identity function, so that WGSL does not evaluate them early (wgsl-constants.ts). */
  runtime: ReadonlySet<Expr>,
  typeNames: WgslTypes,
  sizes: ReadonlyMap<ArrayRef, readonly number[]>,
  /** Packed arrays that the kernel stores into: their words are atomic. */
  stored: ReadonlySet<ArrayRef>,
  /** Packed arrays of vec4<u32> elements. */
  packedVectors: ReadonlySet<ArrayRef>,
  /** A checked build: the entry point's check function (checkFunction), and whether it takes the second value. */
  check?: { readonly name: string; readonly secondValue: boolean },
): ExprPrinter {
  // A vector or struct as the operand of `.x` or `.field`: an atom, or parenthesized.
  const operand = (printed: Printed) => (printed.kind === "atom" ? printed.text : `(${printed.text})`);
  // The printer prints the indices of packed loads (the hooks below run while it prints).
  let printer: ExprPrinter | undefined;
  const opaque = (expr: Expr, printed: Printed): Printed => (runtime.has(expr) ? { text: `tsk_runtime_${expr.type}(${printed.text})`, kind: "atom" } : printed);
  printer = new ExprPrinter({
    spelling: wgslSpelling,
    literal: (expr) => opaque(expr, literalText(expr.type, expr.value)),
    variable: (variable) => names.lookup(variable),
    builtin: (expr) =>
      expr.builtin === "blockDim"
        ? opaque(expr, { text: blockDim(expr.axis), kind: "atom" })
        : { text: `i32(${builtinInputs[expr.builtin].name}.${expr.axis})`, kind: "atom" },
    subgroupBuiltin: (expr) => {
      if (expr.builtin === "warpgroupIdx" || expr.builtin === "clusterRank") throw new Error(`internal: ${expr.builtin} reached WGSL; the validator rejects it (TSK3085)`);
      return { text: `i32(${subgroupInputs[expr.builtin].name})`, kind: "atom" };
    },
    // f32 arrays that atomics touch hold their values' bits in atomic<u32>.
    atomicLoad: (expr, element) => ({ text: bitsTo(expr.array.elementType as ElementScalar, `atomicLoad(&${element})`), kind: "atom" }),
    // Float vectors convert to integer ones lane by lane (legalize writes that out), so only scalars meet the saturating functions.
    convert: (to, value, from) => ({ text: typeof to === "string" && typeof from === "string" ? convertText(from, to, value.text) : `${typeNames.name(to)}(${value.text})`, kind: "atom" }),
    load: (expr, element) => {
      if (!isPacked(expr.array)) return { text: element, kind: "atom" };
      const type = expr.array.elementType as ElementScalar;
      const index = `u32(${flatIndex(printer!, expr.array, expr.indices, sizes)})`;
      // A component of a vec4 of words (wgsl-packed.ts, packedVectorArrays), or a word.
      const words = packedVectors.has(expr.array)
        ? `${arrays.get(expr.array)}[${index} >> ${wordShift(type) + 2}u][(${index} >> ${wordShift(type)}u) & 3u]`
        : `${arrays.get(expr.array)}[${index} >> ${wordShift(type)}u]`;
      const word = stored.has(expr.array) ? `atomicLoad(&${words})` : words;
      return { text: `${unpackFunction(type)}(${word}, ${index})`, kind: "atom" };
    },
    construct: (expr, args) => ({ text: `${typeNames.name(expr.type)}(${args.map((arg) => arg.text).join(", ")})`, kind: "atom" }),
    // WGSL's select takes scalars and vectors: a choice between structs is a function of wgsl-types.ts.
    composite: (expr, print) =>
      expr.kind === "select" && typeof expr.type === "object" && expr.type.kind === "struct"
        ? { text: `${typeNames.selectFunction(expr.type)}(${print(expr.whenFalse).text}, ${print(expr.whenTrue).text}, ${print(expr.condition).text})`, kind: "atom" }
        : undefined,
    swizzle: (expr, value) => ({ text: `${operand(value)}.${swizzleName(expr.lanes)}`, kind: "atom" }),
    field: (expr, value) => ({ text: `${operand(value)}.${typeNames.field(expr.value.type as StructType, expr.field)}`, kind: "atom" }),
    check: (expr, holds, values) => {
      if (!check) throw new Error("internal: a check in a WGSL function without an error buffer");
      // The site plus 1: 0 is "no failure" (checkFunction); a second value the site determines stays out.
      return { text: `${check.name}(${holds}, ${expr.site + 1}u, ${values[0]}${check.secondValue ? `, ${values[1]}` : ""})`, kind: "atom" };
    },
    // WGSL's select takes the false value first.
    select: (condition, whenTrue, whenFalse) => ({ text: `select(${whenFalse.text}, ${whenTrue.text}, ${condition.text})`, kind: "atom" }),
    array: (array) => {
      const name = arrays.get(array);
      if (!name) throw new Error(`internal: array '${array.name}' has no WGSL binding`);
      return name;
    },
    helper: (helper) => moduleNames.lookup(helper),
  });
  return printer;
}

/** An element's index in the run of elements of its array: the index itself, or row · columns + column. */
function flatIndex(printer: ExprPrinter, array: ArrayRef, indices: readonly Expr[], sizes: ReadonlyMap<ArrayRef, readonly number[]>): string {
  if (indices.length === 1) return printer.print(indices[0]!);
  const cols = sizes.get(array)?.[1] ?? 0;
  return `(${printer.print(indices[0]!)}) * ${cols}i + (${printer.print(indices[1]!)})`;
}

/**
 * A conversion: WGSL's own, but for the language's saturating float → integer (wgsl.ts's functions, f16 and
 * bf16 widened exactly first) and bf16 (an f32 here), which every conversion to rounds once (wgsl-packed.ts).
 */
function convertText(from: ScalarType, to: ScalarType, value: string): string {
  if (to === "i32" || to === "u32") {
    if (from === "f32" || from === "bf16") return `tsk_f32_to_${to}(${value})`;
    if (from === "f16") return `tsk_f32_to_${to}(f32(${value}))`;
  }
  if (to === "bf16") {
    switch (from) {
      case "bf16":
        return value;
      case "f32":
        return `${roundBf16}(${value})`;
      case "f16":
        return `${roundBf16}(f32(${value}))`;
      case "i32":
        return `tsk_i32_to_bf16(${value})`;
      case "u32":
        return `tsk_u32_to_bf16(${value})`;
      case "bool":
        return `select(0.0f, 1.0f, ${value})`;
      default:
        break;
    }
  }
  // A bf16 value is an f32 already.
  if (from === "bf16" && to === "f32") return value;
  return `${types[to]}(${value})`;
}

interface StmtContext {
  readonly types: WgslTypes;
  readonly out: Writer;
  readonly names: Namer;
  readonly printer: ExprPrinter;
  readonly arrays: ReadonlyMap<ArrayRef, string>;
  readonly locate: (span: Span) => string;
  readonly sizes: ReadonlyMap<ArrayRef, readonly number[]>;
  /** Packed arrays of vec4<u32> elements (wgsl-packed.ts, packedVectorArrays). */
  readonly packedVectors: ReadonlySet<ArrayRef>;
  /** Packed arrays of atomic<u32> words: the kernel stores single elements into them. */
  readonly stored: ReadonlySet<ArrayRef>;
  /** The line before each `return;` of the kernel (a checked build's flush), absent in helper functions. */
  readonly beforeReturn?: string;
}

function assignment(target: string, stmt: Stmt & { kind: "assign" | "store" }, printer: ExprPrinter): string {
  const { value } = stmt;
  if (stmt.op === undefined) return `${target} = ${printer.print(value)}`;
  // WGSL's ++ and -- exist for integers only.
  if ((stmt.op === "add" || stmt.op === "sub") && value.kind === "literal" && value.value === 1 && isInteger(value.type)) {
    return `${target}${stmt.op === "add" ? "++" : "--"}`;
  }
  const call = binaryCall(wgslSpelling, stmt.op, value.type);
  if (call) return `${target} = ${call.replaceAll("$0", target).replaceAll("$1", printer.print(value))}`;
  return `${target} ${wgslSpelling.binary[stmt.op]}= ${printer.print(value)}`;
}

function simpleStatement(stmt: Stmt, context: StmtContext): string {
  const { names, printer } = context;
  switch (stmt.kind) {
    case "declare": {
      const variable = stmt.variable;
      const name = names.name(variable, variable.name);
      // WGSL's zero value of a vector or struct is its constructor without arguments.
      const init = stmt.init ? printer.print(stmt.init) : typeof variable.type === "string" ? literalText(variable.type, 0).text : `${context.types.name(variable.type)}()`;
      return `${variable.mutable ? "var" : "let"} ${name}: ${context.types.name(variable.type)} = ${init}`;
    }
    case "assign":
      return assignment(names.lookup(stmt.variable) + partPath(stmt.variable.type, stmt.path, context.types), stmt, printer);
    case "store": {
      const target = printer.element(stmt.array, stmt.indices) + partPath(stmt.array.elementType, stmt.path, context.types);
      if (stmt.atomic) return `atomicStore(&${target}, ${toBits(stmt.array.elementType as ElementScalar, printer.print(stmt.value))})`;
      // A private array of a narrow integer type keeps the stored value's low bits.
      const wrap = stmt.array.space === "private" && typeof stmt.array.elementType === "string" ? wrapNarrow(stmt.array.elementType, "$v") : undefined;
      if (wrap) return `${target} = ${wrap.replace("$v", printer.print(storedValue(stmt)))}`;
      return assignment(target, stmt, printer);
    }
    default:
      throw new Error(`internal: ${stmt.kind} is not a simple statement`);
  }
}

/** `.pos.x`: the fields and lane of a part of a value that an assignment writes (legalize left one lane per swizzle). */
function partPath(type: Type | ElementType, path: readonly Access[] | undefined, types: WgslTypes): string {
  let current = type;
  let text = "";
  for (const step of path ?? []) {
    if (step.kind === "field") {
      const struct = current as StructType;
      text += `.${types.field(struct, step.field)}`;
      current = struct.fields[step.field]!.type;
    } else {
      text += `.${swizzleName(step.lanes)}`;
    }
  }
  return text;
}

/** The value a store writes: `value`, or for `a[i] op= value` the operation on the element's current value. */
function storedValue(stmt: Stmt & { kind: "store" }): Expr {
  if (!stmt.op) return stmt.value;
  const type = valueTypeOf(stmt.array.elementType as ElementScalar);
  const current: Expr = { kind: "load", type, array: stmt.array, indices: stmt.indices, span: stmt.span };
  return { kind: "binary", op: stmt.op, type, left: current, right: stmt.value, span: stmt.span };
}

/** A store into a packed array: the compare-exchange loop of wgsl-packed.ts, as lines. */
function packedStoreLines(stmt: Stmt & { kind: "store" }, context: StmtContext): string[] {
  const index = `u32(${flatIndex(context.printer, stmt.array, stmt.indices, context.sizes)})`;
  return packedStore(stmt.array.elementType as ElementScalar, context.arrays.get(stmt.array)!, index, context.printer.print(storedValue(stmt)), (hint) => context.names.name({}, hint));
}

/**
 * A vector access to an array of `vec4<T>` (a buffer or a workgroup array): element i of a row is in vec4
 * i / 4 (i a multiple of 4). Asynchronous copies never get here (legalize made them plain copies).
 */
function memoryOperation(stmt: MemoryOperationStmt, context: StmtContext): string[] {
  const { names, printer } = context;
  if ((stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") && isPacked(stmt.array)) return packedVectorAccess(stmt, context);
  // Leading indices as they are (a row of a 2-D array), the last one in vec4s.
  const vectorIndex = (indices: readonly import("../ir/ir.ts").Expr[]) =>
    [...indices.slice(0, -1).map((index) => printer.print(index)), `u32(${printer.print(indices[indices.length - 1]!)}) / 4u`].join("][");
  switch (stmt.kind) {
    case "vectorLoad": {
      const temp = names.name({}, "vector");
      const type = `vec4<${elementTypes[stmt.array.elementType as ElementScalar]}>`;
      const lines = [`let ${temp}: ${type} = ${zeroUnless(stmt, `${type}()`, `${context.arrays.get(stmt.array)}[${vectorIndex(stmt.indices)}]`, printer)};`];
      stmt.targets.forEach((variable, lane) => {
        lines.push(`${variable.mutable ? "var" : "let"} ${names.name(variable, variable.name)}: ${types[variable.type as ScalarType]} = ${temp}.${"xyzw"[lane]};`);
      });
      return lines;
    }
    case "vectorStore": {
      const values = stmt.values.map((value) => printer.print(value)).join(", ");
      return [`${context.arrays.get(stmt.array)}[${vectorIndex(stmt.indices)}] = vec4<${elementTypes[stmt.array.elementType as ElementScalar]}>(${values});`];
    }
    default:
      throw new Error(`internal: ${stmt.kind} reached the WGSL backend; legalize makes it a plain copy`);
  }
}

/**
 * A vector access to a packed array (wgsl-packed.ts): L elements from a start that is a multiple of L, so
 * L / k whole words from word start / k. Each word is read or written once: the whole vec4 where the array
 * has vec4<u32> elements and the access is four words, components of one otherwise (`load4` of u8 reads one
 * word), or words of an array of u32 (atomic ones where the kernel also stores single elements). Each element
 * is taken from its word at a constant bit offset. A store computes every word before it stores the first.
 */
function packedVectorAccess(stmt: Stmt & { kind: "vectorLoad" | "vectorStore" }, context: StmtContext): string[] {
  const { names, printer } = context;
  // Packed arrays are of scalars (wgsl-packed.ts, isPacked).
  const type = stmt.array.elementType as ElementScalar;
  const k = elementsPerWord(type);
  const lanes = stmt.kind === "vectorLoad" ? stmt.targets.length : stmt.values.length;
  const count = lanes / k;
  const array = context.arrays.get(stmt.array)!;
  const flat = `u32(${flatIndex(printer, stmt.array, stmt.indices, context.sizes)})`;
  const lines: string[] = [];
  // The words' places, as printed references.
  let places: string[];
  let whole: string | undefined;
  if (context.packedVectors.has(stmt.array)) {
    if (count === 4) {
      whole = `${array}[${flat} / ${4 * k}u]`;
      places = [0, 1, 2, 3].map((word) => `${whole}.${"xyzw"[word]}`);
    } else {
      // Words start … start + count − 1 lie in one vec4 (the start is a multiple of count words).
      const at = names.name({}, "word");
      lines.push(`let ${at}: u32 = ${flat} >> ${wordShift(type)}u;`);
      places = Array.from({ length: count }, (_, word) => `${array}[${at} >> 2u][(${at} & 3u)${word === 0 ? "" : ` + ${word}u`}]`);
    }
  } else if (count === 1) {
    places = [`${array}[${flat} >> ${wordShift(type)}u]`];
  } else {
    const at = names.name({}, "word");
    lines.push(`let ${at}: u32 = ${flat} >> ${wordShift(type)}u;`);
    places = Array.from({ length: count }, (_, word) => `${array}[${at}${word === 0 ? "" : ` + ${word}u`}]`);
  }
  const atomic = context.stored.has(stmt.array);
  if (stmt.kind === "vectorLoad") {
    let words: string[];
    if (whole) {
      const vector = names.name({}, "words");
      lines.push(`let ${vector}: vec4<u32> = ${zeroUnless(stmt, "vec4<u32>()", whole, printer)};`);
      words = [0, 1, 2, 3].map((i) => `${vector}.${"xyzw"[i]}`);
    } else {
      words = places.map((place) => {
        const word = names.name({}, "word");
        lines.push(`let ${word}: u32 = ${zeroUnless(stmt, "0u", atomic ? `atomicLoad(&${place})` : place, printer)};`);
        return word;
      });
    }
    stmt.targets.forEach((variable, lane) => {
      const value = unpackLane(type, words[Math.floor(lane / k)]!, lane % k);
      lines.push(`${variable.mutable ? "var" : "let"} ${names.name(variable, variable.name)}: ${types[variable.type as ScalarType]} = ${value};`);
    });
    return lines;
  }
  const values = Array.from({ length: count }, (_, word) => packWord(type, stmt.values.slice(word * k, word * k + k).map((value) => printer.print(value))));
  if (whole) return [...lines, `${whole} = vec4<u32>(${values.join(", ")});`];
  if (count === 1) return [...lines, atomic ? `atomicStore(&${places[0]}, ${values[0]});` : `${places[0]} = ${values[0]};`];
  const words = values.map((value) => {
    const word = names.name({}, "word");
    lines.push(`let ${word}: u32 = ${value};`);
    return word;
  });
  places.forEach((place, i) => lines.push(atomic ? `atomicStore(&${place}, ${words[i]});` : `${place} = ${words[i]};`));
  return lines;
}

/** A checked vector load's words: what was loaded, or zeros where its check failed (VectorLoadStmt.zeroUnless). */
function zeroUnless(stmt: Stmt & { kind: "vectorLoad" | "vectorStore" }, zero: string, loaded: string, printer: ExprPrinter): string {
  return stmt.kind === "vectorLoad" && stmt.zeroUnless ? `select(${zero}, ${loaded}, ${printer.print(stmt.zeroUnless)})` : loaded;
}

/** A value read from an atomic array, as the element type (f32 arrays hold bits). */
function bitsTo(type: ElementScalar, text: string): string {
  return type === "f32" ? `bitcast<f32>(${text})` : text;
}

/** A value to store in an atomic array. */
function toBits(type: ElementScalar, text: string): string {
  return type === "f32" ? `bitcast<u32>(${text})` : text;
}

/** Atomics and collectives: one line each, except the loops of f32 `atomicAdd` and of `atomicCompareExchange`. */
function operation(stmt: AtomicStmt | CollectiveStmt, context: StmtContext): void {
  const { out, names, printer } = context;
  const declare = (variable: Variable | undefined, text: string) =>
    variable ? `${variable.mutable ? "var" : "let"} ${names.name(variable, variable.name)}: ${types[variable.type as ScalarType]} = ${text};` : `${text};`;
  if (stmt.kind === "collective") {
    const args = stmt.args.map((arg) => printer.print(arg));
    // WGSL's ballot is a vec4<u32> of up to 128 lanes; tskernel's is the first 32 lanes' bits.
    const call = `${stmt.op}(${args.join(", ")})${stmt.op === "subgroupBallot" ? ".x" : ""}`;
    out.line(declare(stmt.result, call));
    return;
  }
  const element = printer.element(stmt.array, stmt.indices);
  const type = stmt.array.elementType as ElementScalar;
  if (stmt.op === "load") {
    // WGSL asks that a value-returning call be used: a load whose value the kernel drops goes to `_`.
    out.line(stmt.result ? declare(stmt.result, bitsTo(type, `atomicLoad(&${element})`)) : `_ = atomicLoad(&${element});`);
    return;
  }
  if (stmt.op === "wait") throw new Error("internal: waitFlag() reached WGSL; the validator rejects it there (TSK3085)");
  const value = printer.print(stmt.value!);
  if (stmt.op === "store") {
    out.line(`atomicStore(&${element}, ${toBits(type, value)});`);
    return;
  }
  if (stmt.op !== "compareExchange" && !(stmt.op === "add" && type === "f32")) {
    const call = `${wgslAtomics[stmt.op]}(&${element}, ${toBits(type, value)})`;
    out.line(declare(stmt.result, stmt.result ? bitsTo(type, call) : call));
    return;
  }
  // A loop assigns the old value: the result is a `var` declared before it.
  const result = stmt.result ? names.name(stmt.result, stmt.result.name) : undefined;
  if (result) out.line(`var ${result}: ${elementTypes[type]};`);
  const target = names.name({}, "target");
  const swapped = names.name({}, "swapped");
  out.block("{", () => {
    out.line(`let ${target} = &${element};`);
    if (stmt.op === "add") {
      // f32 atomicAdd: WGSL has no float atomics, so swap in the bits of old + value until no other thread
      // changed the element in between.
      const addend = names.name({}, "addend");
      const bits = names.name({}, "bits");
      out.line(`let ${addend}: f32 = ${value};`);
      out.line(`var ${bits}: u32 = atomicLoad(${target});`);
      out.block("loop {", () => {
        out.line(`let ${swapped} = atomicCompareExchangeWeak(${target}, ${bits}, bitcast<u32>(bitcast<f32>(${bits}) + ${addend}));`);
        out.line(`if (${swapped}.exchanged) { break; }`);
        out.line(`${bits} = ${swapped}.old_value;`);
      });
      if (result) out.line(`${result} = bitcast<f32>(${bits});`);
      return;
    }
    // A weak compare-exchange may fail although the element held the expected value: try again then.
    const expected = names.name({}, "expected");
    const desired = names.name({}, "desired");
    out.line(`let ${expected}: ${elementTypes[type]} = ${printer.print(stmt.expected!)};`);
    out.line(`let ${desired}: ${elementTypes[type]} = ${value};`);
    out.block("loop {", () => {
      out.line(`let ${swapped} = atomicCompareExchangeWeak(${target}, ${expected}, ${desired});`);
      out.line(`if (${swapped}.exchanged || ${swapped}.old_value != ${expected}) {`);
      if (result) out.line(`  ${result} = ${swapped}.old_value;`);
      out.line("  break;");
      out.line("}");
    });
  });
}

function printStmts(stmts: readonly Stmt[], context: StmtContext): void {
  printCStatements(stmts, {
    out: context.out,
    printer: context.printer,
    simple: (stmt) => simpleStatement(stmt, context),
    memoryOperation: (stmt) => memoryOperation(stmt, context),
    operation: (stmt) => operation(stmt, context),
    lines: (stmt) => (stmt.kind === "store" && isPacked(stmt.array) ? packedStoreLines(stmt, context) : undefined),
    barrier: "workgroupBarrier();",
    beforeStatement: (span) => context.out.setSource(context.locate(span)),
    ...(context.beforeReturn ? { beforeReturn: context.beforeReturn } : {}),
  });
}
