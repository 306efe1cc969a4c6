/**
 * The vector and struct examples run on every tested backend against a float64 reference, with fresh random
 * inputs each run and outputs poisoned with NaN before each launch. Where the reference is within a hair of
 * a decision the kernel makes (a ray grazing the sphere, a lane at a comparison's edge), f32 rounding may
 * decide otherwise on a backend: those few elements are left out and counted, and must stay few.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, unpackStructs, type Device } from "../runtime/index.ts";
import { repoRoot } from "./golden-cases.ts";
import { deviceFor, gpuBuild, testedBackends } from "./backends.ts";

const unavailable = new Map<string, string>();
for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  if (typeof device === "string") unavailable.set(backend, device);
}

function library(device: Device, file: string) {
  const target = device.backend === "cpu" ? "js" : device.backend === "webgpu" ? "wgsl" : "cuda";
  return compileKernelLibrary([path.join(repoRoot, "examples", file)], [target], gpuBuild(target));
}

type V3 = [number, number, number];
const sub3 = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add3 = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale3 = (a: V3, s: number): V3 => [a[0] * s, a[1] * s, a[2] * s];
const dot3 = (a: V3, b: V3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const normalize3 = (a: V3): V3 => scale3(a, 1 / Math.sqrt(dot3(a, a)));
const cross3 = (a: V3, b: V3): V3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const clamp = (x: number, lo: number, hi: number) => Math.min(Math.max(x, lo), hi);

/** shadeRays in float64, with whether a decision it takes is too close to call in f32. */
function shadeRay(origin: V3, rawDirection: V3, sphere: [number, number, number, number], light: V3): { hit: number[]; normal: V3; ambiguous: boolean } {
  const center: V3 = [sphere[0], sphere[1], sphere[2]];
  const direction = normalize3(rawDirection);
  const toOrigin = sub3(origin, center);
  const b = dot3(toOrigin, direction);
  const c = dot3(toOrigin, toOrigin) - sphere[3] * sphere[3];
  const discriminant = b * b - c;
  let ambiguous = Math.abs(discriminant) < 1e-3;
  const t = discriminant < 0 ? -1 : -b - Math.sqrt(discriminant);
  ambiguous ||= Math.abs(t) < 1e-3;
  if (t < 0) return { hit: [...direction, 0], normal: [0, 0, 0], ambiguous };
  const point = add3(origin, scale3(direction, t));
  const normal = normalize3(sub3(point, center));
  const lambert = clamp(dot3(normal, light), 0, 1);
  const x = 1 - Math.abs(dot3(normal, direction));
  const s = clamp(x / 0.3, 0, 1);
  const rim = s * s * (3 - 2 * s);
  const bounce = sub3(direction, scale3(normal, 2 * dot3(normal, direction)));
  ambiguous ||= Math.abs(Math.abs(normal[0]) - 0.5) < 1e-4;
  const axis: V3 = Math.abs(normal[0]) < 0.5 ? [1, 0, 0] : [0, 1, 0];
  const tangent = normalize3(cross3(normal, axis));
  const k = rim * 0.25;
  const bent = normalize3(add3(scale3(bounce, 1 - k), scale3(tangent, k)));
  let shade = lambert;
  ambiguous ||= bounce.some((lane) => Math.abs(lane + 0.5) < 1e-4);
  if (bounce.every((lane) => lane >= -0.5)) shade += 0.125 * Math.hypot(bent[0], bent[1]);
  return { hit: [...bent, shade], normal, ambiguous };
}

