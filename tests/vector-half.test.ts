/**
 * f16 vectors and f16 struct fields (codegen-tests/vectors-half): a buffer of vec3h, a struct of f16, vec2h,
 * vec3f and u32 fields, a vec4h uniform, WGSL's functions on vec3h, conversions and select, against a float64
 * reference that rounds after every f16 operation with the independent rounding of tests/half-reference.ts
 * and follows the functions' definitions (docs/language.md, "Vectors"). Fresh random inputs each run; the f32
 * output poisoned first; the vec3h and struct buffers compared as bytes, so their padding, the fields the
 * kernel does not write and the elements past n must come back as they went. On the CPU plain, checked and
 * with worker threads; WebGPU refuses the kernel by name where the adapter lacks `shader-f16` (SwiftShader).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, LaunchError, packStructs, packValue, unpackStructs, type Device, type KernelHandle, type LayoutValue } from "../runtime/index.ts";
import { deviceFor } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";
import { referenceF16, referenceF16Bits } from "./half-reference.ts";

const file = path.join(casesRoot, "vectors-half", "kernel.ts");
const kernelName = "shadeHalf";

/** x rounded to f16 (ties to even), by the reference's table search. */
const rh = (x: number) => (Number.isNaN(x) ? Number.NaN : referenceF16(referenceF16Bits(x)!));
const f = Math.fround;
const random = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

type Vec = number[];
const lanes = (a: Vec, b: Vec, op: (x: number, y: number) => number) => a.map((x, i) => op(x, b[i]!));
const dotH = (a: Vec, b: Vec) => a.map((x, i) => rh(x * b[i]!)).reduce((sum, p) => rh(sum + p));
const lengthH = (a: Vec) => rh(Math.sqrt(dotH(a, a)));

interface Sample {
  weight: number;
  uv: Vec;
  pos: Vec;
  id: number;
  scale: number;
}

/** The kernel's element i, computed as the language defines it: each f16 operation rounded, f32 ones by fround. */
function reference(point: Vec, sample: Sample, tint: Vec): { point: Vec; uv: Vec; scale: number; out: number } {
  const lit = lanes(point, tint, (p, t) => Math.min(Math.max(rh(p * t), 0), 4));
  const shifted = point.map((p) => rh(p + 1));
  const len = lengthH(shifted);
  const normal = shifted.map((x) => rh(x / len));
  // mix(a, b, t) = a · (1 - t) + b · t, lane by lane.
  const t = sample.weight;
  const q = lanes(lit, normal, (a, b) => rh(rh(a * rh(1 - t)) + rh(b * t)));
  const chosen = q.map((x) => (x > 0.5 ? x : rh(Math.floor(x))));
  const wide = chosen.map((c, i) => f(c + sample.pos[i]!));
  const sub = [sample.uv[0]!, sample.uv[1]!, sample.scale];
  return {
    point: chosen.map((c, i) => rh(c - sub[i]!)),
    uv: [rh(sample.uv[1]! * tint[3]!), rh(sample.uv[0]! * tint[3]!)],
    scale: lengthH(q),
    out: f(f(dotH(q, lit) + wide[0]!) + f(wide[1]! * sample.uv[0]!)),
  };
}

async function check(device: Device, kernel: KernelHandle, library: ReturnType<typeof compileKernelLibrary>): Promise<void> {
  const n = 150;
  const total = n + 7;
  const vec3h = library.layout("vec3h");
  const sampleLayout = library.layout("Sample");
  expect([vec3h.size, vec3h.align, vec3h.stride, sampleLayout.size]).toEqual([6, 8, 8, 48]);
  const points: Vec[] = Array.from({ length: total }, () => [rh(random(0.05, 4)), rh(random(0.05, 4)), rh(random(0.05, 4))]);
  const samples: Sample[] = Array.from({ length: total }, () => ({
    weight: rh(random(0, 1)),
    uv: [rh(random(-2, 2)), rh(random(-2, 2))],
    pos: [f(random(-10, 10)), f(random(-10, 10)), f(random(-10, 10))],
    id: Math.floor(random(0, 2 ** 32)),
    scale: rh(random(-2, 2)),
  }));
  const tint = [rh(random(0.25, 2)), rh(random(0.25, 2)), rh(random(0.25, 2)), rh(random(-2, 2))];
  // The padding of each element is poisoned too: it must come back untouched.
  const pointBytes = packStructs(vec3h, points);
  for (let i = 0; i < total; i++) pointBytes.set([0xa5, 0x5a], i * 8 + 6);
  const sampleBytes = packStructs(sampleLayout, samples as unknown as LayoutValue[]);
  for (let i = 0; i < total; i++) for (const at of [2, 12, 34, 35, 36, 40, 47]) sampleBytes[i * 48 + at] = 0xc3;
  const pointBuffer = device.createBuffer(vec3h, pointBytes);
  const sampleBuffer = device.createBuffer(sampleLayout, sampleBytes);
  const out = device.createBuffer(new Float32Array(total).fill(Number.NaN));
  await device.launch(kernel, { grid: [Math.ceil(n / 64)], args: [pointBuffer, sampleBuffer, out, tint, n] });

  const wantPoints = pointBytes.slice();
  const wantSamples = sampleBytes.slice();
  const wantOut = new Float32Array(total).fill(Number.NaN);
  for (let i = 0; i < n; i++) {
    const r = reference(points[i]!, samples[i]!, tint);
    packValue(vec3h, r.point, new DataView(wantPoints.buffer), i * 8);
    const view = new DataView(wantSamples.buffer);
    view.setUint16(i * 48 + 4, referenceF16Bits(r.uv[0]!)!, true);
    view.setUint16(i * 48 + 6, referenceF16Bits(r.uv[1]!)!, true);
    view.setUint16(i * 48 + 32, referenceF16Bits(r.scale)!, true);
    wantOut[i] = r.out;
  }
  const gotPoints = new Uint8Array(await device.read(pointBuffer));
  const gotSamples = new Uint8Array(await device.read(sampleBuffer));
  const gotOut = (await device.read(out)) as Float32Array;
  const wrong: string[] = [];
  for (let i = 0; i < total; i++) {
    const at = (bytes: Uint8Array, stride: number) => [...bytes.slice(i * stride, (i + 1) * stride)].join(",");
    if (at(gotPoints, 8) !== at(wantPoints, 8)) wrong.push(`points[${i}]: ${JSON.stringify(unpackStructs(vec3h, gotPoints.slice(i * 8, i * 8 + 8)))}, expected ${JSON.stringify(unpackStructs(vec3h, wantPoints.slice(i * 8, i * 8 + 8)))}`);
    if (at(gotSamples, 48) !== at(wantSamples, 48)) wrong.push(`samples[${i}]: ${at(gotSamples, 48)}, expected ${at(wantSamples, 48)}`);
    if (!Object.is(gotOut[i], wantOut[i])) wrong.push(`out[${i}]: ${gotOut[i]}, expected ${wantOut[i]}`);
  }
  expect(wrong.slice(0, 10)).toEqual([]);
}

