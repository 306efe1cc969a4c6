/**
 * The CPU backend on worker threads: blocks claimed in chunks from one queue by workers and the calling thread
 * (and, with a time limit, split between two workers), a grid smaller than the pool, buffers that stay shared between launches, and
 * checked mode, which stays on the calling thread. (The whole seed
 * ladder on two workers runs in cli/demo/run-demo.test.ts.)
 */

import { afterAll, describe, expect, it } from "vitest";
import { CpuDevice } from "./cpu-device.ts";
import { blockQueue, drainQueue } from "./worker-pool.ts";
import { compileKernelLibrary } from "../kernels.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const device = new CpuDevice({ workers: 2 });
// Three threads share each launch's queue of blocks: two workers and the calling thread.
const three = new CpuDevice({ workers: 3 });
// With a time limit both shares run on workers, which can be stopped.
const limited = new CpuDevice({ workers: 2, timeLimitMs: 60_000 });
afterAll(() => {
  device.dispose();
  three.dispose();
  limited.dispose();
});

describe("the CPU backend on worker threads", () => {
  it("splits the blocks of a launch, including grids smaller than the pool, and keeps buffers shared", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-workers-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(
      file,
      `import { blockDim, blockIdx, gridDim, kernel, threadIdx, type i32 } from "tskernel";
export const stamp = kernel({ block: [4] }, (out: Int32Array, step: i32) => {
  const block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const i = block * blockDim.x + threadIdx.x;
  out[i] = out[i] * 10 + step + block;
});
`,
    );
    const kernel = compileKernelLibrary([file]).get("stamp");
    fs.rmSync(dir, { recursive: true, force: true });
    // 555 blocks: chunks of 23 (the last one short) on three threads, 34 on two.
    for (const [grid, on] of [[1, 1, 1], [3, 2, 2], [7, 1, 1], [37, 5, 3]].flatMap((g) => [device, three, limited].map((d) => [g as [number, number, number], d] as const))) {
      const blocks = grid[0] * grid[1] * grid[2];
      const out = on.createBuffer(Int32Array.from({ length: blocks * 4 }, (_, i) => i % 5));
      // Two launches on the same buffer: the second must see the first's writes.
      await on.launch(kernel, { grid: [...grid], args: [out, 1] });
      await on.launch(kernel, { grid: [...grid], args: [out, 2] });
      const got = (await on.read(out)) as Int32Array;
      const expected = Array.from({ length: blocks * 4 }, (_, i) => ((i % 5) * 10 + 1 + Math.floor(i / 4)) * 10 + 2 + Math.floor(i / 4));
      expect(Array.from(got), `grid ${grid.join("×")} on ${on.name}`).toEqual(expected);
    }
  });

  it("hands out every block of a queue exactly once, in chunks, whatever the total", () => {
    for (const [total, threads] of [[1, 2], [2, 2], [15, 2], [16, 2], [17, 2], [555, 3], [1000, 4]] as const) {
      const queue = blockQueue(total, threads);
      const runs = new Array<number>(total).fill(0);
      const chunks: number[] = [];
      drainQueue(queue, (start, end) => {
        chunks.push(end - start);
        for (let i = start; i < end; i++) runs[i]!++;
      });
      expect(runs.every((n) => n === 1), `${total} blocks on ${threads} threads`).toBe(true);
      expect(Atomics.load(queue.counter, 1)).toBe(total);
      expect(Math.max(...chunks)).toBe(Math.max(1, Math.floor(total / (threads * 8))));
      // A queue found empty stays empty: a late worker claims nothing.
      drainQueue(queue, () => expect.unreachable("a block claimed twice"));
    }
  });

  it("keeps checked mode on the calling thread, and refuses a worker count that is not a positive integer", () => {
    expect(new CpuDevice({ checked: true, workers: 4 }).workers).toBe(1);
    expect(device.name).toContain("2 threads, 1 of them workers");
    expect(limited.name).toContain("2 worker threads");
    expect(() => new CpuDevice({ workers: 0 })).toThrow("workers must be a positive integer, got 0");
    expect(() => new CpuDevice({ workers: 1.5 })).toThrow("workers must be a positive integer, got 1.5");
  });
});
