/**
 * The CUDA C backend: prints a validated, specialized module as one `.cu` file that compiles with nvcc and
 * NVRTC (no host code, no includes). Each kernel specialization is an `extern "C" __global__` function
 * named by `specializedName`; read-only buffers are `const T* __restrict__` so loads may use the read-only
 * path; a fixed block shape becomes `__launch_bounds__`; `unroll:` loops get `#pragma unroll`; and
 * `#line` directives map every statement back to the TypeScript, so compiler errors and profilers point at
 * the user's source. Helpers become `__device__` functions. `load4`/`store4` become 16-byte `float4`
 * accesses (the arrays they touch in shared memory are declared 16-byte aligned), and `copyAsync4` becomes
 * `cp.async` through a small helper that falls back to a plain copy below sm_80. Atomics are CUDA's own
 * (`atomicAdd(&a[i], v)`); subgroup operations are warp intrinsics and helpers (cuda-subgroups.ts); `mma`
 * is inline PTX on tensor cores (cuda-matrix.ts).
 * Where C++ leaves the language's integer semantics undefined, legalize has already rewritten the IR (i32
 * arithmetic on unsigned bits, masked shift amounts: passes/wrap-integers.ts), and conversions from f32 to
 * integers print as the saturating intrinsics.
 */

import { declaredVariables, scalars, type Access, type BarrierStmt, type DivergenceCheck, type ArrayRef, type ElementScalar, type ElementType, type ScalarType, type StructType, type Type, type AtomicStmt, type CollectiveStmt, type Expr, type HelperFunction, type MemoryOperationStmt, type Stmt, type Variable } from "../ir/ir.ts";
import { atomicArrays, exprsOf, usesSubgroups, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { layoutOf, typeName } from "../ir/types.ts";
import { structsOf, swizzleName } from "../ir/vectors.ts";
import { CudaVectors, everyExpression } from "./cuda-vectors.ts";
import { type SourceLocator, type Span } from "../diagnostics/span.ts";
import { binaryCall, ExprPrinter, f32Digits, f64Digits, intrinsicTemplate, parenthesize, type Printed } from "./expr-printer.ts";
import { isFloat8, isHalfFloat, isInteger, isNarrowInt, vectorElementTypes } from "../ir/types.ts";
import { typesUsed } from "../ir/types-used.ts";
import { Namer } from "./namer.ts";
import { cudaAtomics, cudaConversion, cudaSpelling, cudaVectorTypes } from "./targets.ts";
import { cudaHalfConversions, cudaHalfHelpers } from "./cuda-halves.ts";
import { cudaFloat8Conversions, cudaFloat8Helpers } from "./cuda-float8.ts";
import { bf16Bits, f16Bits } from "../lang/float16.ts";
import { cudaCollective, cudaLaneId, subgroupHelpers } from "./cuda-subgroups.ts";
import { Writer } from "./writer.ts";
import type { KernelUnit } from "./unit.ts";
import { printCStatements } from "./c-statements.ts";
import { cudaLdmatrix, cudaMma, cudaWarpgroup, matrixHelpers, usesWgmma, wgmmaFences, wgmmaSettled, type WarpgroupFragment } from "./cuda-matrix.ts";
import { isWarpgroupShape } from "../ir/matrix.ts";
import { globalPublishPoints, orderedAtomic, orderedAtomicHelpers, publishesToTileCopies, usesOrderedAtomics } from "./cuda-atomics.ts";
import { barrierHelpers, cudaBarrierOp, cudaSetMaxRegisters, cudaTileCopy, cudaTileStore, storeFences, storesTiles, type ProxyFences } from "./cuda-barriers.ts";

export type CudaKernelUnit = KernelUnit;

export interface CudaModuleInput {
  /** The source path as the output should show it (in comments). */
  readonly displayPath: string;
  /** Where each span lies, for `#line` (a helper imported from another file points there). */
  readonly locator: SourceLocator;
  /** Helpers in dependency order, each with its body prepared for this target. */
  readonly helpers: readonly { readonly helper: HelperFunction; readonly body: readonly Stmt[] }[];
  readonly kernels: readonly CudaKernelUnit[];
  readonly lineDirectives: boolean;
}

const types = cudaSpelling.types;
const elementTypes = cudaSpelling.elementTypes;

/** The 16-byte vector type of a `load4`/`store4`; the frontend allows those on 32-bit elements only. */
function vector4Of(elementType: ArrayRef["elementType"]): { readonly type: string; readonly make: string } {
  const vector = typeof elementType === "string" ? cudaVectorTypes[elementType] : undefined;
  if (!vector) throw new Error(`internal: a 16-byte vector access to ${typeName(elementType)} elements`);
  return vector;
}

/** What the header needs to declare and launch one kernel exactly as the `.cu` defines it. */
export interface CudaSignature {
  readonly kernelName: string;
  readonly functionName: string;
  /** Parameter declarations, as in the definition. */
  readonly params: readonly string[];
  readonly argumentNames: readonly string[];
  /**
   * The launcher's parameters (CUDA's own `__half` and `__nv_bfloat16` where the kernel takes the layout-equal
   * `tsk_f16` and `tsk_bf16`) and the kernel's arguments made from them.
   */
  readonly launcherParams: readonly string[];
  readonly launcherArguments: readonly string[];
  readonly block?: readonly [number, number, number];
  readonly launchBounds: string;
  /** Bytes of dynamic shared memory each launch must ask for: 0 unless the kernel needs more than 48 KB. */
  readonly dynamicSharedBytes: number;
  /** The kernel uses subgroup operations: its blocks must be whole warps. */
  readonly subgroups: boolean;
  /** Buffer parameters that atomics update, by their names in the parameter list. */
  readonly atomicBuffers: readonly string[];
}

export interface CudaOutput {
  readonly source: string;
  readonly signatures: readonly CudaSignature[];
  /** The vector and struct types the signatures use (cuda-vectors.ts), for the header. */
  readonly declarations: readonly string[];
  /** Whether the source defines the half types (cuda-halves.ts): the `.cuh` needs them too. */
  readonly halves: boolean;
}

export function emitCuda(input: CudaModuleInput): CudaOutput {
  const signatures: CudaSignature[] = [];
  const out = new Writer();
  const moduleNames = new Namer(cudaSpelling.reserved);
  for (const unit of input.kernels) moduleNames.name(unit, unit.entryName);
  for (const { helper } of input.helpers) moduleNames.name(helper, helper.name);

  out.line(`// Generated by tskernel from ${input.displayPath}. Do not edit: change the TypeScript and rebuild.`);
  out.line("// Device code only, for nvcc or NVRTC.");
  const usesHalves = input.kernels.some((unit) => typesUsed(unit.kernel).some((use) => isHalfFloat(use.type)));
  if (usesHalves) {
    out.line();
    for (const line of cudaHalfHelpers) out.raw(line);
  }
  if (input.kernels.some((unit) => typesUsed(unit.kernel).some((use) => isFloat8(use.type)))) {
    out.line();
    for (const line of cudaFloat8Helpers) out.raw(line);
  }

  if (input.kernels.some((unit) => usesAsyncCopies(unit.kernel.body))) {
    out.line();
    for (const line of asyncCopyHelpers) out.raw(line);
  }
  if (input.kernels.some((unit) => unit.kernel.params.some((param) => param.kind === "buffer" && param.implicit?.kind === "errors"))) {
    out.line();
    for (const line of checkHelpers) out.raw(line);
  }
  for (const line of subgroupHelpers(input.kernels.map((unit) => unit.kernel.body))) out.raw(line);
  for (const line of matrixHelpers(input.kernels.map((unit) => unit.kernel.body))) out.raw(line);
  for (const line of barrierHelpers(input.kernels.map((unit) => unit.kernel.body))) out.raw(line);
  if (input.kernels.some((unit) => usesOrderedAtomics(unit.kernel.body) || publishesToTileCopies(unit.kernel.body))) for (const line of orderedAtomicHelpers) out.raw(line);
  // Vectors and structs (cuda-vectors.ts): every type and operation the module uses is known before printing,
  // so that their declarations and helpers come first.
  const vectors = new CudaVectors(moduleNames, () => new Namer(cudaSpelling.reserved));
  const userBodies = [...input.kernels.map((unit) => unit.kernel.body), ...input.helpers.map((h) => h.body)];
  const valueTypes = [
    ...input.kernels.flatMap((unit) => unit.kernel.params.flatMap((param) => (param.kind === "scalar" ? [param.variable.type] : []))),
    ...input.helpers.flatMap(({ helper }) => [helper.returnType, ...helper.params.map((param) => param.type)]),
  ];
  const elementTypesUsed = input.kernels.flatMap((unit) => [...unit.kernel.params.flatMap((param) => (param.kind === "buffer" ? [param.array.elementType] : [])), ...unit.kernel.shared.map((a) => a.elementType), ...unit.kernel.locals.map((a) => a.elementType)]);
  for (const type of valueTypes) vectors.type(type);
  for (const type of elementTypesUsed) vectors.element(type);
  everyExpression(userBodies, (expr) => {
    vectors.type(expr.type);
    vectors.collect(expr);
  });
  for (const body of userBodies) walkStmts(body, (stmt) => declaredVariables(stmt).forEach((variable) => vectors.type(variable.type)));
  const structs = structsOf([...valueTypes, ...elementTypesUsed], userBodies);
  const vectorHelpers = vectors.helperList();

  const bodies = [...userBodies, ...vectorHelpers.map((helper) => helper.body)];
  const helpersUsed = intrinsicHelpers.filter((helper) => bodies.some((body) => callsHelper(body, helper.name)));
  if (helpersUsed.length > 0) out.line();
  for (const helper of helpersUsed) for (const line of helper.lines) out.raw(line);
  const declarations = vectors.declarations(structs);
  if (declarations.length > 0) out.line();
  for (const line of declarations) out.raw(line);
  for (const helper of vectorHelpers) {
    const names = moduleNames.child();
    const printer = makePrinter(names, moduleNames, vectors);
    const params = helper.params.map((param) => `${vectors.type(param.type)} ${names.name(param, param.name)}`).join(", ");
    out.line(`__device__ __forceinline__ ${vectors.type(helper.result)} ${helper.name}(${params}) {`);
    out.indent();
    printStmts(helper.body, { out, names, printer, lineDirective: () => undefined, warpgroupFragments: [], vectors, proxy: { afterWait: false, beforeArrive: new Set(), publish: "tsk_fence_proxy_async" } });
    out.dedent();
    out.line("}");
  }

  let last = "";
  const lineDirective = (span: Span) => {
    if (!input.lineDirectives) return;
    const { path, line } = input.locator.where(span);
    const directive = `#line ${line} "${path}"`;
    if (directive === last) return;
    last = directive;
    out.raw(directive);
  };

  for (const { helper, body } of input.helpers) {
    const names = moduleNames.child();
    const printer = makePrinter(names, moduleNames, vectors);
    const params = helper.params.map((param) => `${vectors.type(param.type)} ${names.name(param, param.name)}`);
    // A checked build's copy of a helper for one kernel records into that kernel's error buffer (passes/checks.ts).
    if (helper.checks) params.push(`unsigned* ${names.name(helper.checks.errors, "tsk_errors")}`, `unsigned ${names.name(helper.checks.launch, "tsk_launch")}`);
    out.line();
    lineDirective(helper.span);
    out.line(`__device__ __forceinline__ ${vectors.type(helper.returnType)} ${moduleNames.lookup(helper)}(${params.join(", ")}) {`);
    out.indent();
    printStmts(body, { out, names, printer, lineDirective, warpgroupFragments: [], vectors, proxy: { afterWait: false, beforeArrive: new Set(), publish: "tsk_fence_proxy_async" } });
    out.dedent();
    out.line("}");
  }

  for (const unit of input.kernels) {
    const { kernel } = unit;
    const names = moduleNames.child();
    const printer = makePrinter(names, moduleNames, vectors);
    const argumentNames: string[] = [];
    const launcherParams: string[] = [];
    const launcherArguments: string[] = [];
    const params = kernel.params.flatMap((param) => {
      switch (param.kind) {
        case "buffer": {
          const name = names.name(param.array, param.array.name);
          argumentNames.push(name);
          const element = vectors.element(param.array.elementType);
          const half = isHalfFloat(param.array.elementType) ? cudaHalfConversions[param.array.elementType].cType : undefined;
          const constness = param.array.access === "read" ? "const " : "";
          launcherParams.push(`${constness}${half ?? element}* ${name}`);
          launcherArguments.push(half ? `reinterpret_cast<${constness}${element}*>(${name})` : name);
          return [param.array.access === "read" ? `const ${element}* __restrict__ ${name}` : `${element}* ${name}`];
        }
        case "scalar": {
          const name = names.name(param.variable, param.variable.name);
          argumentNames.push(name);
          const type = vectors.type(param.variable.type);
          const half = isHalfFloat(param.variable.type) ? cudaHalfConversions[param.variable.type].cType : undefined;
          launcherParams.push(`${half ?? type} ${name}`);
          launcherArguments.push(half ? `*reinterpret_cast<const ${type}*>(&${name})` : name);
          return [`${type} ${name}`];
        }
        case "const":
          return [];
      }
    });
    // A kernel that moves registers between its warpgroups (setMaxRegisters) also says one block a
    // multiprocessor: ptxas then allocates each setmaxnreg region its own count. Without it the FlashAttention
    // backward's dK/dV consumer (192 accumulators) spilled 512 bytes under a 240 raise; the kernels that fit
    // already compile to the same cubin either way (nvcc 13, sm_90a).
    const oneBlock = usesSetMaxRegisters(kernel.body) ? ", 1" : "";
    const bounds = unit.block ? ` __launch_bounds__(${unit.block[0] * unit.block[1] * unit.block[2]}${oneBlock})` : "";
    const sharedLayout = unit.sharedLayout;
    const atomic = atomicArrays(kernel.body);
    signatures.push({
      kernelName: kernel.name,
      functionName: moduleNames.lookup(unit),
      params,
      argumentNames,
      launcherParams,
      launcherArguments,
      block: unit.block,
      launchBounds: bounds,
      dynamicSharedBytes: sharedLayout.dynamicBytes,
      subgroups: usesSubgroups(kernel.body),
      atomicBuffers: kernel.params.flatMap((param) => (param.kind === "buffer" && atomic.has(param.array) ? [names.lookup(param.array)] : [])),
    });
    const specialization = [...kernel.constValues].map(([name, value]) => `${name} = ${value}`).join(", ");
    out.line();
    out.line(`// Kernel ${kernel.name}${specialization ? ` specialized for ${specialization}` : ""}${unit.block ? `; block ${unit.block.join("×")}` : ""}.`);
    lineDirective(kernel.span);
    // Clusters are fixed at compile time (__cluster_dims__): any launch, cuLaunchKernel's included, then runs them.
    const cluster = kernel.cluster ? ` __cluster_dims__(${kernel.cluster.join(", ")})` : "";
    out.line(`extern "C" __global__ void${bounds}${cluster} ${moduleNames.lookup(unit)}(${params.join(", ")}) {`);
    out.indent();
    if (sharedLayout.dynamic) {
      out.line(`// ${sharedLayout.bytes} bytes of shared memory: more than CUDA declares statically, so one dynamic buffer holds the arrays.`);
      if (sharedLayout.dynamicBytes > sharedLayout.bytes) {
        // wgmma's swizzled operands need 1024-byte alignment, which the dynamic buffer's start does not promise:
        // the launch asks for 1024 bytes more, and the arrays start at the next 1024-byte boundary.
        out.line("extern __shared__ __align__(16) unsigned char tsk_dynamic_shared_raw[];");
        out.line("unsigned char* tsk_dynamic_shared = tsk_dynamic_shared_raw + ((1024u - ((unsigned)__cvta_generic_to_shared(tsk_dynamic_shared_raw) & 1023u)) & 1023u);");
      } else {
        out.line("extern __shared__ __align__(16) unsigned char tsk_dynamic_shared[];");
      }
    }
    for (const array of kernel.shared) {
      const dims = (unit.sharedSizes.get(array) ?? []).map((size) => `[${size}]`).join("");
      lineDirective(array.span);
      const name = names.name(array, array.name);
      const type = array.barriers ? "unsigned long long" : vectors.element(array.elementType);
      if (sharedLayout.dynamic) {
        out.line(`${type} (&${name})${dims} = *reinterpret_cast<${type} (*)${dims}>(tsk_dynamic_shared + ${sharedLayout.offsets.get(array)!});`);
        continue;
      }
      // 16-byte accesses need 16-byte alignment, which a float array only gets when asked for (wgmma and TMA
      // operands 1024, mbarriers 8: shared-layout.ts).
      const alignment = sharedLayout.alignments.get(array)!;
      const align = alignment > layoutOf(array.elementType).align ? `__align__(${alignment}) ` : "";
      out.line(`__shared__ ${align}${type} ${name}${dims};`);
    }
    for (const array of kernel.locals) {
      const size = unit.sharedSizes.get(array)?.[0] ?? 0;
      lineDirective(array.span);
      // A warpgroup's A fragments hold the bits wgmma reads (.b32 registers): the same registers then stay
      // live while a group is in flight (cuda-matrix.ts). A 16-bit one (and m16n8k16's B) packs two elements a register.
      const element = isWarpgroupA(array) || isFragment16(array) ? "unsigned" : vectors.element(array.elementType);
      out.line(`${element} ${names.name(array, array.name)}[${isFragment16(array) ? size / 2 : size}];`);
    }
    const warpgroupFragments = usesWgmma(kernel.body)
      ? kernel.locals.filter((array) => array.fragment && isWarpgroupShape(array.fragment.shape)).map((array) => ({ name: names.lookup(array), size: (unit.sharedSizes.get(array)?.[0] ?? 0) / (isFragment16(array) ? 2 : 1), role: array.fragment!.role === "a" ? ("a" as const) : ("accumulator" as const) }))
      : [];
    const wgmmaWrites = usesWgmma(kernel.body) ? writesWgmmaOperands(kernel.body) : { stores: false, copies: false };
    const stores = storesTiles(kernel.body);
    const proxy: ProxyFences = { afterWait: wgmmaWrites.copies, beforeArrive: storeFences(kernel.body, stores || wgmmaWrites.stores), publish: stores ? "tsk_fence_proxy_async_store" : "tsk_fence_proxy_async" };
    const settled = new Map([...wgmmaSettled(kernel.body)].map(([stmt, arrays]) => [stmt, new Set([...arrays].map((array) => names.lookup(array)))]));
    printStmts(kernel.body, { out, names, printer, lineDirective, warpgroupFragments, proxy, publishGlobal: globalPublishPoints(kernel.body), threads: unit.block ? unit.block[0] * unit.block[1] * unit.block[2] : undefined, fences: wgmmaFences(kernel.body), settled, vectors });
    out.dedent();
    out.line("}");
  }
  return { source: out.toString(), signatures, declarations, halves: usesHalves };
}

function makePrinter(names: Namer, moduleNames: Namer, vectors: CudaVectors): ExprPrinter {
  // A vector or struct as the operand of `.x` or `.field`: an atom, or parenthesized.
  const operand = (printed: Printed) => (printed.kind === "atom" ? printed.text : parenthesize(printed));
  const printer: ExprPrinter = new ExprPrinter({
    spelling: cudaSpelling,
    literal: (expr): Printed => {
      switch (expr.type) {
        case "bool":
          return { text: expr.value ? "true" : "false", kind: "atom" };
        case "f32": {
          const text = `${f32Digits(expr.value)}f`;
          return { text, kind: text.startsWith("-") ? "unary" : "atom" };
        }
        case "i32":
          // -2147483648 is not a C literal: it is unary minus on a constant that does not fit an int.
          if (expr.value === -2147483648) return { text: "(-2147483647 - 1)", kind: "atom" };
          return { text: String(expr.value), kind: expr.value < 0 ? "unary" : "atom" };
        case "u32":
          return { text: `${expr.value}u`, kind: "atom" };
        case "f64": {
          const text = f64Digits(expr.value);
          return { text, kind: text.startsWith("-") ? "unary" : "atom" };
        }
        // The encoding itself (cuda-halves.ts), so that no conversion runs.
        case "f16":
          return { text: `tsk_f16{0x${f16Bits(expr.value).toString(16)}}`, kind: "atom" };
        case "bf16":
          return { text: `tsk_bf16{0x${bf16Bits(expr.value).toString(16)}}`, kind: "atom" };
      }
    },
    variable: (variable) => names.lookup(variable),
    builtin: (expr) => ({ text: `(int)${expr.builtin}.${expr.axis}`, kind: "unary" }),
    // A warp is 32 lanes on every CUDA GPU; the literal lets nvcc fold loops over it.
    subgroupBuiltin: (expr) => ({ text: expr.builtin === "subgroupSize" ? "32" : expr.builtin === "warpgroupIdx" ? "tsk_warpgroup_idx()" : expr.builtin === "clusterRank" ? "tsk_cluster_rank()" : cudaLaneId, kind: "atom" }),
    convert: (to, value, from) => {
      // A C++ cast of a NaN or out-of-range float to an integer is undefined behaviour, which nvcc may
      // optimize on; the table's intrinsics are the saturating, NaN → 0 conversion the language defines,
      // and the correctly rounded conversions to and from the half types (targets.ts, cudaConversions).
      // Vectors convert through cuda-vectors.ts's helpers (the composite hook), lane by lane.
      const template = typeof from === "string" && typeof to === "string" ? cudaConversion(from, to) : undefined;
      if (template) return { text: template.replace("$0", value.text), kind: "atom" };
      return { text: `(${vectors.type(to)})${value.kind === "atom" ? value.text : parenthesize(value)}`, kind: "unary" };
    },
    // A narrow integer element reads as its value type, so that C++ picks int or unsigned overloads as the IR typed it.
    load: (expr, element) => {
      // A warpgroup A fragment holds bits (cuda.ts's declarations): a TF32 element is an f32's, a 16-bit one half a register.
      if (isFragment16(expr.array)) {
        const index = printer.print(expr.indices[0]!);
        return { text: `tsk_a16_get_${expr.array.fragment!.element}(${names.lookup(expr.array)}[(${index}) >> 1], (${index}) & 1)`, kind: "atom" };
      }
      if (isWarpgroupA(expr.array)) return { text: `__uint_as_float(${element})`, kind: "atom" };
      if (isFloat8(expr.array.elementType)) return { text: `${cudaFloat8Conversions[expr.array.elementType].widen}(${element})`, kind: "atom" };
      return isNarrowInt(expr.array.elementType) ? { text: `(${vectors.type(expr.type)})${element}`, kind: "unary" } : { text: element, kind: "atom" };
    },
    // A vector of scalars is brace-initialized; a struct too (an aggregate). Broadcasts and mixes are helpers (vector, below).
    construct: (expr, args) => ({ text: `${vectors.type(expr.type)}{${args.map((arg) => arg.text).join(", ")}}`, kind: "atom" }),
    swizzle: (expr, value) => ({ text: `${operand(value)}.${swizzleName(expr.lanes)}`, kind: "atom" }),
    field: (expr, value) => ({ text: `${operand(value)}.${vectors.field(expr.value.type as StructType, expr.field)}`, kind: "atom" }),
    composite: (expr, print) => {
      const call = vectors.call(expr, (operand) => print(operand).text);
      return call === undefined ? undefined : { text: call, kind: "atom" };
    },
    elementPlace: (array, text) => (vectors.isPadded(array) ? `${text}.v` : text),
    check: (expr, holds, values) => ({ text: `tsk_check(${names.lookup(expr.errors)}, ${names.lookup(expr.launch)}, ${expr.site}u, ${holds}, ${values[0]}, ${values[1]})`, kind: "atom" }),
    select: (condition, whenTrue, whenFalse) => ({
      text: `${condition.kind === "ternary" ? parenthesize(condition) : condition.text} ? ${whenTrue.kind === "ternary" ? parenthesize(whenTrue) : whenTrue.text} : ${whenFalse.text}`,
      kind: "ternary",
    }),
    array: (array) => names.lookup(array),
    helper: (helper) => moduleNames.lookup(helper),
    helperArguments: (helper) => (helper.checks ? [names.lookup(helper.checks.errors), names.lookup(helper.checks.launch)] : []),
  });
  return printer;
}

interface StmtContext {
  readonly out: Writer;
  readonly names: Namer;
  readonly printer: ExprPrinter;
  readonly lineDirective: (span: Span) => void;
  /** The kernel's warpgroup fragment arrays (wgmma), pinned after each wgmmaWait; none outside such kernels. */
  readonly warpgroupFragments: readonly WarpgroupFragment[];
  /** The threads of the kernel's fixed block, if it fixes one (setMaxRegisters needs it). */
  readonly threads?: number;
  /** The accumulators' names that each `wgmmaWait(n > 0)` leaves final (cuda-matrix.ts, wgmmaSettled). */
  readonly settled?: ReadonlyMap<Stmt, ReadonlySet<string>>;
  /** Where the kernel's wgmmas need no wgmma.fence, and the loops of wgmmas that get one before them. */
  readonly fences?: ReturnType<typeof wgmmaFences>;
  readonly vectors: CudaVectors;
  /** Where the kernel's barriers publish shared memory to the async proxy (cuda-barriers.ts). */
  readonly proxy: ProxyFences;
  /**
   * The kernel copies tiles from a global buffer it writes: the barriers and releases before which it publishes
   * global memory to the async proxy, and its acquires and waits after which it does (cuda-atomics.ts).
   */
  readonly publishGlobal?: ReadonlySet<Stmt>;
}

/**
 * Whether ordinary stores (`stores`) or cp.async (`copies`) write a shared array that wgmma reads: the writers
 * then publish their stores to the async proxy before they arrive (storeFences), and since cp.async copies land
 * after the arrival that counts them, each wait (and syncThreads) publishes those. Operands that only the
 * tensor memory accelerator fills (copyTile) are written through the async proxy already.
 */
function writesWgmmaOperands(body: readonly Stmt[]): { stores: boolean; copies: boolean } {
  const operands = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    // A register A operand (a 16-bit fragment, set by ordinary register writes) is no shared operand.
    if (stmt.kind === "wgmma") {
      operands.add(stmt.b);
      if (stmt.a.array.space === "shared") operands.add(stmt.a.array);
    }
  });
  let stores = false;
  let copies = false;
  walkStmts(body, (stmt) => {
    if (stmt.kind === "asyncCopy" && operands.has(stmt.target)) copies = true;
    const written = stmt.kind === "store" || stmt.kind === "vectorStore" || stmt.kind === "atomic" ? stmt.array : stmt.kind === "matrixStore" ? stmt.target : undefined;
    if (written && operands.has(written)) stores = true;
  });
  return { stores, copies };
}

