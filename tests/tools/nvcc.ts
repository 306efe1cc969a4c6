/**
 * Test tool: compiles CUDA C source with the real `nvcc` down to a cubin (no GPU needed) and reports, per
 * function, what ptxas said about it under `-Xptxas -v` (registers, spills, shared memory, stack frame).
 * Tests use it to check that the CUDA the compiler emits is accepted by NVIDIA's toolchain and does not
 * spill or overflow shared memory; it is a test helper, not part of the shipped compiler or runtime.
 */

import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";

export interface CudaFunctionInfo {
  /** The symbol as ptxas prints it: mangled for C++ linkage, plain for `extern "C"`. */
  name: string;
  /** True for `__global__` kernels ("Compiling entry function"); false for non-inlined device functions. */
  entry: boolean;
  /** Registers per thread. ptxas only reports this for entry functions, so it is 0 when `entry` is false. */
  registers: number;
  spillStoresBytes: number;
  spillLoadsBytes: number;
  /** Static shared memory; ptxas omits the field when it is 0. Dynamic (`extern __shared__`) is not counted. */
  sharedBytes: number;
  stackFrameBytes: number;
  /** Named barriers used (`__syncthreads()` uses barrier 0, so 1 here). */
  barriers: number;
}

export interface CudaCompileResult {
  ok: boolean;
  /** nvcc's stderr (plus why it could not run, if so) when `ok` is false; "" otherwise. */
  errors: string;
  functions: CudaFunctionInfo[];
  /** Everything nvcc printed (stdout then stderr), kept so that warnings are visible even on success. */
  log: string;
}

export interface CudaCompileOptions {
  /** Target passed as `-arch`; sm_90 (H100) by default. */
  arch?: string;
  /** Base name of the temporary `.cu` file, so diagnostics read `name.cu(12): error ...`. */
  name?: string;
  /** Further nvcc arguments, e.g. `-maxrregcount=32` or `-lineinfo`. */
  extraArgs?: string[];
  /** Milliseconds before nvcc is killed; 120 s by default. */
  timeoutMs?: number;
}

/** `$NVCC` lets a machine with several toolkits pick one without touching the tests. */
const NVCC = process.env.NVCC ?? "nvcc";
const DEFAULT_TIMEOUT_MS = 120_000;

let available: boolean | undefined;

/** Whether `nvcc` can be run at all; cached, because `it.skipIf` calls it once per test. */
export function nvccAvailable(): boolean {
  if (available === undefined) {
    const probe = spawnSync(NVCC, ["--version"], { encoding: "utf8", timeout: 30_000 });
    available = probe.error === undefined && probe.status === 0;
  }
  return available;
}

interface Prepared {
  dir: string;
  args: string[];
  timeoutMs: number;
}

function prepare(source: string, options: CudaCompileOptions): Prepared {
  // A private directory per compile so that parallel compiles (and parallel vitest workers) never share
  // the .cu or .cubin paths.
  const dir = mkdtempSync(join(tmpdir(), "tskernel-nvcc-"));
  // The name only shapes diagnostics, so anything that is not a safe file name character is replaced.
  const base = (options.name ?? "kernel").replace(/[^A-Za-z0-9_.-]/g, "_") || "kernel";
  const file = `${base}.cu`;
  writeFileSync(join(dir, file), source);
  const args = [
    `-arch=${options.arch ?? "sm_90"}`,
    "-cubin",
    "-Xptxas",
    "-v",
    ...(options.extraArgs ?? []),
    "-o",
    "out.cubin",
    file,
  ];
  return { dir, args, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS };
}

function finish(
  dir: string,
  status: number | null,
  spawnError: Error | undefined,
  stdout: string,
  stderr: string,
): CudaCompileResult {
  rmSync(dir, { recursive: true, force: true });
  const ok = spawnError === undefined && status === 0;
  let errors = "";
  if (!ok) {
    // A timeout or a missing binary leaves stderr empty or partial, so the reason is appended.
    const why = spawnError ? `\n[nvcc did not complete: ${spawnError.message}]` : "";
    errors = (stderr + why).trim();
  }
  const log = stdout + stderr;
  return { ok, errors, functions: parsePtxasVerbose(log), log };
}

