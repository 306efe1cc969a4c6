/**
 * The memory-bound examples (SAXPY, GELU, transpose, sum in two launches and in one pass, softmax and layer
 * norm with trees and with subgroup reductions, scan in three launches and in one pass, histogram; the bf16
 * layer norm, RMS norm, softmax and GELU, the int8 → bf16 dequantization and the RGBA8 blur) on every
 * tested backend that its kernels compile for,
 * each against its float64 reference with the case's stated tolerance (cli/kernels-bench/cases.ts):
 * fresh random inputs each run, outputs and scratch poisoned with NaN, shapes that leave partial chunks,
 * tiles and rows, every specialization the examples declare, and on the CPU the checked mode (out-of-bounds
 * accesses, unwritten shared reads, races, divergent barriers); the cases built on subgroups also with 4 and
 * 32 lanes (SwiftShader's size and CUDA's), checked.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileKernelLibrary, KernelLibrary, type BackendName, type Device } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { createDevice } from "../runtime/index.ts";
import { release, runChecked } from "../cli/kernels-bench/bench.ts";
import { backendUnsupported, kernelCases, resolveCases, suiteFiles, type Constants, type KernelCase, type Shape, type StepSpec } from "../cli/kernels-bench/cases.ts";
import { checkedBuildUnrunnable, deviceFor, gpuBuild, testedBackends } from "./backends.ts";
import { repoRoot } from "./golden-cases.ts";

const unavailable = new Map<BackendName, string>();
/** Per backend and case: why its checked build cannot run there (checkedBuildUnrunnable: SwiftShader's JIT limits). */
const unrunnable = new Map<string, string>();
for (const backend of testedBackends) {
  const device = await deviceFor(backend);
  if (typeof device === "string") unavailable.set(backend, device);
  else {
    for (const kernelCase of kernelCases) {
      const why = Object.values(kernelCase.kernels).map((file) => checkedBuildUnrunnable(device, file)).find((w) => w !== undefined);
      if (why) unrunnable.set(`${backend} ${kernelCase.id}`, why);
    }
  }
}

const libraries = new Map<string, KernelLibrary>();
function libraryFor(backend: BackendName): KernelLibrary {
  const target = backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
  if (!libraries.has(target)) libraries.set(target, compileKernelLibrary(suiteFiles.map((f) => path.join(repoRoot, f)), [target], gpuBuild(target)));
  return libraries.get(target)!;
}

