/**
 * Buffers of vectors and structs on the host and the CPU backend: packing and unpacking (values and typed
 * columns) in the manifest's layout, the CPU's checked mode and worker threads on struct buffers (the same
 * bytes as the plain run), and the launch checks of vector and struct arguments.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, CpuDevice, packColumns, packStructs, unpackColumns, unpackStructs, type LayoutValue } from "../runtime/index.ts";
import { repoRoot } from "./golden-cases.ts";

const lib = compileKernelLibrary([path.join(repoRoot, "examples", "struct-bodies.ts")], ["js"]);
const body = lib.layout("Body");

function randomBodies(n: number) {
  return Array.from({ length: n }, () => ({
    pos: [Math.random(), Math.random() + 1, Math.random()],
    mass: 0.5 + Math.random(),
    vel: [Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5],
    steps: Math.floor(Math.random() * 100),
    material: { restitution: Math.random(), tint: [Math.random(), Math.random(), Math.random()] },
    spin: [Math.random(), Math.random()],
  }));
}

const step = { gravity: [0, -9.81, 0.5], dt: 0.02, floor: { low: -1, high: 3 }, drag: 0.1 };

describe("layouts on the host", () => {
  it("packs values at the layout's offsets and unpacks them back (f32-rounded)", () => {
    const values = randomBodies(3);
    const bytes = packStructs(body, values);
    expect(bytes.byteLength).toBe(3 * 80);
    const view = new DataView(bytes.buffer);
    // Element 2's vel.y at 2 · 80 + 16 + 4, its steps (u32) at 2 · 80 + 28, its tint.z at 2 · 80 + 32 + 16 + 8.
    expect(view.getFloat32(160 + 20, true)).toBe(Math.fround(values[2]!.vel[1]!));
    expect(view.getUint32(160 + 28, true)).toBe(values[2]!.steps);
    expect(view.getFloat32(160 + 56, true)).toBe(Math.fround(values[2]!.material.tint[2]!));
    const round = (value: unknown): unknown => (typeof value === "number" ? Math.fround(value) : Array.isArray(value) ? value.map(round) : Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, round(v)])));
    expect(unpackStructs(body, bytes)).toEqual(values.map(round));
  });

  it("packs typed columns into the same bytes as values, and unpacks columns", () => {
    const values = randomBodies(5);
    const columns = {
      pos: new Float32Array(values.flatMap((v) => v.pos)),
      mass: new Float32Array(values.map((v) => v.mass)),
      vel: new Float32Array(values.flatMap((v) => v.vel)),
      steps: new Uint32Array(values.map((v) => v.steps)),
      "material.restitution": new Float32Array(values.map((v) => v.material.restitution)),
      "material.tint": new Float32Array(values.flatMap((v) => v.material.tint)),
      spin: new Float32Array(values.flatMap((v) => v.spin)),
    };
    const bytes = packColumns(body, columns, 5);
    expect(bytes).toEqual(packStructs(body, values));
    expect(unpackColumns(body, bytes)).toEqual(columns);
    expect(() => packColumns(body, { ...columns, steps: undefined as never }, 5)).toThrow(/no column 'steps'/);
  });

  it("refuses a value that lacks a field", () => {
    const [first] = randomBodies(1);
    const { material: _, ...broken } = first!;
    expect(() => packStructs(body, [broken as unknown as LayoutValue])).toThrow(/has no material/);
  });
});

describe("struct buffers on the CPU backend", () => {
  it("checked mode and worker threads give the same bytes as the plain run", async () => {
    const n = 150;
    const values = randomBodies(n);
    const results: Uint8Array[] = [];
    for (const options of [{}, { checked: true }, { workers: 3 }]) {
      const device = new CpuDevice(options);
      const buffer = device.createBuffer(body, values);
      const energy = device.createBuffer(new Float32Array(n).fill(NaN));
      const gaps = device.createBuffer(new Float32Array(n).fill(NaN));
      await device.launch(lib.get("stepBodies"), { grid: [3], args: [buffer, energy, gaps, step, n] });
      results.push((await device.read(buffer)) as Uint8Array);
      device.dispose();
    }
    expect(results[0]).not.toEqual(packStructs(body, values));
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it("checks vector and struct arguments against the kernel's layouts", async () => {
    const device = new CpuDevice();
    const n = 4;
    const args = (overrides: Record<string, unknown>) => ({ bodies: device.createBuffer(body, randomBodies(n)), energy: device.createBuffer("f32", n), gaps: device.createBuffer("f32", n), step, n, ...overrides });
    const kernel = lib.get("stepBodies");
    await expect(device.launch(kernel, { grid: [1], args: args({ step: { ...step, floor: { low: 0 } } }) as never })).rejects.toThrow(/parameter 'step' expects a Step: .*has no floor\.high/);
    await expect(device.launch(kernel, { grid: [1], args: args({ step: 3 }) as never })).rejects.toThrow(/parameter 'step' expects a Step \(an object of its fields\), got number/);
    await expect(device.launch(kernel, { grid: [1], args: args({ bodies: device.createBuffer("f32", 20) }) as never })).rejects.toThrow(/parameter 'bodies' expects a Body buffer/);
    const other = { ...body, fields: body.kind === "struct" ? body.fields.slice(0, -1) : [] } as typeof body;
    await expect(device.launch(kernel, { grid: [1], args: args({ bodies: device.createBuffer(other, 2) }) as never })).rejects.toThrow(/has another layout/);
    device.dispose();
  });
});

interface CellValue {
  id: number;
  pos: number[];
  weight: number;
  tag: number[];
}

/** tests/kernels/vector-semantics.ts, evaluated in JavaScript with the language's integer rules. */
function vectorSemantics(cells: CellValue[], n: number): { cells: CellValue[]; out: number[][] } {
  const i32 = (x: number) => x | 0;
  const advance = (c: CellValue, by: number): CellValue => ({ id: (c.id + 1) >>> 0, pos: c.pos.map((p) => i32(p + by)), weight: i32(Math.imul(c.weight, 3) - by), tag: [c.tag[1]!, c.tag[0]!] });
  const facing = (c: CellValue) => (c.weight > 0 ? c.pos : c.pos.map((p) => i32(-p)));
  const blocks = Math.ceil(n / 32);
  const resultCells = cells.map((c) => ({ ...c, pos: [...c.pos], tag: [...c.tag] }));
  const out: number[][] = [];
  for (let b = 0; b < blocks; b++) {
    const tile = Array.from({ length: 32 }, (_, tid) => (b * 32 + tid < n ? [...cells[b * 32 + tid]!.pos] : [0, 0, 0]));
    for (let tid = 0; tid < 32; tid++) {
      const i = b * 32 + tid;
      if (i >= n) continue;
      let cell = cells[i]!;
      const history: CellValue[] = [];
      for (let k = 0; k < 3; k++) {
        history.push(cell);
        cell = advance(cell, k + 1);
      }
      const t = tile[(tid + 1) % 32]!;
      let v = [t[2]!, t[1]!, t[0]!];
      v = [v[1]!, v[2]!, v[2]!];
      let count = 0;
      while (count < 4 && facing(history[count % 3]!).every((p) => p < 1000)) count++;
      const inside = v.some((p) => p > 0) && facing(cell)[0]! > 0;
      const chosen = inside ? advance(cell, 2) : history[1]!;
      out[i] = [...chosen.pos.map((p, lane) => i32(p + v[lane]!)), count];
      resultCells[i] = { ...chosen, tag: [chosen.tag[0]!, i32(chosen.tag[0]! + i)] };
    }
  }
  return { cells: resultCells, out };
}

