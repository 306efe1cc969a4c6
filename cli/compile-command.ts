/**
 * `tskernel check` and `tskernel build` once commander has parsed them: the `--target` and `--define` values
 * become targets and defines or catalogue diagnostics (TSK4002, TSK4003, TSK4006, TSK4009, TSK4013, TSK4014), then the files are
 * compiled (check) or built (build.ts). main.ts imports this file only when one of the two commands runs, so
 * that the other commands, `--help` and `--version` never load the compiler.
 */

import { compileFiles, makeDiagnostic, targetNames, type CompileResult, type Diagnostic, type TargetName } from "../compiler/index.ts";
import { buildOnce, skippedSummary, watchBuild } from "./build.ts";
import { expandInputs } from "./inputs.ts";
import { report, type Io } from "./io.ts";

export interface CompileArgs {
  readonly target: string;
  readonly define: readonly string[];
}

export interface BuildArgs extends CompileArgs {
  readonly out: string;
  readonly lineDirectives: boolean;
  readonly cubin?: boolean;
  readonly ptx?: boolean;
  readonly arch: string;
  readonly watch?: boolean;
  readonly checked?: boolean;
}

/**
 * The `--target` list. `torch` is not a compiler target but the Python module built on the CUDA output
 * (build.ts), so it brings `cuda` with it.
 */
export function parseTargets(value: string): { targets: TargetName[]; torch: boolean; errors: Diagnostic[] } {
  const targets: TargetName[] = [];
  const errors: Diagnostic[] = [];
  const names = [...targetNames, "torch"].join(", ");
  let torch = false;
  for (const name of value.split(",").map((t) => t.trim()).filter(Boolean)) {
    if ((targetNames as readonly string[]).includes(name)) {
      if (!targets.includes(name as TargetName)) targets.push(name as TargetName);
    } else if (name === "torch") torch = true;
    else errors.push(makeDiagnostic("TSK4002", undefined, [name, names]));
  }
  if (torch && !targets.includes("cuda")) targets.push("cuda");
  if (targets.length === 0 && errors.length === 0) errors.push(makeDiagnostic("TSK4006", undefined, [names]));
  return { targets, torch, errors };
}

export function parseDefines(values: readonly string[]): { defines: Map<string, string>; errors: Diagnostic[] } {
  const defines = new Map<string, string>();
  const errors: Diagnostic[] = [];
  for (const text of values) {
    const match = /^([A-Za-z_$][\w$]*)=(.+)$/.exec(text);
    if (match) defines.set(match[1]!, match[2]!);
    else errors.push(makeDiagnostic("TSK4003", undefined, [text]));
  }
  return { defines, errors };
}

function countKernels(result: CompileResult): number {
  return result.files.reduce((sum, file) => sum + file.specializations.length, 0);
}

/** `tskernel check`: resolves to the exit status. */
export function checkCommand(args: readonly string[], opts: CompileArgs, io: Io): number {
  const { targets, errors: targetErrors } = parseTargets(opts.target);
  const { defines, errors: defineErrors } = parseDefines(opts.define);
  if (targetErrors.length + defineErrors.length > 0) {
    report([...targetErrors, ...defineErrors], io);
    return 1;
  }
  const inputs = expandInputs(args);
  const result = compileFiles(inputs.files, { targets, defines });
  report([...inputs.diagnostics, ...result.diagnostics], io);
  const ok = result.ok && inputs.diagnostics.length === 0;
  if (ok) {
    io.stdout(`ok: ${countKernels(result)} kernel specializations in ${inputs.files.length} file(s)\n`);
    for (const line of skippedSummary(result, targets)) io.stdout(line);
  }
  return ok ? 0 : 1;
}

/** `tskernel build`: resolves to the exit status (with `--watch`, once it is stopped). */
export async function buildCommand(args: readonly string[], opts: BuildArgs, io: Io): Promise<number> {
  const { targets, torch, errors: targetErrors } = parseTargets(opts.target);
  const { defines, errors: defineErrors } = parseDefines(opts.define);
  if (opts.cubin && !targets.includes("cuda")) targetErrors.push(makeDiagnostic("TSK4009", undefined));
  if (opts.ptx && !targets.includes("cuda")) targetErrors.push(makeDiagnostic("TSK4014", undefined));
  if (torch && !opts.cubin && !opts.ptx) targetErrors.push(makeDiagnostic("TSK4013", undefined));
  if (targetErrors.length + defineErrors.length > 0) {
    report([...targetErrors, ...defineErrors], io);
    return 1;
  }
  // Checked builds are CUDA's and WGSL's; the CPU's checked mode has a JS build of its own.
  if (opts.checked && !targets.includes("cuda") && !targets.includes("wgsl")) report([makeDiagnostic("TSK4015", undefined)], io);
  const settings = { out: opts.out, targets, defines, lineDirectives: opts.lineDirectives, cubinArch: opts.cubin ? opts.arch : undefined, ptxArch: opts.ptx ? opts.arch : undefined, torch, checked: opts.checked };
  return opts.watch ? watchBuild(args, settings, io) : buildOnce(args, settings, io);
}
