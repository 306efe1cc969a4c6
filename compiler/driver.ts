/**
 * The compiler pipeline from files to generated text: TypeScript's own diagnostics, lowering to IR,
 * choosing and applying specializations, validation, then per target unrolling, legalization and
 * emission. A kernel that declares its `targets` is checked and emitted only for those of the compilation's
 * targets it names; the rest skip it (a target no kernel of a file is built for has no output for that
 * file). This is the programmatic API behind `tskernel check` and `tskernel build`. Nothing is emitted for a
 * file with errors; every diagnostic is returned, located, for the caller to render.
 */

import fs from "node:fs";
import path from "node:path";
import type { Project, SourceFile } from "ts-morph";
import { makeDiagnostic, hasErrors, type Diagnostic } from "./diagnostics/diagnostic.ts";
import type { ConstValue, HelperFunction, Kernel, Module, ScalarType, Stmt } from "./ir/ir.ts";
import { exprsOf, helpersCalledBy, walkExpr, walkStmts } from "./ir/rewrite.ts";
import { lowerFile } from "./frontend/lower-kernel.ts";
import { checkBackwardPairs } from "./frontend/signature.ts";
import { addSourceFile, isStackOverflow, stackOverflowDiagnostic } from "./frontend/nesting.ts";
import { createProject } from "./frontend/program.ts";
import { foldStmts } from "./passes/fold.ts";
import { legalize } from "./passes/legalize.ts";
import { checkRecords, checkRecordWords, insertChecks, operationText, type HelperCopies, type KernelChecks } from "./passes/checks.ts";
import { sourceLocator, type SourceLocator } from "./diagnostics/span.ts";
import type { ManifestChecks, ManifestImplicitParam } from "./lang/manifest.ts";
import { specializeKernel, specializedName } from "./passes/specialize.ts";
import { scalarizePrivateArrays } from "./passes/scalarize.ts";
import { scalarizeVectors } from "./passes/scalarize-vectors.ts";
import { unrollLoops, unrollShortLoops } from "./passes/unroll.ts";
import { checkTargetLimits, validateKernel, type KernelFacts } from "./validate/validate.ts";
import { emitCuda } from "./backends/cuda.ts";
import { emitCudaHeader } from "./backends/cuda-header.ts";
import { emitWgsl, type WgslEntryInfo } from "./backends/wgsl.ts";
import { emitJs } from "./backends/js.ts";
import { targets, type TargetName } from "./backends/targets.ts";

export interface CompileOptions {
  readonly targets: readonly TargetName[];
  /** `--define NAME=VALUE`: the value of a compile-time constant in every kernel that has one by that name. */
  readonly defines?: ReadonlyMap<string, string>;
  /** Paths in generated files and diagnostics are relative to this directory. */
  readonly baseDir?: string;
  /** Write `#line` directives into CUDA output (default true). */
  readonly lineDirectives?: boolean;
  /**
   * Skip the compile-time barrier-uniformity check. Only for testing the checked CPU mode's run-time
   * barrier check, which exists for kernels that get past the compiler; never exposed on the CLI.
   */
  readonly unsafeSkipBarrierCheck?: boolean;
  /**
   * Only these kernels (by name) are specialized, checked and emitted; the others of each file are still
   * parsed. For tools that build one kernel with `defines` meant for it alone (the tuner), which would not
   * suit its siblings.
   */
  readonly kernels?: ReadonlySet<string>;
  /** Reuse a project across compilations (the warm path); a new one is made otherwise. */
  readonly project?: Project;
  /**
   * The text of a file where it is not what the disk holds (an editor's unsaved buffer); undefined: read the
   * disk. Only the files passed to compileFiles are asked for.
   */
  readonly readFile?: (absolutePath: string) => string | undefined;
  /**
   * Generate code (default true). false stops after validation, for a tool that wants only the diagnostics
   * (the editor plugin): emitters report nothing, so the diagnostics are the same.
   */
  readonly emit?: boolean;
  /**
   * A checked build (`tskernel build --checked`): the CUDA and WGSL code checks every array access, integer
   * division and shift amount at run time and records failures in an error buffer the runtime reads
   * (passes/checks.ts); the manifest describes the checks. The JS output is unchanged (its checked build is
   * always made: `checkedFactoryBody`).
   */
  readonly checked?: boolean;
  /**
   * Report TypeScript's own errors as TSK1002 (default true). An editor shows them already, and checking the
   * whole file for them is a third of a warm recompile; lowering still asks the checker what it needs.
   */
  readonly typeScriptDiagnostics?: boolean;
}