/** The zero of a type, as its literal prints; a vector's or struct's is `{}` (every lane and field zero). */
function zero(type: Variable["type"], printer: ExprPrinter): string {
  if (typeof type !== "string") return "{}";
  return printer.print({ kind: "literal", type, value: 0, span: { file: "", start: 0, end: 0 } });
}

/** `x = v`, `x += v`, or `x++` for an integer step of one: the text without the semicolon. */
function assignment(target: string, op: Stmt & { kind: "assign" | "store" }, printer: ExprPrinter): string {
  const { value } = op;
  if (op.op === undefined) return `${target} = ${printer.print(value)}`;
  const call = binaryCall(cudaSpelling, op.op, value.type);
  if (call) return `${target} = ${call.replaceAll("$0", target).replaceAll("$1", printer.print(value))}`;
  if ((op.op === "add" || op.op === "sub") && value.kind === "literal" && value.value === 1 && isInteger(value.type)) {
    return `${target}${op.op === "add" ? "++" : "--"}`;
  }
  return `${target} ${cudaSpelling.binary[op.op]}= ${printer.print(value)}`;
}

/** A store to an e4m3 or e5m2 element: the f32 (for `op=`, the element's value combined with it) encoded. */
function float8Store(target: string, type: "e4m3" | "e5m2", stmt: Stmt & { kind: "store" }, printer: ExprPrinter): string {
  const { widen, narrow } = cudaFloat8Conversions[type];
  const value = printer.print(stmt.value);
  if (stmt.op === undefined) return `${target} = ${narrow}(${value})`;
  const old = `${widen}(${target})`;
  const call = binaryCall(cudaSpelling, stmt.op, "f32");
  return `${target} = ${narrow}(${call ? call.replaceAll("$0", old).replaceAll("$1", value) : `${old} ${cudaSpelling.binary[stmt.op]} ${value}`})`;
}

