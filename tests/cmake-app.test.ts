/**
 * The CMake path (examples/cmake-app): CMake runs `tskernel build` as a custom command per kernel file,
 * compiles the generated .cu files and the app's own main.cu with nvcc and its reference.cpp with the host
 * compiler, and links one program. The tests configure and build it out of tree (in os.tmpdir()), as it sits
 * in this checkout and as a copy in a project where tskernel comes from node_modules/.bin, check that an
 * untouched build does nothing and that touching one kernel file regenerates that kernel only, and run the
 * program, which on a machine without a GPU must say so (exit 2), and that a kernel file with no kernel for
 * CUDA (its kernels' `targets` leave it out) stops the build with the file and the targets. The app's kernels
 * also run here on the CPU backend against a float64 reference, since the machines that run the tests need not
 * have a GPU.
 * The build needs cmake, make and nvcc: without them it is skipped, unless TSKERNEL_REQUIRE_CMAKE=1 (CI).
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { repoRoot } from "./golden-cases.ts";
import { nvccAvailable } from "./tools/nvcc.ts";

const appDir = path.join(repoRoot, "examples", "cmake-app");
const kernels = ["gemm.ts", "saxpy.ts"].map((file) => path.join(appDir, "kernels", file));

function available(command: string): boolean {
  const probe = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 30_000 });
  return probe.error === undefined && probe.status === 0;
}

const required = process.env.TSKERNEL_REQUIRE_CMAKE === "1";
const missing = !available("cmake") ? "cmake" : !available("make") ? "make" : !nvccAvailable() ? "nvcc" : undefined;

interface Run {
  status: number | null;
  output: string;
}

function run(command: string, args: readonly string[], cwd = repoRoot): Run {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `cmake -S source -B build`, with the nvcc that the other tests use when NVCC names one. */
function configure(source: string, build: string, ...extra: string[]): Run {
  const compiler = process.env.NVCC ? [`-DCMAKE_CUDA_COMPILER=${process.env.NVCC}`] : [];
  return run("cmake", ["-S", source, "-B", build, "-G", "Unix Makefiles", ...compiler, ...extra]);
}

/** The text with every run of white space made one space: CMake wraps its error messages. */
const words = (text: string): string => text.replace(/\s+/g, " ");

const build = (dir: string): Run => run("cmake", ["--build", dir]);

/** Every file under `dir`, relative to it, so that a test can show that it wrote nothing there. */
const listFiles = (dir: string): string[] => fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();

function expectExecutable(file: string): void {
  const stat = fs.statSync(file);
  expect(stat.mode & 0o111).not.toBe(0);
  expect([...fs.readFileSync(file).subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]); // ELF
}

/** Runs the program: PASS on a machine with a GPU, the "no usable CUDA GPU" answer (2) on one without. */
function expectProgramAnswers(program: string): void {
  const result = run(program, []);
  if (result.status === 2) {
    expect(result.output).toContain("no usable CUDA GPU");
  } else {
    expect(result.status, result.output).toBe(0);
    expect(result.output).toMatch(/^gemm: .* ok$/m);
    expect(result.output).toMatch(/^saxpy: .* ok$/m);
    expect(result.output).toMatch(/^PASS$/m);
  }
  const usage = run(program, ["1", "2"]);
  expect(usage.status, usage.output).toBe(3);
  expect(usage.output).toContain("usage:");
}

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-cmake-app-"));
  temps.push(dir);
  return dir;
}