/** One specialization of one kernel, validated. */
export interface SpecializedKernel {
  readonly kernel: Kernel;
  readonly generic: Kernel;
  readonly entryName: string;
  readonly facts: KernelFacts;
  /**
   * The compilation's targets this specialization is built for: all of them, or those its kernel's `targets`
   * option names. The others skip it: they have no code for it and checked none of their limits.
   */
  readonly targets: readonly TargetName[];
}

export interface FileOutput {
  readonly sourceFile: string;
  readonly displayPath: string;
  readonly module: Module;
  readonly specializations: readonly SpecializedKernel[];
  /**
   * Per target, absent when no specialization of the file is built for it. `functions[i]` is the CUDA function
   * of `specializations[i]`, undefined where that specialization skips CUDA (its kernel's `targets`).
   */
  readonly cuda?: {
    readonly source: string;
    readonly header: string;
    readonly functions: readonly (string | undefined)[];
    /** Per function: bytes of dynamic shared memory its launches need (0: none). */
    readonly dynamicSharedBytes: readonly (number | undefined)[];
    /** A checked build: per function, its checks (the manifest's). */
    readonly checks?: readonly (ManifestChecks | undefined)[];
  };
  /** `entries[i]` is the WGSL entry point of `specializations[i]`, undefined where it skips WGSL. */
  readonly wgsl?: {
    readonly source: string;
    readonly entries: readonly (WgslEntryInfo | undefined)[];
    readonly lineSources: readonly (string | undefined)[];
    /** The WebGPU features the module needs (`enable f16;` applies to all of its entry points). */
    readonly features: readonly string[];
    /** A checked build: per entry point, its checks (the manifest's), and the parameters its layout binds. */
    readonly checks?: readonly (ManifestChecks | undefined)[];
    readonly checkedParams?: readonly (Kernel["params"] | undefined)[];
  };
  /** `functions[i]` is the JS function of `specializations[i]`, undefined where it skips JS. */
  readonly js?: {
    readonly source: string;
    readonly factoryBody: string;
    /** The checked-mode build of the same kernels (see backends/js.ts), for the CPU runtime's `checked` option. */
    readonly checkedFactoryBody: string;
    readonly functions: readonly (string | undefined)[];
  };
}

export interface CompileResult {
  readonly diagnostics: readonly Diagnostic[];
  readonly files: readonly FileOutput[];
  readonly ok: boolean;
}

export function compileFiles(fileNames: readonly string[], options: CompileOptions): CompileResult {
  const diagnostics: Diagnostic[] = [];
  const project = options.project ?? createProject();
  const baseDir = options.baseDir ?? process.cwd();
  const sourceFiles: SourceFile[] = [];
  for (const fileName of fileNames) {
    const absolute = path.resolve(fileName);
    let text: string;
    try {
      text = options.readFile?.(absolute) ?? fs.readFileSync(absolute, "utf8");
    } catch (error) {
      diagnostics.push(makeDiagnostic("TSK4001", undefined, [fileName, (error as NodeJS.ErrnoException).code ?? String(error)]));
      continue;
    }
    const loaded = addSourceFile(project, absolute, text);
    if ("code" in loaded) diagnostics.push(loaded);
    else sourceFiles.push(loaded);
  }
  const overflowed = new Set<SourceFile>();
  if (options.typeScriptDiagnostics !== false) diagnostics.push(...typeScriptDiagnostics(sourceFiles, overflowed));

  const files: FileOutput[] = [];
  const definedNames = new Set<string>();
  for (const sourceFile of sourceFiles) {
    if (overflowed.has(sourceFile)) continue;
    try {
      files.push(compileSourceFile(sourceFile, options, baseDir, definedNames, diagnostics));
    } catch (error) {
      // A phase ran out of stack below the nesting limit: a located error, not a crash (frontend/nesting.ts).
      if (!isStackOverflow(error)) throw error;
      diagnostics.push(stackOverflowDiagnostic(sourceFile.getFilePath(), sourceFile.getFullText(), "compiling", sourceFile.compilerNode));
    }
  }
  for (const name of options.defines?.keys() ?? []) {
    if (!definedNames.has(name)) diagnostics.push(makeDiagnostic("TSK4005", undefined, [name]));
  }
  return { diagnostics, files, ok: !hasErrors(diagnostics) };
}