function simpleStatement(stmt: Stmt, context: StmtContext): string {
  const { names, printer } = context;
  switch (stmt.kind) {
    case "declare": {
      const name = context.names.name(stmt.variable, stmt.variable.name);
      const init = stmt.init ? printer.print(stmt.init) : zero(stmt.variable.type, printer);
      return `${stmt.variable.mutable ? "" : "const "}${context.vectors.type(stmt.variable.type)} ${name} = ${init}`;
    }
    case "assign":
      return assignment(names.lookup(stmt.variable) + partPath(stmt.variable.type, stmt.path, context.vectors), stmt, printer);
    case "store": {
      const target = printer.element(stmt.array, stmt.indices) + partPath(stmt.array.elementType, stmt.path, context.vectors);
      if (isFragment16(stmt.array)) {
        if (stmt.op) throw new Error("internal: a compound store to a 16-bit fragment");
        // Element i is half i & 1 of register i >> 1; the helper rounds to nearest even, as the IR's rounding
        // (roundFragmentValue) that it replaces, so the f32 value goes in as it was.
        const element = stmt.array.fragment!.element;
        const index = printer.print(stmt.indices[0]!);
        return `tsk_a16_set_${element}(${names.lookup(stmt.array)}[(${index}) >> 1], (${index}) & 1, ${printer.print(unroundedFragmentValue(stmt.value, element))})`;
      }
      if (isWarpgroupA(stmt.array)) {
        if (stmt.op) throw new Error("internal: a compound store to a wgmma A fragment");
        return `${target} = __float_as_uint(${printer.print(stmt.value)})`;
      }
      // A store to a wgmma accumulator (fillFragment's) is pinned where it stands: otherwise ptxas may sink the
      // moves into the first group's pipeline and serialize every wgmma (its warning C7515; 74 % of torch.mm TF32
      // against 82 % at 4096³ with the pin, bench/results/2026-11-23-wgmma-ws-variants-h100.json).
      if (isWarpgroupAccumulator(stmt.array) && context.warpgroupFragments.length > 0) return `${assignment(target, stmt, printer)}; tsk_wgmma_keep<1>(&${target})`;
      if (isFloat8(stmt.array.elementType)) return float8Store(target, stmt.array.elementType, stmt, printer);
      return assignment(target, stmt, printer);
    }
    default:
      throw new Error(`internal: ${stmt.kind} is not a simple statement`);
  }
}

