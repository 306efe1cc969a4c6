/**
 * The nvcc toolchain path (examples/nvcc-app): `make` generates CUDA C from examples/matmul-tiled.ts with the
 * built CLI, compiles it and main.cu separately with nvcc and links them. The test builds into a temporary
 * folder (KERNELS and BIN) and checks that the program came out; it never runs it, since the machines that
 * run the tests need not have a GPU. Skipped when nvcc or make is missing.
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "./golden-cases.ts";
import { nvccAvailable } from "./tools/nvcc.ts";

const appDir = path.join(repoRoot, "examples", "nvcc-app");

function makeAvailable(): boolean {
  const probe = spawnSync("make", ["--version"], { encoding: "utf8", timeout: 30_000 });
  return probe.error === undefined && probe.status === 0;
}

const skipReason = !nvccAvailable() ? "nvcc not found" : !makeAvailable() ? "make not found" : undefined;

/** Every file under `dir`, relative to it, so that the test can show it wrote nothing there. */
function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

function make(...args: string[]): { status: number | null; output: string; stderr: string } {
  // NVCC, if set, reaches the Makefile through the environment, as it reaches tests/tools/nvcc.ts.
  const run = spawnSync("make", ["-C", appDir, ...args], { encoding: "utf8", timeout: 300_000 });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}`, stderr: run.stderr };
}

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skipReason !== undefined)(`examples/nvcc-app${skipReason ? ` (skipped: ${skipReason})` : ""}`, () => {
  it("make builds the program from the generated kernel and main.cu, writing nothing into the repository", () => {
    if (!fs.existsSync(path.join(repoRoot, "dist", "cli", "main.js"))) {
      throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
    }
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-nvcc-app-"));
    temps.push(out);
    const bin = path.join(out, "nvcc-app");
    const before = listFiles(appDir);

    const build = make(`KERNELS=${out}`, `BIN=${bin}`);
    expect(build.status, build.output).toBe(0);

    // The generator ran with the documented command, and both files were compiled on their own and linked.
    expect(build.output).toContain(`../../bin/tskernel.js build ../../examples/matmul-tiled.ts --target cuda --out ${out}`);
    expect(build.output).toMatch(/nvcc -arch=sm_90 -O3 -c \S*matmul-tiled\.cu -o \S*matmul-tiled\.o/);
    expect(build.output).toMatch(/nvcc -arch=sm_90 -O3 -I\S+ -c main\.cu -o \S*main\.o/);
    expect(build.output).not.toContain("-rdc");
    expect(build.stderr).not.toMatch(/warning/i);
    for (const file of ["matmul-tiled.cu", "matmul-tiled.cuh", "manifest.json", "matmul-tiled.o", "main.o"]) {
      expect(fs.existsSync(path.join(out, file)), file).toBe(true);
    }
    expect(fs.readFileSync(path.join(out, "matmul-tiled.cuh"), "utf8")).toContain("static inline cudaError_t launch_matmulTiled_TILE_16(");

    // An executable ELF file (not run: there may be no GPU).
    const stat = fs.statSync(bin);
    expect(stat.isFile()).toBe(true);
    expect(stat.mode & 0o111).not.toBe(0);
    expect([...fs.readFileSync(bin).subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);

    // Up to date: a second make does nothing.
    const again = make(`KERNELS=${out}`, `BIN=${bin}`);
    expect(again.status, again.output).toBe(0);
    expect(again.output).toContain("Nothing to be done");
    expect(again.output).not.toMatch(/nvcc -arch/);

    // clean removes exactly what the build wrote, and the folder with it once empty.
    const clean = make(`KERNELS=${out}`, `BIN=${bin}`, "clean");
    expect(clean.status, clean.output).toBe(0);
    expect(fs.existsSync(out)).toBe(false);

    expect(listFiles(appDir)).toEqual(before);
  });
});
