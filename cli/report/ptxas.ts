/**
 * Registers, spills and static shared memory of each function of a generated `.cu`, as ptxas reports them:
 * nvcc compiles the file to a cubin for one architecture with `-Xptxas -v`, and its lines are read back
 * ("Compiling entry function 'f' for 'sm_90'", "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill
 * loads", "Used 32 registers, used 1 barriers, 2048 bytes smem").
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface PtxasFunction {
  readonly name: string;
  readonly arch: string;
  readonly registers: number;
  readonly barriers: number;
  readonly stackFrameBytes: number;
  readonly spillStoreBytes: number;
  readonly spillLoadBytes: number;
  readonly staticSharedBytes: number;
}

/** The functions of ptxas's verbose output, by name. */
export function parsePtxasInfo(text: string): Map<string, PtxasFunction> {
  const functions = new Map<string, PtxasFunction>();
  let current: { name: string; arch: string; stackFrameBytes?: number; spillStoreBytes?: number; spillLoadBytes?: number } | undefined;
  for (const line of text.split("\n")) {
    const entry = /Compiling entry function '([^']+)' for '([^']+)'/.exec(line);
    if (entry) {
      current = { name: entry[1]!, arch: entry[2]! };
      continue;
    }
    const frame = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(line);
    if (frame && current) {
      current.stackFrameBytes = Number(frame[1]);
      current.spillStoreBytes = Number(frame[2]);
      current.spillLoadBytes = Number(frame[3]);
      continue;
    }
    const used = /Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?/.exec(line);
    if (used && current) {
      functions.set(current.name, {
        name: current.name,
        arch: current.arch,
        registers: Number(used[1]),
        barriers: Number(used[2] ?? 0),
        stackFrameBytes: current.stackFrameBytes ?? 0,
        spillStoreBytes: current.spillStoreBytes ?? 0,
        spillLoadBytes: current.spillLoadBytes ?? 0,
        staticSharedBytes: Number(used[3] ?? 0),
      });
      current = undefined;
    }
  }
  return functions;
}

export type PtxasResult =
  | { readonly ok: true; readonly functions: Map<string, PtxasFunction>; readonly nvcc: string }
  /** `missing`: nvcc could not be started; otherwise it failed on the file, with its output. */
  | { readonly ok: false; readonly missing: boolean; readonly message: string };

/** nvcc's version line ("release 13.0, V13.0.88"), or why nvcc cannot run. */
function nvccVersion(nvcc: string): { version: string } | { error: string } {
  const run = spawnSync(nvcc, ["--version"], { encoding: "utf8", timeout: 60_000 });
  if (run.error) return { error: run.error.message };
  if (run.status !== 0) return { error: `${nvcc} --version exited with ${run.status}` };
  return { version: /release [^\n]*/.exec(run.stdout)?.[0] ?? "version unknown" };
}

/** Compiles `source` (a generated .cu, named `name` in messages) with nvcc for `arch`, and reads ptxas's report. */
export function ptxasInfo(source: string, name: string, arch: string): PtxasResult {
  const nvcc = process.env.NVCC ?? "nvcc";
  const probe = nvccVersion(nvcc);
  if ("error" in probe) return { ok: false, missing: true, message: probe.error };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-report-"));
  try {
    const cu = path.join(dir, name);
    fs.writeFileSync(cu, source);
    const run = spawnSync(nvcc, [`-arch=${arch}`, "-cubin", "-Xptxas", "-v", "-o", path.join(dir, "out.cubin"), cu], { encoding: "utf8", timeout: 300_000 });
    if (run.error) return { ok: false, missing: true, message: `${nvcc}: ${run.error.message}` };
    if (run.status !== 0) return { ok: false, missing: false, message: `${run.stderr}${run.stdout}`.trim() };
    return { ok: true, functions: parsePtxasInfo(`${run.stderr}\n${run.stdout}`), nvcc: `nvcc ${probe.version}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
