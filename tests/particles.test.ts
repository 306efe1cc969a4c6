/**
 * examples/particles end to end: `vite build` with its own vite.config.ts (the bundler plugin), the bundle
 * served on 127.0.0.1 and opened in Debian's chromium (headless, WebGPU on SwiftShader) through
 * playwright-core. The page runs STEPS steps of the N-body kernel from a fresh random seed, draws once, puts
 * the pixels on its canvas and hands over the bodies' bytes and the pixels; the test then
 * - reruns the same steps on the CPU backend, from the same bodies (examples/particles/src/scene.ts), and in
 *   float64 (the same softened gravity and symplectic Euler step, written here independently), and compares
 *   the WebGPU and CPU states with each other and with float64;
 * - takes a screenshot of the canvas, checks that it shows exactly the bytes the page drew, and compares it
 *   with two reference images: the CPU backend's drawing of its own state, and one drawn here in float64
 *   from the float64 state;
 * - saves the screenshot and the figures in build/particles/ (bench/results/ keeps a run's).
 *
 * Tolerances (why): the states differ from float64 by f32 rounding in sums of n terms and inverseSqrt (WGSL
 * allows 2 ULP; the CPU divides), carried through STEPS steps. Measured on the CPU backend over 8 fresh seeds
 * (2026-11-26, 1024 bodies, 24 steps; speeds up to 3): positions within 7.9e-7 of float64, velocities 2.3e-5;
 * the bounds are ten times that, 1e-5 and 2e-4. (SwiftShader gave the CPU's bytes exactly, but a GPU need
 * not.) A body whose position differs that much lands in another pixel only within that distance of a pixel
 * edge, changing its five pixels, and a colour channel may differ by 1 where exp, mix or the rounding to
 * bytes differ in the last bits: at most 50 pixels may differ by more than 2 (none did).
 *
 * Needs dist/ (`npm test` builds it first). The browser part is skipped when /usr/bin/chromium is missing,
 * unless TSKERNEL_REQUIRE_BROWSER=1 (CI), which makes that a failure. TSKERNEL_PARTICLES_SEED=s reruns a seed.
 */

import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import ts from "typescript";
import { build } from "vite";
import { afterAll, describe, expect, it } from "vitest";
import { compileKernelLibrary, CpuDevice, unpackStructs } from "../runtime/index.ts";
import { balancedLaunch } from "../examples/particles/src/balance.ts";
import { makeScene, type Body, type Scene } from "../examples/particles/src/scene.ts";
import { repoRoot } from "./golden-cases.ts";
import { chromiumArgs, chromiumPath, serve } from "./tools/browser.ts";
import { decodePng } from "./tools/png.ts";

const appRoot = path.join(repoRoot, "examples", "particles");
const outDir = path.join(repoRoot, "build", "particles");
const required = process.env.TSKERNEL_REQUIRE_BROWSER === "1";
const noBrowser = !fs.existsSync(chromiumPath);

const N = 1024;
const STEPS = 24;
const SIZE = 256;

type V3 = [number, number, number];
interface State {
  pos: V3[];
  vel: V3[];
  speed: number[];
  mass: number[];
}

const f = Math.fround;

/** The scene's bodies and settings as the devices see them: every f32 rounded (packStructs and uniforms do). */
function f32Scene(scene: Scene): State & { dt: number; softening2: number } {
  return {
    pos: scene.bodies.map((b) => b.pos.map(f) as V3),
    vel: scene.bodies.map((b) => b.vel.map(f) as V3),
    speed: scene.bodies.map((b) => f(b.speed)),
    mass: scene.bodies.map((b) => f(b.mass)),
    dt: f(scene.params.dt),
    softening2: f(scene.params.softening2),
  };
}

