/**
 * Issue 21 on a GPU: the all-pairs N-body kernel of examples/particles at N = 65 536 on CUDA and through Dawn
 * (timed, checked against float64 on sampled bodies), and the vector and struct runtime paths on CUDA against
 * the CPU backend's bytes: struct buffers and struct arguments (examples/struct-bodies.ts), arrays of padded
 * vec3 and vector arguments (examples/vector-geometry.ts), integer vectors and structs
 * (tests/kernels/vector-semantics.ts), f16 vectors and f16 struct fields (codegen-tests/vectors-half), and
 * the particles' own kernels (struct buffers, a struct uniform, u8 pixels written 16 bytes at a time,
 * atomics), plus inverseSqrt (codegen-tests/inverse-sqrt). The same on Dawn where WebGPU runs them.
 *
 * Built by bench/particles-prep.sh: `tskernel build` of those files (--target cuda,wgsl,js) into the folder
 * given as the first argument; this file bundled with esbuild. Run there: `node particles-gpu.mjs kernels
 * out.json [--n 65536]`. TSK_PARTICLES_STAND_IN=1 runs the CPU (two workers) in CUDA's place, to try the
 * script where there is no GPU (with a small --n). TSK_PARTICLES_SECTIONS=cuda.nbody,webgpu.nbody runs only those
 * sections (names as in the JSON); TSK_PARTICLES_BUILDS=<regular expression> only the N-body rows whose key
 * matches (e.g. `512_BODIES_8|balanced`).
 *
 * The balanced rows (nbody.kernel.ts's `pulls` on exactly the multiprocessors' count of blocks, or two or three
 * times it, then `gather`) are timed as one step of two launches, by the same flop convention and check.
 *
 * Flops: 20 per interaction (the convention of GPU Gems 3 ch. 31 and of most N-body figures), N² interactions
 * per step (a body's pull on itself is computed, and is zero). What "exact" means per case: CUDA without FMA
 * contraction (NVRTC --fmad=false) must give the CPU's bytes wherever the language promises it (IEEE
 * operations, f16 rounding, integers); inverseSqrt (the hardware's, within 2 ULP on CUDA and WGSL) and
 * exp/mix in the drawing are compared within a stated tolerance instead. With contraction on, the number of
 * differing words is reported, not judged.
 */

import fs from "node:fs";
import { createCudaDevice, createWebGpuDevice, CpuDevice, loadKernelLibrary, packStructs, unpackStructs, type Device, type DeviceBuffer, type KernelArg, type LaunchOptions, type LaunchStep, type LayoutValue } from "../runtime/index.ts";
import { balancedLaunch } from "../examples/particles/src/balance.ts";
import { makeScene } from "../examples/particles/src/scene.ts";

const args = process.argv.slice(2);
const dir = args[0] ?? "kernels";
const outFile = args[1] ?? "particles-gpu.json";
const flag = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const N = flag("--n", 65536);
const standIn = process.env.TSK_PARTICLES_STAND_IN === "1";
const library = loadKernelLibrary(dir);
const results: Record<string, unknown> = { date: new Date().toISOString(), n: N, standIn };
let failures = 0;
const log = (line: string) => console.log(line);
const save = () => fs.writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);

/** TSK_PARTICLES_SECTIONS: a comma-separated list of the sections to run (default: all), e.g. `cuda.nbody`. */
const sections = process.env.TSK_PARTICLES_SECTIONS?.split(",").map((name) => name.trim());

/** Runs a section, keeping its result or its error in the JSON, and going on either way. */
async function section(name: string, run: () => Promise<unknown>): Promise<void> {
  if (sections && !sections.includes(name)) return;
  const started = Date.now();
  log(`== ${name}`);
  try {
    results[name] = { ...((await run()) as object), seconds: (Date.now() - started) / 1000 };
  } catch (error) {
    failures++;
    results[name] = { error: (error as Error).stack ?? String(error) };
    log(`${name} FAILED: ${(error as Error).message}`);
  }
  save();
}