/** Lowers, specializes, validates and (when nothing so far has an error) emits one parsed file. */
function compileSourceFile(
  sourceFile: SourceFile,
  options: CompileOptions,
  baseDir: string,
  definedNames: Set<string>,
  diagnostics: Diagnostic[],
): FileOutput {
  const fileDiagnostics: Diagnostic[] = [];
  const { module, diagnostics: lowering } = lowerFile(sourceFile);
  fileDiagnostics.push(...lowering);
  fileDiagnostics.push(...checkBackwardPairs(module.kernels));
  if (module.kernels.length === 0 && lowering.length === 0) {
    fileDiagnostics.push(makeDiagnostic("TSK4004", undefined, [path.relative(baseDir, sourceFile.getFilePath())]));
  }
  const specializations: SpecializedKernel[] = [];
  for (const kernel of module.kernels) {
    if (options.kernels && !options.kernels.has(kernel.name)) continue;
    const declared = kernel.targets;
    const builtFor = declared ? options.targets.filter((target) => declared.includes(target)) : options.targets;
    for (const values of specializationValues(kernel, options.defines, fileDiagnostics, definedNames)) {
      const specialized = specializeKernel(kernel, values);
      const facts = validateKernel(specialized, fileDiagnostics, { barrierUniformity: !options.unsafeSkipBarrierCheck });
      // One report per limit and place, from the first target that has it (e.g. a 4096-thread block
      // is one error, not one per target).
      const limitDiagnostics: Diagnostic[] = [];
      for (const target of builtFor) checkTargetLimits(specialized, facts, target, limitDiagnostics);
      const reported = new Set<string>();
      for (const d of limitDiagnostics) {
        const key = `${d.code}@${d.span?.start}`;
        if (reported.has(key)) continue;
        reported.add(key);
        fileDiagnostics.push(d);
      }
      specializations.push({ kernel: specialized, generic: kernel, entryName: specializedName(kernel, values), facts, targets: builtFor });
    }
  }
  const unique = dedupe(fileDiagnostics);
  diagnostics.push(...unique);
  const displayPath = path.relative(baseDir, sourceFile.getFilePath()).split(path.sep).join("/");
  if (hasErrors(unique) || hasErrors(diagnostics) || options.emit === false) return { sourceFile: sourceFile.getFilePath(), displayPath, module, specializations };
  return emitFile(sourceFile, displayPath, module, specializations, options, diagnostics);
}

