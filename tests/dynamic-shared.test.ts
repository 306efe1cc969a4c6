/**
 * A kernel with more than 48 KB of shared memory (codegen-tests/dynamic-shared), which CUDA only allows as
 * dynamic shared memory, runs on every tested backend whose device has the room (the CPU always; WebGPU
 * where the adapter allows 57 KB of workgroup memory) against results computed here. And the shared bytes
 * a kernel reports are what CUDA allocates, the padding that aligns its arrays included
 * (codegen-tests/shared-padding; issue 12), and the kernel runs with them.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { kernelFits } from "../runtime/launch-check.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "dynamic-shared", "kernel.ts");
const paddingFile = path.join(casesRoot, "shared-padding", "kernel.ts");

describe("the shared bytes a kernel reports", () => {
  it("are what CUDA allocates: each array at the alignment its accesses need, the padding counted", () => {
    const library = compileKernelLibrary([paddingFile, file], ["cuda", "js"]);
    const dynamic = library.get("paddedTiles");
    // first (4 bytes), 12 bytes of padding so that the load4/store4 array starts 16-byte aligned, tile
    // (12800 floats), last (3 ints, 4-byte aligned right after the tile).
    expect(dynamic.description.sharedBytes).toBe(4 + 12 + 12800 * 4 + 12);
    expect(dynamic.cuda!.dynamicSharedBytes).toBe(dynamic.description.sharedBytes);
    expect(dynamic.cuda!.source).toContain("int (&last)[3] = *reinterpret_cast<int (*)[3]>(tsk_dynamic_shared + 51216);");
    // At or below 48 KB the same layout is the count; CUDA declares the arrays statically (ptxas places them:
    // tests/generated-code.test.ts compares).
    const small = library.get("paddedTiles", { VECTORS: 256 });
    expect(small.description.sharedBytes).toBe(4 + 12 + 1024 * 4 + 12);
    expect(small.cuda!.dynamicSharedBytes).toBe(0);
    // No padding where every array starts aligned: the sum of the arrays.
    expect(library.get("reverseTiles").description.sharedBytes).toBe(2 * 7168 * 4 + 100 * 4);
  });
});

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`shared arrays with padding between them on ${backend}`, () => {
    const gpu = device as Device;
    const library = compileKernelLibrary([paddingFile], [backend === "cpu" ? "js" : "wgsl"]);

    for (const vectors of [3200, 256]) {
      it(`reverse ${vectors} vectors per block through them`, async () => {
        const kernel = library.get("paddedTiles", { VECTORS: vectors });
        if (!kernelFits(kernel.description, gpu.limits)) {
          expect(gpu.limits.maxSharedBytes).toBeLessThan(kernel.description.sharedBytes);
          return;
        }
        const blocks = 3;
        const n = blocks * vectors * 4;
        const input = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
        const out = gpu.createBuffer(new Float32Array(n).fill(Number.NaN));
        await gpu.launch(kernel, { grid: [blocks], args: [out, gpu.createBuffer(input)] });
        const got = (await gpu.read(out)) as Float32Array;
        for (let block = 0; block < blocks; block++) {
          const base = block * vectors * 4;
          for (let v = 0; v < vectors; v++) {
            const from = base + 4 * (vectors - 1 - v);
            const expected = [Math.fround(input[from + 3]! + block), input[from + 2]!, input[from + 1]!, Math.fround(input[from]! + 7)];
            for (let e = 0; e < 4; e++) expect(got[base + 4 * v + e], `block ${block} vector ${v} element ${e}`).toBe(expected[e]);
          }
        }
      });
    }
  });
}

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