/** Seeded random numbers (xorshift32), so a run can be repeated. */
let seed = 0x2545f491;
function random(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}
const between = (low: number, high: number) => low + random() * (high - low);
const randomVec = (lanes: number, low = -1, high = 1) => Array.from({ length: lanes }, () => between(low, high));

// ---------------------------------------------------------------------------------------------------------
// The N-body kernel: float64 on sampled bodies, then timing.

type V3 = [number, number, number];

/**
 * Float64 velocity after one step of body i (nbody.kernel.ts's definition), over all bodies, and the sum of
 * the magnitudes of the pulls times dt (what the f32 sum's error is relative to: a body whose pulls cancel has
 * a small net change but the same rounding).
 */
function float64Velocity(pos: Float64Array, mass: Float64Array, vel: V3, i: number, dt: number, softening2: number): { vel: V3; magnitude: number } {
  let ax = 0;
  let ay = 0;
  let az = 0;
  let magnitude = 0;
  const [x, y, z] = [pos[3 * i]!, pos[3 * i + 1]!, pos[3 * i + 2]!];
  for (let j = 0; j < mass.length; j++) {
    const dx = pos[3 * j]! - x;
    const dy = pos[3 * j + 1]! - y;
    const dz = pos[3 * j + 2]! - z;
    const r2 = softening2 + dx * dx + dy * dy + dz * dz;
    const s = mass[j]! / (r2 * Math.sqrt(r2));
    ax += dx * s;
    ay += dy * s;
    az += dz * s;
    magnitude += Math.sqrt(r2 - softening2) * s;
  }
  return { vel: [vel[0] + ax * dt, vel[1] + ay * dt, vel[2] + az * dt], magnitude: magnitude * dt };
}

/**
 * The multiprocessors `pulls` spreads its ranges over: the CUDA device's count (cuDeviceGetAttribute); through
 * Dawn, which does not expose it, the count the CUDA section read on the same GPU, else 132 (an H100 SXM's).
 */
let multiprocessors: number | undefined;
const multiprocessorsOf = (device: Device) => (device as Device & { readonly multiprocessors?: number }).multiprocessors ?? multiprocessors ?? 132;

/** TSK_PARTICLES_BUILDS: a regular expression; only the N-body rows whose key it matches run (default: all). */
const buildFilter = process.env.TSK_PARTICLES_BUILDS ? new RegExp(process.env.TSK_PARTICLES_BUILDS) : undefined;

