/**
 * atomicLoad and atomicStore run on every tested backend (the CPU also with worker threads, where they are
 * `Atomics.load`/`Atomics.store` on shared buffers, and checked): the construct kernel of
 * codegen-tests/atomic-load-store against values computed here, with a fresh random scalar and poisoned outputs.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, createDevice, type Device } from "../runtime/index.ts";
import { deviceFor, testedBackends } from "./backends.ts";
import { casesRoot } from "./golden-cases.ts";

const file = path.join(casesRoot, "atomic-load-store", "kernel.ts");

async function check(device: Device, kernel: Parameters<Device["launch"]>[0]): Promise<void> {
  // A quarter-integer keeps every sum exact in f32.
  const v = Math.floor(Math.random() * 400) / 4 - 50;
  const flags = device.createBuffer(Int32Array.from([7, 123]));
  const masks = device.createBuffer(new Uint32Array(64).fill(0xdeadbeef));
  const values = device.createBuffer(new Float32Array(64).fill(Number.NaN));
  const out = device.createBuffer(new Float32Array(64).fill(Number.NaN));
  await device.launch(kernel, { grid: [1], args: [flags, masks, values, out, v] });
  // The spin loop ran until some thread stored 8; the element after it is untouched.
  expect(Array.from((await device.read(flags)) as Int32Array)).toEqual([8, 123]);
  expect(Array.from((await device.read(masks)) as Uint32Array)).toEqual(new Array(64).fill(3));
  expect(Array.from((await device.read(values)) as Float32Array)).toEqual(new Array(64).fill(v + 1));
  // values[tid] (v + 1), seen[63 − tid] (v, stored before the barrier), masks[tid] (3).
  expect(Array.from((await device.read(out)) as Float32Array)).toEqual(new Array(64).fill(v + 1 + v + 3));
}

for (const backend of testedBackends) {
  describe(`atomicLoad and atomicStore on ${backend}`, () => {
    it("store, load in a spin loop and as values, on i32, u32 and f32 buffers and a shared array", async (context) => {
      const device = await deviceFor(backend);
      if (typeof device === "string") return context.skip(device);
      const target = backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
      await check(device, compileKernelLibrary([file], [target]).get("loadStore"));
    });
  });
}

describe("atomicLoad and atomicStore on the CPU with worker threads and checked", () => {
  it.each([{ workers: 2 }, { checked: true }])("%j", async (options) => {
    const device = await createDevice({ backend: "cpu", ...options });
    await check(device, compileKernelLibrary([file], ["js"]).get("loadStore"));
  });
});
