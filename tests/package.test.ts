/**
 * The package as a user gets it: `npm pack` in a copy of this checkout (so its `prepack` build runs, as it
 * does for a publish), `npm install <tarball>` into a fresh project outside the repository (os.tmpdir()),
 * then what the user does there: type-check a kernel with `tsc --noEmit --strict` under node16 and bundler
 * resolution (and a file that misuses the API, which must fail: the declarations are real, not `any`), run
 * `npx tskernel check|build|demo|bench|tune`, compare the build's outputs with this checkout's compiler, run
 * the kernel on the CPU backend through `tskernel/runtime` against a float64 reference computed here (fresh
 * random inputs, NaN-poisoned output), bundle a kernel file with the bundler plugin (`tskernel/plugin`, in
 * esbuild) and type-check its typed launcher, see a kernel's diagnostics in the app's own tsserver through the
 * editor plugin (`tskernel/ts-plugin` in tsconfig.json) as an unsaved edit breaks it, and get BackendUnavailable,
 * not a crash, for WebGPU and CUDA, whose optional packages (webgpu, koffi) the install leaves out.
 *
 * Installs come from the npm cache (`--prefer-offline`; `npm ci` has filled it). On the 2-core CI machine
 * the file takes about 70 s alone and up to 150 s beside the other test files or other work: the copy, the
 * pack's build and the install about 15 s, the type-checks (the declarations too: skipLibCheck is off for
 * node16) about 20 s, the CLI commands (each starts Node and loads the compiler) the rest.
 */

import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compileFiles, type Manifest } from "../compiler/index.ts";
import { repoRoot } from "./golden-cases.ts";
import { TsServer } from "./tools/tsserver.ts";

const work = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-package-"));
const source = path.join(work, "checkout");
const app = path.join(work, "app");

