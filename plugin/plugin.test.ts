/**
 * The bundler plugin in each bundler it supports, on fixtures under build/plugin-tests/ (inside the
 * repository, so that the generated modules' `tskernel/webgpu` resolves to this package's dist/, as it does
 * in an app that installed tskernel): esbuild and Rollup bundles whose kernels carry the same description
 * as `tskernel build` and run on WebGPU (Dawn) against a float64 reference; a broken kernel as a coded,
 * located error from Vite and from esbuild; and `vite dev` recompiling a kernel when it or its helper file
 * changes. (examples/vite-app, built by Vite and run in Chromium, is tests/vite-app.test.ts.)
 */

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import esbuild from "esbuild";
import { rollup } from "rollup";
import { build, createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildManifest, compileFiles, renderDiagnostics } from "../compiler/index.ts";
import { deviceFor } from "../tests/backends.ts";
import { repoRoot } from "../tests/golden-cases.ts";
import { compareToReference, createWebGpuDevice, kernelHandle, launcher, type CompiledKernel, type WebGpuDevice } from "../runtime/webgpu/browser.ts";
import esbuildPlugin from "./esbuild.ts";
import { runtimeModule } from "./index.ts";
import rollupPlugin from "./rollup.ts";
import vitePlugin from "./vite.ts";

const appSources = path.join(repoRoot, "examples", "vite-app", "src");
const fixtures = path.join(repoRoot, "build", "plugin-tests");
let root = "";

