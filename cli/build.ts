/**
 * `tskernel build`: compiles the kernel files the arguments name (inputs.ts) and writes the generated files
 * and manifest.json into `--out`; with `--watch`, builds again whenever a kernel file changes. The build is
 * all or nothing: with any error, nothing is written, not even the directory. Nothing outside `--out` is
 * written (but the missing folders of `--out` itself), and nothing is ever deleted: files of the same names
 * are overwritten, every other file in `--out` is left alone, even in watch mode, where the outputs of a
 * kernel file that went away stay (manifest.json lists the current ones). A kernel whose `targets` option
 * leaves out a target of the build is skipped for it (a file left with nothing for it gets no file), and the
 * summary says which kernels each target skipped.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildManifest, compileFiles, createProject, emitTorchModule, makeDiagnostic, packageRoot, pythonModuleName, type CompileResult, type Diagnostic, type FileOutput, type Manifest, type TargetName, warpgroupMarker } from "../compiler/index.ts";
import { expandInputs } from "./inputs.ts";
import { report, type Io } from "./io.ts";
import { tskernelVersion } from "./package-info.ts";

export interface BuildSettings {
  readonly out: string;
  readonly targets: readonly TargetName[];
  readonly defines: ReadonlyMap<string, string>;
  readonly lineDirectives: boolean;
  /** Also compile each .cu to a cubin for this architecture with nvcc. */
  readonly cubinArch?: string;
  /** Also compile each .cu to PTX for this architecture's virtual one (sm_90 → compute_90) with nvcc. */
  readonly ptxArch?: string;
  /** Also write the PyTorch module of each file that declares launches, and the runtime it imports. */
  readonly torch?: boolean;
  /** A checked build (compiler/passes/checks.ts): the CUDA and WGSL code checks its accesses at run time. */
  readonly checked?: boolean;
}

/** File stems for the outputs, unique within one build even when two sources share a base name. */
function outputStems(files: readonly FileOutput[]): Map<FileOutput, string> {
  const used = new Set<string>();
  const stems = new Map<FileOutput, string>();
  for (const file of files) {
    const base = path.basename(file.displayPath).replace(/\.[cm]?ts$/, "");
    let stem = base;
    for (let n = 2; used.has(stem); n++) stem = `${base}-${n}`;
    used.add(stem);
    stems.set(file, stem);
  }
  return stems;
}

/** Compiles a generated .cu to a cubin (or PTX) with nvcc; returns a diagnostic on failure. */
function buildCubin(cuFile: string, cubinFile: string, arch: string, kind: "cubin" | "ptx" = "cubin"): Diagnostic | undefined {
  const nvcc = process.env.NVCC ?? "nvcc";
  const run = spawnSync(nvcc, [`-arch=${arch}`, `-${kind}`, "-lineinfo", "-O3", "-o", cubinFile, cuFile], { encoding: "utf8", timeout: 300_000 });
  if (run.error) return makeDiagnostic("TSK4007", undefined, [`${nvcc}: ${run.error.message}`]);
  if (run.status !== 0) return makeDiagnostic("TSK4008", undefined, [path.basename(cuFile), `${run.stderr}${run.stdout}`.trim()]);
  return undefined;
}

/** Why an errno error happened, in words: "ENOENT: no such file or directory" without the call and path. */
function reason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const text = message.replace(/^[A-Z]+: /, "").replace(/, \w+ '.*'$/, "");
  return code ? `${code}: ${text}` : message;
}

/**
 * Makes `dir` and its missing parents one at a time, or says why it cannot. (Node's `mkdirSync(dir,
 * { recursive: true })` loops forever when a mkdir fails with ENOENT under a parent that exists, as it does
 * for /proc/x: it takes the ENOENT for a missing parent and tries again.)
 */
