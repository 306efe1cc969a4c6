/**
 * The kernels of the PyTorch example (examples/torch-app/kernels.ts: GELU, layer norm and their gradients) on
 * the CPU backend in checked mode (out-of-bounds accesses, unwritten shared reads, races, divergent barriers)
 * and on WebGPU (SwiftShader on CI; skipped with the reason where there is no adapter), launched from their
 * declarations through the runtime's `declaredLaunch` (the sizes from the shapes, the first
 * specialization whose requirements hold, the declared grid): each against a float64 reference, with fresh
 * random inputs and outputs poisoned with NaN. The same kernels run as PyTorch operators on the GPU in
 * examples/torch-app/check.py. The bf16 kernels of the example's transformer (gelu's and geluBackward's bf16
 * builds, layerNormBf16 and its gradients) likewise, from bf16 inputs (whose widening is exact) against float64: within the rounding of the
 * bf16 result (2⁻⁸ relative, absolute below 1) plus the f32 computation's error.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, declaredLaunch, evaluateFormula, type Device, type KernelHandle, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { foldFormula } from "../compiler/index.ts";
import { deviceFor } from "./backends.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "torch-app", "kernels.ts");
const backends: { name: string; device: Device | string; library: KernelLibrary }[] = [
  { name: "the CPU, checked", device: new CpuDevice({ checked: true }), library: compileKernelLibrary([file], ["js"]) },
  { name: "WebGPU", device: await deviceFor("webgpu"), library: compileKernelLibrary([file], ["wgsl"]) },
];

function random(length: number, scale = 1, offset = 0): Float32Array {
  return Float32Array.from({ length }, () => (Math.random() * 2 - 1) * scale + offset);
}

function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
}
function geluSlope(x: number): number {
  const t = Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * Math.sqrt(2 / Math.PI) * (1 + 3 * 0.044715 * x * x);
}

/** Largest |ours − ref| over max(|ref|, floor): relative error where |ref| ≥ floor, absolute (over floor) below it. */
function worst(ours: ArrayLike<number>, ref: ArrayLike<number>, floor: number): number {
  let error = 0;
  for (let i = 0; i < ref.length; i++) {
    const e = Math.abs(ours[i]! - ref[i]!) / Math.max(Math.abs(ref[i]!), floor);
    error = Math.max(error, Number.isNaN(e) ? Infinity : e);
  }
  return error;
}