/** `.pos.x`: the fields and lane of a part of a value that an assignment writes (legalize left one lane per swizzle). */
function partPath(type: Type | ElementType, path: readonly Access[] | undefined, vectors: CudaVectors): string {
  let current = type;
  let text = "";
  for (const step of path ?? []) {
    if (step.kind === "field") {
      const struct = current as StructType;
      text += `.${vectors.field(struct, step.field)}`;
      current = struct.fields[step.field]!.type;
    } else {
      text += `.${swizzleName(step.lanes)}`;
    }
  }
  return text;
}

/**
 * Where each shared array lives when they share one dynamic buffer: in declaration order, each at a
 * 16-byte boundary (so vector accesses stay aligned). `dynamic` when the total exceeds the static limit.
 */
/** Whether an array holds a warpgroup's accumulators (wgmma's d). */
function isWarpgroupAccumulator(array: ArrayRef): boolean {
  return array.fragment !== undefined && array.fragment.role === "accumulator" && isWarpgroupShape(array.fragment.shape);
}

/** Whether an array holds a warpgroup's A fragments (printed as unsigned bits, see above). */
function isWarpgroupA(array: ArrayRef): boolean {
  return array.fragment !== undefined && array.fragment.role === "a" && isWarpgroupShape(array.fragment.shape);
}