export function ensureDirectory(dir: string): string | undefined {
  const target = path.resolve(dir);
  const missing: string[] = [];
  for (let current = target; ; current = path.dirname(current)) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return `cannot look at ${current} (${reason(error)})`;
    }
    if (stat) {
      if (!stat.isDirectory()) return current === target ? "it exists and is not a directory" : `${current} exists and is not a directory`;
      break;
    }
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const folder of missing) {
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST" && fs.statSync(folder).isDirectory()) continue;
      return `cannot create the directory ${folder} (${reason(error)})`;
    }
  }
  return undefined;
}

/**
 * One line per target of the build that some kernels skip because their `targets` option leaves it out, with
 * those kernels by file: `skipped for wgsl (not in the kernels' targets): scanLookback, … in examples/….ts`.
 */
export function skippedSummary(result: CompileResult, buildTargets: readonly TargetName[]): string[] {
  const lines: string[] = [];
  for (const target of buildTargets) {
    const byFile = new Map<string, Set<string>>();
    for (const file of result.files) {
      for (const spec of file.specializations) {
        if (spec.targets.includes(target)) continue;
        const names = byFile.get(file.displayPath) ?? new Set<string>();
        names.add(spec.kernel.name);
        byFile.set(file.displayPath, names);
      }
    }
    if (byFile.size === 0) continue;
    const listed = [...byFile].map(([file, names]) => `${[...names].join(", ")} in ${file}`).join("; ");
    lines.push(`skipped for ${target} (not in the kernels' targets): ${listed}\n`);
  }
  return lines;
}

type WrittenNames = { cu?: string; cuh?: string; wgsl?: string; wgslMap?: string; js?: string; cubin?: { file: string; arch: string }; ptx?: { file: string; arch: string } };

/** The Python runtime that every generated PyTorch module imports, shipped with the package. */
export const torchRuntimeFile = "tskernel_torch.py";

/**
 * The kernels that tskernel_torch.py launches itself, from the build's manifest (its `matmul` for bf16 and
 * f16, and `attention`): they take tensor maps or a grid that the GPU decides, which a launch declaration
 * cannot express, so no generated module has them; a build with one of them gets the runtime even without a
 * module (docs/torch.md §6).
 */
export const torchPrebuiltKernels: readonly string[] = [
  "hgemmWgmmaWs",
  "hgemmWgmmaWsF16",
  "hgemmWgmmaSmall",
  "hgemmMmaGuarded",
  "hgemmTiledBf16",
  "hgemmTiledF16",
  "flashAttentionFold",
  "flashAttentionBackwardPre",
  "flashAttentionBackwardKV",
  "flashAttentionBackwardQ",
];

/**
 * The PyTorch modules of a build: one per file with a kernel that declares its launch and was built for CUDA,
 * named after the file's stem made a Python identifier (unique within the build), and their runtime (also
 * written when the build has one of the kernels the runtime launches itself, torchPrebuiltKernels).
 */
export function torchModules(manifest: Manifest, stems: ReadonlyMap<string, string>, diagnostics: Diagnostic[] = []): { file: string; text: string }[] {
  const modules: { file: string; text: string }[] = [];
  const used = new Set<string>([torchRuntimeFile.replace(/\.py$/, "")]);
  for (const [source, stem] of stems) {
    const kernels = manifest.kernels.filter((k) => k.source === source);
    if (!kernels.some((k) => k.signature && k.outputs.cuda)) continue;
    const base = pythonModuleName(stem);
    let moduleName = base;
    for (let n = 2; used.has(moduleName); n++) moduleName = `${base}_${n}`;
    used.add(moduleName);
    modules.push({ file: `${moduleName}.py`, text: emitTorchModule({ displayPath: source, moduleName, kernels, diagnostics }) });
  }
  const prebuilt = manifest.kernels.some((k) => k.outputs.cuda && torchPrebuiltKernels.includes(k.name));
  if (modules.length > 0 || prebuilt) modules.push({ file: torchRuntimeFile, text: fs.readFileSync(path.join(packageRoot(), "runtime", "torch", torchRuntimeFile), "utf8") });
  return modules;
}

/** nvcc's virtual architecture for PTX of a real one: sm_90 → compute_90 (compute_90a for wgmma). */
function virtualArch(arch: string, warpgroups: boolean): string {
  const virtual = arch.replace(/^sm_/, "compute_");
  return warpgroups && virtual === "compute_90" ? "compute_90a" : virtual;
}