function run(command: string, args: readonly string[], options: SpawnSyncOptions & { cwd: string }): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 300_000, maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw result.error;
  return { status: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Runs a command that must succeed; returns its stdout. */
function ok(command: string, args: readonly string[], cwd: string): string {
  const result = run(command, args, { cwd });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} (in ${cwd}) exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** `npx tskernel …` in the app; `--no` keeps npx from fetching some other package if the bin were missing. */
const tskernel = (...args: string[]) => run("npx", ["--no", "--", "tskernel", ...args], { cwd: app });

const versionOf = (name: string) => (JSON.parse(fs.readFileSync(path.join(repoRoot, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

/** The README's kernel, and a second one, in the user's src/kernels, beside a module that is not a kernel. */
const userFiles: Record<string, string> = {
  "src/kernels/matmul.kernel.ts": `import { blockIdx, kernel, shared, syncThreads, threadIdx, type Const, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const matmulTiled = kernel(
  { block: ["TILE", "TILE"] },
  (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, m: i32, n: i32, k: i32, TILE: Const<i32> = 16) => {
    const aTile = shared.f32(TILE, TILE);
    const bTile = shared.f32(TILE, TILE);
    const row = blockIdx.y * TILE + threadIdx.y;
    const col = blockIdx.x * TILE + threadIdx.x;
    let sum: f32 = 0;
    for (let t = 0; t < k; t += TILE) {
      aTile[threadIdx.y][threadIdx.x] = row < m && t + threadIdx.x < k ? A[row * k + t + threadIdx.x] : 0;
      bTile[threadIdx.y][threadIdx.x] = t + threadIdx.y < k && col < n ? B[(t + threadIdx.y) * n + col] : 0;
      syncThreads();
      unroll: for (let i = 0; i < TILE; i++) sum += aTile[threadIdx.y][i] * bTile[i][threadIdx.x];
      syncThreads();
    }
    if (row < m && col < n) C[row * n + col] = sum;
  },
);
`,
  "src/kernels/saxpy.kernel.ts": `import { blockDim, blockIdx, fma, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const saxpy = kernel({ block: [64], targets: ["cuda", "wgsl", "js"] }, (n: i32, a: f32, x: ReadonlyFloat32Array, y: ReadonlyFloat32Array, out: Float32Array) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fma(a, x[i], y[i]);
});
`,
  "src/kernels/sizes.ts": "export const defaultSize = 45;\n",
  // Uses every entry of the package: the runtime (in Node), the compiler, the browser runtime's types.
  "src/run.ts": `import { BackendUnavailable, compileKernelLibrary, createDevice, loadKernelLibrary, type Device, type KernelLibrary } from "tskernel/runtime";
import { targetNames, type Manifest, type TargetName } from "tskernel/compiler";
import { createWebGpuDevice, fetchKernelLibrary } from "tskernel/webgpu";
import { matmulTiled } from "./kernels/matmul.kernel.js";
import { defaultSize } from "./kernels/sizes.js";

const wgsl: TargetName = "wgsl";

async function matmul(device: Device, library: KernelLibrary, n: number) {
  const A = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
  const B = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
  const C = device.createBuffer(new Float32Array(n * n).fill(Number.NaN));
  const tiles = Math.ceil(n / 16);
  await device.launch(library.get("matmulTiled"), { grid: [tiles, tiles], args: { C, A: device.createBuffer(A), B: device.createBuffer(B), m: n, n, k: n } });
  return { A: [...A], B: [...B], C: [...(await device.read(C))].map((v) => (Number.isFinite(v) ? v : String(v))) };
}

async function unavailable(backend: "webgpu" | "cuda") {
  try {
    await createDevice({ backend });
    return "created";
  } catch (error) {
    return error instanceof BackendUnavailable ? error.message : \`not BackendUnavailable: \${String(error)}\`;
  }
}

const n = defaultSize;
const device = await createDevice({ backend: "cpu" });
const manifest: Manifest = JSON.parse((await import("node:fs")).readFileSync("build/kernels/manifest.json", "utf8"));
console.log(JSON.stringify({
  n,
  targets: targetNames.includes(wgsl),
  // "tskernel" and "tskernel/webgpu" load in Node too: the kernel module runs kernel(), which only makes a handle.
  kernelHandle: \`\${matmulTiled.kind} \${typeof matmulTiled.fn}\`,
  browserEntry: [typeof createWebGpuDevice, typeof fetchKernelLibrary].join(" "),
  manifestKernels: manifest.kernels.length,
  fromBuild: await matmul(device, loadKernelLibrary("build/kernels"), n),
  inProcess: await matmul(device, compileKernelLibrary(["src/kernels/matmul.kernel.ts"]), n),
  webgpu: await unavailable("webgpu"),
  cuda: await unavailable("cuda"),
}));
`,
  // matmul() and attention() without a library: the package's own kernels (dist/kernels), in f32 and bf16.
  "src/prebuilt.ts": `import { attention, createDevice, matmul, packageKernels, scaledMatmul } from "tskernel/runtime";

const device = await createDevice({ backend: "cpu" });
const random = (length: number) => Array.from({ length }, () => Math.random() * 2 - 1);
const [m, n, k] = [37, 45, 29];
const A = random(m * k);
const B = random(k * n);
const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
const f32 = await matmul(device, device.createBuffer(new Float32Array(A)), device.createBuffer(new Float32Array(B)), C, { m, n, k, tuning: false });
// bf16: the inputs are rounded by createBuffer; read back as the kernel saw them.
const A16 = device.createBuffer("bf16", A);
const B16 = device.createBuffer("bf16", B);
const C16 = device.createBuffer("bf16", new Float32Array(m * n).fill(Number.NaN));
const bf16 = await matmul(device, A16, B16, C16, { m, n, k, tuning: false });
// fp8: A (m×k) and Bt (n×k) rounded to e4m3 by createBuffer, over much of the format's range; C poisoned.
const A8 = device.createBuffer("e4m3", random(m * k).map((x) => x * 300));
const Bt8 = device.createBuffer("e4m3", random(n * k).map((x) => x * 300));
const C8 = device.createBuffer("bf16", new Float32Array(m * n).fill(Number.NaN));
const fp8 = await scaledMatmul(device, A8, Bt8, C8, { m, n, k, scaleA: 0.5, scaleB: 0.25 });
const d = 64;
const [Q, K, V] = [0, 1, 2].map(() => device.createBuffer("bf16", random(128 * d)));
const O = device.createBuffer("bf16", new Float32Array(128 * d).fill(Number.NaN));
await attention(device, Q!, K!, V!, O, { batch: 1, heads: 1, seq: 128, headDim: d }, { causal: true });
const values = async (buffer: Parameters<typeof device.read>[0]) => [...((await device.read(buffer)) as Float32Array)].map((v) => (Number.isFinite(v) ? v : String(v)));
const { origin, reason } = packageKernels(device);
console.log(JSON.stringify({
  origin, reason, f32, bf16, fp8,
  A, B, C: await values(C), A16: await values(A16), B16: await values(B16), C16: await values(C16),
  A8: await values(A8), Bt8: await values(Bt8), C8: await values(C8),
  Q: await values(Q!), K: await values(K!), V: await values(V!), O: await values(O),
}));
`,
  // The bundler plugin as a build script uses it (run with this checkout's esbuild, which the app lacks), and
  // the typed launcher of a kernel a bundler built, for the type-check.
  "tools/bundle.mjs": `import { build } from ${JSON.stringify(path.join(repoRoot, "node_modules", "esbuild", "lib", "main.js"))};
import tskernel from "tskernel/plugin/esbuild";
import { vite, rollup } from "tskernel/plugin";
const result = await build({ entryPoints: ["src/kernels/saxpy.kernel.ts"], bundle: true, format: "esm", external: ["tskernel/webgpu"], outfile: "out/saxpy.bundle.mjs", plugins: [tskernel()], logLevel: "silent" });
const { saxpy } = await import("../out/saxpy.bundle.mjs");
const { kernelHandle } = await import("tskernel/webgpu");
const handle = kernelHandle(saxpy);
console.log(JSON.stringify({ errors: result.errors.length, vite: vite().name, rollup: rollup().name, params: handle.description.params.map((p) => p.name), block: handle.description.block, wgsl: handle.wgsl.source.includes("@compute") }));
`,
  "tools/page.ts": `import { createWebGpuDevice, launcher } from "tskernel/webgpu";
import type { TskernelPluginOptions } from "tskernel/plugin";
import tskernel from "tskernel/plugin/vite";
import { saxpy } from "../src/kernels/saxpy.kernel.js";

export const options: TskernelPluginOptions = { defines: { TILE: 8 } };
export const plugins = [tskernel(options)];
const device = await createWebGpuDevice();
const x = device.createBuffer(new Float32Array(8));
await launcher(device, saxpy)({ grid: 1, args: [8, 2, x, x, x] });
`,
  // Misuse that the declarations must catch.
  "bad/kernel.ts": 'import { kernel } from "tskernel";\n\nexport const k = kernel(42);\n',
  "bad/runtime.ts": 'import { createDevice } from "tskernel/runtime";\n\nawait createDevice({ backend: "metal" });\n',
  // A plugin-built kernel's launcher is typed from the kernel's signature: a is f32, not a buffer.
  "bad/launch.ts": 'import { createWebGpuDevice, launcher } from "tskernel/webgpu";\nimport { saxpy } from "../src/kernels/saxpy.kernel.js";\n\nconst device = await createWebGpuDevice();\nconst x = device.createBuffer(new Float32Array(8));\nawait launcher(device, saxpy)({ grid: 1, args: [8, x, x, x, x] });\n',
};

const compilerOptions = {
  target: "ES2022",
  strict: true,
  noEmit: true,
  // Our declarations are checked too; WebGPU's types (@webgpu/types) build on the DOM's.
  skipLibCheck: false,
  lib: ["ES2022", "DOM"],
  types: ["node"],
};

beforeAll(() => {
  // A copy of the checkout as git sees it (tracked and new files, nothing ignored: no dist/), so that the
  // pack's own build is what makes dist/.
  const files = ok("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], repoRoot).split("\0").filter(Boolean);
  for (const file of files) {
    // Deleted-but-tracked paths and anything that is not a plain file (a node_modules symlink in a
    // worktree, say) are not part of what npm packs from a clean clone.
    const stat = fs.lstatSync(path.join(repoRoot, file), { throwIfNoEntry: false });
    if (!stat?.isFile()) continue;
    fs.mkdirSync(path.dirname(path.join(source, file)), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, file), path.join(source, file));
  }
  fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(source, "node_modules"), "dir");
  ok("npm", ["pack", "--pack-destination", work, "--json"], source);

  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), `${JSON.stringify({ name: "tskernel-user", private: true, type: "module" }, null, 2)}\n`);
  for (const [name, text] of Object.entries(userFiles)) {
    fs.mkdirSync(path.dirname(path.join(app, name)), { recursive: true });
    fs.writeFileSync(path.join(app, name), text);
  }
  const tarball = path.join(work, fs.readdirSync(work).find((f) => f.endsWith(".tgz"))!);
  ok("npm", ["install", tarball, `typescript@${versionOf("typescript")}`, `@types/node@${versionOf("@types/node")}`, "--prefer-offline", "--no-audit", "--no-fund"], app);
}, 600_000);

describe("the packed tarball", () => {
  it("holds only built JS, declarations, the example kernels the demo and matmul() compile, docs, the CMake module, README and LICENSE", () => {
    const tarball = fs.readdirSync(work).find((f) => f.endsWith(".tgz"))!;
    const listing = ok("tar", ["-tzf", path.join(work, tarball)], work).trim().split("\n").map((f) => f.replace(/^package\//, ""));
    const allowed = /^(package\.json|README\.md|LICENSE|bin\/tskernel\.js|ts-plugin\/package\.json|docs\/[\w-]+\.md|cmake\/Tskernel\.cmake|examples\/[\w-]+\.ts|runtime\/torch\/tskernel_torch\.py|dist\/(compiler|runtime|cli|plugin)\/[\w/-]+\.(js|d\.ts)|dist\/plugin\/ts-plugin\.(cjs|d\.cts)|dist\/kernels\/([\w-]+\.(js|wgsl|cu|cuh|wgsl\.map\.json)|manifest\.json|sources\.json))$/;
    expect(listing.filter((f) => !allowed.test(f))).toEqual([]);
    // The Python runtime that `tskernel build --target torch` copies beside the modules it writes.
    expect(listing).toContain("runtime/torch/tskernel_torch.py");
    expect(listing.filter((f) => /\.test\.|\.map$|^dist\/bench\//.test(f))).toEqual([]);
    // The CMake module that C++ projects include from node_modules/tskernel/cmake/.
    expect(listing).toContain("cmake/Tskernel.cmake");
    // The package's own kernels (matmul() and attention() without a library): every target's code of each file.
    for (const stem of ["sgemm-multistage", "hgemm-wgmma-ws", "hgemm-wgmma-small", "hgemm-mma-guarded", "hgemm-tiled", "fp8gemm-wgmma-ws", "fp8gemm-tiled", "flash-attention-fold", "flash-attention-backward"]) {
      expect(listing, stem).toContain(`dist/kernels/${stem}.js`);
      expect(listing, stem).toContain(`dist/kernels/${stem}.cu`);
    }
    expect(listing).toContain("dist/kernels/sgemm-multistage.wgsl");
    expect(listing).toContain("dist/kernels/manifest.json");
    expect(listing).toContain("dist/kernels/sources.json");
    // Every entry point in exports, with its declarations.
    const manifest = JSON.parse(fs.readFileSync(path.join(app, "node_modules", "tskernel", "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string } | string> };
    for (const [entry, target] of Object.entries(manifest.exports)) {
      if (typeof target === "string") continue;
      expect(listing, `${entry} types`).toContain(target.types.replace(/^\.\//, ""));
      expect(listing, `${entry} code`).toContain(target.default.replace(/^\.\//, ""));
      expect(target.types).toMatch(/\.d\.c?ts$/);
    }
    expect(Object.keys(manifest.exports).sort()).toEqual([".", "./compiler", "./package.json", "./plugin", "./plugin/esbuild", "./plugin/rollup", "./plugin/vite", "./runtime", "./ts-plugin", "./webgpu"]);
  }, 300_000);

  it("installs without koffi and webgpu, which are optional peers", () => {
    expect(fs.existsSync(path.join(app, "node_modules", "koffi"))).toBe(false);
    expect(fs.existsSync(path.join(app, "node_modules", "webgpu"))).toBe(false);
    expect(fs.existsSync(path.join(app, "node_modules", "ts-morph"))).toBe(true);
    // The plugin's one dependency; the bundlers are the user's.
    expect(fs.existsSync(path.join(app, "node_modules", "unplugin"))).toBe(true);
    expect(fs.existsSync(path.join(app, "node_modules", "vite"))).toBe(false);
  }, 300_000);
});

describe("in a project that installed the tarball", () => {
  it("type-checks the kernels with tsc --noEmit --strict, with node16 and with bundler resolution", () => {
    const kernels = ["src/kernels/matmul.kernel.ts", "src/kernels/saxpy.kernel.ts"];
    ok("npx", ["--no", "--", "tsc", "--noEmit", "--strict", "--skipLibCheck", "false", "--target", "es2022", "--module", "node16", "--moduleResolution", "node16", ...kernels], app);
    ok("npx", ["--no", "--", "tsc", "--noEmit", "--strict", "--skipLibCheck", "false", "--target", "es2022", "--module", "esnext", "--moduleResolution", "bundler", ...kernels], app);
  }, 300_000);

  it("type-checks a program using tskernel, tskernel/compiler, tskernel/runtime and tskernel/webgpu under node16 and bundler, and rejects misuse", () => {
    const config = (name: string, options: object, include: string[]) => fs.writeFileSync(path.join(app, name), JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, include }, null, 2));
    config("tsconfig.node16.json", { module: "node16", moduleResolution: "node16" }, ["src", "bad"]);
    // Declarations were checked with node16; bundler resolution only needs to find the same ones (faster).
    config("tsconfig.bundler.json", { module: "esnext", moduleResolution: "bundler", skipLibCheck: true }, ["src", "tools"]);
    ok("npx", ["--no", "--", "tsc", "-p", "tsconfig.bundler.json"], app);
    // With node16, src/ and the three misuses in bad/: exactly those three errors, nothing else.
    const node16 = run("npx", ["--no", "--", "tsc", "-p", "tsconfig.node16.json"], { cwd: app });
    expect(node16.status).not.toBe(0);
    const errors = node16.stdout.split("\n").filter((line) => /^\S.*: error TS\d+/.test(line));
    expect(errors, node16.stdout).toHaveLength(3);
    expect(errors[0]).toMatch(/^bad\/kernel\.ts\(3,\d+\): error TS\d+: .*number/);
    expect(errors[1]).toMatch(/^bad\/launch\.ts\(6,\d+\): error TS2322: Type 'DeviceBuffer' is not assignable to type 'number'/);
    expect(errors[2]).toMatch(/^bad\/runtime\.ts\(3,\d+\): error TS2322: Type '"metal"' is not assignable/);
  }, 300_000);

  it("npx tskernel check and build take the kernels folder and write what this checkout's compiler writes", () => {
    const check = tskernel("check", "src/kernels");
    expect(check.status, check.stderr).toBe(0);
    expect(check.stdout).toBe("ok: 2 kernel specializations in 2 file(s)\n");
    const build = tskernel("build", "src/kernels", "--target", "cuda,wgsl,js", "--out", "build/kernels");
    expect(build.status, build.stderr).toBe(0);
    expect(build.stdout).toBe("wrote 10 files and manifest.json (2 kernel specializations) to build/kernels\n");
    const manifest = JSON.parse(fs.readFileSync(path.join(app, "build", "kernels", "manifest.json"), "utf8")) as Manifest;
    expect(manifest.generator).toBe(`tskernel ${JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version}`);
    expect(manifest.kernels.map((k) => `${k.source}#${k.entryName}`)).toEqual(["src/kernels/matmul.kernel.ts#matmulTiled_TILE_16", "src/kernels/saxpy.kernel.ts#saxpy"]);
    expect(manifest.kernels[0]!.params.map((p) => `${p.name}:${p.kind}`)).toEqual(["C:buffer", "A:buffer", "B:buffer", "m:scalar", "n:scalar", "k:scalar", "TILE:const"]);
    // saxpy declares its targets (the installed declarations take the option, the installed compiler reads it).
    expect(manifest.kernels.map((k) => [k.declaredTargets, k.builtFor])).toEqual([
      [undefined, ["cuda", "wgsl", "js"]],
      [["cuda", "wgsl", "js"], ["cuda", "wgsl", "js"]],
    ]);
    // The installed compiler (which reads the kernel language from its .d.ts) writes what the sources do.
    const files = ["matmul.kernel", "saxpy.kernel"].map((stem) => path.join(app, "src", "kernels", `${stem}.ts`));
    const expected = compileFiles(files, { targets: ["cuda", "wgsl", "js"], baseDir: app });
    expect(expected.ok).toBe(true);
    for (const file of expected.files) {
      const stem = path.basename(file.sourceFile, ".ts");
      const written = (ext: string) => fs.readFileSync(path.join(app, "build", "kernels", `${stem}${ext}`), "utf8");
      expect(written(".cu"), stem).toBe(file.cuda!.source);
      expect(written(".cuh"), stem).toBe(file.cuda!.header);
      expect(written(".wgsl"), stem).toBe(file.wgsl!.source);
      expect(written(".js"), stem).toBe(file.js!.source);
    }
  }, 300_000);

  it("runs the kernel on the CPU through tskernel/runtime, built and compiled in-process, matching float64; WebGPU and CUDA are BackendUnavailable", () => {
    fs.writeFileSync(path.join(app, "tsconfig.emit.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, module: "node16", moduleResolution: "node16", noEmit: false, outDir: "out", rootDir: "src", skipLibCheck: true }, include: ["src"] }));
    ok("npx", ["--no", "--", "tsc", "-p", "tsconfig.emit.json"], app);
    const result = JSON.parse(ok("node", ["out/run.js"], app)) as {
      n: number;
      targets: boolean;
      kernelHandle: string;
      browserEntry: string;
      manifestKernels: number;
      fromBuild: { A: number[]; B: number[]; C: (number | string)[] };
      inProcess: { A: number[]; B: number[]; C: (number | string)[] };
      webgpu: string;
      cuda: string;
    };
    expect(result.targets).toBe(true);
    expect(result.kernelHandle).toBe("tskernel.kernel function");
    expect(result.browserEntry).toBe("function function");
    expect(result.manifestKernels).toBe(2);
    const n = result.n;
    for (const { A, B, C } of [result.fromBuild, result.inProcess]) {
      expect(C).toHaveLength(n * n);
      expect(C.filter((v) => typeof v !== "number")).toEqual([]);
      let error = 0;
      let norm = 0;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let p = 0; p < n; p++) sum += A[i * n + p]! * B[p * n + j]!;
          error += (sum - (C[i * n + j] as number)) ** 2;
          norm += sum ** 2;
        }
      }
      expect(Math.sqrt(error / norm)).toBeLessThanOrEqual(n * 2 ** -23);
    }
    expect(result.fromBuild.A).not.toEqual(result.inProcess.A);
    expect(result.webgpu).toBe(
      "tskernel: the webgpu backend is unavailable: the 'webgpu' package (Dawn for Node) could not be loaded: " +
        `Cannot find package 'webgpu' imported from ${path.join(fs.realpathSync(app), "node_modules", "tskernel", "dist", "runtime", "webgpu", "dawn.js")}. ` +
        "It is an optional dependency of tskernel: install it with `npm install webgpu`",
    );
    expect(result.cuda).toBe("tskernel: the cuda backend is unavailable: the 'koffi' package could not be loaded: Cannot find module 'koffi'. It is an optional dependency of tskernel: install it with `npm install koffi`");
  }, 300_000);

  it("matmul(), scaledMatmul() and attention() run without a library on the kernels the package ships, with no kernel source to compile", () => {
    // The package's examples are hidden for this run: a compile would fail without them, so the results below come
    // from dist/kernels (the emit step of the test above compiled src/prebuilt.ts too).
    const examples = path.join(app, "node_modules", "tskernel", "examples");
    fs.renameSync(examples, `${examples}.hidden`);
    let result: Record<string, (number | string)[]> & { origin: string; reason?: string; f32: string; bf16: string; fp8: string };
    try {
      result = JSON.parse(ok("node", ["out/prebuilt.js"], app)) as typeof result;
    } finally {
      fs.renameSync(`${examples}.hidden`, examples);
    }
    expect([result.origin, result.reason, result.f32, result.bf16, result.fp8]).toEqual(["prebuilt", undefined, "sgemm-register-staged", "hgemm-tiled", "fp8gemm-tiled"]);
    const numbers = (name: string) => {
      const values = result[name]!;
      expect(values.filter((v) => typeof v !== "number"), name).toEqual([]);
      return values as number[];
    };
    const [m, n, k] = [37, 45, 29];
    // B k×n row-major, or with `transposed` given as Bᵀ (n×k, scaledMatmul's Bt); C = alpha·A·B.
    const gemmError = (A: number[], B: number[], C: number[], alpha = 1, transposed = false) => {
      let error = 0;
      let norm = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let p = 0; p < k; p++) sum += alpha * A[i * k + p]! * B[transposed ? j * k + p : p * n + j]!;
          error += (sum - C[i * n + j]!) ** 2;
          norm += sum ** 2;
        }
      }
      return Math.sqrt(error / norm);
    };
    expect(gemmError(numbers("A"), numbers("B"), numbers("C"))).toBeLessThan(k * 2 ** -23 + 1e-7);
    // bf16: against the product of the rounded inputs, within the output's rounding (matmulTolerance16).
    expect(gemmError(numbers("A16"), numbers("B16"), numbers("C16"))).toBeLessThan(2 ** -8 + 16 * 2 ** -23);
    // fp8: against the product of the e4m3 inputs as the kernel saw them, times the scales, within bf16's rounding.
    expect(gemmError(numbers("A8"), numbers("Bt8"), numbers("C8"), 0.125, true)).toBeLessThan(2 ** -8 + 29 * 2 ** -23);
    const [Q, K, V, O] = ["Q", "K", "V", "O"].map(numbers) as [number[], number[], number[], number[]];
    const d = 64;
    let error = 0;
    let norm = 0;
    for (let i = 0; i < 128; i++) {
      const scores = Array.from({ length: i + 1 }, (_, j) => Q.slice(i * d, i * d + d).reduce((s, x, c) => s + x * K[j * d + c]!, 0) / 8);
      const max = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - max));
      const sum = weights.reduce((a, b) => a + b, 0);
      for (let c = 0; c < d; c++) {
        const expected = weights.reduce((s, w, j) => s + w * V[j * d + c]!, 0) / sum;
        error += (O[i * d + c]! - expected) ** 2;
        norm += expected ** 2;
      }
    }
    expect(Math.sqrt(error / norm)).toBeLessThan(2 * 2 ** -8);
  }, 300_000);

  it("tskernel/plugin builds a kernel file with esbuild into a module on tskernel/webgpu", () => {
    const result = JSON.parse(ok("node", ["tools/bundle.mjs"], app)) as { errors: number; vite: string; rollup: string; params: string[]; block: number[]; wgsl: boolean };
    expect(result).toEqual({ errors: 0, vite: "tskernel", rollup: "tskernel", params: ["n", "a", "x", "y", "out"], block: [64, 1, 1], wgsl: true });
    const bundle = fs.readFileSync(path.join(app, "out", "saxpy.bundle.mjs"), "utf8");
    expect([...bundle.matchAll(/from\s*"([^"]+)"/g)].map((m) => m[1])).toEqual(["tskernel/webgpu"]);
  }, 300_000);

  it("tskernel/ts-plugin in tsconfig.json: the app's own tsserver shows a kernel's diagnostics as it is edited", async () => {
    // tsserver reads tsconfig.json: a project of its own in a folder of the app, so the other configs stay as they are.
    const editor = path.join(app, "editor");
    fs.mkdirSync(path.join(editor, "src"), { recursive: true });
    fs.writeFileSync(path.join(editor, "tsconfig.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, module: "node16", moduleResolution: "node16", skipLibCheck: true, plugins: [{ name: "tskernel/ts-plugin" }] }, include: ["src"] }, null, 2));
    const kernelFile = path.join(editor, "src", "saxpy.kernel.ts");
    const text = userFiles["src/kernels/saxpy.kernel.ts"]!;
    fs.writeFileSync(kernelFile, text);
    // tsserver finds plugins in the node_modules its own package sits in: the app's, where tskernel is installed.
    const server = new TsServer(path.join(app, "node_modules", "typescript", "lib", "tsserver.js"), [], app);
    try {
      server.open(kernelFile, text, app);
      await server.nextEvent("projectsUpdatedInBackground", 0);
      expect(await server.semanticDiagnostics(kernelFile)).toEqual([]);
      // An unsaved edit: out[i] = a * x[i] + y[i] + i, which mixes f32 and i32.
      const line = text.split("\n").findIndex((l) => l.includes("fma(a, x[i], y[i])")) + 1;
      const offset = text.split("\n")[line - 1]!.indexOf("fma(") + 1;
      server.edit(kernelFile, { line, offset }, { line, offset: offset + "fma(a, x[i], y[i])".length }, "a * x[i] + y[i] + i");
      const diagnostics = await server.semanticDiagnostics(kernelFile);
      expect(diagnostics.map((d) => ({ source: d.source, code: d.code, start: d.start, end: d.end, first: d.text.split("\n")[0] }))).toEqual([
        { source: "tskernel", code: 2001, start: { line, offset }, end: { line, offset: offset + "a * x[i] + y[i] + i".length }, first: "TSK2001: operator '+' needs operands of one type, found f32 and i32" },
      ]);
    } finally {
      await server.close();
    }
  }, 300_000);

  it("npx tskernel demo, bench and tune run on the CPU; the GPU backends say what to install", () => {
    const demo = tskernel("demo", "--backend", "cpu", "--size", "24");
    expect(demo.status, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/\n\d+ passed, 0 failed, \d+ skipped\n$/);
    const bench = tskernel("bench", "matmul", "--backend", "cpu", "--sizes", "32", "--runs", "1");
    expect(bench.status, bench.stderr).toBe(0);
    expect(bench.stdout).toMatch(/\b32\s+sgemm-2d-guarded\s+\d/);
    const tune = tskernel("tune", "matmul", "--backend", "cpu", "--sizes", "32", "--runs", "1", "--max-candidates", "1", "--rungs", "sgemm-2d-guarded", "--store", path.join(work, "tune"));
    expect(tune.status, tune.stderr).toBe(0);
    expect(tune.stdout).toMatch(/1 verified, 0 wrong \(discarded\), \d+ pruned, 0 failed; stored in /);
    for (const [backend, install] of [["webgpu", "npm install webgpu"], ["cuda", "npm install koffi"]]) {
      const refused = tskernel("demo", "--backend", backend!);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`tskernel: the ${backend} backend is unavailable: the '`);
      expect(refused.stderr).toContain(install);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    }
    const help = tskernel("--help");
    expect(help.status).toBe(0);
    for (const command of ["check", "build", "demo", "bench", "tune"]) expect(help.stdout).toMatch(new RegExp(`\\n  ${command}\\b`));
  }, 300_000);
});