function emitFile(
  sourceFile: SourceFile,
  displayPath: string,
  module: Module,
  specializations: readonly SpecializedKernel[],
  options: CompileOptions,
  diagnostics: Diagnostic[],
): FileOutput {
  let output: FileOutput = { sourceFile: sourceFile.getFilePath(), displayPath, module, specializations };
  // Spans of helpers imported from another file point into that file, by the path the build shows for it.
  const baseDir = options.baseDir ?? process.cwd();
  const locator = sourceLocator({ file: sourceFile.getFilePath(), path: displayPath, text: sourceFile.getFullText() }, (file) => {
    const other = sourceFile.getProject().getSourceFile(file);
    return other && { path: path.relative(baseDir, file).split(path.sep).join("/"), text: other.getFullText() };
  });
  const warned = new Set<string>();
  for (const targetName of options.targets) {
    const target = targets[targetName];
    // The specializations this target builds, and for each of the file's specializations its place among them.
    const built = specializations.filter((s) => s.targets.includes(targetName));
    if (built.length === 0) continue;
    const aligned = <T>(values: readonly T[]): (T | undefined)[] => {
      let next = 0;
      return specializations.map((s) => (s.targets.includes(targetName) ? values[next++] : undefined));
    };
    const unrolled = (body: Kernel["body"]) =>
      target.unrollInIR ? foldStmts(unrollLoops(body)) : target.unrollShortLoops ? unrollShortLoops(body, target.unrollShortLoops) : body;
    const prepare = (body: Kernel["body"]) => legalize(unrolled(body), target.legalize);
    // Calls point at the module's helper objects, so backends name those and print the prepared bodies. A
    // target that skips some kernels prints only the helpers its own kernels call: the validator measured the
    // others only for the targets of the kernels that call them (code depth), so they may not fit this one.
    const used = built.length < specializations.length ? helpersCalledBy(built.map((s) => s.kernel.body)) : undefined;
    const moduleHelpers = module.helpers.filter((helper) => !used || used.has(helper)).map((helper) => ({ helper, body: helper.body }));
    // A target that computes vectors and structs lane by lane gets them as scalars (helpers included, whose
    // callers then call the scalarized ones) before anything else of its own.
    const lanes = target.scalarizeVectors
      ? scalarizeVectors(moduleHelpers, built.map((s) => ({ kernel: s.kernel, sharedSizes: s.facts.sharedSizes })))
      : { helpers: moduleHelpers, kernels: built.map((s) => ({ kernel: s.kernel, sharedSizes: s.facts.sharedSizes })) };
    const helpers = lanes.helpers.map(({ helper, body }) => ({ helper, body: prepare(body) }));
    // A checked build: each kernel's checks, inserted as the last step of its legalization (passes/checks.ts).
    const checkOptions = options.checked ? target.checks : undefined;
    const checks: (KernelChecks | undefined)[] = [];
    // A checked build's copies of helpers, one set a kernel, printed after the module's own helpers.
    const helperCopies: HelperCopies = {
      bodies: new Map(lanes.helpers.map(({ helper, body }) => [helper, body] as const)),
      prepare: (body, insert) => legalize(unrolled(body), target.legalize, insert),
    };
    const checkedHelpers: { helper: HelperFunction; body: readonly Stmt[] }[] = [];
    const units = built.map((s, index) => {
      const { kernel, sharedSizes } = lanes.kernels[index]!;
      let kernelChecks: KernelChecks | undefined;
      const body = checkOptions
        ? legalize(unrolled(kernel.body), target.legalize, (stmts) => {
            const inserted = insertChecks(kernel, stmts, sharedSizes, { ...checkOptions, block: s.facts.block }, helperCopies);
            kernelChecks = inserted.checks;
            checkedHelpers.push(...inserted.helpers);
            return inserted.body;
          })
        : prepare(kernel.body);
      checks.push(kernelChecks);
      for (const item of kernelChecks?.unchecked ?? []) {
        const key = `${kernel.name}|${item.what}`;
        if (warned.has(key)) continue;
        warned.add(key);
        diagnostics.push(makeDiagnostic("TSK3170", item.span, [item.what, kernel.name, item.why]));
      }
      const params = kernelChecks ? [...kernel.params, ...kernelChecks.params] : kernel.params;
      const scalarized = target.scalarizePrivateArrays ? scalarizePrivateArrays(body, kernel.locals, sharedSizes) : { body, locals: kernel.locals };
      return {
        kernel: { ...kernel, params, body: scalarized.body, locals: scalarized.locals },
        entryName: s.entryName,
        block: s.facts.block,
        sharedSizes,
        sharedLayout: s.facts.sharedLayout,
      };
    });
    if (targetName === "cuda") {
      const cuda = emitCuda({
        displayPath,
        locator,
        helpers: [...helpers, ...checkedHelpers],
        kernels: units,
        lineDirectives: options.lineDirectives ?? true,
      });
      const stem = path.basename(displayPath).replace(/\.[cm]?ts$/, "");
      const header = emitCudaHeader(displayPath, `${stem}.cu`, cuda.signatures, units.map((u) => u.kernel), cuda.declarations, cuda.halves);
      output = {
        ...output,
        cuda: {
          source: cuda.source,
          header,
          functions: aligned(cuda.signatures.map((s) => s.functionName)),
          dynamicSharedBytes: aligned(cuda.signatures.map((s) => s.dynamicSharedBytes)),
          ...(checkOptions ? { checks: aligned(checks.map((c) => manifestChecks(c!, locator))) } : {}),
        },
      };
    } else if (targetName === "wgsl") {
      const wgsl = emitWgsl({ displayPath, locator, helpers: [...helpers, ...checkedHelpers], kernels: units });
      output = {
        ...output,
        wgsl: {
          source: wgsl.source,
          entries: aligned(wgsl.entries),
          lineSources: wgsl.lineSources,
          features: wgsl.features,
          ...(checkOptions
            ? { checks: aligned(checks.map((c) => manifestChecks(c!, locator))), checkedParams: aligned(units.map((u) => u.kernel.params)) }
            : {}),
        },
      };
    } else {
      const js = emitJs({ displayPath, locator, helpers, kernels: units });
      const checked = emitJs({ displayPath, locator, helpers, kernels: units, checked: true });
      output = { ...output, js: { ...js, functions: aligned(js.functions), checkedFactoryBody: checked.factoryBody } };
    }
  }
  return output;
}

