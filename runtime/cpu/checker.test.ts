/**
 * The checked CPU mode: each detector gets a deliberately broken kernel it must catch, with the kind, the
 * TypeScript location, the block and the thread, and the correct kernel beside it that it must pass. (The
 * whole seed ladder in checked mode runs in cli/demo/run-demo.test.ts.)
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CpuDevice } from "./cpu-device.ts";
import { KernelFault } from "./checker.ts";
import { LaunchFailure } from "../launch-ledger.ts";
import { compileKernelLibrary } from "../kernels.ts";

const header = 'import { kernel, shared, syncThreads, threadIdx, blockIdx, blockDim, type f32, type i32, type ReadonlyFloat32Array } from "tskernel";\n';

function compile(source: string, options: { unsafeSkipBarrierCheck?: boolean } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-checked-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, header + source);
  return { library: compileKernelLibrary([file], ["js"], options), file, source: header + source };
}

/** The 1-based line:column of the first occurrence of `needle` in `source`. */
function where(source: string, needle: string): string {
  const offset = source.indexOf(needle);
  expect(offset, `'${needle}' occurs in the kernel`).toBeGreaterThanOrEqual(0);
  const before = source.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1]!.length + 1}`;
}

/**
 * The KernelFault a checked launch meets. It is found while the launch runs, so it comes from the device's
 * next synchronize() (or read()), as a LaunchFailure that names the kernel and the launch, with the fault as
 * its cause. `device`: the one to synchronize, when `run` only launches.
 */
async function fault(...args: [run: () => Promise<unknown>] | [device: CpuDevice, run: () => Promise<unknown>]): Promise<KernelFault> {
  const [device, run] = args.length === 1 ? [undefined, args[0]] : args;
  try {
    await run();
    await device?.synchronize();
  } catch (error) {
    if (error instanceof LaunchFailure && error.cause instanceof KernelFault) {
      expect(error.message.startsWith(`tskernel: launch #${error.launch} of '${error.cause.kernel}' failed: ${error.cause.message.slice("tskernel: ".length)}`)).toBe(true);
      return error.cause;
    }
    throw error;
  }
  throw new Error("expected a KernelFault, but the launch completed");
}

describe("checked mode finds seeded bugs", () => {
  const device = new CpuDevice({ checked: true });

  it("an out-of-bounds global read (a naive matmul without its bounds check)", async () => {
    const { library, source } = compile(`export const mm = kernel({ block: [4, 4] }, (C: Float32Array, A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, n: i32) => {
  const row = blockIdx.y * 4 + threadIdx.y;
  const col = blockIdx.x * 4 + threadIdx.x;
  let sum: f32 = 0;
  for (let k = 0; k < n; k++) {
    sum += A[row * n + k] * B[k * n + col];
  }
  if (row < n && col < n) {
    C[row * n + col] = sum;
  }
});
`);
    const n = 6;
    const bufs = [device.createBuffer("f32", n * n), device.createBuffer(new Float32Array(n * n).fill(1)), device.createBuffer(new Float32Array(n * n).fill(1))];
    const error = await fault(device, () => device.launch(library.get("mm"), { grid: [2, 2], args: [...bufs, n] }));
    expect(error.kind).toBe("out-of-bounds");
    // Blocks run x-fastest: block (1, 0) comes first, where thread (2, 0) has col = 6 and reads B[5·6 + 6].
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "B[k * n + col]")}$`));
    expect(error.blockIdx).toEqual([1, 0, 0]);
    expect(error.threadIdx).toEqual([2, 0, 0]);
    expect(error.message).toContain("read of 'B'[36], but it has 36 elements");
  });

  it("a vector load whose start is not a multiple of 4 (CUDA would fault on the misaligned float4)", async () => {
    const { library, source } = compile(`import { load4, store4 } from "tskernel";
export const shiftCopy = kernel({ block: [4] }, (out: Float32Array, input: ReadonlyFloat32Array, shift: i32) => {
  const [a, b, c, d] = load4(input, threadIdx.x * 4 + shift);
  store4(out, threadIdx.x * 4, a, b, c, d);
});
`);
    const input = device.createBuffer(Float32Array.from({ length: 20 }, () => Math.random()));
    const out = device.createBuffer(new Float32Array(16).fill(Number.NaN));
    // Aligned, it copies; shifted by 2, the first thread already starts off a multiple of 4.
    await device.launch(library.get("shiftCopy"), { grid: [1], args: [out, input, 4] });
    const expected = (await device.read(input)).slice(4, 20);
    expect(Array.from(await device.read(out))).toEqual(Array.from(expected));
    const error = await fault(device, () => device.launch(library.get("shiftCopy"), { grid: [1], args: [out, input, 2] }));
    expect(error.kind).toBe("misaligned-vector-access");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "[a, b, c, d] = load4")}$`));
    expect(error.threadIdx).toEqual([0, 0, 0]);
    expect(error.message).toContain("a vector access to 'input' starts at index 2, which is not a multiple of 4");
  });

  it("a vector store whose start is not a multiple of 4", async () => {
    const { library, source } = compile(`import { store4 } from "tskernel";
export const fill4 = kernel({ block: [2] }, (out: Float32Array, start: i32) => {
  store4(out, start + threadIdx.x * 4, 1, 2, 3, 4);
});
`);
    const out = device.createBuffer(new Float32Array(12).fill(Number.NaN));
    const error = await fault(device, () => device.launch(library.get("fill4"), { grid: [1], args: [out, 1] }));
    expect(error.kind).toBe("misaligned-vector-access");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "store4(out")}$`));
    expect(error.message).toContain("starts at index 1");
  });

  it("a read of a copyAsync4 destination before the copying thread waited for it (CUDA would read stale data)", async () => {
    const body = (order: string) => `import { commitAsync, copyAsync4, waitAsync } from "tskernel";