for (const backend of testedBackends) {
  describe.skipIf(unavailable.has(backend))(`vector examples on ${backend}${unavailable.has(backend) ? ` (skipped: ${unavailable.get(backend)})` : ""}`, () => {
    it("shadeRays: vector buffers, uniforms, swizzles and WGSL's functions match float64", async () => {
      const device = (await deviceFor(backend)) as Device;
      const lib = library(device, "vector-geometry.ts");
      const kernel = lib.get("shadeRays");
      const n = 1000;
      const sphere: [number, number, number, number] = [Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5, 0.75 + Math.random() * 0.5];
      const light = normalize3([Math.random() - 0.5, 1, Math.random() - 0.5]);
      // Rays from a shell around the sphere (distance 3), aimed near its center so that most of them hit: each
      // passes the center within about √2·0.6 ≈ 0.85 of it, and the radius is at least 0.75, so some miss too.
      // (Offsets of ±1 a lane let fewer than half hit when the radius came out small: 491 of 1000 once in CI.)
      const origins = Array.from({ length: n }, () => add3([sphere[0], sphere[1], sphere[2]], scale3(normalize3([Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5]), 3)));
      const directions = origins.map((origin) => add3(sub3([sphere[0], sphere[1], sphere[2]], origin), [Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5].map((v) => v * 1.2) as V3));
      const vec3 = lib.layout("vec3f");
      const vec4 = lib.layout("vec4f");
      const poison3 = Array.from({ length: n }, () => [NaN, NaN, NaN]);
      const hits = device.createBuffer(vec4, Array.from({ length: n }, () => [NaN, NaN, NaN, NaN]));
      const normals = device.createBuffer(vec3, poison3);
      await device.launch(kernel, {
        grid: [Math.ceil(n / 64)],
        block: [64],
        args: [hits, normals, device.createBuffer(vec3, origins), device.createBuffer(vec3, directions), sphere, light, n],
      });
      const gotHits = unpackStructs(vec4, (await device.read(hits)) as Uint8Array) as number[][];
      const gotNormals = unpackStructs(vec3, (await device.read(normals)) as Uint8Array) as number[][];
      let skipped = 0;
      let hitCount = 0;
      let worst = 0;
      for (let i = 0; i < n; i++) {
        const reference = shadeRay(origins[i]!, directions[i]!, sphere, light);
        expect(gotHits[i]!.every(Number.isFinite), `ray ${i} was written`).toBe(true);
        expect(gotNormals[i]!.every(Number.isFinite), `ray ${i}'s normal was written`).toBe(true);
        if (reference.ambiguous) {
          skipped++;
          continue;
        }
        if (reference.hit[3]! > 0 || reference.normal.some((lane) => lane !== 0)) hitCount++;
        for (let lane = 0; lane < 4; lane++) worst = Math.max(worst, Math.abs(gotHits[i]![lane]! - reference.hit[lane]!));
        for (let lane = 0; lane < 3; lane++) worst = Math.max(worst, Math.abs(gotNormals[i]![lane]! - reference.normal[lane]!));
      }
      expect(skipped).toBeLessThan(n / 50);
      // Most rays hit, so the shading path is what is being compared.
      expect(hitCount).toBeGreaterThan(n / 2);
      expect(worst).toBeLessThan(2e-4);
    });
  });
}

interface BodyValue {
  pos: number[];
  mass: number;
  vel: number[];
  steps: number;
  material: { restitution: number; tint: number[] };
  spin: number[];
}

/** One step of stepBodies in float64, with whether the bounce test is too close to call in f32. */
function stepBody(body: BodyValue, step: { gravity: number[]; dt: number; floor: { low: number; high: number }; drag: number }): { body: BodyValue; energy: number; ambiguous: boolean } {
  const accel = body.vel.map((v, lane) => step.gravity[lane]! + v * (-step.drag / body.mass));
  const vel = body.vel.map((v, lane) => v + accel[lane]! * step.dt);
  const pos = body.pos.map((p, lane) => p + vel[lane]! * step.dt);
  const ambiguous = Math.abs(pos[1]! - step.floor.low) < 1e-5;
  if (pos[1]! < step.floor.low) {
    pos[1] = step.floor.low;
    vel[1] = -vel[1]! * body.material.restitution;
  }
  const next: BodyValue = {
    pos,
    mass: body.mass,
    vel,
    steps: body.steps + 1,
    material: { restitution: body.material.restitution, tint: body.material.tint.map((c) => c * 0.5) },
    spin: [-body.spin[1]!, body.spin[0]!],
  };
  return { body: next, energy: 0.5 * body.mass * vel.reduce((sum, v) => sum + v * v, 0), ambiguous };
}