/** `steps` steps of softened all-pairs gravity and symplectic Euler in float64 (nbody.kernel.ts's definition). */
function float64Steps(start: ReturnType<typeof f32Scene>, steps: number): State {
  const n = start.pos.length;
  const pos = start.pos.map((p) => [...p] as V3);
  const vel = start.vel.map((v) => [...v] as V3);
  const { mass, dt, softening2 } = start;
  const acc = new Float64Array(3 * n);
  for (let s = 0; s < steps; s++) {
    acc.fill(0);
    for (let i = 0; i < n; i++) {
      const [x, y, z] = pos[i]!;
      let ax = 0;
      let ay = 0;
      let az = 0;
      for (let j = 0; j < n; j++) {
        const dx = pos[j]![0] - x;
        const dy = pos[j]![1] - y;
        const dz = pos[j]![2] - z;
        const r2 = softening2 + dx * dx + dy * dy + dz * dz;
        const s3 = mass[j]! / (r2 * Math.sqrt(r2));
        ax += dx * s3;
        ay += dy * s3;
        az += dz * s3;
      }
      acc.set([ax, ay, az], 3 * i);
    }
    for (let i = 0; i < n; i++) {
      for (let l = 0; l < 3; l++) {
        vel[i]![l] += acc[3 * i + l]! * dt;
        pos[i]![l] += vel[i]![l]! * dt;
      }
    }
  }
  return { pos, vel, speed: vel.map((v) => Math.hypot(...v)), mass: [...mass] };
}

function stateOf(bytes: Uint8Array, layout: ReturnType<ReturnType<typeof compileKernelLibrary>["layout"]>): State {
  const bodies = unpackStructs(layout, bytes) as unknown as Body[];
  return { pos: bodies.map((b) => b.pos), vel: bodies.map((b) => b.vel), speed: bodies.map((b) => b.speed), mass: bodies.map((b) => b.mass) };
}

/** The largest differences between two states: of positions and of velocities (each lane), and of masses. */
function difference(a: State, b: State): { pos: number; vel: number; speed: number; mass: number } {
  const worst = (x: V3[], y: V3[]) => Math.max(...x.map((v, i) => Math.max(...v.map((lane, l) => Math.abs(lane - y[i]![l]!)))));
  return {
    pos: worst(a.pos, b.pos),
    vel: worst(a.vel, b.vel),
    speed: Math.max(...a.speed.map((s, i) => Math.abs(s - b.speed[i]!))),
    mass: Math.max(...a.mass.map((m, i) => Math.abs(m - b.mass[i]!))),
  };
}

/** draw.kernel.ts's picture of a state, in float64: splat (weights 4 and 1), then each pixel's colour. */
function float64Image(state: State, view: Scene["view"]): Uint8Array {
  const { width, height } = view;
  const density = new Float64Array(width * height);
  const heat = new Float64Array(width * height);
  for (let i = 0; i < state.pos.length; i++) {
    const [px, py, pz] = state.pos[i]!;
    const x = Math.floor((px - view.center[0]) * view.scale + width * 0.5);
    const y = Math.floor((view.center[1] - (py * view.tilt[0] - pz * view.tilt[1])) * view.scale + height * 0.5);
    if (x < 1 || y < 1 || x >= width - 1 || y >= height - 1) continue;
    const hot = Math.trunc(Math.min(state.speed[i]! / view.hotSpeed, 1) * 255);
    const at = y * width + x;
    for (const [where, weight] of [[at, 4], [at - 1, 1], [at + 1, 1], [at - width, 1], [at + width, 1]] as const) {
      density[where] += weight;
      heat[where] += hot * weight;
    }
  }
  const image = new Uint8Array(width * height * 4);
  const mix = (a: number, b: number, t: number) => a * (1 - t) + b * t;
  for (let p = 0; p < width * height; p++) {
    const glow = 1 - Math.exp(-density[p]! * view.gain);
    const t = density[p] === 0 ? 0 : heat[p]! / (density[p]! * 255);
    const hue = [mix(0.3, 1, t), mix(0.55, 0.6, t), mix(1, 0.2, t)];
    const rgb = [0.02, 0.03, 0.07].map((background, l) => mix(background, hue[l]!, glow));
    image.set([...rgb.map((c) => Math.min(Math.trunc(c * 255 + 0.5), 255)), 255], p * 4);
  }
  return image;
}

/** How two RGBA images differ: the largest channel difference, and how many pixels differ by more than `by`. */
function compareImages(a: Uint8Array, b: Uint8Array, by: number): { worst: number; pixelsOver: number } {
  let worst = 0;
  let pixelsOver = 0;
  for (let p = 0; p < a.length / 4; p++) {
    let pixel = 0;
    for (let c = 0; c < 4; c++) pixel = Math.max(pixel, Math.abs(a[p * 4 + c]! - b[p * 4 + c]!));
    worst = Math.max(worst, pixel);
    if (pixel > by) pixelsOver++;
  }
  return { worst, pixelsOver };
}