/**
 * Whether an array holds 16-bit input fragments (bf16 or f16 A fragments of the k16 shapes, m16n8k16's B): two
 * elements a register, element 2i in the low half (ir/matrix.ts, mmaHalfRegisters), as mma.sync, wgmma and
 * ldmatrix take and give them.
 */
export function isFragment16(array: ArrayRef): boolean {
  return array.fragment !== undefined && array.fragment.role !== "accumulator" && (array.fragment.element === "bf16" || array.fragment.element === "f16");
}

/** A value stored into a 16-bit A fragment without the IR's f32 → 16-bit → f32 round trip, which the store's packing does itself. */
function unroundedFragmentValue(value: Expr, element: string): Expr {
  return value.kind === "convert" && value.type === "f32" && value.value.kind === "convert" && value.value.type === element && value.value.value.type === "f32" ? value.value.value : value;
}

/** The address of an element: `&A[i]`, `&tile[r][c]`. */
function elementAddress(array: ArrayRef, indices: readonly Expr[], context: StmtContext): string {
  return `&${context.names.lookup(array)}${indices.map((index) => `[${context.printer.print(index)}]`).join("")}`;
}

/** Vector accesses and asynchronous copies: each a few lines of C. */
function memoryOperation(stmt: MemoryOperationStmt, context: StmtContext): string[] {
  switch (stmt.kind) {
    case "vectorLoad": {
      // A load past the array's end is not harmless here: checks.ts branches around it instead.
      if (stmt.zeroUnless) throw new Error("internal: a vector load with zeroUnless reached CUDA (checks.ts gives it only to targets with boundedLoads)");
      if (!vectorElementTypes.has(stmt.array.elementType as ElementScalar)) return narrowVectorAccess(stmt, context);
      const vector = vector4Of(stmt.array.elementType);
      const temp = context.names.name({}, "vector");
      const lines = [`const ${vector.type} ${temp} = *reinterpret_cast<const ${vector.type}*>(${elementAddress(stmt.array, stmt.indices, context)});`];
      stmt.targets.forEach((variable, lane) => {
        const name = context.names.name(variable, variable.name);
        lines.push(`${variable.mutable ? "" : "const "}${types[variable.type as ScalarType]} ${name} = ${temp}.${"xyzw"[lane]};`);
      });
      return lines;
    }
    case "vectorStore": {
      if (!vectorElementTypes.has(stmt.array.elementType as ElementScalar)) return narrowVectorAccess(stmt, context);
      const vector = vector4Of(stmt.array.elementType);
      const values = stmt.values.map((value) => context.printer.print(value)).join(", ");
      return [`*reinterpret_cast<${vector.type}*>(${elementAddress(stmt.array, stmt.indices, context)}) = ${vector.make}(${values});`];
    }
    case "asyncCopy":
      return [`tsk_cp_async_16(${elementAddress(stmt.target, stmt.targetIndices, context)}, ${elementAddress(stmt.source, stmt.sourceIndices, context)});`];
    case "asyncCommit":
      return ["tsk_cp_async_commit();"];
    case "asyncWait":
      return [`tsk_cp_async_wait<${stmt.pending}>();`];
  }
}