const randomIn = (low: number, high: number) => low + Math.random() * (high - low);
const randomVec = (lanes: number, low = -1, high = 1) => Array.from({ length: lanes }, () => randomIn(low, high));

for (const backend of testedBackends) {
  describe.skipIf(unavailable.has(backend))(`struct examples on ${backend}${unavailable.has(backend) ? ` (skipped: ${unavailable.get(backend)})` : ""}`, () => {
    it("stepBodies: an array of structs, a uniform struct, a shared array of structs match float64", async () => {
      const device = (await deviceFor(backend)) as Device;
      const lib = library(device, "struct-bodies.ts");
      const kernel = lib.get("stepBodies");
      const layout = lib.layout("Body");
      // The layout every target shares (WGSL's storage rules): vec3s at 16-byte boundaries, the struct field at 32.
      expect(layout.kind === "struct" && layout.fields.map((field) => [field.name, field.offset])).toEqual([["pos", 0], ["mass", 12], ["vel", 16], ["steps", 28], ["material", 32], ["spin", 64]]);
      expect([layout.size, layout.align, layout.stride]).toEqual([80, 16, 80]);
      const n = 150; // Two full blocks and a partial third.
      const bodies: BodyValue[] = Array.from({ length: n }, () => ({
        pos: randomVec(3, -2, 2),
        mass: randomIn(0.5, 2),
        vel: randomVec(3, -3, 3),
        steps: Math.floor(Math.random() * 1000),
        material: { restitution: randomIn(0.2, 0.9), tint: randomVec(3, 0, 1) },
        spin: randomVec(2),
      }));
      const step = { gravity: [randomIn(-1, 1), -9.81, randomIn(-1, 1)], dt: randomIn(0.01, 0.05), floor: { low: randomIn(-1.5, -0.5), high: 10 }, drag: randomIn(0.05, 0.2) };
      const buffer = device.createBuffer(layout, bodies);
      const energy = device.createBuffer(new Float32Array(n).fill(NaN));
      const gaps = device.createBuffer(new Float32Array(n).fill(NaN));
      await device.launch(kernel, { grid: [Math.ceil(n / 64)], args: [buffer, energy, gaps, step, n] });
      const after = unpackStructs(layout, (await device.read(buffer)) as Uint8Array) as unknown as BodyValue[];
      const gotEnergy = (await device.read(energy)) as Float32Array;
      const gotGaps = (await device.read(gaps)) as Float32Array;
      let worst = 0;
      let skipped = 0;
      for (let i = 0; i < n; i++) {
        const reference = stepBody(bodies[i]!, step);
        const nextInBlock = i === n - 1 || i % 64 === 63 ? i : i + 1;
        const gap = Math.hypot(...bodies[i]!.pos.map((p, lane) => p - bodies[nextInBlock]!.pos[lane]!));
        worst = Math.max(worst, Math.abs(gotGaps[i]! - gap));
        // The counter is exact, and so is what the step only moves (mass, restitution).
        expect(after[i]!.steps).toBe(bodies[i]!.steps + 1);
        expect(after[i]!.mass).toBe(Math.fround(bodies[i]!.mass));
        expect(after[i]!.material.restitution).toBe(Math.fround(bodies[i]!.material.restitution));
        if (reference.ambiguous) {
          skipped++;
          continue;
        }
        const lanes = (got: number[], want: number[]) => got.forEach((value, lane) => (worst = Math.max(worst, Math.abs(value - want[lane]!) / Math.max(1, Math.abs(want[lane]!)))));
        lanes(after[i]!.pos, reference.body.pos);
        lanes(after[i]!.vel, reference.body.vel);
        lanes(after[i]!.spin, reference.body.spin);
        lanes(after[i]!.material.tint, reference.body.material.tint);
        worst = Math.max(worst, Math.abs(gotEnergy[i]! - reference.energy) / Math.max(1, reference.energy));
      }
      expect(skipped).toBeLessThan(5);
      expect(worst).toBeLessThan(1e-5);
    });
  });
}