/** Small shapes with partial chunks, tiles and rows, and the edge cases of each kernel. */
const testShapes: Record<string, readonly Shape[]> = {
  saxpy: [[4 * 100_003], [12]],
  gelu: [[4 * 25_013], [4]],
  // 45×70 and 70×45: the sector-aligned scalar kernel (sides not multiples of 4; 70 odd rows of output
  // shifted by up to 7); 68×100 and 100×36: the vector kernel with partial tiles.
  transpose: [[45, 70], [70, 45], [68, 100], [100, 36]],
  sum: [[4 * 100_003], [8]],
  // More blocks' atomics than one wave; 16 values: one block, one vector per thread at most.
  "sum-onepass": [[4 * 100_003], [16]],
  // Each row length picks another specialization: 1000 (64 threads × 4 rows), 4096, 200 (32 × 8), 8000 (8 vectors).
  softmax: [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  layernorm: [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  "softmax-subgroups": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  "layernorm-subgroups": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  scan: [[4 * 50_001], [4], [2048 * 3]],
  // 25 tiles of 8192 (the last partial), one partial tile, three whole ones.
  "scan-lookback": [[4 * 50_001], [4], [8192 * 3]],
  "scan-lookback-subgroups": [[4 * 50_001], [4], [8192 * 3]],
  // Partial vectors at the end (n mod 4 = 1, 3) and fewer values than one block's threads.
  histogram: [[4 * 100_003 + 1], [1027], [7]],
  // The bf16 row kernels: each row length picks another specialization (1000: 32 threads × 4 rows; 4096; 200:
  // one vector per thread; 8000: 256 threads), with partial blocks of rows.
  "layernorm-bf16": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  "rmsnorm-bf16": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  "softmax-bf16": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  // A partial chunk of vectors, and a single vector.
  "gelu-bf16": [[8 * 25_013], [8]],
  // Rows of one vector, and rows of many; a partial chunk.
  "dequantize-int8": [[37, 16], [29, 1040]],
  // Partial strips and blocks (67 rows, 100 pixels), a one-vector-wide image, and fewer rows than the 5 taps.
  "blur-rgba8": [[67, 100], [40, 4], [3, 520]],
  // The variants (cases-bf16.ts): the same shapes; blur-rgba8-wave's strips of 64 rows start at 2^24 pixels, so
  // its specialization is also run below, among the alternatives.
  "layernorm-bf16-shifted": [[37, 1000], [5, 4096], [19, 200], [3, 8000]],
  // 8000: 512 threads of two vectors where blocks may have 512 threads (the CPU), 256 of four on WebGPU.
  "layernorm-bf16-shifted-512": [[3, 8000], [5, 4096]],
  "gelu-bf16-one": [[8 * 25_013], [8]],
  "gelu-bf16-tanh": [[8 * 25_013], [8]],
  "dequantize-int8-prefetch": [[37, 16], [29, 1040]],
  // 8-byte vectors: rows of one vector (8 columns), and a partial chunk.
  "dequantize-int8-whole": [[37, 8], [29, 1032]],
  "blur-rgba8-wave": [[67, 100], [40, 4], [3, 520]],
};

async function expectPasses(device: Device, kernelCase: KernelCase, shape: Shape, library: KernelLibrary, prefer?: Record<string, Constants>): Promise<void> {
  const instance = kernelCase.build(shape, { library, limits: device.limits, backend: device.backend, prefer });
  const { set, check } = await runChecked(device, instance);
  for (const buffer of set.buffers.values()) release(device, buffer);
  const where = `${kernelCase.id} ${shape.join("×")} ${instance.steps.map((s) => s.kernel.description.entryName).join(", ")}`;
  expect(check.nonFinite, where).toBe(0);
  expect(check.failures, `${where}: worst ${JSON.stringify(check.worst)} (${check.tolerance})`).toBe(0);
  expect(check.pass, where).toBe(true);
}

for (const backend of testedBackends) {
  describe.skipIf(unavailable.has(backend))(`memory-bound examples on ${backend}${unavailable.has(backend) ? ` (skipped: ${unavailable.get(backend)})` : ""}`, () => {
    for (const kernelCase of unavailable.has(backend) ? [] : kernelCases.filter((c) => !backendUnsupported(c, libraryFor(backend), backend))) {
      const why = unrunnable.get(`${backend} ${kernelCase.id}`);
      it.skipIf(why)(`${kernelCase.id} matches float64 at ${testShapes[kernelCase.id]!.map((s) => s.join("×")).join(", ")}${why ? ` (skipped: ${why})` : ""}`, async () => {
        const device = (await deviceFor(backend)) as Device;
        for (const shape of testShapes[kernelCase.id]!) await expectPasses(device, kernelCase, shape, libraryFor(backend));
      });
    }
  });
}

describe("memory-bound cases on a backend their kernels leave out", () => {
  it("are the cases with a kernel whose `targets` option leaves out the backend's target, read from the compiled kernels", () => {
    const unsupported = (backend: BackendName) =>
      Object.fromEntries(kernelCases.flatMap((c) => {
        const why = backendUnsupported(c, libraryFor(backend), backend);
        return why ? [[c.id, why]] : [];
      }));
    // The look-back scans declare targets: ["cuda", "js"] (threadFence(), and blocks that wait on each other).
    expect(unsupported("webgpu")).toEqual({
      "scan-lookback": `kernel 'scanLookback' declares targets: ["cuda", "js"], so it was not built for wgsl, which the webgpu backend runs`,
      "scan-lookback-subgroups": `kernel 'scanLookbackSubgroups' declares targets: ["cuda", "js"], so it was not built for wgsl, which the webgpu backend runs`,
    });
    expect(unsupported("cpu")).toEqual({});
    // The library for WebGPU still describes the skipped kernels, with no WGSL.
    const skipped = libraryFor("webgpu").kernels.filter((k) => k.description.name === "scanLookback");
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.every((k) => k.wgsl === undefined && k.description.builtFor.length === 0)).toBe(true);
  });
});

describe("memory-bound examples: every declared specialization, and the checked CPU mode", () => {
  // The specializations the examples declare besides the defaults the cases pick on the CPU (the 64-thread
  // scanPartials with 391 tile sums: two chunks, and a count that is not a multiple of 4).
  const alternatives: [string, Shape, Record<string, Constants>][] = [
    ["saxpy", [4 * 3001], { saxpyVec4: { BLOCK: 128, ITEMS: 2 } }],
    ["gelu", [4 * 3001], { geluVec4: { BLOCK: 128, ITEMS: 2 } }],
    ["sum", [4 * 3001], { sumVec4: { BLOCK: 128, ITEMS: 2 } }],
    ["transpose", [68, 100], { transposeVec4: { TILE: 32, BLOCK_ROWS: 32, PAD: 1 } }],
    ["transpose", [131, 97], { transposeAligned: { TILE: 32, BLOCK_ROWS: 8, ALIGN: 8 } }],
    ["softmax", [9, 4096], { softmaxRows: { THREADS: 256, ROWS: 1, ITEMS: 8 } }],
    ["layernorm", [9, 5000], { layerNormRows: { THREADS: 256, ROWS: 1, ITEMS: 8 } }],
    ["scan", [4 * 50_001], { scanTileSums: { BLOCK: 64, ITEMS: 2 }, scanPartials: { BLOCK: 64, ITEMS: 4 }, scanTiles: { BLOCK: 64, ITEMS: 2 } }],
    ["scan", [4 * 70_001], { scanPartials: { BLOCK: 256, ITEMS: 16 } }],
    ["scan-lookback", [4 * 50_001], { scanLookback: { BLOCK: 64, ITEMS: 2 } }],
    ["scan-lookback-subgroups", [4 * 50_001], { scanLookbackSubgroups: { BLOCK: 128, ITEMS: 2 } }],
    ["scan-lookback-subgroups", [4 * 50_001], { scanLookbackSubgroups: { BLOCK: 256, ITEMS: 4 } }],
    ["scan-lookback-subgroups", [4 * 50_001], { scanLookbackSubgroups: { BLOCK: 128, ITEMS: 16 } }],
    ["sum-onepass", [4 * 3001], { sumVec4Subgroups: { BLOCK: 128, ITEMS: 2 } }],
    ["softmax-subgroups", [9, 4096], { softmaxVec4Subgroups: { THREADS: 256, ROWS: 1, ITEMS: 8 } }],
    ["layernorm-subgroups", [9, 5000], { layerNormSubgroups: { THREADS: 256, ROWS: 1, ITEMS: 8 } }],
    ["histogram", [4 * 3001 + 2], { histogram256Vec4: { BLOCK: 128, ITEMS: 2 } }],
    ["gelu-bf16", [8 * 3001], { geluHalf: { T: "bf16", BLOCK: 128, ITEMS: 2 } }],
    ["dequantize-int8", [41, 1024], { dequantizeRows: { T: "bf16", BLOCK: 128, ITEMS: 2 } }],
    ["blur-rgba8", [37, 300], { blurRgba8: { THREADS: 64, STRIP: 16 } }],
    ["blur-rgba8", [150, 300], { blurRgba8: { THREADS: 128, STRIP: 64 } }],
    ["dequantize-int8-prefetch", [41, 1024], { dequantizeRowsPrefetch: { T: "bf16", BLOCK: 256, ITEMS: 2 } }],
    ["dequantize-int8-whole", [41, 1024], { dequantizeRowsWhole: { T: "bf16", BLOCK: 256, ITEMS: 1 } }],
    ["layernorm-bf16-shifted", [9, 8000], { layerNormHalfShifted: { T: "bf16", THREADS: 512, ROWS: 1, ITEMS: 2 } }],
  ];

  it("layernorm-bf16-shifted-512 takes 512 threads of two vectors for 8000 columns, and 256 of four where blocks stop at 256", () => {
    const kernelCase = kernelCases.find((c) => c.id === "layernorm-bf16-shifted-512")!;
    const limits = new CpuDevice().limits;
    const entry = (maxThreadsPerBlock: number) =>
      kernelCase.build([3, 8000], { library: libraryFor("cpu"), limits: { ...limits, maxThreadsPerBlock }, backend: "cpu" }).steps[0]!.kernel.description.entryName;
    expect(entry(1024)).toBe("layerNormHalfShifted_T_bf16_THREADS_512_ROWS_1_ITEMS_2");
    expect(entry(256)).toBe("layerNormHalfShifted_T_bf16_THREADS_256_ROWS_1_ITEMS_4");
  });
  it("a pinned build (`id@NAME=VALUE+…`) runs the declared specialization it names, and says what is wrong otherwise", async () => {
    // The wave build's strips of 64 rows below its 2^24 pixels; dequantizeRows' second build (T kept from the case's).
    const [pinned] = resolveCases("blur-rgba8@STRIP=64") as KernelCase[];
    expect(pinned!.id).toBe("blur-rgba8@STRIP=64");
    const device = new CpuDevice();
    const instance = pinned!.build([150, 300], { library: libraryFor("cpu"), limits: device.limits, backend: "cpu" });
    expect(instance.steps.map((s) => s.kernel.description.entryName)).toEqual(["blurRgba8_THREADS_128_STRIP_64"]);
    await expectPasses(device, pinned!, [150, 300], libraryFor("cpu"));
    const [dequantize] = resolveCases("dequantize-int8@BLOCK=128+ITEMS=2") as KernelCase[];
    const steps = dequantize!.build([41, 1024], { library: libraryFor("cpu"), limits: device.limits, backend: "cpu" }).steps;
    expect(steps.map((s) => s.kernel.description.entryName)).toEqual(["dequantizeRows_T_bf16_BLOCK_128_ITEMS_2"]);
    expect(resolveCases("blur-rgba8@THREADS")).toBe("'blur-rgba8@THREADS': 'THREADS' is not NAME=VALUE (pins are joined with '+')");
    expect(resolveCases("blur-rgba9@THREADS=1")).toMatch(/^unknown kernel\(s\) 'blur-rgba9@THREADS=1'; the suite has saxpy, /);
    const [undeclared] = resolveCases("blur-rgba8@THREADS=32") as KernelCase[];
    expect(() => undeclared!.build([70, 1100], { library: libraryFor("cpu"), limits: device.limits, backend: "cpu" })).toThrow(/has no specialization .*"THREADS":32/);
  });

  it.each(alternatives)("%s at %j with %j", async (id, shape, prefer) => {
    await expectPasses(new CpuDevice(), kernelCases.find((c) => c.id === id)!, shape, libraryFor("cpu"), prefer);
  });

  // The scan's CPU form (COALESCE false) at settings the examples do not declare (the tuner's kind): blocks of
  // several threads, whose totals take the tree, and ITEMS that are not powers of two; normal and checked.
  it.each([
    { BLOCK: 4, ITEMS: 3 },
    { BLOCK: 1, ITEMS: 5 },
    { BLOCK: 16, ITEMS: 64 },
  ])("scan's CPU form with %j matches float64, and runs clean in checked mode", async (constants) => {
    const setting = { ...constants, COALESCE: false };
    const defines = new Map(Object.entries(setting).map(([k, v]) => [k, String(v)]));
    const compiled = compileKernelLibrary([path.join(repoRoot, "examples/scan.ts")], ["js"], { defines, kernels: new Set(["scanTileSums", "scanTiles"]), baseDir: repoRoot });
    const library = new KernelLibrary([...compiled.kernels, ...libraryFor("cpu").kernels]);
    const prefer = { scanTileSums: setting, scanTiles: setting };
    const scan = kernelCases.find((c) => c.id === "scan")!;
    for (const shape of testShapes.scan!) await expectPasses(new CpuDevice(), scan, shape, library, prefer);
    await expectPasses(new CpuDevice({ checked: true }), scan, [4 * 1001], library, prefer);
  });

  it.each(kernelCases.map((c) => [c.id, c] as const))("%s runs clean in checked mode", async (_id, kernelCase) => {
    const device = new CpuDevice({ checked: true });
    // Small shapes: checked mode is about ten times slower.
    const shape: Shape = kernelCase.dims === 1 ? (kernelCase.id.startsWith("gelu-bf16") ? [8 * 1001] : [4 * 1001]) : kernelCase.id === "transpose" ? [36, 70] : kernelCase.id.startsWith("dequantize-int8") ? [6, 1008] : [6, 1000];
    await expectPasses(device, kernelCase, shape, libraryFor("cpu"));
    if (kernelCase.id === "transpose") await expectPasses(device, kernelCase, [33, 70], libraryFor("cpu"));
  });

  // The subgroup kernels with SwiftShader's 4 lanes and CUDA's 32, checked: every row length, so each
  // specialization the case may pick (rows of 32 threads with 32 lanes: whole subgroups still).
  const subgroupCases = kernelCases.filter((c) => ["sum-onepass", "softmax-subgroups", "layernorm-subgroups", "softmax-bf16", "layernorm-bf16", "layernorm-bf16-shifted", "layernorm-bf16-shifted-512", "rmsnorm-bf16"].includes(c.id));
  for (const lanes of [4, 32]) {
    it.each(subgroupCases.map((c) => [c.id, c] as const))(`%s with ${lanes} lanes, checked`, async (_id, kernelCase) => {
      const device = await createDevice({ backend: "cpu", subgroupSize: lanes, checked: true });
      const shapes: Shape[] = kernelCase.dims === 1 ? [[4 * 2001], [16]] : [[9, 1000], [2, 4096], [17, 200]];
      for (const shape of shapes) await expectPasses(device, kernelCase, shape, libraryFor("cpu"));
    });
  }

  it("the histogram's and the one-pass sum's checks fail when values are lost or counted twice", async () => {
    const device = new CpuDevice();
    for (const id of ["histogram", "sum-onepass"]) {
      const kernelCase = kernelCases.find((c) => c.id === id)!;
      const instance = kernelCase.build([4 * 20_000], { library: libraryFor("cpu"), limits: device.limits, backend: "cpu" });
      const [clear, count] = instance.steps as [StepSpec, StepSpec];
      // The last 64 values left out (n smaller by 64), and the whole input counted twice (no clear between).
      const lost: StepSpec = { ...count, args: count.args.map((a) => ("i32" in a ? { i32: a.i32 - 64 } : a)) };
      for (const steps of [[clear, lost], [clear, count, count]]) {
        const { set, check } = await runChecked(device, { ...instance, steps });
        for (const buffer of set.buffers.values()) release(device, buffer);
        expect(check.pass, `${id}: ${steps.length} steps`).toBe(false);
      }
    }
  });

});
