/**
 * The browser entry (`tskernel/webgpu`) in Node, on Dawn's GPU object passed in as a page would pass
 * `navigator.gpu`: it fetches a build (manifest.json, then only the WGSL and line maps it names) through a
 * fetch that serves an in-memory `tskernel build` output, and runs the tiled matmul against the float64
 * reference. Also: no GPU is a BackendUnavailable, a missing file names its URL. (The page itself runs in
 * headless Chromium in tests/browser.test.ts.) Skipped without a WebGPU adapter, as the other WebGPU tests.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildManifest, compileFiles, packageRoot } from "../../compiler/index.ts";
import { deviceFor } from "../../tests/backends.ts";
import { BackendUnavailable, compareToReference, createWebGpuDevice, fetchKernelLibrary, referenceGemm, type WebGpuDevice } from "./browser.ts";

const nodeDevice = await deviceFor("webgpu");

/** `tskernel build examples/matmul-tiled.ts --target wgsl` as files in memory, by name. */
function buildInMemory(): Map<string, string> {
  const result = compileFiles([path.join(packageRoot(), "examples", "matmul-tiled.ts")], { targets: ["wgsl"], baseDir: packageRoot() });
  expect(result.ok).toBe(true);
  const [file] = result.files;
  const names = { wgsl: "matmul-tiled.wgsl", wgslMap: "matmul-tiled.wgsl.map.json" };
  const manifest = buildManifest(result.files, new Map([[file!, names]]), "test");
  return new Map([
    ["manifest.json", JSON.stringify(manifest)],
    [names.wgsl, file!.wgsl!.source],
    [names.wgslMap, JSON.stringify(file!.wgsl!.lineSources.map((s) => s ?? null))],
  ]);
}

describe.skipIf(typeof nodeDevice === "string")(`tskernel/webgpu${typeof nodeDevice === "string" ? ` (skipped: ${nodeDevice})` : ""}`, () => {
  it("fetches a build and runs the tiled matmul on a GPU passed in, matching float64", async () => {
    const files = buildInMemory();
    const fetched: string[] = [];
    const fakeFetch = (async (url: URL) => {
      fetched.push(url.href);
      const text = files.get(url.pathname.replace(/^\/app\/kernels\//, ""));
      return { ok: text !== undefined, status: text === undefined ? 404 : 200, text: async () => text } as Response;
    }) as unknown as typeof fetch;
    const library = await fetchKernelLibrary("http://localhost/app/kernels/manifest.json", { fetch: fakeFetch });
    expect(fetched.sort()).toEqual(["manifest.json", "matmul-tiled.wgsl", "matmul-tiled.wgsl.map.json"].map((f) => `http://localhost/app/kernels/${f}`));
    const kernel = library.get("matmulTiled");
    expect(kernel.wgsl?.lineSources?.some((s) => s?.startsWith("examples/matmul-tiled.ts:"))).toBe(true);
    expect(kernel.js).toBeUndefined();

    const device: WebGpuDevice = await createWebGpuDevice({ gpu: (nodeDevice as WebGpuDevice).instance });
    const n = 37;
    const A = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
    const B = Float32Array.from({ length: n * n }, () => Math.random() * 2 - 1);
    const C = device.createBuffer(new Float32Array(n * n).fill(Number.NaN));
    const tile = kernel.description.specialization.TILE as number;
    await device.launch(kernel, { grid: [Math.ceil(n / tile), Math.ceil(n / tile)], args: { C, A: device.createBuffer(A), B: device.createBuffer(B), m: n, n, k: n } });
    const errors = compareToReference(await device.read(C), referenceGemm(n, n, n, A, B));
    expect(errors.nonFinite).toBe(0);
    expect(errors.normwiseRelative).toBeLessThanOrEqual(n * 2 ** -23);
    device.free(C);
    device.dispose();
  });

  it("says which file is missing", async () => {
    const notFound = (async () => ({ ok: false, status: 404, text: async () => "" }) as Response) as unknown as typeof fetch;
    await expect(fetchKernelLibrary("http://localhost/k/manifest.json", { fetch: notFound })).rejects.toThrow("tskernel: cannot fetch http://localhost/k/manifest.json: HTTP 404");
  });
});

it("without navigator.gpu or a GPU passed in, is a BackendUnavailable saying so", async () => {
  const error = await createWebGpuDevice().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(BackendUnavailable);
  expect((error as BackendUnavailable).message).toBe(
    "tskernel: the webgpu backend is unavailable: navigator.gpu is missing: this browser has no WebGPU, or it is turned off (Chromium on Linux needs --enable-unsafe-webgpu)",
  );
});
