/**
 * Scalar replacement of private arrays on the CPU target: an array indexed only by constants (after its
 * `unroll:` loops are unrolled) becomes locals whose values live on across the iterations of an enclosing
 * loop; one whose uses a barrier separates, or that keeps a variable index, stays an array (and its loops
 * stay loops). Each kernel is run on fresh random inputs against a reference that rounds every operation to
 * f32 as the language does, so the results must match bit for bit.
 */

import { expect, it } from "vitest";
import { compileSource } from "../../tests/compile-source.ts";

const source = `import { kernel, local, syncThreads, threadIdx, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";

// acc carries a running sum per lane across the rounds of a loop that is not unrolled.
export const lanes = kernel({ block: [8] }, (out: Float32Array, x: ReadonlyFloat32Array, rounds: i32) => {
  const acc = local.f32(4);
  const t = threadIdx.x;
  for (let r = 0; r < rounds; r++) {
    unrollAdd: for (let k = 0; k < 4; k++) {
      acc[k] += x[(r * 8 + t) * 4 + k] * 0.5;
    }
  }
  let s: f32 = 0;
  unrollSum: for (let k = 0; k < 4; k++) {
    s += acc[k] * acc[k];
  }
  out[t] = s;
});

// acc is written before a barrier and read after it: it stays an array.
export const acrossBarrier = kernel({ block: [8] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const acc = local.f32(4);
  const t = threadIdx.x;
  unrollLoad: for (let k = 0; k < 4; k++) {
    acc[k] = x[t * 4 + k];
  }
  syncThreads();
  out[t] = acc[0] + acc[1] * acc[2] - acc[3];
});

// A variable index: stays an array, and its loop stays a loop.
export const variableIndex = kernel({ block: [8] }, (out: Float32Array, x: ReadonlyFloat32Array, n: i32) => {
  const acc = local.f32(4);
  const t = threadIdx.x;
  unrollFill: for (let k = 0; k < 4; k++) {
    acc[k] = x[t * 4 + k];
  }
  out[t] = acc[n % 4];
});
`;

const f = Math.fround;

function random(length: number): Float32Array {
  return Float32Array.from({ length }, () => f(Math.random() * 4 - 2));
}

it("replaces constant-indexed private arrays by locals, keeps the others, and computes the same values", () => {
  const result = compileSource(source, { targets: ["js"] });
  expect(result.rendered).toBe("");
  const js = result.files[0]!.js!;
  const text = (name: string) => {
    const start = js.source.indexOf(`export function ${name}(`);
    return js.source.slice(start, js.source.indexOf("\n}\n", start));
  };
  // lanes: no array, four locals declared once per thread outside the rounds loop.
  expect(text("lanes")).not.toMatch(/new Float32Array/);
  expect(text("lanes").match(/let acc\d = 0;/g)).toHaveLength(4);
  expect(text("lanes").indexOf("let acc0 = 0;")).toBeLessThan(text("lanes").indexOf("for (let r = 0;"));
  expect(text("acrossBarrier")).toMatch(/acc: new Float32Array\(threads \* 4\)/);
  expect(text("acrossBarrier")).not.toMatch(/acc_slots|acc0/);
  expect(text("variableIndex")).toMatch(/acc: new Float32Array\(threads \* 4\)/);
  expect(text("variableIndex")).toMatch(/for \(let k = 0; k < 4;/);

  const functions = new Function(js.factoryBody)() as Record<string, (...args: unknown[]) => void>;
  const run = (name: string, args: unknown[]) => functions[name]!(args, [0, 0, 0], [8, 1, 1], [1, 1, 1]);

  const rounds = 5;
  const x = random(rounds * 8 * 4);
  const out = new Float32Array(8).fill(Number.NaN);
  run("lanes", [out, x, rounds]);
  for (let t = 0; t < 8; t++) {
    const acc = [0, 0, 0, 0];
    for (let r = 0; r < rounds; r++) for (let k = 0; k < 4; k++) acc[k] = f(acc[k]! + f(x[(r * 8 + t) * 4 + k]! * 0.5));
    let s = 0;
    for (let k = 0; k < 4; k++) s = f(s + f(acc[k]! * acc[k]!));
    expect(out[t]).toBe(s);
  }

  const y = random(32);
  out.fill(Number.NaN);
  run("acrossBarrier", [out, y]);
  for (let t = 0; t < 8; t++) expect(out[t]).toBe(f(f(y[t * 4]! + f(y[t * 4 + 1]! * y[t * 4 + 2]!)) - y[t * 4 + 3]!));

  out.fill(Number.NaN);
  run("variableIndex", [out, y, 6]);
  for (let t = 0; t < 8; t++) expect(out[t]).toBe(y[t * 4 + 2]);
});