/** The unsigned vector of `bytes` bytes a vector access of 16- or 8-bit elements moves, and its words. */
const wordVectors: Readonly<Record<number, { readonly type: string; readonly make: string; readonly words: readonly string[] }>> = {
  16: { type: "uint4", make: "make_uint4", words: [".x", ".y", ".z", ".w"] },
  8: { type: "uint2", make: "make_uint2", words: [".x", ".y"] },
  4: { type: "unsigned int", make: "", words: [""] },
};

/**
 * `load8`/`store8`, `load16`/`store16` (and `load4`/`store4` of 16- and 8-bit elements): one access of 16 (8, 4)
 * bytes as unsigned words, each element taken from or packed into its bits, little-endian as in memory.
 */
function narrowVectorAccess(stmt: Stmt & { kind: "vectorLoad" | "vectorStore" }, context: StmtContext): string[] {
  // The frontend refuses vector accesses to arrays of vectors and structs.
  const type = stmt.array.elementType as ElementScalar;
  const bytes = scalars[type].bytes;
  const lanes = stmt.kind === "vectorLoad" ? stmt.targets.length : stmt.values.length;
  const vector = wordVectors[lanes * bytes]!;
  const perWord = 4 / bytes;
  const address = elementAddress(stmt.array, stmt.indices, context);
  const mask = bytes === 2 ? "0xffffu" : "0xffu";
  if (stmt.kind === "vectorLoad") {
    const temp = context.names.name({}, "words");
    const lines = [`const ${vector.type} ${temp} = *reinterpret_cast<const ${vector.type}*>(${address});`];
    stmt.targets.forEach((variable, lane) => {
      const word = `${temp}${vector.words[Math.floor(lane / perWord)]}`;
      const shift = (lane % perWord) * bytes * 8;
      const bits = shift === 0 ? word : `(${word} >> ${shift})`;
      const value = isHalfFloat(type)
        ? `${types[type]}{(unsigned short)${bits}}`
        : isFloat8(type) ? `${cudaFloat8Conversions[type].widen}(${bits} & ${mask})`
        : scalars[type].signed ? `(int)(${elementTypes[type]})${bits}` : `(${bits} & ${mask})`;
      lines.push(`${variable.mutable ? "" : "const "}${types[variable.type as ScalarType]} ${context.names.name(variable, variable.name)} = ${value};`);
    });
    return lines;
  }
  const words = vector.words.map((_, word) =>
    stmt.values.slice(word * perWord, (word + 1) * perWord).map((value, lane) => {
      const printed = context.printer.print(value);
      const bits = isHalfFloat(type) ? `(unsigned int)(${printed}).bits` : isFloat8(type) ? `${cudaFloat8Conversions[type].narrow}(${printed})` : `((unsigned int)(${printed}) & ${mask})`;
      return lane === 0 ? bits : `(${bits} << ${lane * bytes * 8})`;
    }).join(" | "),
  );
  const value = vector.make ? `${vector.make}(${words.join(", ")})` : words[0]!;
  return [`*reinterpret_cast<${vector.type}*>(${address}) = ${value};`];
}

/** `[const int old = ]atomicAdd(&a[i], v);`, and the collectives as one declaration each. */
function operation(stmt: AtomicStmt | CollectiveStmt, context: StmtContext): void {
  const { names, printer, out } = context;
  const declare = (variable: Variable | undefined, text: string) => {
    if (!variable) return `${text};`;
    return `${variable.mutable ? "" : "const "}${types[variable.type as ScalarType]} ${names.name(variable, variable.name)} = ${text};`;
  };
  if (stmt.kind === "collective") {
    const words = stmt.words ? [`&${names.lookup(stmt.words)}[0]`] : [];
    out.line(declare(stmt.result, cudaCollective(stmt, [...stmt.args.map((arg) => printer.print(arg)), ...words])));
    return;
  }
  const address = elementAddress(stmt.array, stmt.indices, context);
  if (stmt.order) {
    const value = stmt.value ? printer.print(stmt.value) : undefined;
    const call = () => declare(stmt.result, `${cudaAtomics[stmt.op as keyof typeof cudaAtomics]}(${address}, ${[...(stmt.expected ? [printer.print(stmt.expected)] : []), value!].join(", ")})`);
    for (const line of orderedAtomic(stmt, address, value, context.publishGlobal, (text) => declare(stmt.result, text), call)) out.line(line);
    return;
  }
  // Loads and stores through a volatile pointer: ld/st.volatile, which PTX treats as relaxed at system scope
  // (never cached in L1, merged or hoisted out of a loop), and which a `__threadfence()` orders.
  const volatileElement = `*(volatile ${elementTypes[stmt.array.elementType as ElementScalar]}*)(${address})`;
  if (stmt.op === "load") {
    out.line(declare(stmt.result, volatileElement));
    return;
  }
  if (stmt.op === "store") {
    out.line(`${volatileElement} = ${printer.print(stmt.value!)};`);
    return;
  }
  if (stmt.op === "wait") throw new Error("internal: waitFlag() always acquires");
  const operands = [...(stmt.expected ? [stmt.expected] : []), stmt.value!].map((value) => printer.print(value));
  out.line(declare(stmt.result, `${cudaAtomics[stmt.op]}(${address}, ${operands.join(", ")})`));
}