describe("examples/cmake-app's kernels on the CPU backend", () => {
  function random(length: number, low = -1, high = 1): Float32Array {
    return Float32Array.from({ length }, () => low + Math.random() * (high - low));
  }
  const cpu = async (): Promise<Device> => {
    const device = await deviceFor("cpu");
    if (typeof device === "string") throw new Error(`CPU backend unavailable: ${device}`);
    return device;
  };

  it("gemm computes D = α·A·B + β·C at sizes that are not multiples of the tile", async () => {
    const device = await cpu();
    const library = compileKernelLibrary(kernels, ["js"]);
    const [m, n, k] = [37, 29, 23];
    const a = random(m * k), b = random(k * n), c = random(m * n);
    const alpha = Math.fround(0.5 + Math.random()), beta = Math.fround(-0.5 - Math.random());
    const D = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const grid: [number, number] = [Math.ceil(n / 16), Math.ceil(m / 16)];
    const args = { D, A: device.createBuffer(a), B: device.createBuffer(b), C: device.createBuffer(c), alpha, beta, m, n, k };
    await device.launch(library.get("gemm"), { grid, args });
    const d = (await device.read(D)) as Float32Array;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0, magnitude = 0;
        for (let p = 0; p < k; p++) {
          sum += a[i * k + p]! * b[p * n + j]!;
          magnitude += Math.abs(a[i * k + p]! * b[p * n + j]!);
        }
        const want = alpha * sum + beta * c[i * n + j]!;
        const allowed = (k + 2) * 2 ** -23 * (Math.abs(alpha) * magnitude + Math.abs(beta * c[i * n + j]!));
        expect(Math.abs(d[i * n + j]! - want), `D[${i}][${j}] = ${d[i * n + j]}, want ${want}`).toBeLessThanOrEqual(allowed);
      }
    }
  });

  it("saxpy computes y = a·x + y in place, for a length that is not a multiple of the block", async () => {
    const device = await cpu();
    const library = compileKernelLibrary(kernels, ["js"]);
    const n = 1000;
    const x = random(n), y = random(n), a = Math.fround(1 + Math.random());
    const Y = device.createBuffer(y);
    await device.launch(library.get("saxpy"), { grid: [Math.ceil(n / 256)], args: { n, a, x: device.createBuffer(x), y: Y } });
    const got = (await device.read(Y)) as Float32Array;
    for (let i = 0; i < n; i++) {
      const want = a * x[i]! + y[i]!;
      expect(Math.abs(got[i]! - want), `y[${i}]`).toBeLessThanOrEqual(2 ** -23 * (Math.abs(a * x[i]!) + Math.abs(y[i]!)));
    }
  });
});