describe("f16 vectors and struct fields on the CPU", () => {
  const library = compileKernelLibrary([file], ["js"]);
  it.each([{}, { checked: true }, { workers: 2 }])("against the float64 reference that rounds after every f16 operation (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    try {
      await check(device, library.get(kernelName), library);
    } finally {
      device.dispose();
    }
  });

  it.each([{}, { checked: true }])("a shared array of vec3h and a private one of vec2h (%j)", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    try {
      const vec3h = library.layout("vec3h");
      const n = 128;
      const points: Vec[] = Array.from({ length: n }, () => [rh(random(-100, 100)), rh(random(-100, 100)), rh(random(-100, 100))]);
      const out = device.createBuffer(vec3h, new Uint8Array(n * 8).fill(0xee));
      await device.launch(library.get("neighbourHalf"), { grid: [n / 64], args: [device.createBuffer(vec3h, points), out] });
      // out[i] = (next.x + p.x, next.y + p.z, next.z + p.x), next the point after i in its block of 64.
      const want = points.map((p, i) => {
        const next = points[i - (i % 64) + ((i + 1) % 64)]!;
        return [rh(next[0]! + p[0]!), rh(next[1]! + p[2]!), rh(next[2]! + p[0]!)];
      });
      const bytes = new Uint8Array(await device.read(out));
      expect(unpackStructs(vec3h, bytes)).toEqual(want);
      // The padding of each element stays as it was: a store of a vec3h writes its 6 bytes.
      expect([...Array(n).keys()].every((i) => bytes[i * 8 + 6] === 0xee && bytes[i * 8 + 7] === 0xee)).toBe(true);
    } finally {
      device.dispose();
    }
  });

  it("packs f16 lanes and fields as their encodings, and a vec4h argument rounded to f16", () => {
    const sample = library.layout("Sample");
    const bytes = packStructs(sample, [{ weight: 1 / 3, uv: [65504, -(2 ** -24)], pos: [0.1, 0.2, 0.3], id: 7, scale: 70000 }]);
    const view = new DataView(bytes.buffer);
    expect([view.getUint16(0, true), view.getUint16(4, true), view.getUint16(6, true), view.getUint16(32, true)]).toEqual([0x3555, 0x7bff, 0x8001, 0x7c00]);
    expect(unpackStructs(sample, bytes)).toEqual([{ weight: rh(1 / 3), uv: [65504, -(2 ** -24)], pos: [f(0.1), f(0.2), f(0.3)], id: 7, scale: Infinity }]);
  });
});

describe("f16 vectors on WebGPU without shader-f16", () => {
  it("are refused at launch, naming the feature", async (context) => {
    const device = await deviceFor("webgpu");
    if (typeof device === "string") return context.skip(device);
    const library = compileKernelLibrary([file], ["wgsl"]);
    const kernel = library.get(kernelName);
    expect(kernel.description.outputs.wgsl?.features).toEqual(["shader-f16"]);
    if ((device as Device & { hasFeature?: (name: string) => boolean }).hasFeature?.("shader-f16")) return context.skip("this adapter has shader-f16");
    const launch = device.launch(kernel, {
      grid: [1],
      args: [device.createBuffer(library.layout("vec3h"), 8), device.createBuffer(library.layout("Sample"), 8), device.createBuffer("f32", 8), [1, 1, 1, 1], 8],
    });
    await expect(launch).rejects.toThrow(LaunchError);
    await expect(launch).rejects.toThrow(/shader-f16/);
  });
});