export interface WriteOptions {
  readonly cubinArch?: string;
  readonly ptxArch?: string;
  readonly torch?: boolean;
}

/** Writes a successful compilation into `outDir`; returns the exit status. */
export function writeBuild(result: CompileResult, outDir: string, io: Io, buildTargets: readonly TargetName[], options: WriteOptions = {}): number {
  const { cubinArch, ptxArch } = options;
  const problem = ensureDirectory(outDir);
  if (problem) {
    report([makeDiagnostic("TSK4001", undefined, [outDir, problem])], io);
    return 1;
  }
  let fileCount = 0;
  const write = (name: string, content: string | Uint8Array): boolean => {
    const file = path.join(outDir, name);
    try {
      fs.writeFileSync(file, content);
      fileCount += 1;
      return true;
    } catch (error) {
      report([makeDiagnostic("TSK4001", undefined, [file, `cannot write it (${reason(error)})`])], io);
      return false;
    }
  };
  const stems = outputStems(result.files);
  const written = new Map<FileOutput, WrittenNames>();
  for (const file of result.files) {
    const stem = stems.get(file)!;
    const names: WrittenNames = {};
    // A file without kernels (it only got a TSK4004 warning) has nothing to write.
    if (file.specializations.length === 0) continue;
    if (file.cuda) {
      names.cu = `${stem}.cu`;
      names.cuh = `${stem}.cuh`;
      if (!write(names.cu, file.cuda.source) || !write(names.cuh, file.cuda.header)) return 1;
      if (cubinArch) {
        const cubin = `${stem}.${cubinArch}.cubin`;
        io.stderr(`nvcc: ${names.cu} → ${cubin}\n`);
        // wgmma exists on sm_90a only: an sm_90 cubin of such a module is built for it (and runs on sm_90 GPUs).
        const nvccArch = cubinArch === "sm_90" && file.cuda.source.includes(warpgroupMarker) ? "sm_90a" : cubinArch;
        const failure = buildCubin(path.join(outDir, names.cu), path.join(outDir, cubin), nvccArch);
        if (failure) {
          report([failure], io);
          return 1;
        }
        names.cubin = { file: cubin, arch: cubinArch };
        fileCount += 1;
      }
      if (ptxArch) {
        const ptx = `${stem}.${ptxArch}.ptx`;
        io.stderr(`nvcc: ${names.cu} → ${ptx}\n`);
        const failure = buildCubin(path.join(outDir, names.cu), path.join(outDir, ptx), virtualArch(ptxArch, file.cuda.source.includes(warpgroupMarker)), "ptx");
        if (failure) {
          report([failure], io);
          return 1;
        }
        names.ptx = { file: ptx, arch: ptxArch };
        fileCount += 1;
      }
    }
    if (file.wgsl) {
      names.wgsl = `${stem}.wgsl`;
      // Where each WGSL line came from in the TypeScript, so a runtime can locate shader errors.
      names.wgslMap = `${stem}.wgsl.map.json`;
      if (!write(names.wgsl, file.wgsl.source) || !write(names.wgslMap, `${JSON.stringify(file.wgsl.lineSources.map((s) => s ?? null))}\n`)) return 1;
    }
    if (file.js) {
      names.js = `${stem}.js`;
      if (!write(names.js, file.js.source)) return 1;
    }
    written.set(file, names);
  }
  const generator = `tskernel ${tskernelVersion()}`;
  const manifest = buildManifest(result.files, written, generator);
  if (options.torch) {
    const sources = new Map([...written.keys()].map((file) => [file.displayPath, stems.get(file)!]));
    const problems: Diagnostic[] = [];
    const modules = torchModules(manifest, sources, problems);
    // A kernel the operators cannot dispatch (TSK4016, TSK4017) fails the build rather than leaving builds unused.
    report(problems, io);
    if (problems.some((d) => d.severity === "error")) {
      io.stderr("torch: no Python module was written\n");
      return 1;
    }
    for (const module of modules) if (!write(module.file, module.text)) return 1;
    if (modules.length === 0) io.stderr("torch: no kernel of the build declares its tensors and grid, so no Python module was written\n");
    else if (modules.every((m) => m.file === torchRuntimeFile)) io.stderr(`torch: no kernel of the build declares its tensors and grid; ${torchRuntimeFile} was written for its matmul and attention, which launch the build's prebuilt kernels\n`);
  }
  const outputs = fileCount;
  if (!write("manifest.json", `${JSON.stringify(manifest, null, 2)}\n`)) return 1;
  io.stdout(`wrote ${outputs} files and manifest.json (${manifest.kernels.length} kernel specializations) to ${outDir}\n`);
  for (const line of skippedSummary(result, buildTargets)) io.stdout(line);
  return 0;
}