describe("the N-body kernel's builds on the CPU backend", () => {
  // Every specialization of `step` (bodies per thread, threads per body, the next tile loaded early), on a
  // count that fills none of their blocks, for two ping-pong steps: each against float64 (the bounds of the
  // browser test, which are for 24 steps of 1024 bodies), and all against the default build, whose order of
  // summation differs from theirs only where SPLIT > 1 (the slices' partial sums).
  it("agree with float64 and with the default build, SPLIT and AHEAD included, past the last full block", async () => {
    const n = 300;
    const steps = 2;
    const library = compileKernelLibrary([path.join(appRoot, "src", "nbody.kernel.ts")], ["js"]);
    const particle = library.layout("Particle");
    const scene = makeScene(5, n, 64, 64);
    const reference = float64Steps(f32Scene(scene), steps);
    const builds = library.kernels.filter((k) => k.description.name === "step");
    expect(builds.map((k) => k.description.specialization).filter((c) => (c.SPLIT as number) > 1 && c.AHEAD === true).length).toBeGreaterThan(0);
    const states: State[] = [];
    for (const build of builds) {
      const { BLOCK, BODIES, SPLIT } = build.description.specialization as { BLOCK: number; BODIES: number; SPLIT: number };
      const cpu = new CpuDevice();
      let bodies = cpu.createBuffer(particle, scene.bodies);
      let next = cpu.createBuffer(particle, new Uint8Array(n * particle.stride).fill(0xff));
      for (let s = 0; s < steps; s++) {
        await cpu.launch(build, { grid: [Math.ceil((n * SPLIT) / (BLOCK * BODIES))], args: [next, bodies, scene.params] });
        [bodies, next] = [next, bodies];
      }
      states.push(stateOf((await cpu.read(bodies)) as Uint8Array, particle));
      cpu.dispose();
    }
    const moved = difference(reference, f32Scene(scene));
    expect(moved.vel).toBeGreaterThan(1e-3);
    for (const [i, state] of states.entries()) {
      const name = JSON.stringify(builds[i]!.description.specialization);
      const vsReference = difference(state, reference);
      expect(vsReference.mass, name).toBe(0);
      expect(vsReference.pos, name).toBeLessThan(1e-5);
      expect(vsReference.vel, name).toBeLessThan(2e-4);
      const vsDefault = difference(state, states[0]!);
      expect(vsDefault.vel, name).toBeLessThanOrEqual(moved.vel * 1e-4);
      if ((builds[i]!.description.specialization.SPLIT as number) === 1) expect(vsDefault, name).toEqual({ pos: 0, vel: 0, speed: 0, mass: 0 });
    }
  });
});

