/**
 * Atomics run on every tested backend, and on the CPU also with worker threads (where they are `Atomics` on
 * shared buffers) and in checked mode: the construct kernels of codegen-tests/atomics against results computed
 * here exactly, with fresh random inputs and poisoned outputs. Results that depend on the order in which
 * threads got to an element (old values, exchanges) are checked as multisets: every order is allowed.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "atomics", "kernel.ts");

const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b);
const randomInts = (length: number, low: number, high: number) => Int32Array.from({ length }, () => low + Math.floor(Math.random() * (high - low + 1)));

async function checkGlobalAtomics(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  const n = 64 * 7 - 13;
  const keys = randomInts(n, -1000, 1000);
  const countsInit = randomInts(23, -50, 50);
  countsInit[17] = 5000;
  countsInit[18] = -5000;
  countsInit[20] = -1;
  countsInit[21] = 0;
  const bitsInit = Uint32Array.from({ length: 3 }, () => Math.floor(Math.random() * 2 ** 32));
  const sumsInit = Float32Array.from([Math.floor(Math.random() * 100) / 4, -3.25]);
  const counts = device.createBuffer(countsInit);
  const bits = device.createBuffer(bitsInit);
  const sums = device.createBuffer(sumsInit);
  const olds = device.createBuffer(new Int32Array(3 * n).fill(-123456789));
  const halves = device.createBuffer(new Float32Array(2 * n).fill(Number.NaN));
  await device.launch(kernel, { grid: [7], args: [counts, bits, sums, olds, halves, device.createBuffer(keys), n] });
  const c = (await device.read(counts)) as Int32Array;
  const b = (await device.read(bits)) as Uint32Array;
  const s = (await device.read(sums)) as Float32Array;
  const o = (await device.read(olds)) as Int32Array;
  const h = (await device.read(halves)) as Float32Array;

  const histogram = Array.from(countsInit.slice(0, 16));
  for (const key of keys) histogram[key & 15]!++;
  expect(Array.from(c.slice(0, 16))).toEqual(histogram);
  // atomicSub: the final count, and each thread saw a different step of the way down.
  expect(c[16]).toBe(countsInit[16]! - n);
  expect(sorted(o.slice(0, n))).toEqual(sorted(Array.from({ length: n }, (_, k) => countsInit[16]! - n + 1 + k)));
  expect(c[17]).toBe(Math.min(5000, ...keys));
  expect(c[18]).toBe(Math.max(-5000, ...keys));
  let cleared = bitsInit[0]!;
  let set = bitsInit[1]!;
  let flipped = bitsInit[2]!;
  for (const key of keys) {
    cleared = (cleared & ~(1 << (key & 31))) >>> 0;
    set = (set | (1 << (key & 31))) >>> 0;
    flipped = (flipped ^ key) >>> 0;
  }
  expect(Array.from(b)).toEqual([cleared, set, flipped]);
  // atomicExchange: the old values and the final value are the initial value and every key, once each.
  expect(sorted([...o.slice(n, 2 * n), c[19]!])).toEqual(sorted([countsInit[19]!, ...keys]));
  // atomicCompareExchange from -1: exactly one thread won, and its index is there.
  expect(c[21]).toBe(1);
  expect(c[20]).toBeGreaterThanOrEqual(0);
  expect(c[20]).toBeLessThan(n);
  // atomicAdd's old value used in an expression: every step of the way up, plus one.
  expect(c[22]).toBe(countsInit[22]! + 2 * n);
  expect(sorted(o.slice(2 * n))).toEqual(sorted(Array.from({ length: n }, (_, k) => countsInit[22]! + 2 * k + 1)));
  // f32 atomicAdd of 0.5 is exact here: the sum and every partial sum.
  expect(s[0]).toBe(sumsInit[0]! + n / 2);
  expect(sorted(h.slice(0, n))).toEqual(sorted(Array.from({ length: n }, (_, k) => sumsInit[0]! + k / 2)));
  expect(sorted([...h.slice(n), s[1]!])).toEqual(sorted([sumsInit[1]!, ...Array.from({ length: n }, (_, k) => k)]));
}

async function checkSharedAtomics(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  const blocks = 5;
  const values = randomInts(blocks * 64, -300, 300);
  const sumsInit = Float32Array.from({ length: 5 }, () => Math.floor(Math.random() * 40) / 4);
  const bins = device.createBuffer(new Uint32Array(blocks * 16).fill(0xdeadbeef));
  const extremes = device.createBuffer(new Int32Array(blocks * 17).fill(-7777777));
  const order = device.createBuffer(new Int32Array(blocks * 64).fill(-1));
  const sums = device.createBuffer(sumsInit);
  await device.launch(kernel, { grid: [blocks], args: [bins, extremes, order, sums, device.createBuffer(values)] });
  const gotBins = (await device.read(bins)) as Uint32Array;
  const gotExtremes = (await device.read(extremes)) as Int32Array;
  const gotOrder = (await device.read(order)) as Int32Array;
  const gotSums = (await device.read(sums)) as Float32Array;
  for (let block = 0; block < blocks; block++) {
    const mine = values.slice(block * 64, block * 64 + 64);
    const histogram = new Array<number>(16).fill(0);
    const max = new Array<number>(8).fill(-1000000);
    const min = new Array<number>(8).fill(1000000);
    for (const v of mine) {
      histogram[v & 15]!++;
      max[v & 7] = Math.max(max[v & 7]!, v);
      min[v & 7] = Math.min(min[v & 7]!, v);
    }
    expect(Array.from(gotBins.slice(block * 16, block * 16 + 16)), `block ${block} bins`).toEqual(histogram);
    expect(Array.from(gotExtremes.slice(block * 17, block * 17 + 16)), `block ${block} extremes`).toEqual([...max, ...min]);
    // The compare-exchange winner is some thread of the block; the slots handed out are a permutation.
    expect(gotExtremes[block * 17 + 16]).toBeGreaterThanOrEqual(0);
    expect(gotExtremes[block * 17 + 16]).toBeLessThan(64);
    expect(sorted(gotOrder.slice(block * 64, block * 64 + 64)), `block ${block} slots`).toEqual(Array.from({ length: 64 }, (_, k) => k));
  }
  // Each block adds 16 · 0.25 to sums[0..3], and exactly one thread per block adds 1 to sums[4].
  expect(Array.from(gotSums)).toEqual([...Array.from(sumsInit.slice(0, 4), (v) => v + 4 * blocks), sumsInit[4]! + blocks]);
}

async function checkTicketLoops(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  const blocks = 3;
  const n = 50 + Math.floor(Math.random() * 200);
  const queue = device.createBuffer(Int32Array.of(0, 0));
  const taken = device.createBuffer(Int32Array.of(0, 0, 0));
  await device.launch(kernel, { grid: [blocks], args: [queue, taken, n] });
  const [whileTickets, forTickets] = (await device.read(queue)) as Int32Array;
  const [whileTaken, forTaken, oddSteps] = (await device.read(taken)) as Int32Array;
  // Every thread took one ticket too many in each loop (the one that ended it).
  expect([whileTickets, forTickets]).toEqual([n + blocks * 32, n + blocks * 32]);
  expect([whileTaken, forTaken]).toEqual([n, n]);
  // Each thread counted its odd-numbered steps only; they add up to between a third and half of n.
  expect(oddSteps).toBeLessThanOrEqual(n / 2);
  expect(oddSteps).toBeGreaterThanOrEqual(0);
}

const cpuVariants: { name: string; device: () => Promise<Device> }[] = [
  { name: "cpu with 2 worker threads", device: () => createDevice({ backend: "cpu", workers: 2 }) },
  { name: "cpu, checked", device: () => createDevice({ backend: "cpu", checked: true }) },
];

for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  describe.skipIf(typeof device === "string")(`atomics on ${backend}${typeof device === "string" ? ` (skipped: ${device})` : ""}`, () => {
    const gpu = device as Device;
    const library = compileKernelLibrary([file], [backend === "cpu" ? "js" : "wgsl"]);
    it("every atomic on global i32, u32 and f32 buffers, across blocks", () => checkGlobalAtomics(gpu, library.get("globalAtomics")));
    it("atomics on shared arrays (1-D, rows of 2-D), with their old values", () => checkSharedAtomics(gpu, library.get("sharedAtomics")));
    it("atomics in loop conditions run before each test", () => checkTicketLoops(gpu, library.get("ticketLoops")));
  });
}

describe("atomics on the CPU's other modes", () => {
  const library = compileKernelLibrary([file], ["js"]);
  for (const variant of cpuVariants) {
    it(`${variant.name}: global and shared atomics`, async () => {
      const device = await variant.device();
      try {
        // Several launches, so that the workers' blocks overlap in time more than once.
        for (let run = 0; run < 3; run++) {
          await checkGlobalAtomics(device, library.get("globalAtomics"));
          await checkSharedAtomics(device, library.get("sharedAtomics"));
          await checkTicketLoops(device, library.get("ticketLoops"));
        }
      } finally {
        device.dispose();
      }
    });
  }
});