beforeAll(() => {
  fs.mkdirSync(fixtures, { recursive: true });
  root = fs.mkdtempSync(path.join(fixtures, "app-"));
  for (const file of ["saxpy.kernel.ts", "matmul.kernel.ts", "blas.ts"]) fs.copyFileSync(path.join(appSources, file), path.join(root, file));
  fs.writeFileSync(path.join(root, "entry.js"), 'export { saxpy } from "./saxpy.kernel.ts";\nexport { matmul } from "./matmul.kernel.ts";\n');
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** What `tskernel build --target wgsl` describes for a kernel file, kernel by kernel (without the output file names). */
function cliDescriptions(file: string) {
  const result = compileFiles([file], { targets: ["wgsl"], baseDir: root });
  expect(result.ok, renderDiagnostics(result.diagnostics, { readFile: (f) => fs.readFileSync(f, "utf8") })).toBe(true);
  const manifest = buildManifest(result.files, new Map([[result.files[0]!, { wgsl: "x.wgsl" }]]), "test");
  return manifest.kernels.map(({ outputs, ...rest }) => ({ ...rest, entryPoint: outputs.wgsl!.entryPoint, layout: outputs.wgsl!.layout }));
}

/** Loads a bundle written inside the repository; its only import, tskernel/webgpu, resolves to dist/. */
async function loadBundle(code: string, name: string): Promise<{ saxpy: CompiledKernel; matmul: CompiledKernel }> {
  const imports = [...code.matchAll(/^\s*import\s[^;]*?from\s*["']([^"']+)["']/gm)].map((m) => m[1]);
  expect(new Set(imports)).toEqual(new Set([runtimeModule]));
  expect(code).not.toMatch(/ts-morph|compileFiles|createProject|from ["']node:/);
  const file = path.join(root, name);
  fs.writeFileSync(file, code);
  return (await import(pathToFileURL(file).href)) as { saxpy: CompiledKernel; matmul: CompiledKernel };
}

function checkDescriptions(module: { saxpy: CompiledKernel; matmul: CompiledKernel }): void {
  const built = [module.saxpy, module.matmul].flatMap((k) => k.specializations.map((h) => ({ ...h.description, entryPoint: h.wgsl!.entryPoint })));
  const expected = [...cliDescriptions(path.join(root, "saxpy.kernel.ts")), ...cliDescriptions(path.join(root, "matmul.kernel.ts"))];
  expect(built.map(({ outputs, ...rest }) => ({ ...rest, layout: outputs.wgsl!.layout }))).toEqual(expected);
  expect(kernelHandle(module.matmul, { TILE: 8 }).description.block).toEqual([8, 8, 1]);
  expect(kernelHandle(module.saxpy).wgsl!.source).toContain("@compute @workgroup_size(256, 1, 1)");
}

const dawn = await deviceFor("webgpu");

/** SAXPY and the tiled matmul from a bundle, on Dawn through the browser entry, against float64 references. */
async function runBundle(module: { saxpy: CompiledKernel; matmul: CompiledKernel }): Promise<void> {
  if (typeof dawn === "string") return;
  const device: WebGpuDevice = await createWebGpuDevice({ gpu: (dawn as WebGpuDevice).instance });
  const n = 1000;
  const a = Math.fround(Math.random() * 4 - 2);
  const x = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
  const y0 = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
  const y = device.createBuffer(new Float32Array(n).fill(Number.NaN));
  await device.write(y, y0);
  await launcher(device, module.saxpy)({ grid: Math.ceil(n / 256), args: [n, a, device.createBuffer(x), y] });
  const got = (await device.read(y)) as Float32Array;
  for (let i = 0; i < n; i++) expect(Math.abs(got[i]! - (a * x[i]! + y0[i]!))).toBeLessThanOrEqual(2 ** -22 * Math.max(1, Math.abs(a * x[i]! + y0[i]!)));

  const size = 37;
  const A = Float32Array.from({ length: size * size }, () => Math.random() * 2 - 1);
  const B = Float32Array.from({ length: size * size }, () => Math.random() * 2 - 1);
  const C = device.createBuffer(new Float32Array(size * size).fill(Number.NaN));
  await launcher(device, module.matmul, { TILE: 8 })({ grid: [Math.ceil(size / 8), Math.ceil(size / 8)], args: [C, device.createBuffer(A), device.createBuffer(B), size, size, size] });
  const reference = new Float64Array(size * size);
  for (let i = 0; i < size; i++) for (let j = 0; j < size; j++) for (let p = 0; p < size; p++) reference[i * size + j]! += A[i * size + p]! * B[p * size + j]!;
  const errors = compareToReference((await device.read(C)) as Float32Array, reference);
  expect(errors.nonFinite).toBe(0);
  expect(errors.normwiseRelative).toBeLessThanOrEqual(size * 2 ** -23);
  device.dispose();
}

const runs = typeof dawn === "string" ? ` (not run on WebGPU: ${dawn})` : ", and they run on WebGPU";

describe("the plugin in esbuild and Rollup", () => {
  it(`esbuild: the bundle holds the kernels as \`tskernel build\` describes them${runs}`, async () => {
    const result = await esbuild.build({ entryPoints: [path.join(root, "entry.js")], bundle: true, format: "esm", write: false, external: [runtimeModule], plugins: [esbuildPlugin({ root })], logLevel: "silent" });
    const module = await loadBundle(result.outputFiles[0]!.text, "esbuild-out.mjs");
    checkDescriptions(module);
    await runBundle(module);
  });

  it(`Rollup: the same${runs}`, async () => {
    const bundle = await rollup({ input: path.join(root, "entry.js"), external: [runtimeModule], plugins: [rollupPlugin({ root })] });
    const { output } = await bundle.generate({ format: "es" });
    await bundle.close();
    const module = await loadBundle(output[0].code, "rollup-out.mjs");
    checkDescriptions(module);
    await runBundle(module);
  });
});

describe("a kernel file that exports more than kernels", () => {
  it("builds, with TSK4012 for each value export (not for types), located at it", async () => {
    const file = path.join(root, "extra.kernel.ts");
    fs.writeFileSync(
      file,
      [
        'import { blockIdx, kernel, threadIdx, type i32 } from "tskernel";',
        "",
        "export type Size = number;",
        "export const BLOCK = 64;",
        "export const fill = kernel({ block: [64] }, (n: i32, y: Int32Array) => {",
        "  const i = blockIdx.x * 64 + threadIdx.x;",
        "  if (i < n) y[i] = i;",
        "});",
        "",
      ].join("\n"),
    );
    fs.writeFileSync(path.join(root, "extra-entry.js"), 'export { fill } from "./extra.kernel.ts";\n');
    const result = await esbuild.build({ entryPoints: [path.join(root, "extra-entry.js")], bundle: true, format: "esm", write: false, external: [runtimeModule], plugins: [esbuildPlugin({ root })], logLevel: "silent" });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]!.text).toContain("warning[TSK4012]: 'BLOCK' is exported by a kernel file but is not a kernel: the module the bundler plugin builds from extra.kernel.ts exports only its kernels\n --> extra.kernel.ts:4:14");
    expect(result.warnings[0]!.location).toMatchObject({ line: 4, column: 13 });
    expect(result.outputFiles[0]!.text).toContain("compiledKernel(");
  });
});

describe("a kernel file with a kernel whose targets leave out wgsl", () => {
  it(`builds: the kernel is exported without WGSL, and launching it on WebGPU names its targets${runs}`, async () => {
    const file = path.join(root, "mixed.kernel.ts");
    fs.writeFileSync(
      file,
      [
        'import { atomicStore, blockIdx, kernel, threadFence, threadIdx, type i32 } from "tskernel";',
        "",
        "export const fill = kernel({ block: [64] }, (n: i32, y: Int32Array) => {",
        "  const i = blockIdx.x * 64 + threadIdx.x;",
        "  if (i < n) y[i] = i * 3 + 1;",
        "});",
        "",
        "// threadFence() has no WGSL equivalent (TSK3050 without the targets option).",
        'export const publish = kernel({ block: [64], targets: ["cuda", "js"] }, (values: Int32Array, flags: Int32Array) => {',
        "  if (threadIdx.x === 0) {",
        "    values[0] = 7;",
        "    threadFence();",
        "    atomicStore(flags, 0, 1);",
        "  }",
        "});",
        "",
      ].join("\n"),
    );
    fs.writeFileSync(path.join(root, "mixed-entry.js"), 'export { fill, publish } from "./mixed.kernel.ts";\n');
    const result = await esbuild.build({ entryPoints: [path.join(root, "mixed-entry.js")], bundle: true, format: "esm", write: false, external: [runtimeModule], plugins: [esbuildPlugin({ root })], logLevel: "silent" });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/fn publish|threadFence/);
    const bundle = path.join(root, "mixed-bundle.mjs");
    fs.writeFileSync(bundle, code);
    const module = (await import(pathToFileURL(bundle).href)) as { fill: CompiledKernel; publish: CompiledKernel };
    expect(kernelHandle(module.fill).wgsl!.source).toContain("fn fill(");
    expect(kernelHandle(module.publish).wgsl).toBeUndefined();
    expect(kernelHandle(module.publish).description.declaredTargets).toEqual(["cuda", "js"]);
    expect(module.publish.options.targets).toEqual(["cuda", "js"]);
    if (typeof dawn === "string") return;
    const device: WebGpuDevice = await createWebGpuDevice({ gpu: (dawn as WebGpuDevice).instance });
    const n = 100;
    const y = device.createBuffer(new Int32Array(n).fill(-99));
    await launcher(device, module.fill)({ grid: 2, args: [n, y] });
    expect([...((await device.read(y)) as Int32Array)]).toEqual(Array.from({ length: n }, (_, i) => i * 3 + 1));
    const flags = device.createBuffer(new Int32Array(1));
    await expect(launcher(device, module.publish)({ grid: 1, args: [y, flags] })).rejects.toThrow(
      "tskernel: cannot launch 'publish': kernel 'publish' declares targets: [\"cuda\", \"js\"], so it was not built for wgsl, which the webgpu backend runs; launch it on a cuda or cpu device",
    );
    device.dispose();
  });
});

describe("a kernel that does not compile", () => {
  const source = [
    'import { blockDim, blockIdx, kernel, threadIdx, type i32 } from "tskernel";',
    "",
    "export const bad = kernel({ block: [64] }, (n: i32, y: Float32Array) => {",
    "  const i = blockIdx.x * blockDim.x + threadIdx.x;",
    "  if (i >= n) return;",
    "  y[i] = Math.round(y[i]);",
    "});",
    "",
  ].join("\n");
  let file = "";
  let entry = "";
  beforeAll(() => {
    file = path.join(root, "bad.kernel.ts");
    entry = path.join(root, "bad-entry.js");
    fs.writeFileSync(file, source);
    fs.writeFileSync(entry, 'export { bad } from "./bad.kernel.ts";\n');
  });

  it("fails the Vite build with the coded diagnostic, its TS location and the code frame", async () => {
    const error = (await build({ root, logLevel: "silent", configFile: false, plugins: [vitePlugin()], build: { write: false, lib: { entry, formats: ["es"] } } }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    // Vite (Rolldown) prints the plugin, the file:line:column (0-based column, Rollup's convention), the message and the frame.
    expect(error.message).toContain(`[plugin tskernel] ${file}:6:9`);
    expect(error.message).toContain("error[TSK1012]: Math.round is not available in kernels");
    expect(error.message).toContain("= note: rounding of halves differs between CUDA, WGSL and JavaScript");
    expect(error.message).toContain("6 |   y[i] = Math.round(y[i]);\n  |          ^^^^^^^^^^");
  });

  it("fails the esbuild build with the same diagnostic, located", async () => {
    const error = (await esbuild.build({ entryPoints: [entry], bundle: true, write: false, external: [runtimeModule], plugins: [esbuildPlugin({ root })], logLevel: "silent" }).catch((e: unknown) => e)) as esbuild.BuildFailure;
    expect(error.errors).toHaveLength(1);
    const [message] = error.errors;
    expect(message!.pluginName).toBe("tskernel");
    // esbuild's location has a 0-based column; the text is what `tskernel check` prints, 1-based.
    expect(message!.location).toMatchObject({ file: path.relative(process.cwd(), file), line: 6, column: 9 });
    expect(message!.text).toContain("error[TSK1012]: Math.round is not available in kernels\n --> bad.kernel.ts:6:10\n");
    expect(message!.text).toContain("6 |   y[i] = Math.round(y[i]);\n  |          ^^^^^^^^^^");
  });
});

describe("vite dev", () => {
  let server: ViteDevServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  /** Waits until the dev server has dropped the module's compiled code (the watcher saw the edit). */
  async function invalidated(file: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const module = server!.moduleGraph.getModuleById(file);
      if (module && module.transformResult === null) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`vite dev did not invalidate ${file} after the edit`);
  }

  it("recompiles a kernel when the kernel or a helper it imports changes", async () => {
    server = await createServer({ root, configFile: false, logLevel: "silent", plugins: [vitePlugin()], server: { hmr: false }, optimizeDeps: { noDiscovery: true } });
    const kernel = path.join(root, "saxpy.kernel.ts");
    const helper = path.join(root, "blas.ts");
    const first = await server.transformRequest("/saxpy.kernel.ts");
    expect(first?.code).toContain("fma(");

    // The helper: a·x + y becomes a·x − y.
    fs.writeFileSync(helper, fs.readFileSync(helper, "utf8").replace("return fma(a, x, y);", "return fma(a, x, -y);"));
    await invalidated(kernel);
    const second = await server.transformRequest("/saxpy.kernel.ts");
    expect(second?.code).not.toEqual(first?.code);
    expect(second?.code).toMatch(/fma\([^)]*-/);

    // The kernel itself: its block shape.
    fs.writeFileSync(kernel, fs.readFileSync(kernel, "utf8").replace("{ block: [256] }", "{ block: [128] }"));
    await invalidated(kernel);
    const third = await server.transformRequest("/saxpy.kernel.ts");
    expect(third?.code).toContain("@workgroup_size(128, 1, 1)");

    // A broken edit is an error for the overlay, with the diagnostic's code, location and frame.
    fs.writeFileSync(kernel, fs.readFileSync(kernel, "utf8").replace("if (i >= n) return;", "if (i >= n) return;\n  const r = Math.round(a);"));
    await invalidated(kernel);
    const error = (await server.transformRequest("/saxpy.kernel.ts").catch((e: unknown) => e)) as Error & { loc?: { file: string; line: number; column: number }; frame?: string };
    expect(error.message).toContain("error[TSK1012]: Math.round is not available in kernels");
    expect(error.loc).toEqual({ file: kernel, line: 10, column: 12 });
    expect(error.frame).toContain("10 |   const r = Math.round(a);");
  });
});
