/**
 * The page: runs SAXPY and a tiled matmul, both compiled to WGSL at build time by the tskernel bundler plugin
 * (the imports of `*.kernel.ts` below), on the browser runtime `tskernel/webgpu`, and checks each result
 * against a float64 JavaScript reference on fresh random inputs, with the outputs poisoned (NaN) first.
 *
 * For tests: document.body.dataset.status ends as "pass", "fail" or "error"; window.tskernelResults holds
 * one row per kernel, window.tskernelError the error's text.
 */

import { createWebGpuDevice, launcher, kernelHandle, type DeviceBuffer } from "tskernel/webgpu";
import { matmul } from "./matmul.kernel.ts";
import { saxpy } from "./saxpy.kernel.ts";

interface Row {
  kernel: string;
  size: string;
  pass: boolean;
  maxError: number;
  tolerance: number;
  wgslBytes: number;
}

const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

function show(row: Row): void {
  const tr = document.createElement("tr");
  for (const text of [row.kernel, row.size, row.pass ? "pass" : "FAIL", row.maxError.toExponential(2)]) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.append(td);
  }
  document.querySelector("#results tbody")!.append(tr);
}

async function main(): Promise<Row[]> {
  const device = await createWebGpuDevice();
  const rows: Row[] = [];
  const read = async (buffer: DeviceBuffer) => (await device.read(buffer)) as Float32Array;

  // SAXPY: y = a·x + y; the launcher's argument types come from the kernel's signature (n, a, x, y).
  {
    const n = 100_003; // not a multiple of the block: the last block's guard is exercised
    const a = Math.fround(Math.random() * 4 - 2);
    const x = random(n);
    const y0 = random(n);
    const xs = device.createBuffer(x);
    const ys = device.createBuffer(new Float32Array(n).fill(Number.NaN));
    await device.write(ys, y0);
    const run = launcher(device, saxpy);
    await run({ grid: Math.ceil(n / 256), args: [n, a, xs, ys] });
    const y = await read(ys);
    let maxError = 0;
    for (let i = 0; i < n; i++) {
      const expected = a * x[i]! + y0[i]!;
      const error = Math.abs(y[i]! - expected) / Math.max(1, Math.abs(expected));
      maxError = Number.isFinite(y[i]!) ? Math.max(maxError, error) : Number.POSITIVE_INFINITY;
    }
    const tolerance = 2 ** -22;
    rows.push({ kernel: "saxpy", size: `n = ${n}`, pass: maxError <= tolerance, maxError, tolerance, wgslBytes: run.handle.wgsl!.source.length });
  }

  // Tiled matmul at sizes that are not multiples of the tile, with each specialization the plugin built.
  for (const TILE of [16, 8]) {
    const [m, k, n] = [67, 45, 53];
    const A = random(m * k);
    const B = random(k * n);
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    const run = launcher(device, matmul, { TILE });
    if (kernelHandle(matmul, { TILE }).description.block?.[0] !== TILE) throw new Error(`matmul TILE=${TILE}: wrong specialization`);
    await run({ grid: [Math.ceil(n / TILE), Math.ceil(m / TILE)], args: [C, device.createBuffer(A), device.createBuffer(B), m, n, k] });
    const got = await read(C);
    let maxError = 0;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        let magnitude = 0;
        for (let p = 0; p < k; p++) {
          sum += A[i * k + p]! * B[p * n + j]!;
          magnitude += Math.abs(A[i * k + p]! * B[p * n + j]!);
        }
        const value = got[i * n + j]!;
        const error = Math.abs(value - sum) / Math.max(magnitude, Number.MIN_VALUE);
        maxError = Number.isFinite(value) ? Math.max(maxError, error) : Number.POSITIVE_INFINITY;
      }
    }
    const tolerance = k * 2 ** -23;
    rows.push({ kernel: `matmul (TILE ${TILE})`, size: `${m}×${k} · ${k}×${n}`, pass: maxError <= tolerance, maxError, tolerance, wgslBytes: run.handle.wgsl!.source.length });
  }
  device.dispose();
  return rows;
}

main().then(
  (rows) => {
    rows.forEach(show);
    (window as unknown as { tskernelResults: Row[] }).tskernelResults = rows;
    const pass = rows.every((row) => row.pass);
    document.querySelector("#status")!.textContent = pass ? "all kernels match the float64 reference" : "a kernel does not match the reference";
    document.body.dataset.status = pass ? "pass" : "fail";
  },
  (error: unknown) => {
    const text = error instanceof Error ? error.message : String(error);
    (window as unknown as { tskernelError: string }).tskernelError = text;
    document.querySelector("#status")!.textContent = `error: ${text}`;
    document.body.dataset.status = "error";
  },
);