/** Compiles one source synchronously (nvcc takes well under a second for typical kernels). */
export function compileCuda(source: string, options: CudaCompileOptions = {}): CudaCompileResult {
  const { dir, args, timeoutMs } = prepare(source, options);
  try {
    const run = spawnSync(NVCC, args, {
      cwd: dir,
      encoding: "utf8",
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return finish(dir, run.status, run.error, run.stdout ?? "", run.stderr ?? "");
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Same as compileCuda but without blocking the event loop, so several nvcc processes can run at once. */
export function compileCudaAsync(source: string, options: CudaCompileOptions = {}): Promise<CudaCompileResult> {
  const { dir, args, timeoutMs } = prepare(source, options);
  return new Promise((resolve) => {
    execFile(
      NVCC,
      args,
      { cwd: dir, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        // execFile reports a non-zero exit as an error carrying `code`; only a spawn failure or a kill
        // (timeout) is a failure to run rather than a compile error.
        const code = error && typeof error.code === "number" ? error.code : error ? null : 0;
        const spawnError = error && code === null ? error : undefined;
        resolve(finish(dir, code, spawnError, stdout, stderr));
      },
    );
  });
}

/**
 * Compiles many sources with at most `concurrency` nvcc processes at a time; results keep the input order.
 * nvcc is single-threaded, so the default uses every core.
 */
export async function compileCudaMany(
  jobs: readonly { source: string; options?: CudaCompileOptions }[],
  concurrency: number = availableParallelism(),
): Promise<CudaCompileResult[]> {
  const results: CudaCompileResult[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      const job = jobs[index]!;
      results[index] = await compileCudaAsync(job.source, job.options);
    }
  };
  const workers = Math.max(1, Math.min(concurrency, jobs.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return results;
}

/**
 * Parses ptxas `-v` output. For nvcc 13 / sm_90 it looks like:
 *
 *   ptxas info    : 0 bytes gmem
 *   ptxas info    : Compiling entry function 'reduce_sum' for 'sm_90'
 *   ptxas info    : Function properties for reduce_sum
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
 *   ptxas info    : Compile time = 2.142 ms
 *   ptxas info    : Function properties for _Z6helperfi        <- non-inlined device function: no "Used" line
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *
 * "N bytes smem" is absent when a kernel uses no static shared memory, and the "Used" line may carry
 * "N bytes cumulative stack size" or (older toolkits) "N bytes cmem[0]". The last line has no trailing
 * newline, so when stdout and stderr are joined the next stream's text can follow it on the same line;
 * every "ptxas " marker is therefore forced onto a line of its own before the lines are read.
 */
export function parsePtxasVerbose(text: string): CudaFunctionInfo[] {
  const byName = new Map<string, CudaFunctionInfo>();
  const get = (name: string): CudaFunctionInfo => {
    let info = byName.get(name);
    if (!info) {
      info = {
        name,
        entry: false,
        registers: 0,
        spillStoresBytes: 0,
        spillLoadsBytes: 0,
        sharedBytes: 0,
        stackFrameBytes: 0,
        barriers: 0,
      };
      byName.set(name, info);
    }
    return info;
  };

  // The "Function properties" numbers come on the line after the header, and the "Used" line belongs to
  // the entry function being compiled, so both are attributed to whichever function was named last.
  let current: CudaFunctionInfo | undefined;
  const lines = text.replace(/([^\n])(ptxas (?:info|warning|error|fatal))/g, "$1\n$2").split(/\r?\n/);
  for (const line of lines) {
    let m: RegExpExecArray | null;
    if ((m = /Compiling entry function '([^']+)'/.exec(line))) {
      current = get(m[1]!);
      current.entry = true;
    } else if ((m = /Function properties for (\S+)/.exec(line))) {
      current = get(m[1]!);
    } else if ((m = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line))) {
      if (current) {
        current.stackFrameBytes = Number(m[1]);
        current.spillStoresBytes = Number(m[2]);
        current.spillLoadsBytes = Number(m[3]);
      }
    } else if ((m = /Used (\d+) registers/.exec(line))) {
      if (current) {
        current.registers = Number(m[1]);
        current.barriers = Number(/used (\d+) barriers/.exec(line)?.[1] ?? 0);
        current.sharedBytes = Number(/(\d+) bytes smem/.exec(line)?.[1] ?? 0);
      }
    }
  }
  return [...byName.values()];
}