async function nbody(device: Device, label: string): Promise<object> {
  const scene = makeScene(7, N);
  const particle = library.layout("Particle");
  const start = packStructs(particle, scene.bodies as unknown as LayoutValue[]);
  const bodies = device.createBuffer(particle, start);
  const startValues = unpackStructs(particle, start) as unknown as { pos: V3; mass: number; vel: V3 }[];
  const pos = new Float64Array(startValues.flatMap((b) => b.pos));
  const mass = new Float64Array(startValues.map((b) => b.mass));
  const dt = Math.fround(scene.params.dt);
  const softening2 = Math.fround(scene.params.softening2);
  const sample = Array.from({ length: 256 }, () => Math.floor(random() * N));
  const reference = sample.map((i) => float64Velocity(pos, mass, startValues[i]!.vel, i, dt, softening2));
  const out: Record<string, unknown> = {};
  const interactions = N * N;

  /**
   * Runs one step (`launches`, writing `next`) once and checks it against float64, then times it: as one step
   * (warmup 5, 100 runs) and as ten steps back to back (20 runs), the clock the GPU holds under load.
   */
  async function measure(launches: LaunchStep[], next: DeviceBuffer): Promise<Record<string, unknown>> {
    for (const { kernel, options } of launches) await device.launch(kernel, options);
    const got = unpackStructs(particle, (await device.read(next)) as Uint8Array) as unknown as { vel: V3 }[];
    // |Δv| against dt · Σ|pull|: a sum of N f32 terms in order is within N·2⁻²⁴ of it (the bound; √N·2⁻²⁴ is
    // typical), plus inverseSqrt's 2 ULP per term and the rounding of v + a·dt (2⁻²⁴ of |v|).
    let worst = 0;
    for (const [k, i] of sample.entries()) {
      const want = reference[k]!;
      const error = Math.hypot(...want.vel.map((v, l) => v - got[i]!.vel[l]!)) - 2 ** -23 * Math.hypot(...want.vel);
      worst = Math.max(worst, Math.max(error, 0) / want.magnitude);
    }
    const checkOk = worst < N * 2 ** -24;
    if (!checkOk) failures++;
    const single = launches.length === 1
      ? await device.time(launches[0]!.kernel, launches[0]!.options, { warmup: standIn ? 1 : 5, runs: standIn ? 2 : 100 })
      : await device.timeSequence(launches, { warmup: standIn ? 1 : 5, runs: standIn ? 2 : 100 });
    const windowStart = new Date().toISOString();
    const sequence = await device.timeSequence(Array.from({ length: 10 }, () => launches).flat(), { warmup: 1, runs: standIn ? 1 : 20 });
    const windowEnd = new Date().toISOString();
    const perStep = sequence.medianMs / 10;
    return {
      errorOfStepRelativeToPulls: worst,
      bound: N * 2 ** -24,
      checkOk,
      singleMedianMs: single.medianMs,
      singleMinMs: single.minMs,
      sequencePerStepMs: perStep,
      gflopsSingle: (20 * interactions) / (single.medianMs * 1e6),
      gflopsSequence: (20 * interactions) / (perStep * 1e6),
      interactionsPerSecond: interactions / (perStep / 1000),
      sequenceWindow: [windowStart, windowEnd],
      method: [single.method, sequence.method],
    };
  }
  const summary = (row: Record<string, unknown>) =>
    `${(row.sequencePerStepMs as number).toFixed(3)} ms per step (single ${(row.singleMedianMs as number).toFixed(3)} ms), ${(row.gflopsSequence as number).toFixed(0)} GFLOP/s at 20 flops per interaction; step error ${(row.errorOfStepRelativeToPulls as number).toExponential(2)} ${row.checkOk ? "ok" : "FAIL"}`;

  for (const handle of library.kernels.filter((k) => k.description.name === "step")) {
    const block = handle.description.specialization.BLOCK as number;
    const perThread = handle.description.specialization.BODIES as number;
    // SPLIT threads share a body (each sums the pulls of a slice of every tile); AHEAD loads the next tile early.
    const split = (handle.description.specialization.SPLIT as number | undefined) ?? 1;
    const ahead = handle.description.specialization.AHEAD === true;
    const key = `BLOCK_${block}_BODIES_${perThread}_SPLIT_${split}_AHEAD_${ahead}`;
    if (buildFilter && !buildFilter.test(key)) continue;
    const next = device.createBuffer(particle, new Uint8Array(N * particle.stride).fill(0xff));
    const launch: LaunchOptions = { grid: [Math.ceil((N * split) / (perThread * block))], args: [next, bodies, scene.params] as KernelArg[] };
    const row = { block, bodiesPerThread: perThread, split, ahead, ...(await measure([{ kernel: handle, options: launch }], next)) };
    log(`${label} step BLOCK=${block} BODIES=${perThread} SPLIT=${split} AHEAD=${ahead}: ${summary(row)}`);
    out[key] = row;
    device.free(next);
  }

  // The balanced step (pulls on exactly `blocks` blocks, then gather), timed as one step of two launches.
  // blocks: the multiprocessors times 1, 2 or 3 blocks each where that many fit in 1024 threads (whether their
  // registers fit too is the GPU's business: a block that waits is only late, never wrong). The 64-thread builds
  // are for tests and small counts.
  const gather = library.get("gather");
  const sms = multiprocessorsOf(device);
  for (const handle of library.kernels.filter((k) => k.description.name === "pulls")) {
    const spec = handle.description.specialization as { BLOCK: number; BODIES: number; SPLIT: number; AHEAD: boolean };
    if (spec.BLOCK < 256) continue;
    for (let perSm = 1; perSm * spec.BLOCK <= 768; perSm++) {
      const key = `balanced_BLOCK_${spec.BLOCK}_BODIES_${spec.BODIES}_SPLIT_${spec.SPLIT}_AHEAD_${spec.AHEAD}_blocks_${sms * perSm}`;
      if (buildFilter && !buildFilter.test(key)) continue;
      const shape = balancedLaunch(N, spec, sms * perSm);
      const next = device.createBuffer(particle, new Uint8Array(N * particle.stride).fill(0xff));
      const partials = device.createBuffer(library.layout("vec4f"), new Uint8Array(shape.partials * 16).fill(0xff));
      const pullsLaunch: LaunchOptions = { grid: shape.pullsGrid, args: [partials, bodies, scene.params] as KernelArg[] };
      const gatherLaunch: LaunchOptions = { grid: shape.gatherGrid, args: [next, bodies, partials, scene.params, shape.balance] as KernelArg[] };
      const row: Record<string, unknown> = {
        block: spec.BLOCK,
        bodiesPerThread: spec.BODIES,
        split: spec.SPLIT,
        ahead: spec.AHEAD,
        blocks: sms * perSm,
        multiprocessors: sms,
        units: shape.units,
        unitsPerBlock: shape.unitsPerBlock,
        ...(await measure([{ kernel: handle, options: pullsLaunch }, { kernel: gather, options: gatherLaunch }], next)),
      };
      // gather alone: what the second launch costs of the step.
      const gatherTime = await device.time(gather, gatherLaunch, { warmup: standIn ? 1 : 5, runs: standIn ? 2 : 100 });
      row.gatherMedianMs = gatherTime.medianMs;
      log(`${label} balanced BLOCK=${spec.BLOCK} BODIES=${spec.BODIES} SPLIT=${spec.SPLIT} AHEAD=${spec.AHEAD} on ${sms * perSm} blocks (${shape.unitsPerBlock} of ${shape.units} units each at most): ${summary(row)}; gather alone ${gatherTime.medianMs.toFixed(4)} ms`);
      out[key] = row;
      device.free(next);
      device.free(partials);
    }
  }
  device.free(bodies);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Vector and struct paths: the same inputs on CUDA and on the CPU backend, compared as bytes.

interface Output {
  readonly name: string;
  readonly buffer: DeviceBuffer;
  /**
   * exact: the bytes; f32ulp: f32 words within `ulps` of each other; f32scaled: f32 words within `relative`
   * times the largest magnitude in the CPU's output (for sums whose small results are cancellations, where
   * ULPs mean little); bytes: each byte within `by`.
   */
  readonly compare: { kind: "exact" } | { kind: "f32ulp"; ulps: number } | { kind: "f32scaled"; relative: number } | { kind: "bytes"; by: number };
}

interface Case {
  readonly name: string;
  readonly kernels: readonly string[];
  /** Makes the buffers (poisoned outputs) and launches; the same inputs on every device. */
  run(device: Device): Promise<Output[]>;
}

const view = (bytes: Uint8Array) => new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
/** Distance in units in the last place between two f32s given as bits (NaN to NaN is 0). */
function ulps(a: number, b: number): number {
  const ordered = (bits: number) => (bits & 0x80000000 ? 0x80000000 - (bits >>> 0) : bits + 0x80000000) >>> 0;
  const isNaN = (bits: number) => (bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0;
  if (isNaN(a) || isNaN(b)) return isNaN(a) && isNaN(b) ? 0 : Infinity;
  return Math.abs(ordered(a) - ordered(b));
}

function differences(output: Output, cpu: Uint8Array, gpu: Uint8Array): { differing: number; worst: number; worstF32Ulps?: number; first: string[] } {
  const first: string[] = [];
  let differing = 0;
  let worst = 0;
  // Where the bytes are f32 words, how far apart as floats (reported for every output, judged for f32ulp).
  let worstF32Ulps: number | undefined;
  if (output.compare.kind !== "f32ulp" && output.compare.kind !== "f32scaled" && cpu.length % 4 === 0 && cpu.length === gpu.length) {
    const [a, b] = [view(cpu), view(gpu)];
    worstF32Ulps = 0;
    for (let i = 0; i < a.length; i++) worstF32Ulps = Math.max(worstF32Ulps, ulps(a[i]!, b[i]!));
  }
  if (output.compare.kind === "f32scaled") {
    const [a, b] = [new Float32Array(view(cpu).slice().buffer), new Float32Array(view(gpu).slice().buffer)];
    const scale = a.reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 0);
    for (let i = 0; i < a.length; i++) {
      const d = Number.isNaN(a[i]!) && Number.isNaN(b[i]!) ? 0 : Math.abs(a[i]! - b[i]!) / scale;
      if (d > 0 || Number.isNaN(d)) differing++;
      worst = Math.max(worst, Number.isNaN(d) ? Infinity : d);
      if (!(d <= output.compare.relative) && first.length < 4) first.push(`word ${i}: cpu ${a[i]} gpu ${b[i]}`);
    }
  } else if (output.compare.kind === "f32ulp") {
    const [a, b] = [view(cpu), view(gpu)];
    for (let i = 0; i < a.length; i++) {
      const d = ulps(a[i]!, b[i]!);
      if (d > 0) differing++;
      worst = Math.max(worst, d);
      if (d > output.compare.ulps && first.length < 4) first.push(`word ${i}: cpu 0x${a[i]!.toString(16)} gpu 0x${b[i]!.toString(16)}`);
    }
  } else {
    for (let i = 0; i < cpu.length; i++) {
      const d = Math.abs(cpu[i]! - gpu[i]!);
      if (d > 0) differing++;
      worst = Math.max(worst, d);
      if (d > (output.compare.kind === "bytes" ? output.compare.by : 0) && first.length < 4) first.push(`byte ${i}: cpu ${cpu[i]} gpu ${gpu[i]}`);
    }
  }
  return { differing, worst, ...(worstF32Ulps !== undefined ? { worstF32Ulps } : {}), first };
}

const asBytes = (data: ArrayBufferView) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

// The inputs, made once.
const bodyValues = Array.from({ length: 150 }, () => ({
  pos: [random(), random() + 1, random()],
  mass: 0.5 + random(),
  vel: randomVec(3, -0.5, 0.5),
  steps: Math.floor(random() * 100),
  material: { restitution: random(), tint: randomVec(3, 0, 1) },
  spin: randomVec(2),
}));
const rays = 1000;
const sphere = [random() - 0.5, random() - 0.5, random() - 0.5, 0.75 + random() * 0.5];
const light = [0.3, 0.9, -0.3];
const origins = Array.from({ length: rays }, () => randomVec(3).map((v, l) => sphere[l]! + 3 * v));
const directions = origins.map((o) => o.map((v, l) => sphere[l]! - v + between(-1, 1)));
const cells = Array.from({ length: 90 }, () => ({
  id: Math.floor(random() * 2 ** 32),
  pos: Array.from({ length: 3 }, () => Math.floor(random() * 4000) - 2000),
  weight: Math.floor(random() * 2 ** 32) - 2 ** 31,
  tag: Array.from({ length: 2 }, () => Math.floor(random() * 2 ** 31)),
}));
const halfPoints = Array.from({ length: 157 }, () => randomVec(3, 0.05, 4));
const samples = Array.from({ length: 157 }, () => ({ weight: random(), uv: randomVec(2, -2, 2), pos: randomVec(3, -10, 10), id: Math.floor(random() * 2 ** 32), scale: between(-2, 2) }));
const neighbours = Array.from({ length: 128 }, () => randomVec(3, -100, 100));
const points = Array.from({ length: 1000 }, () => randomVec(3).map((v) => v * 10 ** between(-3, 3)));
const small = makeScene(11, 1000, 128, 128);

const cases: Case[] = [
  {
    name: "struct buffers, a struct argument with a nested struct, a shared array of structs (stepBodies)",
    kernels: ["stepBodies"],
    run: async (device) => {
      const body = library.layout("Body");
      const bytes = packStructs(body, bodyValues as LayoutValue[]);
      for (let i = 0; i < bodyValues.length; i++) bytes[i * body.stride + 76] = 0xc3; // padding: must stay
      const bodies = device.createBuffer(body, bytes);
      const energy = device.createBuffer(new Float32Array(150).fill(Number.NaN));
      const gaps = device.createBuffer(new Float32Array(150).fill(Number.NaN));
      const step = { gravity: [0, -9.81, 0.5], dt: 0.02, floor: { low: 1.2, high: 3 }, drag: 0.1 };
      await device.launch(library.get("stepBodies"), { grid: [3], args: [bodies, energy, gaps, step, 150] });
      return [
        { name: "bodies", buffer: bodies, compare: { kind: "exact" } },
        { name: "energy", buffer: energy, compare: { kind: "exact" } },
        { name: "gaps", buffer: gaps, compare: { kind: "exact" } },
      ];
    },
  },
  {
    name: "arrays of padded vec3f and of vec4f, vector arguments (shadeRays)",
    kernels: ["shadeRays"],
    run: async (device) => {
      const vec3 = library.layout("vec3f");
      const vec4 = library.layout("vec4f");
      const normalsBytes = new Uint8Array(rays * 16).fill(0xa5); // lanes and each element's padding poisoned
      const hits = device.createBuffer(vec4, Array.from({ length: rays }, () => [NaN, NaN, NaN, NaN]));
      const normals = device.createBuffer(vec3, normalsBytes);
      await device.launch(library.get("shadeRays"), { grid: [Math.ceil(rays / 64)], block: [64], args: [hits, normals, device.createBuffer(vec3, origins), device.createBuffer(vec3, directions), sphere, light, rays] });
      return [
        { name: "hits", buffer: hits, compare: { kind: "exact" } },
        { name: "normals", buffer: normals, compare: { kind: "exact" } },
      ];
    },
  },
  {
    name: "integer vectors and structs, shared vectors (vectorSemantics)",
    kernels: ["vectorSemantics"],
    run: async (device) => {
      const cell = library.layout("Cell");
      const buffer = device.createBuffer(cell, cells);
      const out = device.createBuffer(library.layout("vec4i"), Array.from({ length: cells.length }, () => [-7, -7, -7, -7]));
      await device.launch(library.get("vectorSemantics"), { grid: [Math.ceil(cells.length / 32)], args: [buffer, out, cells.length] });
      return [
        { name: "cells", buffer, compare: { kind: "exact" } },
        { name: "out", buffer: out, compare: { kind: "exact" } },
      ];
    },
  },
  {
    name: "f16 vectors and f16 struct fields, a vec4h argument, shared vec3h and private vec2h (shadeHalf, neighbourHalf)",
    kernels: ["shadeHalf", "neighbourHalf"],
    run: async (device) => {
      const vec3h = library.layout("vec3h");
      const sample = library.layout("Sample");
      const pointBytes = packStructs(vec3h, halfPoints);
      for (let i = 0; i < halfPoints.length; i++) pointBytes.set([0xa5, 0x5a], i * 8 + 6);
      const sampleBytes = packStructs(sample, samples as LayoutValue[]);
      for (let i = 0; i < samples.length; i++) for (const at of [2, 12, 34, 35, 36, 40, 47]) sampleBytes[i * 48 + at] = 0xc3;
      const points = device.createBuffer(vec3h, pointBytes);
      const sampleBuffer = device.createBuffer(sample, sampleBytes);
      const out = device.createBuffer(new Float32Array(157).fill(Number.NaN));
      await device.launch(library.get("shadeHalf"), { grid: [Math.ceil(150 / 64)], args: [points, sampleBuffer, out, [1.5, 0.75, 1.25, -0.5], 150] });
      const next = device.createBuffer(vec3h, new Uint8Array(128 * 8).fill(0xee));
      await device.launch(library.get("neighbourHalf"), { grid: [2], args: [device.createBuffer(vec3h, neighbours), next] });
      return [
        { name: "points", buffer: points, compare: { kind: "exact" } },
        { name: "samples", buffer: sampleBuffer, compare: { kind: "exact" } },
        { name: "out", buffer: out, compare: { kind: "exact" } },
        { name: "neighbours", buffer: next, compare: { kind: "exact" } },
      ];
    },
  },
  {
    name: "inverseSqrt on f32, vec3f and vec4f (the hardware's on the GPU: within 2 ULP)",
    kernels: ["inverseSqrts"],
    run: async (device) => {
      const n = 1000;
      const out = device.createBuffer(new Float32Array(3 * n).fill(Number.NaN));
      const lanes = device.createBuffer(library.layout("vec4f"), Array.from({ length: n }, () => [NaN, NaN, NaN, NaN]));
      await device.launch(library.get("inverseSqrts"), { grid: [Math.ceil(n / 64)], args: [out, lanes, device.createBuffer(library.layout("vec3f"), points), [0.5, 2, 3e-3, 7e4], n] });
      return [
        // 1 / sqrt(x) on the CPU is within 1 ULP of the exact value, the GPU's within 2; p.x times it adds ½.
        { name: "out", buffer: out, compare: { kind: "f32ulp", ulps: 4 } },
        { name: "lanes", buffer: lanes, compare: { kind: "f32ulp", ulps: 3 } },
      ];
    },
  },
  {
    name: "the particles: two N-body steps (1000 bodies, ping-pong struct buffers, a struct argument), then splat (atomics) and shade (u8 pixels by store16)",
    kernels: ["step", "splat", "shade"],
    run: async (device) => {
      const particle = library.layout("Particle");
      let bodies = device.createBuffer(particle, small.bodies as unknown as LayoutValue[]);
      let next = device.createBuffer(particle, new Uint8Array(1000 * 32).fill(0xff));
      const step = library.get("step", { BLOCK: 64, BODIES: 2, SPLIT: 1, AHEAD: false });
      for (let s = 0; s < 2; s++) {
        await device.launch(step, { grid: [Math.ceil(1000 / 128)], args: [next, bodies, small.params] });
        [bodies, next] = [next, bodies];
      }
      // The pixels from the CPU's bodies on every device, so that they differ only by the drawing.
      const drawn = device.createBuffer(particle, cpuSmallState ?? ((await device.read(bodies)) as Uint8Array));
      const pixels = device.createBuffer(new Uint8Array(128 * 128 * 4).fill(0x5a));
      const density = device.createBuffer(new Uint32Array(128 * 128));
      const heat = device.createBuffer(new Uint32Array(128 * 128));
      await device.launch(library.get("splat"), { grid: [Math.ceil(1000 / 64)], args: [density, heat, drawn, small.view, 1000] });
      await device.launch(library.get("shade"), { grid: [128 * 128 / 256], args: [pixels, density, heat, small.view] });
      return [
        // Two steps of sums of 1000 terms with inverseSqrt within 2 ULP: differences of a few ULP of the largest
        // values (a velocity lane near 0 is a cancellation, whose ULPs are tiny); tests/particles.test.ts measured
        // 2.3e-5 of speeds up to 3 after 24 steps against float64.
        { name: "bodies", buffer: bodies, compare: { kind: "f32scaled", relative: 1e-5 } },
        { name: "pixels", buffer: pixels, compare: { kind: "bytes", by: 1 } },
        { name: "density (cleared by shade)", buffer: density, compare: { kind: "exact" } },
      ];
    },
  },
];
let cpuSmallState: Uint8Array | undefined;

/** Each case's outputs on the CPU backend, run once (the inputs are the same every time). */
const cpuResults = new Map<Case, Uint8Array[]>();
async function onCpu(testCase: Case): Promise<Uint8Array[]> {
  let bytes = cpuResults.get(testCase);
  if (!bytes) {
    const cpu = new CpuDevice();
    const outputs = await testCase.run(cpu);
    bytes = await Promise.all(outputs.map(async (o) => asBytes(await cpu.read(o.buffer)).slice()));
    if (testCase.kernels.includes("step")) cpuSmallState = bytes[0];
    cpu.dispose();
    cpuResults.set(testCase, bytes);
  }
  return bytes;
}

async function compareWithCpu(device: Device, label: string, judge: boolean, skip: (c: Case) => string | undefined): Promise<object> {
  const out: Record<string, unknown> = {};
  for (const testCase of cases) {
    const reason = skip(testCase);
    if (reason) {
      out[testCase.name] = { skipped: reason };
      continue;
    }
    const cpuBytes = await onCpu(testCase);
    let gpuOutputs: Output[];
    try {
      gpuOutputs = await testCase.run(device);
    } catch (error) {
      failures++;
      out[testCase.name] = { error: (error as Error).message };
      log(`${label}: ${testCase.name}: FAILED to run: ${(error as Error).message}`);
      continue;
    }
    const rows: Record<string, unknown> = {};
    for (const [k, output] of gpuOutputs.entries()) {
      const gpuBytes = asBytes(await device.read(output.buffer));
      const diff = differences(output, cpuBytes[k]!, gpuBytes);
      const allowed = output.compare.kind === "exact" ? 0 : output.compare.kind === "f32ulp" ? output.compare.ulps : output.compare.kind === "f32scaled" ? output.compare.relative : output.compare.by;
      const ok = diff.worst <= allowed && cpuBytes[k]!.length === gpuBytes.length;
      if (judge && !ok) failures++;
      rows[output.name] = { bytes: gpuBytes.length, compare: output.compare, ...diff, ok };
      const asFloats = diff.worstF32Ulps !== undefined && diff.worst > 0 ? ` (as f32 words: ${diff.worstF32Ulps} ULP)` : "";
      log(`${label}: ${testCase.kernels.join(", ")}.${output.name}: ${gpuBytes.length} bytes, ${diff.differing} ${output.compare.kind.startsWith("f32") ? "words" : "bytes"} differ, worst ${diff.worst}${asFloats}${judge ? (ok ? " ok" : " FAIL") : ""}${diff.first.length ? ` (${diff.first.join("; ")})` : ""}`);
    }
    out[testCase.name] = rows;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------

const gpuDevice = (fmad: boolean): Device => (standIn ? new CpuDevice({ workers: 2 }) : createCudaDevice({ fmad }));

await section("cuda.vectorPaths.fmadOff", async () => {
  const device = gpuDevice(false);
  try {
    return { device: device.name, judged: true, cases: await compareWithCpu(device, "CUDA --fmad=false", true, () => undefined) };
  } finally {
    device.dispose();
  }
});
let cuda: Device | undefined;
await section("cuda.vectorPaths.fmadOn", async () => {
  cuda = gpuDevice(true);
  // Not judged where FMA contraction may change the last bit; the tolerant comparisons still are.
  return { device: cuda.name, judged: false, cases: await compareWithCpu(cuda, "CUDA --fmad=true", false, () => undefined) };
});
await section("cuda.nbody", async () => {
  cuda ??= gpuDevice(true);
  multiprocessors = (cuda as Device & { readonly multiprocessors?: number }).multiprocessors;
  return { device: cuda.name, multiprocessors, ...(await nbody(cuda, "CUDA")) };
});
cuda?.dispose();

let webgpu: Device | undefined;
await section("webgpu.vectorPaths", async () => {
  webgpu = await createWebGpuDevice();
  const hasF16 = (webgpu as Device & { hasFeature?: (name: string) => boolean }).hasFeature?.("shader-f16") ?? false;
  // WGSL's own functions and contraction may differ in the last bits: every float output within a tolerance.
  return { device: webgpu.name, cases: await compareWithCpu(webgpu, "WebGPU", false, (c) => (c.kernels.includes("shadeHalf") && !hasF16 ? "no shader-f16 on this adapter" : undefined)) };
});
await section("webgpu.nbody", async () => {
  webgpu ??= await createWebGpuDevice();
  return { device: webgpu.name, multiprocessors: multiprocessorsOf(webgpu), ...(await nbody(webgpu, "WebGPU")) };
});
webgpu?.dispose();
await section("webgpu.nbody.disable_robustness", async () => {
  const device = await createWebGpuDevice({ dawnOptions: ["enable-dawn-features=disable_robustness"] });
  try {
    return { device: device.name, ...(await nbody(device, "WebGPU (disable_robustness)")) };
  } finally {
    device.dispose();
  }
});

results.failures = failures;
save();
log(failures === 0 ? "OK" : `FAILED: ${failures}`);
process.exitCode = failures === 0 ? 0 : 1;