/** Compiles what the arguments name, reports, and on success writes the build; returns the exit status. */
export function buildOnce(args: readonly string[], settings: BuildSettings, io: Io, project?: ReturnType<typeof createProject>): number {
  const inputs = expandInputs(args);
  const result = compileFiles(inputs.files, { targets: settings.targets, defines: settings.defines, lineDirectives: settings.lineDirectives, project, ...(settings.checked ? { checked: true } : {}) });
  const diagnostics = [...inputs.diagnostics, ...result.diagnostics];
  report(diagnostics, io);
  if (!result.ok || inputs.diagnostics.some((d) => d.severity === "error")) {
    io.stderr("nothing was written\n");
    return 1;
  }
  return writeBuild(result, settings.out, io, settings.targets, { cubinArch: settings.cubinArch, ptxArch: settings.ptxArch, torch: settings.torch });
}

const clock = () => new Date().toTimeString().slice(0, 8);
const kernelSource = /\.[cm]?ts$/;

/**
 * Builds, then builds again after each change to a TypeScript file where the arguments point (each directory
 * argument and each glob's base, recursively; each named file's folder), until `stop` resolves (by default,
 * Ctrl-C or SIGTERM). Diagnostics of a failed build are printed and the previous outputs stay. One ts-morph
 * project serves every build, so a rebuild costs milliseconds per kernel, not a cold start.
 * The watchers start before the first build, and "watching for changes" is printed only after they have: a
 * script (or a test) that edits a file as soon as it reads that line gets its rebuild, and an edit made while
 * the first build runs is not lost. (fs.watch has its watches in place when it returns, Node's recursive
 * watcher on Linux included, which walks the folders synchronously.)
 */
export async function watchBuild(args: readonly string[], settings: BuildSettings, io: Io, stop?: Promise<void>): Promise<number> {
  const project = createProject();
  const build = (why: string) => {
    io.stderr(`[${clock()}] ${why}\n`);
    const code = buildOnce(args, settings, io, project);
    io.stderr(`[${clock()}] ${code === 0 ? "built" : "build failed"}; watching for changes (Ctrl-C to stop)\n`);
  };

  const changed = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onChange = (dir: string, filename: string | Buffer | null) => {
    const name = filename?.toString();
    if (name && !kernelSource.test(name)) return;
    changed.add(name ? path.relative(process.cwd(), path.join(dir, name)) : dir);
    // Editors save in several steps (write, rename): one build after they settle.
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed].sort();
      changed.clear();
      build(`${files.join(", ")} changed: building again`);
    }, 100);
  };
  const watchers: fs.FSWatcher[] = [];
  const roots = new Map<string, boolean>();
  for (const { dir, recursive } of expandInputs(args).watchRoots) roots.set(dir, (roots.get(dir) ?? false) || recursive);
  for (const [dir, recursive] of roots) {
    try {
      watchers.push(fs.watch(dir, { recursive }, (_event, filename) => onChange(dir, filename)));
    } catch (error) {
      io.stderr(`tskernel: cannot watch ${dir} (${reason(error)})\n`);
    }
  }
  build("building");
  await (stop ??
    new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    }));
  clearTimeout(timer);
  for (const watcher of watchers) watcher.close();
  return 0;
}
