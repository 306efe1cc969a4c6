/**
 * Vector accesses and asynchronous copies run on every tested backend: the construct kernels of
 * codegen-tests/vector-access (load4/store4 through global, shared and private arrays; a double-buffered
 * copyAsync4 loop; copyAsync8 and copyAsync16 of bf16 and u8 in codegen-tests/async-copy-narrow) against results
 * computed here in float64, with fresh random inputs and poisoned outputs.
 * (On CUDA the same kernels print as float4 accesses and cp.async; tests/generated-code.test.ts compiles them.)
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, type Device } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "vector-access", "kernel.ts");

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`vector accesses on ${backend}${typeof device === "string" ? ` (skipped: ${device})` : ""}`, () => {
    const gpu = device as Device;
    const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);

    it("load4/store4 move four elements at a time through global, shared and private arrays", async () => {
      const blocks = 3;
      const width = 128;
      const n = blocks * width;
      const input = Float32Array.from({ length: n }, () => Math.random() * 2 - 1);
      const ints = Int32Array.from({ length: n }, () => Math.floor(Math.random() * 2000) - 1000);
      const scale = 0.5 + Math.random();
      const out = gpu.createBuffer(new Float32Array(n).fill(Number.NaN));
      const intsOut = gpu.createBuffer(new Int32Array(n).fill(-7));
      await gpu.launch(library.get("vectorCopy"), { grid: [blocks], args: [out, gpu.createBuffer(input), intsOut, gpu.createBuffer(ints), scale] });
      const got = (await gpu.read(out)) as Float32Array;
      const gotInts = (await gpu.read(intsOut)) as Int32Array;
      for (let block = 0; block < blocks; block++) {
        for (let thread = 0; thread < 32; thread++) {
          // Thread t writes what thread t ^ 1 scaled: x also gained the unscaled first element back.
          const source = block * width + (thread ^ 1) * 4;
          const target = block * width + thread * 4;
          const expected = [0, 1, 2, 3].map((lane) => input[source + lane]! * Math.fround(scale) + (lane === 0 ? input[source]! : 0));
          for (let lane = 0; lane < 4; lane++) {
            expect(Math.abs(got[target + lane]! - expected[lane]!), `out[${target + lane}]`).toBeLessThan(1e-5);
            expect(gotInts[target + lane]).toBe(ints[target + 3 - lane]);
          }
        }
      }
    });

    it("copyAsync4 with commitAsync/waitAsync double-buffers a reduction", async () => {
      const blocks = 5;
      const steps = 4;
      const input = Float32Array.from({ length: blocks * steps * 128 }, () => Math.random() * 2 - 1);
      const out = gpu.createBuffer(new Float32Array(blocks * 32).fill(Number.NaN));
      await gpu.launch(library.get("pipelinedSum"), { grid: [blocks], args: [out, gpu.createBuffer(input)] });
      const got = (await gpu.read(out)) as Float32Array;
      for (let block = 0; block < blocks; block++) {
        for (let thread = 0; thread < 32; thread++) {
          // Each thread adds the four elements its neighbour (t + 1) copied, in every step.
          let expected = 0;
          for (let step = 0; step < steps; step++) {
            for (let lane = 0; lane < 4; lane++) expected += input[block * steps * 128 + step * 128 + ((thread + 1) % 32) * 4 + lane]!;
          }
          expect(Math.abs(got[block * 32 + thread]! - expected), `block ${block} thread ${thread}`).toBeLessThan(1e-4);
        }
      }
    });

    it("copyAsync8 and copyAsync16 move 16 bytes of bf16 and u8 through a double-buffered loop", async () => {
      const narrow = compileKernelLibrary([path.join(casesRoot, "async-copy-narrow", "kernel.ts")], [backend === "cpu" ? "js" : "wgsl"]);
      const blocks = 3;
      const steps = 4;
      const halves = Uint16Array.from({ length: blocks * steps * 256 }, () => bf16Bits(Math.random() * 2 - 1));
      const bytes = Uint8Array.from({ length: blocks * steps * 512 }, () => Math.floor(Math.random() * 256));
      const halfOut = gpu.createBuffer(new Float32Array(blocks * 32).fill(Number.NaN));
      const byteOut = gpu.createBuffer(new Uint32Array(blocks * 32).fill(0xdeadbeef));
      await gpu.launch(narrow.get("pipelinedHalfSum"), { grid: [blocks], args: [halfOut, gpu.createBuffer("bf16", halves)] });
      await gpu.launch(narrow.get("pipelinedByteSum"), { grid: [blocks], args: [byteOut, gpu.createBuffer("u8", bytes)] });
      const gotHalves = (await gpu.read(halfOut)) as Float32Array;
      const gotBytes = (await gpu.read(byteOut)) as Uint32Array;
      for (let block = 0; block < blocks; block++) {
        for (let thread = 0; thread < 32; thread++) {
          // Each thread adds the elements its neighbour (t + 1) copied, in every step.
          let halfSum = 0;
          let byteSum = 0;
          for (let step = 0; step < steps; step++) {
            for (let lane = 0; lane < 8; lane++) halfSum += bf16FromBits(halves[(block * steps + step) * 256 + ((thread + 1) % 32) * 8 + lane]!);
            for (let lane = 0; lane < 16; lane++) byteSum += bytes[(block * steps + step) * 512 + ((thread + 1) % 32) * 16 + lane]!;
          }
          expect(Math.abs(gotHalves[block * 32 + thread]! - halfSum), `bf16 block ${block} thread ${thread}`).toBeLessThan(1e-4);
          expect(gotBytes[block * 32 + thread], `u8 block ${block} thread ${thread}`).toBe(byteSum);
        }
      }
    });
  });
}