/** A kernel's checks as the manifest describes them: each site at its `file:line:column`. */
function manifestChecks(checks: KernelChecks, locator: SourceLocator): ManifestChecks {
  const implicit = checks.params.map((param): ManifestImplicitParam => {
    const name = param.kind === "buffer" ? param.array.name : param.kind === "scalar" ? param.variable.name : param.name;
    const kind = param.kind === "const" ? undefined : param.implicit;
    if (!kind) throw new Error("internal: a checked build added a parameter that is not implicit");
    return kind.kind === "length" ? { name, kind: "length", of: kind.of } : { name, kind: kind.kind };
  });
  return {
    errorWords: 1 + checkRecords * checkRecordWords,
    records: checkRecords,
    recordWords: checkRecordWords,
    implicit,
    sites: checks.sites.map((site) => {
      const text = site.kind === "division-by-zero" || site.kind === "shift-out-of-range" ? operationText(locator.text(site.span), site.span) : undefined;
      return {
        kind: site.kind,
        location: locator.location(site.span),
        ...(site.access ? { access: site.access } : {}),
        ...(site.array ? { array: site.array.name, space: site.array.space, ...(site.array.dims ? { dims: site.array.dims } : {}) } : {}),
        ...(site.lanes ? { lanes: site.lanes } : {}),
        signed: site.signed,
        ...(site.operator ? { operator: site.operator } : {}),
        ...(text ? { text } : {}),
      };
    }),
  };
}

/** The specializations of a kernel: its options' list (or one), completed by defaults, overridden by defines. */
function specializationValues(
  kernel: Kernel,
  defines: ReadonlyMap<string, string> | undefined,
  diagnostics: Diagnostic[],
  definedNames: Set<string>,
): Map<string, ConstValue>[] {
  const constParams = kernel.params.flatMap((param) => (param.kind === "const" ? [param] : []));
  if (constParams.length === 0) return [new Map()];
  const requested = kernel.specializations.length > 0 ? kernel.specializations : [{}];
  const result: Map<string, ConstValue>[] = [];
  const seen = new Set<string>();
  for (const partial of requested) {
    const values = new Map<string, ConstValue>();
    let complete = true;
    for (const param of constParams) {
      const defined = defines?.get(param.name);
      let value: ConstValue | undefined = partial[param.name] ?? param.defaultValue;
      if (defined !== undefined) {
        definedNames.add(param.name);
        value = parseDefine(defined, param.type);
        if (value === undefined) {
          diagnostics.push(makeDiagnostic("TSK2010", param.span, [param.name, param.type, defined]));
          complete = false;
          continue;
        }
      }
      if (value === undefined) {
        diagnostics.push(
          makeDiagnostic("TSK1016", param.span, [param.name, kernel.name], {
            notes: [`give it a default (\`${param.name}: Const<${param.type}> = …\`), list it in the kernel's specializations, or pass --define ${param.name}=VALUE`],
          }),
        );
        complete = false;
        continue;
      }
      values.set(param.name, value);
    }
    const key = JSON.stringify([...values]);
    if (complete && !seen.has(key)) {
      seen.add(key);
      result.push(values);
    }
  }
  return result;
}

function parseDefine(text: string, type: ScalarType): ConstValue | undefined {
  if (type === "bool") return text === "true" ? true : text === "false" ? false : undefined;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^0[xX][0-9a-fA-F]+$/.test(text)) return undefined;
  const value = Number(text);
  if (type === "f32") return Math.fround(value);
  if (!Number.isInteger(value)) return undefined;
  if (type === "i32" && (value < -2147483648 || value > 2147483647)) return undefined;
  if (type === "u32" && (value < 0 || value > 4294967295)) return undefined;
  return value;
}

/** TypeScript's errors in the given files; a file on which the checker ran out of stack goes into `overflowed`. */
function typeScriptDiagnostics(files: readonly SourceFile[], overflowed: Set<SourceFile>): Diagnostic[] {
  const wanted = new Set(files.map((file) => file.getFilePath()));
  const out: Diagnostic[] = [];
  for (const file of files) {
    let found;
    try {
      found = file.getPreEmitDiagnostics();
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      overflowed.add(file);
      out.push(stackOverflowDiagnostic(file.getFilePath(), file.getFullText(), "type-checking", file.compilerNode));
      continue;
    }
    for (const d of found) {
      const source = d.getSourceFile();
      if (!source || !wanted.has(source.getFilePath())) continue;
      if (d.getCategory() !== 1 /* Error */) continue;
      const message = typeof d.getMessageText() === "string" ? (d.getMessageText() as string) : (d.getMessageText() as { getMessageText(): string }).getMessageText();
      const start = d.getStart() ?? 0;
      out.push(makeDiagnostic("TSK1002", { file: source.getFilePath(), start, end: start + (d.getLength() ?? 1) }, [message], { notes: [`TS${d.getCode()}`] }));
    }
  }
  return out;
}

function dedupe(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = `${d.code}|${d.span?.file}|${d.span?.start}|${d.span?.end}|${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
