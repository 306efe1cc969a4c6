/**
 * The unroll budget: nested `unroll:` loops multiply, so a loop whose copies would exceed
 * `maxUnrolledStatements` stays a loop (the fuzzer's three nested 64-trip loops made 262 144 copies and
 * never finished); the loops inside it are still unrolled, and the result computes the same sum.
 */

import { expect, it } from "vitest";
import { compileSource, header } from "../../tests/compile-source.ts";
import { maxUnrolledStatements } from "./unroll.ts";

const source = `${header}
export const nest = kernel({ block: [1] }, (out: Float32Array, x: f32) => {
  let s: f32 = 0;
  unroll: for (let a = 0; a < 64; a++) {
    unrollB: for (let b = 0; b < 64; b++) {
      unrollC: for (let c = 0; c < 64; c++) {
        s += x;
      }
    }
  }
  out[0] = s;
});
`;

it("keeps a loop whose unrolled copies would exceed the budget, and unrolls the ones inside it", () => {
  const result = compileSource(source, { targets: ["wgsl", "js"] });
  expect(result.rendered).toBe("");
  const wgsl = result.files[0]!.wgsl!.source;
  // The outer loop stays (64 × 64 × 64 copies would be far over the budget); its body is the 64 × 64 copies.
  expect(wgsl.match(/\bfor \(/g)?.length).toBe(1);
  expect(wgsl.match(/s = s \+ x;|s \+= x;/g)?.length).toBe(64 * 64);
  expect(64 * 64).toBeLessThanOrEqual(maxUnrolledStatements);
  // The meaning is unchanged: 64³ additions of x (the CPU target keeps every loop).
  const out = new Float32Array(1).fill(Number.NaN);
  // The JS target's factory returns the file's block functions (what the runtime's instantiateJs does; the
  // compiler's tests do not import the runtime).
  const functions = new Function(result.files[0]!.js!.factoryBody)() as Record<string, (...args: unknown[]) => void>;
  functions.nest!([out, 0.5], [0, 0, 0], [1, 1, 1], [1, 1, 1]);
  expect(out[0]).toBe(0.5 * 64 ** 3);
});