export const neighbour = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyFloat32Array) => {
  const tile = shared.f32(128);
  copyAsync4(tile, threadIdx.x * 4, input, threadIdx.x * 4);
  commitAsync();
${order}
});
`;
    const early = compile(body(`  syncThreads();
  out[threadIdx.x] = tile[((threadIdx.x + 1) % 32) * 4];
  waitAsync(0);`));
    const input = Float32Array.from({ length: 128 }, () => Math.random());
    const out = device.createBuffer(new Float32Array(32).fill(Number.NaN));
    const error = await fault(device, () => device.launch(early.library.get("neighbour"), { grid: [1], args: [out, device.createBuffer(input)] }));
    expect(error.kind).toBe("async-copy-not-waited");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(early.source, "tile[((threadIdx.x + 1)")}$`));
    expect(error.threadIdx).toEqual([0, 0, 0]);
    expect(error.message).toContain("read of shared 'tile'[4], which an asynchronous copy (copyAsync4, 8 or 16) of thread (1, 0, 0) has not been waited for");

    // Waiting, then a barrier, before the read: no fault, and the neighbour's values arrive.
    const right = compile(body(`  waitAsync(0);
  syncThreads();
  out[threadIdx.x] = tile[((threadIdx.x + 1) % 32) * 4];`));
    await device.launch(right.library.get("neighbour"), { grid: [1], args: [out, device.createBuffer(input)] });
    expect(Array.from(await device.read(out))).toEqual(Array.from({ length: 32 }, (_, t) => input[((t + 1) % 32) * 4]!));
  });

  it("the same for copyAsync8: each of the copy's eight bf16 elements counts as written only once waited for", async () => {
    const { library, source } = compile(`import { commitAsync, copyAsync8, waitAsync, f32 as widen, type ReadonlyBFloat16Array } from "tskernel";
export const neighbour = kernel({ block: [32] }, (out: Float32Array, input: ReadonlyBFloat16Array) => {
  const tile = shared.bf16(256);
  copyAsync8(tile, threadIdx.x * 8, input, threadIdx.x * 8);
  commitAsync();
  syncThreads();
  out[threadIdx.x] = widen(tile[((threadIdx.x + 1) % 32) * 8 + 7]);
  waitAsync(0);
});
`);
    const out = device.createBuffer(new Float32Array(32).fill(Number.NaN));
    const input = device.createBuffer("bf16", Uint16Array.from({ length: 256 }, (_, i) => 0x3f80 + (i % 64)));
    const error = await fault(device, () => device.launch(library.get("neighbour"), { grid: [1], args: [out, input] }));
    expect(error.kind).toBe("async-copy-not-waited");
    expect(error.location).toMatch(new RegExp(`kernel\\.ts:${where(source, "tile[((threadIdx.x + 1) % 32) * 8")}$`));
    expect(error.message).toContain("read of shared 'tile'[15], which an asynchronous copy (copyAsync4, 8 or 16) of thread (1, 0, 0) has not been waited for");
  });

  it("an out-of-bounds global write", async () => {
    const { library, source } = compile(`export const fill = kernel({ block: [8] }, (out: Float32Array) => {
  out[blockIdx.x * 8 + threadIdx.x] = 1;
});
`);
    const out = device.createBuffer("f32", 12);
    const error = await fault(device, () => device.launch(library.get("fill"), { grid: [2], args: [out] }));
    expect(error.kind).toBe("out-of-bounds");
    expect(error.location).toMatch(new RegExp(`:${where(source, "out[blockIdx.x * 8")}$`));
    expect(error.threadIdx).toEqual([4, 0, 0]);
  });

  it("an out-of-bounds shared access", async () => {
    const { library, source } = compile(`export const shift = kernel({ block: [16] }, (out: Float32Array) => {
  const tile = shared.f32(16);
  tile[threadIdx.x + 1] = 1;
  syncThreads();
  out[threadIdx.x] = tile[threadIdx.x];
});
`);
    const error = await fault(device, () => device.launch(library.get("shift"), { grid: [1], args: [device.createBuffer("f32", 16)] }));
    expect(error.kind).toBe("out-of-bounds");
    expect(error.location).toMatch(new RegExp(`:${where(source, "tile[threadIdx.x + 1]")}$`));
    expect(error.threadIdx).toEqual([15, 0, 0]);
    expect(error.message).toContain("write to shared 'tile'[16], but it is [16]");
  });

  it("a read of shared memory no thread wrote", async () => {
    const { library, source } = compile(`export const half = kernel({ block: [16] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const tile = shared.f32(16);
  if (threadIdx.x < 8) {
    tile[threadIdx.x] = x[threadIdx.x];
  }
  syncThreads();
  out[threadIdx.x] = tile[15 - threadIdx.x];
});
`);
    const error = await fault(device, () => device.launch(library.get("half"), { grid: [1], args: [device.createBuffer("f32", 16), device.createBuffer("f32", 16)] }));
    expect(error.kind).toBe("uninitialized-shared-read");
    expect(error.location).toMatch(new RegExp(`:${where(source, "tile[15 - threadIdx.x]")}$`));
    expect(error.threadIdx).toEqual([0, 0, 0]);
    expect(error.message).toContain("shared 'tile'[15]");
  });

  it("a race: reading a neighbour's element without a barrier", async () => {
    const { library, source } = compile(`export const neighbour = kernel({ block: [16] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const tile = shared.f32(16);
  tile[threadIdx.x] = x[threadIdx.x];
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 16];
});
`);
    const error = await fault(device, () => device.launch(library.get("neighbour"), { grid: [1], args: [device.createBuffer("f32", 16), device.createBuffer("f32", 16)] }));
    // Thread 0 reads element 1 before thread 1 wrote it (first), or after without a barrier: either is a bug.
    expect(["uninitialized-shared-read", "shared-race"]).toContain(error.kind);
    expect(error.location).toMatch(new RegExp(`:${where(source, "tile[(threadIdx.x + 1) % 16]")}$`));
  });

  it("a race: a tree reduction missing the barrier inside its loop", async () => {
    const { library, source } = compile(`export const sum = kernel({ block: [16] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const cache = shared.f32(16);
  cache[threadIdx.x] = x[threadIdx.x];
  syncThreads();
  for (let s = 8; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      cache[threadIdx.x] += cache[threadIdx.x + s];
    }
  }
  if (threadIdx.x === 0) {
    out[0] = cache[0];
  }
});
`);
    const error = await fault(device, () => device.launch(library.get("sum"), { grid: [1], args: [device.createBuffer("f32", 1), device.createBuffer("f32", 16)] }));
    expect(error.kind).toBe("shared-race");
    expect(error.location).toMatch(new RegExp(`:${where(source, "cache[threadIdx.x] += ")}$`));
  });

  it("a race: every thread writing one shared element", async () => {
    const { library } = compile(`export const clash = kernel({ block: [4] }, (out: Float32Array) => {
  const slot = shared.f32(1);
  slot[0] = 1;
  syncThreads();
  out[threadIdx.x] = slot[0];
});
`);
    const error = await fault(device, () => device.launch(library.get("clash"), { grid: [1], args: [device.createBuffer("f32", 4)] }));
    expect(error.kind).toBe("shared-race");
    expect(error.threadIdx).toEqual([1, 0, 0]);
    expect(error.message).toContain("also written by thread (0, 0, 0)");
  });

  it("a barrier not reached by all threads (a kernel that got past the compiler's check)", async () => {
    const { library, source } = compile(
      `export const split = kernel({ block: [8] }, (out: Float32Array) => {
  const tile = shared.f32(8);
  if (threadIdx.x < 4) {
    tile[threadIdx.x] = 1;
    syncThreads();
  }
  out[threadIdx.x] = 1;
});
`,
      { unsafeSkipBarrierCheck: true },
    );
    const error = await fault(device, () => device.launch(library.get("split"), { grid: [1], args: [device.createBuffer("f32", 8)] }));
    expect(error.kind).toBe("barrier-divergence");
    expect(error.location).toMatch(new RegExp(`:${where(source, "threadIdx.x < 4")}$`));
    expect(error.threadIdx).toEqual([4, 0, 0]);
  });
});

describe("checked mode passes correct kernels", () => {
  it("the correct versions of the broken kernels above", async () => {
    const device = new CpuDevice({ checked: true });
    const { library } = compile(`export const sum = kernel({ block: [16] }, (out: Float32Array, x: ReadonlyFloat32Array) => {
  const cache = shared.f32(16);
  cache[threadIdx.x] = x[threadIdx.x];
  syncThreads();
  for (let s = 8; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      cache[threadIdx.x] += cache[threadIdx.x + s];
    }
    syncThreads();
  }
  if (threadIdx.x === 0) {
    out[0] = cache[0];
  }
});
`);
    const x = Float32Array.from({ length: 16 }, () => Math.random());
    const out = device.createBuffer(new Float32Array(1).fill(Number.NaN));
    await device.launch(library.get("sum"), { grid: [1], args: [out, device.createBuffer(x)] });
    const [total] = (await device.read(out)) as Float32Array;
    expect(Math.abs(total! - x.reduce((a, b) => a + b, 0))).toBeLessThan(1e-5);
  });
});
