/**
 * The examples built on atomics and subgroup operations (histogram, one-pass sum, stream compaction, row
 * softmax) run on every tested backend, on the CPU with subgroups of 4 and 32 lanes and in checked mode,
 * against references computed in cli/demo/collective-examples.ts (exact, or float64), with fresh random
 * inputs and poisoned outputs on every run. The GPU run (bench/gpu-run.ts) runs the same checks on the H100.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device, type KernelLibrary } from "../runtime/index.ts";
import { checkCollectiveExamples, collectiveExampleFiles, testSizes, type ExampleCheck } from "../cli/demo/collective-examples.ts";
import { deviceFor, gpuBuild, testedBackends } from "./backends.ts";
import { repoRoot } from "./golden-cases.ts";

const files = collectiveExampleFiles.map((file) => path.join(repoRoot, file));

function expectAllPass(checks: readonly ExampleCheck[]): void {
  expect(checks.map((c) => c.example)).toEqual(["histogram256", "sumOnePass", "compactPositive", "softmaxRows", "softmaxRows"]);
  for (const check of checks) expect(check.pass, `${check.example} (${check.size}): ${JSON.stringify(check.detail)}`).toBe(true);
}

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`atomics and subgroup examples on ${backend}${typeof device === "string" ? ` (skipped: ${device})` : ""}`, () => {
    it(`match their references (subgroups of ${typeof device === "string" ? "?" : device.limits.subgroupSize})`, async () => {
      const gpu = device as Device;
      const library = compileKernelLibrary(files, [backend === "cpu" ? "js" : "wgsl"], gpuBuild(backend === "cpu" ? "js" : "wgsl"));
      // WGSL's exp is only loosely bounded (SwiftShader's measured ~3e-4 relative on GELU).
      expectAllPass(await checkCollectiveExamples(gpu, library, testSizes, { softmaxTolerance: backend === "cpu" ? 1e-5 : 1e-3 }));
    });
  });
}

describe("atomics and subgroup examples on the CPU with other subgroup sizes and checked mode", () => {
  let library: KernelLibrary;
  for (const [subgroupSize, checked] of [[4, false], [4, true], [32, true]] as const) {
    it(`${subgroupSize} lanes${checked ? ", checked" : ""}`, async () => {
      library ??= compileKernelLibrary(files, ["js"]);
      const device = await createDevice({ backend: "cpu", subgroupSize, checked });
      expectAllPass(await checkCollectiveExamples(device, library, testSizes));
    });
  }

  it("the compaction's check fails when a block's run is out of order (the check can fail)", async () => {
    library ??= compileKernelLibrary(files, ["js"]);
    const device = await createDevice({ backend: "cpu" });
    // A device that reverses what the kernel wrote between the run's first and last elements.
    const reversing: Device = {
      ...device,
      backend: device.backend,
      name: device.name,
      limits: device.limits,
      createBuffer: device.createBuffer.bind(device) as Device["createBuffer"],
      write: device.write.bind(device),
      launch: device.launch.bind(device),
      time: device.time.bind(device),
      dispose: device.dispose.bind(device),
      read: async (buffer) => {
        const data = await device.read(buffer);
        if (data instanceof Float32Array && data.length > 1000) {
          const firstKept = data.findIndex((v) => !Number.isNaN(v));
          data.subarray(firstKept, firstKept + 3).reverse();
        }
        return data;
      },
    };
    const { checkCompaction } = await import("../cli/demo/collective-examples.ts");
    const check = await checkCompaction(reversing, library, testSizes.compactLength);
    expect(check.pass).toBe(false);
    expect(check.detail.misplaced).toBeGreaterThan(0);
    expect(check.detail.sameMultiset).toBe(true);
  });
});