/** A checked build's call that records a barrier or warp operation some threads missed (passes/checks.ts). */
function divergenceCheck(check: DivergenceCheck, names: Namer, holds: string, first: string, second: string): string {
  return `tsk_check(${names.lookup(check.errors)}, ${names.lookup(check.launch)}, ${check.site}u, ${holds}, ${first}, ${second})`;
}

/**
 * A checked build's barrier: `__syncthreads_count` is the barrier and counts the threads that reached it
 * (those that returned do not), which every thread compares with the block's.
 */
function checkedBarrier(stmt: BarrierStmt, fences: string, names: Namer): string {
  const threads = "blockDim.x * blockDim.y * blockDim.z";
  return `{ ${fences}const unsigned tsk_arrived = (unsigned)__syncthreads_count(1); ${divergenceCheck(stmt.check!, names, `tsk_arrived == ${threads}`, "tsk_arrived", threads)}; }`;
}

/**
 * A checked build's record of a failed check (passes/checks.ts, docs/language.md "Checked GPU builds"): the
 * error buffer counts failures in its first word and keeps the first 8 as records of 10 words (site, launch
 * tag, block, thread, two values). The record is out of line, so that a check costs its comparison and branch.
 */
const checkHelpers = [
  "__device__ __noinline__ void tsk_report(unsigned* errors, unsigned launch, unsigned site, unsigned a, unsigned b) {",
  "  const unsigned slot = atomicAdd(errors, 1u);",
  "  if (slot < 8u) {",
  "    unsigned* r = errors + 1u + slot * 10u;",
  "    r[0] = site; r[1] = launch;",
  "    r[2] = blockIdx.x; r[3] = blockIdx.y; r[4] = blockIdx.z;",
  "    r[5] = threadIdx.x; r[6] = threadIdx.y; r[7] = threadIdx.z;",
  "    r[8] = a; r[9] = b;",
  "  }",
  "}",
  "__device__ __forceinline__ bool tsk_check(unsigned* errors, unsigned launch, unsigned site, bool holds, unsigned a, unsigned b) {",
  "  if (!holds) tsk_report(errors, launch, site, a, b);",
  "  return holds;",
  "}",
];

/**
 * The intrinsics whose CUDA spelling is a helper of ours, printed once when used. Each stands in for a C++
 * form that the differential fuzzer found wrong on the H100 (tests/fuzz/README.md), except `Math.sign`:
 * - f32 `Math.sign`: a template would repeat its argument three times.
 * - f32 `Math.abs` clears the sign bit by hand: ptxas (CUDA 13, sm_90) folds `fabsf(x) >= 0.0f`, and any
 *   `fabsf(x) >= c` with c ≤ 0, to true even for a NaN `x`.
 * - i32 `Math.abs` wraps (`Math.abs(-2147483648)` is -2147483648, docs/language.md §6), and so does PTX's
 *   `abs.s32`, but ptxas takes its result as never negative: `rem.s32` of it gave 2 for
 *   `Math.abs(-2147483648) % 198`. Compare, negate and select in inline PTX computes the same value and
 *   ptxas divides it as signed (bench/ptxas-abs-probe.cu, results/2026-11-23-ptxas-abs-probe-h100.txt).
 * - Integer `Math.min`/`Math.max` compare and select in inline PTX: ptxas fuses nested integer min/max into
 *   one three-operand VIMNMX3 and drops an operand's negation (`min(min(-a, b), c)` gives
 *   `min(min(a, b), c)`), however the negation is written in C++ or PTX; the select form is right on every
 *   shape and forms no VIMNMX3 (bench/ptxas-minmax-probe.cu, results/2026-11-23-ptxas-minmax-probe-h100*).
 *   The int and unsigned overloads let C++ pick by the operands' printed types. A call with a literal operand
 *   stays a plain `min`/`max`: fusing needs two plain calls in a chain, and two with literals in a chain
 *   (`min(min(-a, 5), 7)`, through variables too) NVVM folds into one before ptxas sees them; NVVM can bound
 *   a loop by the plain form (`k <= min(nearest, 255)` in examples/scan-lookback.ts unrolls again: through
 *   the helper it ran at 409 µs against 330, H100 2026-11-23).
 * - f32 `inverseSqrt` is the hardware's reciprocal square root, `rsqrt.approx.ftz.f32` (one MUFU.RSQ), as
 *   WGSL's `inverseSqrt` is on every GPU: written out as `1 / sqrt(x)` (its definition, which the CPU computes)
 *   it was a correctly rounded square root and division: 46 SASS instructions per interaction of the
 *   all-pairs N-body of examples/particles (BLOCK 64, one body per thread; nvcc 13.0, sm_90), with branches
 *   and calls into the division's slow path; `rsqrtf` is MUFU.RSQ plus a test and two multiplies for
 *   subnormal arguments (18.8); this is 15.8 (bench/results/2026-11-26-particles-sass-sm90.txt). A subnormal
 *   argument counts as zero (+∞), as WGSL allows (docs/language.md §27).
 * - f32 `2 ** x` (exp2) is `ex2.approx.ftz.f32`, one MUFU.EX2: `exp2f` is the same approximation (2 ULP by
 *   the PTX ISA) wrapped for subnormal results, a test, a halving of x and a squaring of the result (four SASS
 *   instructions an exponential, three of them in the way of FlashAttention's softmax, 64 an S tile a thread;
 *   nvcc 13, sm_90a). Results below 2⁻¹²⁶ are 0 here.
 */