describe("the balanced N-body step (pulls, then gather) on the CPU backend", () => {
  // Every build of `pulls` on 300 bodies with several block counts: 1 (one range over every group), 2 and 7
  // (ranges that span several groups and start and end inside them), 40 (groups split over many blocks, and
  // blocks with empty ranges where there are fewer units than blocks) and 3 (uneven); and on 1 and 65 bodies.
  // Two steps from a fresh seed, against float64 (the bounds above) and against `step`'s default build (the
  // sums are in another order: tiles split between blocks, added block by block), within 10⁻⁴ of the change.
  it("agrees with float64 and with step for any block count, ranges across groups and groups across blocks", async () => {
    const steps = 2;
    const library = compileKernelLibrary([path.join(appRoot, "src", "nbody.kernel.ts")], ["js"]);
    const particle = library.layout("Particle");
    const vec4 = library.layout("vec4f");
    const builds = library.kernels.filter((k) => k.description.name === "pulls");
    expect(builds.length).toBeGreaterThanOrEqual(3);
    const gather = library.get("gather");
    const step = library.get("step");
    const seed = Math.floor(Math.random() * 2 ** 31);
    // 300 bodies: partial tiles and groups; 1 and 65: a single unit, and one body past a tile of 64.
    for (const [n, blockCounts] of [[300, [1, 2, 3, 7, 40]], [1, [1, 3]], [65, [1, 3, 40]]] as const) {
      const scene = makeScene(seed + n, n, 64, 64);
      const reference = float64Steps(f32Scene(scene), steps);
      const run = async (launch: (cpu: CpuDevice, next: ReturnType<CpuDevice["createBuffer"]>, bodies: ReturnType<CpuDevice["createBuffer"]>) => Promise<void>) => {
        const cpu = new CpuDevice();
        let bodies = cpu.createBuffer(particle, scene.bodies);
        let next = cpu.createBuffer(particle, new Uint8Array(n * particle.stride).fill(0xff));
        for (let s = 0; s < steps; s++) {
          await launch(cpu, next, bodies);
          [bodies, next] = [next, bodies];
        }
        const state = stateOf((await cpu.read(bodies)) as Uint8Array, particle);
        cpu.dispose();
        return state;
      };
      const stepState = await run((cpu, next, bodies) => cpu.launch(step, { grid: [Math.ceil(n / 64)], args: [next, bodies, scene.params] }));
      const moved = difference(reference, f32Scene(scene));
      if (n > 1) expect(moved.vel).toBeGreaterThan(1e-3);
      for (const build of builds) {
        const spec = build.description.specialization as { BLOCK: number; BODIES: number; SPLIT: number };
        for (const blocks of blockCounts) {
          const shape = balancedLaunch(n, spec, blocks);
          const name = `${JSON.stringify(spec)}, n ${n} on ${blocks} blocks (${shape.units} units), seed ${seed + n}`;
          const state = await run(async (cpu, next, bodies) => {
            // Poisoned: a slot gather reads that pulls did not write is NaN.
            const partials = cpu.createBuffer(vec4, new Uint8Array(shape.partials * 16).fill(0xff));
            await cpu.launch(build, { grid: shape.pullsGrid, args: [partials, bodies, scene.params] });
            await cpu.launch(gather, { grid: shape.gatherGrid, args: [next, bodies, partials, scene.params, shape.balance] });
          });
          const vsReference = difference(state, reference);
          expect(vsReference.mass, name).toBe(0);
          expect(vsReference.pos, name).toBeLessThan(1e-5);
          expect(vsReference.vel, name).toBeLessThan(2e-4);
          expect(difference(state, stepState).vel, name).toBeLessThanOrEqual(moved.vel * 1e-4);
        }
      }
    }
    // The cases the comment promises happen: a range over three groups (64/1 on 2 blocks: 12 or 13 units of
    // groups of 5 tiles), a group over five blocks and empty ranges (64/1 on 40 blocks: 25 units).
    expect(balancedLaunch(300, { BLOCK: 64, BODIES: 1 }, 2).units).toBe(25);
    expect(balancedLaunch(300, { BLOCK: 64, BODIES: 1 }, 40).units).toBe(25);
  });

  it("refuses shapes whose index arithmetic would leave i32", () => {
    expect(() => balancedLaunch(2 ** 22, { BLOCK: 64, BODIES: 1 }, 132)).toThrow(/4294967296 units/);
    expect(() => balancedLaunch(1000, { BLOCK: 64, BODIES: 1 }, 50000)).toThrow(/50000 blocks/);
    expect(() => balancedLaunch(0, { BLOCK: 64, BODIES: 1 }, 1)).toThrow(/positive integer/);
    expect(balancedLaunch(65536, { BLOCK: 512, BODIES: 8, SPLIT: 8 }, 132)).toMatchObject({ units: 16384, unitsPerBlock: 125, partials: (128 + 131) * 512 });
  });
});

