/**
 * The JS backend's block-uniform locals and reused arrays. A local that every thread sets alike at block
 * level (here a scale doubled at each round of a loop with a barrier) is one block-level local, set once;
 * a region that reads it before it changes must still see the old value. A kernel's arrays are made once
 * per thread count and reused by later blocks, so blocks of another size must get arrays of their size, and
 * shared memory must start from zeros in every block. Fresh random inputs; the reference rounds every
 * operation to f32 as the language does, so the results match bit for bit.
 */

import { expect, it } from "vitest";
import { compileSource } from "../../tests/compile-source.ts";

const source = `import { kernel, shared, syncThreads, threadIdx, blockIdx, blockDim, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

export const rounds = kernel((out: Float32Array, x: ReadonlyFloat32Array, count: i32) => {
  const tile = shared.f32(64);
  const t = threadIdx.x;
  const i = blockIdx.x * blockDim.x + t;
  let scale: f32 = 0.5;
  let acc: f32 = tile[t];
  for (let r = 0; r < count; r++) {
    tile[t] = x[i] * scale;
    acc += tile[t];
    scale = scale * 2;
    syncThreads();
    acc += tile[(t + 1) % blockDim.x];
    syncThreads();
  }
  out[i] = acc;
});
`;

const f = Math.fround;

it("sets a block-uniform local once per block, after the region that reads its old value, and reuses arrays by thread count", () => {
  const result = compileSource(source, { targets: ["js"] });
  expect(result.rendered).toBe("");
  const js = result.files[0]!.js!;
  expect(js.source).not.toMatch(/scale_slots|r_slots/);
  expect(js.source).toMatch(/let scale = 0\.5;/);
  const functions = new Function(js.factoryBody)() as Record<string, (...args: unknown[]) => void>;
  const count = 3;
  for (const threads of [8, 16, 8]) {
    const blocks = 3;
    const x = Float32Array.from({ length: threads * blocks }, () => f(Math.random() * 4 - 2));
    const out = new Float32Array(threads * blocks).fill(Number.NaN);
    for (let b = 0; b < blocks; b++) functions.rounds!([out, x, count], [b, 0, 0], [threads, 1, 1], [blocks, 1, 1]);
    for (let b = 0; b < blocks; b++) {
      for (let t = 0; t < threads; t++) {
        let acc = 0; // shared memory starts from zeros in every block
        let scale = 0.5;
        for (let r = 0; r < count; r++) {
          acc = f(acc + f(x[b * threads + t]! * scale));
          acc = f(acc + f(x[b * threads + ((t + 1) % threads)]! * scale));
          scale = f(scale * 2);
        }
        expect(out[b * threads + t]).toBe(acc);
      }
    }
  }
});
