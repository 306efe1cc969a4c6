/**
 * The torch.mm harness that runs on the GPU machine (bench/torch-matmul.py, with PyTorch there): its launch
 * plan, made here from the rung table (bench/torch-matmul-plan.ts), and the Python logic that needs no GPU
 * (bench/test_torch_matmul.py, run with this machine's python3).
 */

import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makePlan, torchShapes, h100Limits, h100Multiprocessors } from "../bench/torch-matmul-plan.ts";
import { bestBuilds, formatTorchTable, torchChartSvg, type TorchReport, type TorchRow } from "../bench/torch-matmul-report.ts";
import { compileKernelLibrary, type Device, type KernelHandle } from "../runtime/index.ts";
import { KernelLibrary } from "../runtime/library.ts";
import { chooseMatmul, matmulRungs, streamBlocksFor } from "../runtime/matmul/matmul.ts";
import { repoRoot } from "./golden-cases.ts";

const python = spawnSync("python3", ["--version"]).status === 0;

describe("bench/torch-matmul.py", () => {
  it.skipIf(!python)("passes its own tests (plan checks, argument packing, counts, error verdicts, report)", () => {
    const run = spawnSync("python3", ["-m", "unittest", "-v", "bench/test_torch_matmul.py"], { cwd: repoRoot, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/Ran \d+ tests/);
    expect(run.stderr).toMatch(/\nOK/);
  });
});

describe("bench/torch-matmul-plan.ts", () => {
  // The CUDA builds of the matmul examples, with the cubin a `--cubin` build would record (the plan only names it).
  const cuda = compileKernelLibrary(["sgemm-streamk.ts", "sgemm-multistage.ts", "sgemm-warptiling.ts", "sgemm-blocktiling.ts"].map((f) => path.join(repoRoot, "examples", f)), ["cuda"]);
  const withCubins = new KernelLibrary(
    cuda.kernels.map((h): KernelHandle => {
      const outputs = { ...h.description.outputs, cuda: { ...h.description.outputs.cuda!, cubin: { file: `${h.description.name}.sm_90.cubin`, arch: "sm_90" } } };
      return { ...h, description: { ...h.description, outputs } };
    }),
  );
  const plan = makePlan([withCubins], ["kernels-cubin"], torchShapes);

  it("has the issue's six shapes, each with matmul()'s choice among its candidates", () => {
    expect(plan.shapes.map((s) => [s.m, s.n, s.k])).toEqual(torchShapes.map((s) => [...s]));
    const device = { backend: "cuda", limits: h100Limits, multiprocessors: h100Multiprocessors } as unknown as Device;
    for (const shape of plan.shapes) {
      const choice = chooseMatmul(device, withCubins, { m: shape.m, n: shape.n, k: shape.k, tuning: false });
      const planned = shape.candidates.find((c) => c.id === shape.matmul)!;
      expect(planned.function).toBe(choice.kernel.description.outputs.cuda!.function);
      expect(planned.rung).toBe(choice.rung.name);
      expect(planned.grid).toEqual([...choice.rung.grid(shape.m, shape.n, choice.constants, streamBlocksFor(device, choice.rung, choice.constants)), 1]);
    }
    // Stream-k where its 128×256 tiles fill the H100's 132 multiprocessors at least once, and at 2048³ (128 tiles)
    // where multistage would launch 256 blocks of 128×128.
    expect(plan.shapes.map((s) => s.matmul.split(" ")[0])).toEqual(["sgemm-streamk", "sgemm-streamk", "sgemm-streamk", "sgemm-multistage-guarded", "sgemm-streamk", "sgemm-register-staged"]);
  });

  it("plans only builds that take the shape as it is, with their launch configuration", () => {
    for (const shape of plan.shapes) {
      expect(shape.candidates.length).toBeGreaterThan(1);
      for (const c of shape.candidates) {
        const rung = matmulRungs.find((r) => r.name === c.rung)!;
        const multiples = rung.multiples?.(c.constants) ?? [1, 1, 1];
        expect([shape.m % multiples[0], shape.n % multiples[1], shape.k % multiples[2]], c.id).toEqual([0, 0, 0]);
        expect(c.block[0]).toBe(c.constants.THREADS ?? c.block[0]);
        if (c.streamK) {
          // One block per tile of the whole waves, then the stream blocks: 132 on the H100 for 128×256 tiles.
          const tiles = (shape.m / c.constants.BM!) * (shape.n / c.constants.BN!);
          expect(c.streamK).toEqual({ blocks: h100Multiprocessors, partials: h100Multiprocessors * c.constants.BM! * c.constants.BN!, arrivals: h100Multiprocessors });
          expect(c.grid).toEqual([tiles - (tiles % 132) + (tiles % 132 > 0 ? 132 : 0), 1, 1]);
          expect(c.params.map((p) => p.name)).toEqual(["M", "N", "K", "alpha", "A", "B", "beta", "C", "partials", "arrivals", "streamBlocks"]);
        } else {
          expect(c.grid[0] * c.constants.BN!).toBeGreaterThanOrEqual(shape.n);
          expect(c.grid[1] * c.constants.BM!).toBeGreaterThanOrEqual(shape.m);
          expect(c.params.map((p) => p.name)).toEqual(["M", "N", "K", "alpha", "A", "B", "beta", "C"]);
        }
        expect(c.cubin).toMatch(/\.sm_90\.cubin$/);
      }
    }
    // No dimension of 1023×1021×1019 is a multiple of 4: only the rungs that load element by element.
    const odd = plan.shapes.find((s) => s.m === 1023)!;
    expect(new Set(odd.candidates.map((c) => c.rung))).toEqual(new Set(["sgemm-register-staged", "sgemm-2d-guarded"]));
  });

  it("plans the 16-bit rungs with their type, three tensor maps, a persistent grid, and matmul(…, { dtype })'s choice per type", () => {
    const half = compileKernelLibrary(["hgemm-wgmma-ws.ts", "hgemm-tiled.ts"].map((f) => path.join(repoRoot, "examples", f)), ["cuda"]);
    const cubins = new KernelLibrary(
      half.kernels.map((h): KernelHandle => ({ ...h, description: { ...h.description, outputs: { ...h.description.outputs, cuda: { ...h.description.outputs.cuda!, cubin: { file: `${h.description.name}.sm_90.cubin`, arch: "sm_90" } } } } })),
    );
    const halfPlan = makePlan([withCubins, cubins], ["kernels-cubin", "half-cubin"], [[4096, 4096, 4096], [1000, 1000, 1000]]);
    // The 16-bit kernels are in the second directory: matmul()'s library (the first) has none, so no choice is named.
    expect(halfPlan.shapes.map((s) => [s.matmulBf16, s.matmulF16])).toEqual([[undefined, undefined], [undefined, undefined]]);
    const [big, odd] = halfPlan.shapes;
    const ws = big!.candidates.find((c) => c.rung === "hgemm-wgmma-ws")!;
    expect(ws.dtype).toBe("bf16");
    expect(ws.tensorMapA).toEqual({ param: "mapA", boxRows: 128, boxCols: 64 });
    expect(ws.tensorMapsBC).toEqual({ B: { param: "mapB", boxRows: 64, boxCols: 64 }, C: { param: "mapC", boxRows: 64, boxCols: 64 } });
    // 32 × 16 = 512 tiles of 128 × 256: one block a multiprocessor.
    expect(ws.grid).toEqual([h100Multiprocessors, 1, 1]);
    expect(big!.candidates.find((c) => c.rung === "hgemm-wgmma-ws-f16")!.dtype).toBe("f16");
    // 1000³ (n and k whole 16-byte rows) takes the warpgroup rung too, with partial tiles: 8 × 4 = 32 tiles.
    expect(odd!.candidates.filter((c) => c.dtype).map((c) => c.rung).sort()).toEqual(["hgemm-tiled", "hgemm-tiled-f16", "hgemm-wgmma-ws", "hgemm-wgmma-ws-f16"]);
    expect(odd!.candidates.find((c) => c.rung === "hgemm-wgmma-ws")!.grid).toEqual([32, 1, 1]);
    // With the 16-bit kernels in matmul()'s own library, its choice per type is named.
    const own = makePlan([new KernelLibrary([...withCubins.kernels, ...cubins.kernels])], ["kernels-cubin"], [[4096, 4096, 4096], [1000, 1000, 1000]]);
    expect(own.shapes.map((s) => [s.matmulBf16?.split(" ")[0], s.matmulF16?.split(" ")[0]])).toEqual([
      ["hgemm-wgmma-ws", "hgemm-wgmma-ws-f16"],
      ["hgemm-wgmma-ws", "hgemm-wgmma-ws-f16"],
    ]);
  });

  it("plans the clustered TF32 rung with A's and B's tensor maps and a persistent grid of whole clusters", () => {
    const tf32 = compileKernelLibrary([path.join(repoRoot, "examples", "sgemm-wgmma-cluster.ts")], ["cuda"]);
    const cubins = new KernelLibrary(
      tf32.kernels.map((h): KernelHandle => ({ ...h, description: { ...h.description, outputs: { ...h.description.outputs, cuda: { ...h.description.outputs.cuda!, cubin: { file: `${h.description.name}.sm_90.cubin`, arch: "sm_90" } } } } })),
    );
    const [big, small] = makePlan([new KernelLibrary([...withCubins.kernels, ...cubins.kernels])], ["kernels-cubin"], [[4096, 4096, 4096], [768, 512, 256]]).shapes;
    const cluster = big!.candidates.find((c) => c.rung === "sgemm-wgmma-cluster")!;
    // Both maps round to TF32 as they copy (the harness makes them of the TFLOAT32 type).
    expect(cluster.tensorMapA).toEqual({ param: "mapA", boxRows: 128, boxCols: 32, roundToTf32: true });
    expect(cluster.tensorMapB).toEqual({ param: "mapB", boxRows: 32, boxCols: 32, roundToTf32: true });
    // 16 × 32 = 512 tiles: one block a multiprocessor (132, a whole number of clusters of two).
    expect(cluster.grid).toEqual([h100Multiprocessors, 1, 1]);
    expect(big!.matmulTf32?.split(" ")[0]).toBe("sgemm-wgmma-cluster");
    // 768 × 512: 3 × 4 = 12 tiles, fewer than the multiprocessors: a block each.
    expect(small!.candidates.find((c) => c.rung === "sgemm-wgmma-cluster")!.grid).toEqual([12, 1, 1]);
  });

  it("refuses builds without a cubin", () => {
    expect(() => makePlan([cuda], ["kernels"], [[1000, 1000, 1000]])).toThrow(/which has no cubin in kernels/);
  });
});

describe("bench/torch-matmul-report.ts", () => {
  const row = (id: string, tflops: number, percent: number, pass = true): TorchRow => ({
    id,
    rung: id.split(" ")[0]!,
    ms: 2 / tflops,
    tflops,
    percentOfTorchFp32: percent,
    relativeError: 4e-7,
    pass,
    constants: { BM: 64, BN: 128 },
  });
  const fp32 = row("torch.mm FP32", 32.3, 100);
  const report: TorchReport = {
    date: "2026-11-23T06:00:00Z",
    device: "NVIDIA H100 80GB HBM3",
    torch: "2.11.0",
    shapes: [
      {
        m: 1000,
        n: 1000,
        k: 1000,
        torchFp32: fp32,
        torchTf32: row("torch.mm TF32", 98.6, 305),
        matmul: row("sgemm-multistage-guarded a", 32.18, 99.5),
        best: row("sgemm-multistage-guarded b", 33.33, 103.1),
        candidates: [row("sgemm-multistage-guarded b", 33.33, 103.1), row("sgemm-multistage-guarded a", 32.18, 99.5), row("sgemm-x c", 40, 124, false)],
      },
    ],
  };

  it("tables each shape against torch.mm FP32, counting the checks that passed", () => {
    const table = formatTorchTable(report).split("\n");
    expect(table).toHaveLength(3);
    expect(table[2]).toBe("| 1000×1000×1000 | 32.30 | 98.6 | 32.18 | 99.5 % | 33.33 | 103.1 % | 2 of 3 |");
    expect(bestBuilds(report)).toEqual(["1000×1000×1000: sgemm-multistage-guarded BM=64 BN=128 33.33 TFLOP/s (103.1 %)"]);
  });

  it("draws one bar per row, the longest for the fastest", () => {
    const svg = torchChartSvg(report, "title <&>");
    expect(svg).toContain("title &lt;&amp;&gt;");
    const widths = [...svg.matchAll(/<rect x="200" y="\d+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(widths).toHaveLength(3);
    expect(widths[2]).toBe(460);
    expect(widths[0]).toBeCloseTo((32.3 / 33.33) * 460, 0);
    expect(svg).toContain("33.33 TFLOP/s, 103.1 %");
  });
});