describe("the particles app's types", () => {
  it("type-check with the app's tsc: struct and vector arguments are typed, a wrong one is an error", () => {
    const configFile = path.join(appRoot, "tsconfig.json");
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configFile, ts.sys.readFile).config, ts.sys, appRoot);
    const extra = {
      file: path.join(appRoot, "src", "wrong-args.ts"),
      text: [
        'import { createWebGpuDevice, launcher, layoutOf } from "tskernel/webgpu";',
        'import { step } from "./nbody.kernel.ts";',
        "const device = await createWebGpuDevice();",
        'const bodies = device.createBuffer(layoutOf(step, "Particle"), 4);',
        "await launcher(device, step)({ grid: 1, args: [bodies, bodies, { dt: 0.01, softening2: 0.01, n: 4 }] });", // right
        "await launcher(device, step)({ grid: 1, args: [bodies, bodies, { dt: 0.01, n: 4 }] });", // softening2 missing
        "await launcher(device, step)({ grid: 1, args: [bodies, bodies, 0.01] });", // a number for a struct
        "export {};",
      ].join("\n"),
    };
    const host = ts.createCompilerHost(config.options);
    const { getSourceFile, fileExists, readFile } = host;
    host.getSourceFile = (name, language, ...rest) => (name === extra.file ? ts.createSourceFile(name, extra.text, language) : getSourceFile(name, language, ...rest));
    host.fileExists = (name) => name === extra.file || fileExists(name);
    host.readFile = (name) => (name === extra.file ? extra.text : readFile(name));
    const program = ts.createProgram({ rootNames: [...config.fileNames, extra.file], options: config.options, host });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ""}:${d.file ? d.file.getLineAndCharacterOfPosition(d.start!).line + 1 : 0}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
    expect(errors.filter((e) => !e.startsWith("wrong-args.ts"))).toEqual([]);
    expect(errors.map((e) => e.split(":").slice(0, 2).join(":"))).toEqual(["wrong-args.ts:6", "wrong-args.ts:7"]);
    expect(errors[0]).toContain("softening2");
  }, 60_000);
});