const intrinsicHelpers: readonly { readonly name: string; readonly lines: readonly string[] }[] = [
  { name: "tsk_signf", lines: ["__device__ __forceinline__ float tsk_signf(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }"] },
  { name: "tsk_fabsf", lines: ["__device__ __forceinline__ float tsk_fabsf(float x) { return __int_as_float(__float_as_int(x) & 0x7fffffff); }"] },
  { name: "tsk_abs", lines: ['__device__ __forceinline__ int tsk_abs(int x) { int r; asm("{.reg .pred p; .reg .s32 n; setp.lt.s32 p, %1, 0; sub.s32 n, 0, %1; selp.b32 %0, n, %1, p;}" : "=r"(r) : "r"(x)); return r; }'] },
  { name: "tsk_sign", lines: ["__device__ __forceinline__ double tsk_sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0); }"] },
  { name: "tsk_fabs", lines: ["__device__ __forceinline__ double tsk_fabs(double x) { return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffLL); }"] },
  { name: "tsk_rsqrtf", lines: ['__device__ __forceinline__ float tsk_rsqrtf(float x) { float r; asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }'] },
  { name: "tsk_exp2f", lines: ['__device__ __forceinline__ float tsk_exp2f(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }'] },
  { name: "tsk_min", lines: selectHelpers("tsk_min", "lt") },
  { name: "tsk_max", lines: selectHelpers("tsk_max", "gt") },
];

/** `name(a, b)` for int and unsigned: `a` where `a <compare> b` holds, else `b`. */
function selectHelpers(name: string, compare: "lt" | "gt"): string[] {
  return (["int:s32", "unsigned:u32"] as const).map((pair) => {
    const [type, ptx] = pair.split(":");
    return `__device__ __forceinline__ ${type} ${name}(${type} a, ${type} b) { ${type} r; asm("{.reg .pred p; setp.${compare}.${ptx} p, %1, %2; selp.b32 %0, %1, %2, p;}" : "=r"(r) : "r"(a), "r"(b)); return r; }`;
  });
}

/** Whether a body calls an intrinsic that CUDA spells as helper `name` (the printer's own choice of spelling). */
function callsHelper(body: readonly Stmt[], name: string): boolean {
  let found = false;
  walkStmts(body, (stmt) => {
    for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => {
      if (e.kind === "intrinsic" && new RegExp(`\\b${name}\\b`).test(intrinsicTemplate(cudaSpelling, e))) found = true;
    });
  });
  return found;
}

function usesAsyncCopies(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => {
    if (stmt.kind === "asyncCopy" || stmt.kind === "asyncCommit" || stmt.kind === "asyncWait") found = true;
  });
  return found;
}

/**
 * `cp.async` (sm_80 and later) copies 16 bytes global→shared without passing through registers; commit
 * closes a group and wait<N> blocks until at most N groups are pending. Older GPUs copy synchronously,
 * which meets the same contract. Inline PTX keeps the output free of includes, for NVRTC.
 */
const asyncCopyHelpers = [
  "__device__ __forceinline__ void tsk_cp_async_16(void* shared_dst, const void* global_src) {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
  "  unsigned long long shared_address;",
  '  asm("cvta.to.shared.u64 %0, %1;" : "=l"(shared_address) : "l"(shared_dst));',
  '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)shared_address), "l"(global_src) : "memory");',
  "#else",
  "  *reinterpret_cast<float4*>(shared_dst) = *reinterpret_cast<const float4*>(global_src);",
  "#endif",
  "}",
  "__device__ __forceinline__ void tsk_cp_async_commit() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
  '  asm volatile("cp.async.commit_group;" ::: "memory");',
  "#endif",
  "}",
  "template <int pending> __device__ __forceinline__ void tsk_cp_async_wait() {",
  "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
  '  asm volatile("cp.async.wait_group %0;" :: "n"(pending) : "memory");',
  "#endif",
  "}",
];

function printStmts(stmts: readonly Stmt[], context: StmtContext): void {
  printCStatements(stmts, {
    out: context.out,
    printer: context.printer,
    simple: (stmt) => simpleStatement(stmt, context),
    memoryOperation: (stmt) => memoryOperation(stmt, context),
    operation: (stmt) => operation(stmt, context),
    matrix: (stmt) => {
      const element = (array: ArrayRef, index: Expr) => `${context.names.lookup(array)}[${context.printer.print(index)}]`;
      if (stmt.kind === "mma") return [cudaMma(stmt, element)];
      if (stmt.kind === "matrixLoad") return [cudaLdmatrix(stmt, element, (expr) => context.printer.print(expr), (array) => context.names.lookup(array))];
      return cudaWarpgroup(stmt, element, (expr) => context.printer.print(expr), (array) => context.names.lookup(array), context.warpgroupFragments, !context.fences?.unfenced.has(stmt), context.settled?.get(stmt));
    },
    barrierOp: (stmt) => {
      if (stmt.kind === "barrierOp") return cudaBarrierOp(stmt, context.names.lookup(stmt.barriers), (expr) => context.printer.print(expr), context.proxy);
      if (stmt.kind === "tileCopy") return cudaTileCopy(stmt, (array) => context.names.lookup(array), (expr) => context.printer.print(expr));
      if (stmt.kind === "tileStore" || stmt.kind === "tileStoreWait") return cudaTileStore(stmt, (array) => context.names.lookup(array), (expr) => context.printer.print(expr), context.proxy);
      if (!context.threads) throw new Error("internal: setMaxRegisters() in a kernel without a fixed block; the validator rejects it (TSK3091)");
      return cudaSetMaxRegisters(stmt, context.threads);
    },
    // The tensor cores read wgmma's shared operand through the async proxy: publish ordinary writes to it first.
    barrier: (stmt) => {
      const shared = context.proxy.beforeArrive.has(stmt) ? `${context.proxy.publish}(); ` : context.proxy.afterWait ? "tsk_fence_proxy_async(); " : "";
      const fences = `${context.publishGlobal?.has(stmt) ? "tsk_fence_proxy_async_global(); " : ""}${shared}`;
      if (stmt.scope === "cluster") return `${fences}tsk_cluster_sync();`;
      // Named barrier 1 + w for warpgroup w's 128 threads (0 is __syncthreads').
      if (stmt.scope === "warpgroup") return `${fences}asm volatile("bar.sync %0, 128;" :: "r"(1 + tsk_warpgroup_idx()) : "memory");`;
      return stmt.check ? checkedBarrier(stmt, fences, context.names) : `${fences}__syncthreads();`;
    },
    // membar.gl (fence.sc.gpu): stronger than the message passing threadFence() promises; on the H100 the
    // look-back scan ran no faster with fence.acq_rel.gpu (bench/README.md).
    fence: "__threadfence();",
    unrollPragma: "#pragma unroll",
    beforeStatement: context.lineDirective,
    linesBefore: (stmt) => [...(context.fences?.fencedLoops.has(stmt) ? ["tsk_wgmma_fence();"] : []), ...(stmt.kind === "wgmma" && context.proxy.beforeArrive.has(stmt) ? ["tsk_fence_proxy_async();"] : [])],
  });
}

/** Whether a body changes its warpgroups' register counts (setMaxRegisters). */
function usesSetMaxRegisters(body: readonly Stmt[]): boolean {
  let found = false;
  walkStmts(body, (stmt) => stmt.kind === "setMaxRegisters" && (found = true));
  return found;
}