const skip = missing !== undefined && !required;
describe.skipIf(skip)(
  `examples/cmake-app with CMake${skip ? ` (skipped: ${missing} not found; apt-get install cmake, or set TSKERNEL_REQUIRE_CMAKE=1 to fail instead)` : ""}`,
  () => {
    it("builds in the checkout, rebuilds nothing when nothing changed, and regenerates only a touched kernel", () => {
      if (missing) throw new Error(`TSKERNEL_REQUIRE_CMAKE=1, but ${missing} is missing (apt-get install cmake; nvcc comes with CUDA)`);
      if (!fs.existsSync(path.join(repoRoot, "dist", "cli", "main.js"))) {
        throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
      }
      const dir = tempDir();
      const before = listFiles(appDir);

      const configured = configure(appDir, dir);
      expect(configured.status, configured.output).toBe(0);
      // The search found this checkout's CLI and runs it under Node.
      expect(configured.output).toContain(`-- tskernel 0.1.0: ${process.execPath} ${path.join(repoRoot, "bin", "tskernel.js")}`);

      const first = build(dir);
      expect(first.status, first.output).toBe(0);
      expect(first.output).toContain("tskernel: generating CUDA C from kernels/gemm.ts");
      expect(first.output).toContain("tskernel: generating CUDA C from kernels/saxpy.ts");
      for (const object of ["src/main.cu.o", "tskernel/gemm/gemm.cu.o", "tskernel/saxpy/saxpy.cu.o"]) {
        expect(first.output).toContain(`Building CUDA object CMakeFiles/cmake-app.dir/${object}`);
      }
      expect(first.output).toContain("Building CXX object CMakeFiles/cmake-app.dir/src/reference.cpp.o");
      expect(first.output).not.toMatch(/warning/i);
      const gemmHeader = fs.readFileSync(path.join(dir, "tskernel", "gemm", "gemm.cuh"), "utf8");
      expect(gemmHeader).toContain("static inline cudaError_t launch_gemm_TILE_16(dim3 grid, cudaStream_t stream, float* D,");
      // The #line directives name the kernel as the project sees it, so nvcc's messages point into the .ts.
      expect(fs.readFileSync(path.join(dir, "tskernel", "gemm", "gemm.cu"), "utf8")).toContain('#line 22 "kernels/gemm.ts"');
      const program = path.join(dir, "cmake-app");
      expectExecutable(program);
      expectProgramAnswers(program);

      const again = build(dir);
      expect(again.status, again.output).toBe(0);
      expect(again.output).not.toContain("tskernel: generating");
      expect(again.output).not.toContain("Building");

      // Touch gemm.ts (a second ahead, past the file system's timestamp granularity), then put its times back.
      const gemm = kernels[0]!;
      const { atime, mtime } = fs.statSync(gemm);
      const builtAt = fs.statSync(program).mtimeMs;
      const future = new Date(Math.max(Date.now(), mtime.getTime()) + 2000);
      fs.utimesSync(gemm, future, future);
      let touched: Run;
      try {
        touched = build(dir);
      } finally {
        fs.utimesSync(gemm, atime, mtime);
      }
      expect(touched.status, touched.output).toBe(0);
      expect(touched.output).toContain("tskernel: generating CUDA C from kernels/gemm.ts");
      expect(touched.output).not.toContain("kernels/saxpy.ts");
      expect(touched.output).toContain("Building CUDA object CMakeFiles/cmake-app.dir/tskernel/gemm/gemm.cu.o");
      expect(touched.output).toContain("Building CUDA object CMakeFiles/cmake-app.dir/src/main.cu.o"); // it includes gemm.cuh
      expect(touched.output).not.toContain("saxpy.cu.o");
      expect(touched.output).not.toContain("reference.cpp.o");
      expect(fs.statSync(program).mtimeMs).toBeGreaterThan(builtAt);

      expect(listFiles(appDir)).toEqual(before);
    }, 600_000);

    it("builds as a user's project with tskernel in node_modules, and says clearly when the CLI is missing or broken", () => {
      if (missing) throw new Error(`TSKERNEL_REQUIRE_CMAKE=1, but ${missing} is missing (apt-get install cmake; nvcc comes with CUDA)`);
      const root = tempDir();
      const project = path.join(root, "project");
      const dir = path.join(root, "build");
      fs.cpSync(appDir, project, { recursive: true, filter: (file) => !file.includes(`${path.sep}build`) });

      // Not installed: the project's CMakeLists says so (the module itself comes with the package).
      const notInstalled = configure(project, dir);
      expect(notInstalled.status).not.toBe(0);
      expect(words(notInstalled.output)).toContain("tskernel: node_modules/tskernel/cmake/Tskernel.cmake was not found");
      expect(words(notInstalled.output)).toContain("Install tskernel in this project (npm install --save-dev tskernel)");
      fs.rmSync(dir, { recursive: true, force: true });

      // The module without any CLI near it (a copy of the file alone; a global install on PATH would be
      // found: then not asserted).
      const moduleCopy = path.join(project, "node_modules", "tskernel", "cmake");
      fs.mkdirSync(moduleCopy, { recursive: true });
      fs.copyFileSync(path.join(repoRoot, "cmake", "Tskernel.cmake"), path.join(moduleCopy, "Tskernel.cmake"));
      const noCli = configure(project, dir);
      if (!available("tskernel")) {
        expect(noCli.status).not.toBe(0);
        expect(words(noCli.output)).toContain("tskernel: the tskernel CLI was not found");
        expect(words(noCli.output)).toContain("Install it in your project (npm install --save-dev tskernel)");
        expect(noCli.output).not.toContain("CMake Error at CMakeLists.txt"); // only the module's own message
      }
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(path.join(project, "node_modules"), { recursive: true, force: true });

      // The package installed without its bin link (npm install --no-bin-links): the module finds the CLI in
      // the package it came with.
      fs.mkdirSync(path.join(project, "node_modules"));
      fs.symlinkSync(repoRoot, path.join(project, "node_modules", "tskernel"), "dir");
      const withoutBin = configure(project, dir);
      expect(withoutBin.status, withoutBin.output).toBe(0);
      expect(fs.readFileSync(path.join(dir, "CMakeCache.txt"), "utf8")).toContain(
        `TSKERNEL_EXECUTABLE:STRING=${path.join(project, "node_modules", "tskernel", "bin", "tskernel.js")}`,
      );
      fs.rmSync(dir, { recursive: true, force: true });

      // What `npm install tskernel` leaves: the package in node_modules and its bin linked in node_modules/.bin.
      fs.mkdirSync(path.join(project, "node_modules", ".bin"), { recursive: true });
      fs.symlinkSync(path.join("..", "tskernel", "bin", "tskernel.js"), path.join(project, "node_modules", ".bin", "tskernel"));
      const configured = configure(project, dir);
      expect(configured.status, configured.output).toBe(0);
      const cache = fs.readFileSync(path.join(dir, "CMakeCache.txt"), "utf8");
      expect(cache).toContain(`TSKERNEL_EXECUTABLE:STRING=${path.join(project, "node_modules", ".bin", "tskernel")}`);
      const built = build(dir);
      expect(built.status, built.output).toBe(0);
      expect(built.output).toContain("tskernel: generating CUDA C from kernels/gemm.ts");
      expectExecutable(path.join(dir, "cmake-app"));

      // A command line works as well as a path.
      const npx = configure(project, dir, "-DTSKERNEL_EXECUTABLE=npx --no -- tskernel");
      expect(npx.status, npx.output).toBe(0);
      expect(npx.output).toContain("-- tskernel 0.1.0: npx --no -- tskernel");
      const viaNpx = build(dir); // the generation commands changed, so both kernels are generated again
      expect(viaNpx.status, viaNpx.output).toBe(0);
      expect(viaNpx.output).toContain("tskernel: generating CUDA C from kernels/saxpy.ts");
      expect(viaNpx.output).toContain("wrote 2 files and manifest.json (1 kernel specializations)");

      // A path that is not there, and a command that fails, stop the configure step with what went wrong.
      const absent = configure(project, dir, `-DTSKERNEL_EXECUTABLE=${path.join(root, "no-such-tskernel")}`);
      expect(absent.status).not.toBe(0);
      expect(words(absent.output)).toContain(`tskernel: TSKERNEL_EXECUTABLE names ${path.join(root, "no-such-tskernel")}, which does not exist.`);
      const script = path.join(root, "broken-tskernel");
      fs.writeFileSync(script, "#!/bin/sh\necho 'cannot start: broken on purpose' >&2\nexit 7\n", { mode: 0o755 });
      const broken = configure(project, dir, `-DTSKERNEL_EXECUTABLE=${script}`);
      expect(broken.status).not.toBe(0);
      expect(words(broken.output)).toContain(`tskernel: \`${script} --version\` failed (7): cannot start: broken on purpose`);
      expect(words(broken.output)).toContain("Set TSKERNEL_EXECUTABLE to a working tskernel CLI");
    }, 600_000);

    it("stops the build at a kernel file with no kernel for CUDA, naming the file and its kernels' targets", () => {
      if (missing) throw new Error(`TSKERNEL_REQUIRE_CMAKE=1, but ${missing} is missing (apt-get install cmake; nvcc comes with CUDA)`);
      const project = tempDir();
      const dir = path.join(project, "build");
      fs.mkdirSync(path.join(project, "kernels"));
      fs.writeFileSync(
        path.join(project, "CMakeLists.txt"),
        [
          "cmake_minimum_required(VERSION 3.18)",
          "set(CMAKE_CUDA_ARCHITECTURES 90)",
          "project(targets_app LANGUAGES CXX CUDA)",
          `include("${path.join(repoRoot, "cmake", "Tskernel.cmake")}")`,
          "add_executable(app main.cu)",
          "tskernel_add_cuda_kernels(app kernels/fill.ts kernels/web.ts)",
          "",
        ].join("\n"),
      );
      fs.writeFileSync(path.join(project, "main.cu"), "int main() { return 0; }\n");
      const kernelFile = (name: string, value: number, targets: string) =>
        `export const ${name} = kernel({ block: [32]${targets} }, (out: Float32Array) => {\n  out[threadIdx.x] = ${value};\n});\n`;
      fs.writeFileSync(path.join(project, "kernels", "fill.ts"), `import { kernel, threadIdx } from "tskernel";\n${kernelFile("fill", 1, "")}`);
      const web = (blurTargets: string) =>
        `import { kernel, threadIdx } from "tskernel";\n${kernelFile("blur", 2, `, targets: ${blurTargets}`)}${kernelFile("sharpen", 3, ', targets: ["js"]')}`;
      fs.writeFileSync(path.join(project, "kernels", "web.ts"), web('["wgsl", "js"]'));

      const configured = configure(project, dir);
      expect(configured.status, configured.output).toBe(0);
      const expectRefused = (result: Run) => {
        expect(result.status).not.toBe(0);
        const text = words(result.output);
        expect(text).toContain(
          'tskernel_add_cuda_kernels(app): kernels/web.ts has no kernel for CUDA, so `tskernel build --target cuda` wrote no web.cu: each of its kernels declares `targets` that leave out "cuda" blur: targets [ "wgsl", "js" ] sharpen: targets [ "js" ] Add "cuda" to a kernel\'s targets, or leave kernels/web.ts out of tskernel_add_cuda_kernels().',
        );
        // The check stops the build, not the compiler on a missing source.
        expect(result.output).not.toMatch(/No rule to make target|No such file/);
        expect(fs.existsSync(path.join(dir, "tskernel", "web", "web.cu"))).toBe(false);
      };
      expectRefused(build(dir));

      // With a kernel for CUDA the file builds; leaving CUDA out again refuses it again, with no stale .cu left.
      fs.writeFileSync(path.join(project, "kernels", "web.ts"), web('["wgsl", "js", "cuda"]'));
      const fixed = build(dir);
      expect(fixed.status, fixed.output).toBe(0);
      expect(fs.readFileSync(path.join(dir, "tskernel", "web", "web.cu"), "utf8")).toContain("void __launch_bounds__(32) blur(float* out)");
      expectExecutable(path.join(dir, "app"));
      fs.writeFileSync(path.join(project, "kernels", "web.ts"), web('["wgsl", "js"]'));
      // (A second ahead, past the file system's timestamp granularity, so that make sees the edit.)
      const later = new Date(Date.now() + 2000);
      fs.utimesSync(path.join(project, "kernels", "web.ts"), later, later);
      expectRefused(build(dir));
    }, 600_000);
  },
);
