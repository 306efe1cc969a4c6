/**
 * A kernel with more than 48 KB of shared memory (codegen-tests/dynamic-shared), which CUDA only allows as
 * dynamic shared memory, runs on every tested backend whose device has the room (the CPU always; WebGPU
 * where the adapter allows 57 KB of workgroup memory) against results computed here.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { kernelFits } from "../runtime/launch-check.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "dynamic-shared", "kernel.ts");

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`more than 48 KB of shared memory on ${backend}`, () => {
    const gpu = device as Device;
    const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
    const kernel = library.get("reverseTiles");

    it("records the shared bytes, and runs where the device has them", async () => {
      expect(kernel.description.sharedBytes).toBe(2 * 7168 * 4 + 100 * 4);
      if (!kernelFits(kernel.description, gpu.limits)) {
        // A device without the room must say so before launching, not fail inside the driver.
        expect(gpu.limits.maxSharedBytes).toBeLessThan(kernel.description.sharedBytes);
        await expect(gpu.launch(kernel, { grid: [1], args: [gpu.createBuffer("f32", 7168), gpu.createBuffer("f32", 7168), 1] })).rejects.toThrow(/workgroup memory|shared memory/);
        return;
      }
      const blocks = 3;
      const input = Float32Array.from({ length: blocks * 7168 }, () => Math.random() * 2 - 1);
      const bias = Math.fround(0.25 + Math.random());
      const out = gpu.createBuffer(new Float32Array(blocks * 7168).fill(Number.NaN));
      await gpu.launch(kernel, { grid: [blocks], args: [out, gpu.createBuffer(input), bias] });
      const got = (await gpu.read(out)) as Float32Array;
      for (let block = 0; block < blocks; block++) {
        for (let i = 0; i < 7168; i++) {
          const expected = input[block * 7168 + 7167 - i]! + bias * (i % 100);
          expect(Math.abs(got[block * 7168 + i]! - expected), `block ${block} element ${i}`).toBeLessThan(1e-5 * (1 + Math.abs(expected)));
        }
      }
    });
  });
}