describe("integer vectors and structs on every tested backend", () => {
  it("give the same bytes as the language's rules on the CPU (plain and checked) and WebGPU, and as each other", async () => {
    const { deviceFor } = await import("./backends.ts");
    const devices = [new CpuDevice(), new CpuDevice({ checked: true })];
    const webgpu = await deviceFor("webgpu");
    if (typeof webgpu !== "string") devices.push(webgpu as unknown as CpuDevice);
    else if (process.env.TSKERNEL_REQUIRE_WEBGPU === "1") throw new Error(webgpu);
    const file = path.join(repoRoot, "tests", "kernels", "vector-semantics.ts");
    const n = 90;
    const cells: CellValue[] = Array.from({ length: n }, () => ({
      id: Math.floor(Math.random() * 2 ** 32),
      pos: Array.from({ length: 3 }, () => Math.floor(Math.random() * 4000) - 2000),
      weight: Math.floor(Math.random() * 2 ** 32) - 2 ** 31,
      tag: Array.from({ length: 2 }, () => Math.floor(Math.random() * 2 ** 31)),
    }));
    const expected = vectorSemantics(cells, n);
    const results: Uint8Array[][] = [];
    for (const device of devices) {
      const library = compileKernelLibrary([file], [device.backend === "cpu" ? "js" : "wgsl"]);
      const cellLayout = library.layout("Cell");
      const vec4i = library.layout("vec4i");
      const buffer = device.createBuffer(cellLayout, cells);
      const out = device.createBuffer(vec4i, Array.from({ length: n }, () => [-7, -7, -7, -7]));
      await device.launch(library.get("vectorSemantics"), { grid: [Math.ceil(n / 32)], args: [buffer, out, n] });
      const bytes = [(await device.read(buffer)) as Uint8Array, (await device.read(out)) as Uint8Array];
      expect(unpackStructs(cellLayout, bytes[0]!), device.name).toEqual(expected.cells);
      expect(unpackStructs(vec4i, bytes[1]!), device.name).toEqual(expected.out);
      results.push(bytes);
    }
    for (const other of results.slice(1)) expect(other).toEqual(results[0]);
    devices[0]!.dispose();
    devices[1]!.dispose();
  });
});