for (const backend of backends) {
  describe(`examples/torch-app/kernels.ts on ${backend.name}, launched from their declarations${typeof backend.device === "string" ? ` (skipped: ${backend.device})` : ""}`, () => {
    const device = backend.device as Device;
    const specializations = (name: string): KernelHandle[] => backend.library.kernels.filter((h) => h.description.name === name);
    // The specializations of one element type of a kernel built for several (declaredLaunch takes the first
    // whose requirements hold, whatever the buffers' types: the PyTorch operator is what picks by dtype).
    const ofType = (name: string, type: string) => specializations(name).filter((h) => h.description.entryName.endsWith(`_T_${type}`));
    const poisoned = (length: number) => device.createBuffer(new Float32Array(length).fill(Number.NaN));
    const test = typeof backend.device === "string" ? it.skip : it;

    test("gelu and geluBackward", async () => {
      const n = 3 * 341;
      const x = random(n, 4);
      const dy = random(n);
      const input = device.createBuffer(x);
      const out = poisoned(n);
      let launch = declaredLaunch(ofType("gelu", "f32"), { out: { buffer: out, shape: [3, 341] }, input: { buffer: input, shape: [3, 341] } });
      expect(launch.grid).toEqual([Math.ceil(n / 256), 1, 1]);
      await device.launch(launch.kernel, launch);
      expect(worst(await device.read(out), Array.from(x, geluTanh), 1)).toBeLessThan(1e-6);

      const grad = poisoned(n);
      launch = declaredLaunch(ofType("geluBackward", "f32"), { gradInput: { buffer: grad, shape: [n] }, input: { buffer: input, shape: [n] }, gradOut: { buffer: device.createBuffer(dy), shape: [n] } });
      await device.launch(launch.kernel, launch);
      expect(worst(await device.read(grad), Array.from(x, (v, i) => dy[i]! * geluSlope(v)), 1)).toBeLessThan(2e-6);
    });

    for (const [rows, cols, entry] of [
      [37, 64, "THREADS_64_ITEMS_1"],
      [5, 1000, "THREADS_128_ITEMS_2"],
      [3, 2052, "THREADS_256_ITEMS_4"],
    ] as const) {
      test(`layerNorm and layerNormBackward, ${rows}×${cols} (${entry})`, async () => {
        const eps = 1e-5;
        const x = random(rows * cols, 2, 0.5);
        const gamma = random(cols);
        const beta = random(cols);
        const dy = random(rows * cols);
        const buffers = { input: device.createBuffer(x), gamma: device.createBuffer(gamma), beta: device.createBuffer(beta), gradOut: device.createBuffer(dy) };
        const out = poisoned(rows * cols);
        const shape = { rows: [rows, cols], cols: [cols] } as const;
        let launch = declaredLaunch(
          specializations("layerNorm"),
          { out: { buffer: out, shape: shape.rows }, input: { buffer: buffers.input, shape: shape.rows }, gamma: { buffer: buffers.gamma, shape: shape.cols }, beta: { buffer: buffers.beta, shape: shape.cols } },
          { eps },
        );
        expect(launch.kernel.description.entryName).toBe(`layerNorm_${entry}`);
        expect(launch.grid).toEqual([rows, 1, 1]);
        await device.launch(launch.kernel, launch);

        // float64: per row x̂ = (x − mean)·rstd, y = x̂·gamma + beta; gradients as in kernels.ts's comment, summed directly.
        const y = new Float64Array(rows * cols);
        const gx = new Float64Array(rows * cols);
        const gg = new Float64Array(cols);
        const gb = new Float64Array(cols);
        for (let r = 0; r < rows; r++) {
          const row = Array.from(x.subarray(r * cols, (r + 1) * cols));
          const mean = row.reduce((a, b) => a + b, 0) / cols;
          const rstd = 1 / Math.sqrt(row.reduce((a, b) => a + (b - mean) ** 2, 0) / cols + Math.fround(eps));
          const xhat = row.map((v) => (v - mean) * rstd);
          const g = xhat.map((_, c) => dy[r * cols + c]! * gamma[c]!);
          const meanG = g.reduce((a, b) => a + b, 0) / cols;
          const meanGX = g.reduce((a, b, c) => a + b * xhat[c]!, 0) / cols;
          for (let c = 0; c < cols; c++) {
            y[r * cols + c] = xhat[c]! * gamma[c]! + beta[c]!;
            gx[r * cols + c] = rstd * (g[c]! - meanG - xhat[c]! * meanGX);
            gg[c] += dy[r * cols + c]! * xhat[c]!;
            gb[c] += dy[r * cols + c]!;
          }
        }
        expect(worst(await device.read(out), y, 1)).toBeLessThan(1e-5);

        // The backward kernel's gradGamma and gradBeta take atomics: the operator makes them zeros.
        const gradInput = poisoned(rows * cols);
        const gradGamma = device.createBuffer("f32", cols);
        const gradBeta = device.createBuffer("f32", cols);
        launch = declaredLaunch(
          specializations("layerNormBackward"),
          {
            gradInput: { buffer: gradInput, shape: shape.rows },
            gradGamma: { buffer: gradGamma, shape: shape.cols },
            gradBeta: { buffer: gradBeta, shape: shape.cols },
            input: { buffer: buffers.input, shape: shape.rows },
            gamma: { buffer: buffers.gamma, shape: shape.cols },
            gradOut: { buffer: buffers.gradOut, shape: shape.rows },
          },
          { eps },
        );
        expect(launch.grid).toEqual([Math.ceil(rows / 16), 1, 1]);
        await device.launch(launch.kernel, launch);
        expect(worst(await device.read(gradInput), gx, 1)).toBeLessThan(1e-4);
        expect(worst(await device.read(gradGamma), gg, 1)).toBeLessThan(1e-4);
        expect(worst(await device.read(gradBeta), gb, 1)).toBeLessThan(1e-4);
      });
    }

    // bf16: random values rounded to bf16, as bits for the buffer and as the numbers they are for the reference.
    const randomBf16 = (length: number, scale = 1, offset = 0) => {
      const bits = Uint16Array.from({ length }, () => bf16Bits((Math.random() * 2 - 1) * scale + offset));
      return { bits, values: Array.from(bits, bf16FromBits) };
    };
    const poisonedBf16 = (length: number) => device.createBuffer("bf16", new Uint16Array(length).fill(0x7fc0));
    const readBf16 = async (buffer: Parameters<Device["read"]>[0]) => Array.from((await device.read(buffer, { bits: true })) as Uint16Array, bf16FromBits);
    const bf16Bound = 2 ** -8 + 1e-5; // bf16 keeps 8 significant bits: rounding to nearest is within 2⁻⁸ relative

    test("gelu and geluBackward built for bf16", async () => {
      const n = 3 * 341;
      const x = randomBf16(n, 4);
      const dy = randomBf16(n);
      const input = device.createBuffer("bf16", x.bits);
      const out = poisonedBf16(n);
      let launch = declaredLaunch(ofType("gelu", "bf16"), { out: { buffer: out, shape: [3, 341] }, input: { buffer: input, shape: [3, 341] } });
      expect(launch.kernel.description.entryName).toBe("gelu_T_bf16");
      await device.launch(launch.kernel, launch);
      expect(worst(await readBf16(out), x.values.map(geluTanh), 1)).toBeLessThan(bf16Bound);

      const grad = poisonedBf16(n);
      launch = declaredLaunch(ofType("geluBackward", "bf16"), { gradInput: { buffer: grad, shape: [n] }, input: { buffer: input, shape: [n] }, gradOut: { buffer: device.createBuffer("bf16", dy.bits), shape: [n] } });
      await device.launch(launch.kernel, launch);
      expect(worst(await readBf16(grad), x.values.map((v, i) => dy.values[i]! * geluSlope(v)), 1)).toBeLessThan(bf16Bound);
    });

    for (const [rows, cols, entry] of [
      [37, 256, "THREADS_64_ITEMS_1"],
      [5, 1000, "THREADS_128_ITEMS_2"],
    ] as const) {
      test(`layerNormBf16 and layerNormBf16Backward, ${rows}×${cols} (${entry})`, async () => {
        const eps = 1e-5;
        const x = randomBf16(rows * cols, 2, 0.5);
        const dy = randomBf16(rows * cols);
        const gamma = random(cols);
        const beta = random(cols);
        const input = device.createBuffer("bf16", x.bits);
        const gammaBuffer = device.createBuffer(gamma);
        const out = poisonedBf16(rows * cols);
        let launch = declaredLaunch(
          specializations("layerNormBf16"),
          { out: { buffer: out, shape: [rows, cols] }, input: { buffer: input, shape: [rows, cols] }, gamma: { buffer: gammaBuffer, shape: [cols] }, beta: { buffer: device.createBuffer(beta), shape: [cols] } },
          { eps },
        );
        expect(launch.kernel.description.entryName).toBe(`layerNormBf16_T_bf16_${entry}`);
        await device.launch(launch.kernel, launch);

        const y = new Float64Array(rows * cols);
        const gx = new Float64Array(rows * cols);
        const gg = new Float64Array(cols);
        const gb = new Float64Array(cols);
        for (let r = 0; r < rows; r++) {
          const row = x.values.slice(r * cols, (r + 1) * cols);
          const mean = row.reduce((a, b) => a + b, 0) / cols;
          const rstd = 1 / Math.sqrt(row.reduce((a, b) => a + (b - mean) ** 2, 0) / cols + Math.fround(eps));
          const xhat = row.map((v) => (v - mean) * rstd);
          const g = xhat.map((_, c) => dy.values[r * cols + c]! * gamma[c]!);
          const meanG = g.reduce((a, b) => a + b, 0) / cols;
          const meanGX = g.reduce((a, b, c) => a + b * xhat[c]!, 0) / cols;
          for (let c = 0; c < cols; c++) {
            y[r * cols + c] = xhat[c]! * gamma[c]! + beta[c]!;
            gx[r * cols + c] = rstd * (g[c]! - meanG - xhat[c]! * meanGX);
            gg[c] += dy.values[r * cols + c]! * xhat[c]!;
            gb[c] += dy.values[r * cols + c]!;
          }
        }
        expect(worst(await readBf16(out), y, 1)).toBeLessThan(bf16Bound);

        const gradInput = poisonedBf16(rows * cols);
        const gradGamma = device.createBuffer("f32", cols);
        const gradBeta = device.createBuffer("f32", cols);
        launch = declaredLaunch(
          specializations("layerNormBf16Backward"),
          {
            gradInput: { buffer: gradInput, shape: [rows, cols] },
            gradGamma: { buffer: gradGamma, shape: [cols] },
            gradBeta: { buffer: gradBeta, shape: [cols] },
            input: { buffer: input, shape: [rows, cols] },
            gamma: { buffer: gammaBuffer, shape: [cols] },
            gradOut: { buffer: device.createBuffer("bf16", dy.bits), shape: [rows, cols] },
          },
          { eps },
        );
        await device.launch(launch.kernel, launch);
        expect(worst(await readBf16(gradInput), gx, 1)).toBeLessThan(bf16Bound);
        // gradGamma and gradBeta are f32 sums over the rows.
        expect(worst(await device.read(gradGamma), gg, 1)).toBeLessThan(1e-4);
        expect(worst(await device.read(gradBeta), gb, 1)).toBeLessThan(1e-4);
      });
    }

    test("refuses shapes that disagree or that no specialization takes, naming the parameter", () => {
      const b = (n: number) => device.createBuffer("f32", n);
      const handles = specializations("layerNorm");
      expect(() =>
        declaredLaunch(handles, { out: { buffer: b(64), shape: [2, 32] }, input: { buffer: b(64), shape: [2, 32] }, gamma: { buffer: b(16), shape: [16] }, beta: { buffer: b(32), shape: [32] } }, { eps: 1 }),
      ).toThrow("tskernel: cannot launch 'layerNorm': parameter 'gamma' gives size cols = 16, but 'out' gave cols = 32");
      expect(() =>
        declaredLaunch(handles, { out: { buffer: b(12), shape: [2, 6] }, input: { buffer: b(12), shape: [2, 6] }, gamma: { buffer: b(6), shape: [6] }, beta: { buffer: b(6), shape: [6] } }, { eps: 1 }),
      ).toThrow("tskernel: cannot launch 'layerNorm': no specialization takes rows = 2, cols = 6 (requires: cols % 4 == 0; cols <= 4 * THREADS * ITEMS)");
      expect(() =>
        declaredLaunch(handles, { out: { buffer: b(63), shape: [2, 32] }, input: { buffer: b(64), shape: [2, 32] }, gamma: { buffer: b(32), shape: [32] }, beta: { buffer: b(32), shape: [32] } }, { eps: 1 }),
      ).toThrow("tskernel: cannot launch 'layerNorm': parameter 'out' has 63 elements, its shape [2, 32] needs 64");
    });

  });
}

describe("declared launches' formulas", () => {
  it("evaluate as the compiler folds them", () => {
    const specializations = (name: string): KernelHandle[] => backends[0]!.library.kernels.filter((h) => h.description.name === name);
    const grid = specializations("layerNormBackward")[0]!.description.signature!.grid[0];
    for (let i = 0; i < 200; i++) {
      const rows = Math.floor(Math.random() * 100000);
      const names = { rows, ROWS_PER_BLOCK: 16 };
      expect(evaluateFormula(grid, names)).toBe(foldFormula(grid, names));
      expect(evaluateFormula(grid, names)).toBe(Math.ceil(rows / 16));
    }
    expect(evaluateFormula(["%", ["neg", 7], 2], {})).toBe(-1);
    expect(evaluateFormula(["||", 0, ["&&", 1, ["!", 0]]], {})).toBe(1);
  });
});