describe.skipIf(noBrowser && !required)(`examples/particles in Chromium${noBrowser ? ` (skipped: ${chromiumPath} not found)` : ""}`, () => {
  let server: http.Server | undefined;
  let browser: Browser | undefined;

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it(`runs ${STEPS} steps of ${N} bodies on WebGPU that match the CPU backend and float64, and shows them on its canvas`, async () => {
    if (noBrowser) throw new Error(`TSKERNEL_REQUIRE_BROWSER=1, but ${chromiumPath} is missing (apt-get install chromium)`);
    const seed = Number(process.env.TSKERNEL_PARTICLES_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const timings: Record<string, number> = {};
    let started = performance.now();
    const lap = (name: string) => {
      timings[name] = Math.round(performance.now() - started);
      started = performance.now();
    };

    await build({ root: appRoot, configFile: path.join(appRoot, "vite.config.ts"), logLevel: "silent", build: { outDir: path.join(outDir, "app"), emptyOutDir: true } });
    lap("vite build");
    const served = await serve(path.join(outDir, "app"));
    server = served.server;
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: [...chromiumArgs, "--force-color-profile=srgb"] });
    const page = await browser.newPage({ viewport: { width: SIZE + 64, height: SIZE + 96 }, deviceScaleFactor: 1 });
    const logs: string[] = [];
    page.on("console", (message) => logs.push(`console.${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => logs.push(`pageerror: ${error.message}`));
    await page.goto(`${served.url}index.html?n=${N}&run=${STEPS}&size=${SIZE}&seed=${seed}`);
    await page.waitForFunction(() => document.body.dataset.status !== "running", undefined, { timeout: 60_000 });
    const status = await page.evaluate(() => document.body.dataset.status);
    const error = await page.evaluate(() => (window as unknown as { particlesError?: string }).particlesError);
    expect(status, `${error}\n${logs.join("\n")}`).toBe("done");
    const result = await page.evaluate(() => (window as unknown as { particles: { seed: number; state: string; pixels: string } }).particles);
    expect(result.seed).toBe(seed);
    const gpuBytes = new Uint8Array(Buffer.from(result.state, "base64"));
    const gpuPixels = new Uint8Array(Buffer.from(result.pixels, "base64"));
    const screenshotFile = await page.locator("canvas").screenshot();
    const shot = decodePng(new Uint8Array(screenshotFile));
    lap("chromium");

    // The CPU backend, from the same bodies: bodies' bytes and pixels poisoned first.
    const library = compileKernelLibrary([path.join(appRoot, "src", "nbody.kernel.ts"), path.join(appRoot, "src", "draw.kernel.ts")], ["js"]);
    const particle = library.layout("Particle");
    const scene = makeScene(seed, N, SIZE, SIZE);
    const cpu = new CpuDevice();
    let bodies = cpu.createBuffer(particle, scene.bodies);
    let next = cpu.createBuffer(particle, new Uint8Array(N * particle.stride).fill(0xff));
    const step = library.get("step"); // the page's build: the default specialization
    const { BLOCK, BODIES, SPLIT } = step.description.specialization as { BLOCK: number; BODIES: number; SPLIT: number };
    for (let s = 0; s < STEPS; s++) {
      await cpu.launch(step, { grid: [Math.ceil((N * SPLIT) / (BLOCK * BODIES))], args: [next, bodies, scene.params] });
      [bodies, next] = [next, bodies];
    }
    const pixelBuffer = cpu.createBuffer(new Uint8Array(SIZE * SIZE * 4).fill(0x5a));
    const density = cpu.createBuffer(new Uint32Array(SIZE * SIZE));
    const heat = cpu.createBuffer(new Uint32Array(SIZE * SIZE));
    await cpu.launch(library.get("splat"), { grid: [Math.ceil(N / 64)], args: [density, heat, bodies, scene.view, N] });
    await cpu.launch(library.get("shade"), { grid: [SIZE * SIZE / 256], args: [pixelBuffer, density, heat, scene.view] });
    const cpuBytes = (await cpu.read(bodies)) as Uint8Array;
    const cpuPixels = (await cpu.read(pixelBuffer)) as Uint8Array;
    // shade clears the sums it read, for the next frame.
    expect(((await cpu.read(density)) as Uint32Array).every((v) => v === 0)).toBe(true);
    cpu.dispose();
    lap("cpu backend");

    const start = f32Scene(scene);
    const reference = float64Steps(start, STEPS);
    lap("float64");
    const gpu = stateOf(gpuBytes, particle);
    const cpuState = stateOf(cpuBytes, particle);
    const gpuVsReference = difference(gpu, reference);
    const cpuVsReference = difference(cpuState, reference);
    const gpuVsCpu = difference(gpu, cpuState);
    // The bodies moved: the comparison is of a simulation, not of the start.
    const moved = difference(reference, { ...start, speed: start.speed });
    const referenceImage = float64Image(reference, scene.view);
    const litPixels = (image: Uint8Array) => Array.from({ length: image.length / 4 }, (_, p) => p).filter((p) => image[p * 4]! > 12).length;
    const figures = {
      date: new Date().toISOString(),
      seed,
      n: N,
      steps: STEPS,
      size: SIZE,
      moved,
      gpuVsReference,
      cpuVsReference,
      gpuVsCpu,
      screenshotVsPage: compareImages(shot.data, gpuPixels, 0),
      screenshotVsCpu: compareImages(shot.data, cpuPixels, 2),
      screenshotVsFloat64: compareImages(shot.data, referenceImage, 2),
      litPixels: litPixels(shot.data),
      timingsMs: timings,
    };
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, "screenshot.png"), screenshotFile);
    fs.writeFileSync(path.join(outDir, "result.json"), `${JSON.stringify(figures, null, 2)}\n`);
    const context = JSON.stringify(figures);

    expect([shot.width, shot.height]).toEqual([SIZE, SIZE]);
    expect(moved.pos, context).toBeGreaterThan(0.01);
    // Masses are copied as they are; states agree with float64 and with each other.
    expect(gpuVsReference.mass, context).toBe(0);
    expect(gpuVsReference.pos, context).toBeLessThan(1e-5);
    expect(gpuVsReference.vel, context).toBeLessThan(2e-4);
    expect(gpuVsReference.speed, context).toBeLessThan(2e-4);
    expect(cpuVsReference.pos, context).toBeLessThan(1e-5);
    expect(cpuVsReference.vel, context).toBeLessThan(2e-4);
    expect(gpuVsCpu.pos, context).toBeLessThan(2e-5);
    expect(gpuVsCpu.vel, context).toBeLessThan(4e-4);
    // The canvas shows what the kernels drew, byte for byte, and the bodies are in the picture.
    expect(figures.screenshotVsPage.pixelsOver, context).toBe(0);
    expect(figures.litPixels, context).toBeGreaterThan(N);
    // Against the reference images: channels within 2 but in the few pixels a body changed sides of an edge.
    expect(figures.screenshotVsCpu.pixelsOver, context).toBeLessThanOrEqual(50);
    expect(figures.screenshotVsFloat64.pixelsOver, context).toBeLessThanOrEqual(50);
  }, 120_000);
});
