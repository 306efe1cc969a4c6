/**
 * The multistage and register-staged SGEMM kernels (examples/sgemm-multistage.ts), every specialization the
 * file lists, on every tested backend against a float64 reference: shapes that are not multiples of the
 * tiles (and, for the register-staged kernel, not of 4 either), α/β ≠ (1, 0), and β = 0 over a C poisoned
 * with NaN, which the kernels must not read. The CPU's checked mode runs the sliced-k builds too, so a
 * missing barrier or a read of an unwaited copy fails here.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, compareToReference, referenceGemm, type Device, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { kernelFits } from "../runtime/launch-check.ts";
import { repoRoot } from "./golden-cases.ts";
import { checkedBuildUnrunnable, deviceFor, gpuBuild, testedBackends } from "./backends.ts";

const file = path.join(repoRoot, "examples", "sgemm-multistage.ts");
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);
const constantsOf = (h: KernelHandle) => h.description.specialization as Record<string, number>;
const label = (h: KernelHandle) => `${h.description.name} ${Object.entries(constantsOf(h)).map(([k, v]) => `${k}=${v}`).join(" ")}`;

/** A shape the build takes: multiples of its tiles without GUARD, odd sizes with it, any sizes register-staged. */
function shapeFor(h: KernelHandle): [number, number, number] {
  const c = constantsOf(h);
  if (h.description.name === "sgemmRegisterStaged") return [c.BM! + 7, c.BN! + 3, c.BK! * c.KSPLIT! * 2 + 5];
  if (c.GUARD) return [c.BM! + 9, c.BN! + 4, c.BK! * c.KSPLIT! * 3 + 12];
  return [c.BM! * 2, c.BN!, c.BK! * c.KSPLIT! * 4];
}

async function check(device: Device, kernel: KernelHandle, [m, n, k]: [number, number, number], alpha: number, beta: number): Promise<void> {
  const c = constantsOf(kernel);
  const A = random(m * k);
  const B = random(k * n);
  const C0 = beta === 0 ? new Float32Array(m * n).fill(Number.NaN) : random(m * n);
  const C = device.createBuffer(C0);
  await device.launch(kernel, { grid: [Math.ceil(n / c.BN!), Math.ceil(m / c.BM!)], args: [m, n, k, alpha, device.createBuffer(A), device.createBuffer(B), beta, C] });
  const expected = referenceGemm(m, n, k, A, B, alpha, beta, beta === 0 ? new Float32Array(m * n) : C0);
  const report = compareToReference((await device.read(C)) as Float32Array, expected);
  expect(report.nonFinite, `${label(kernel)} at ${m}×${n}×${k}`).toBe(0);
  expect(report.normwiseRelative, `${label(kernel)} at ${m}×${n}×${k}`).toBeLessThan(k * 2 ** -23);
}

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  const skip = typeof device === "string" ? device : checkedBuildUnrunnable(device, file);
  describe.skipIf(skip)(`sgemm-multistage.ts on ${backend}${skip ? ` (skipped: ${skip})` : ""}`, () => {
    const gpu = device as Device;
    const target = backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
    const kernels = skip ? [] : compileKernelLibrary([file], [target], gpuBuild(target)).kernels.filter((h) => kernelFits(h.description, gpu.limits));

    it("has builds that fit this device, of both kernels", () => {
      expect(new Set(kernels.map((h) => h.description.name))).toEqual(new Set(["sgemmMultistage", "sgemmRegisterStaged"]));
    });

    it.each(kernels.map((h) => [label(h), h] as const))("%s matches float64 with α = 0.75, β = −0.5", async (_, kernel) => {
      await check(gpu, kernel, shapeFor(kernel), 0.75, -0.5);
    });

    it.each(kernels.map((h) => [label(h), h] as const))("%s with β = 0 ignores C (NaN before the launch)", async (_, kernel) => {
      await check(gpu, kernel, shapeFor(kernel), 1.25, 0);
    });
  });
}

describe("sgemm-multistage.ts in the CPU's checked mode", () => {
  const device = new CpuDevice({ checked: true });
  const kernels = compileKernelLibrary([file], ["js"]).kernels.filter((h) => h.description.block![0] <= 128);
  it.each(kernels.map((h) => [label(h), h] as const))("%s: no race, no unwaited copy, no out-of-bounds access", async (_, kernel) => {
    const [m, n, k] = shapeFor(kernel);
    await check(device, kernel, [m, n, k], 1, 0.5);
  });

  it("swizzled block order: groups of two block rows over five rows (the last group partial) cover C once", async () => {
    const kernel = compileKernelLibrary([file], ["js"]).kernels.find((h) => constantsOf(h).SWIZZLE === 2)!;
    await check(new CpuDevice(), kernel, [5 * 64 - 3, 3 * 64 + 4, 40], 1, 0);
  });

  it("register-staged: a shape with no dimension a multiple of 4, and k shorter than one step", async () => {
    const kernel = kernels.find((h) => h.description.name === "sgemmRegisterStaged" && constantsOf(h).KSPLIT === 2)!;
    await check(device, kernel, [37, 33, 7], 1, 0);
    await check(device, kernel, [5, 3, 1], 2, 1);
  });
});
