/**
 * `tskernel report`: the occupancy arithmetic against cases worked by hand from NVIDIA's occupancy rules,
 * ptxas's verbose lines read back, the WebGPU limits a kernel needs, and the whole command on the examples:
 * its registers and spills against an independent reading of nvcc's output (tests/tools/nvcc.ts), its shared
 * memory against the manifest's, its estimate against the one worked by hand for the tiled matmul, and the
 * report without nvcc (the CUDA part says why it is missing; the rest is there).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileFiles } from "../../compiler/index.ts";
import { repoRoot } from "../../tests/golden-cases.ts";
import { compileCuda, nvccAvailable } from "../../tests/tools/nvcc.ts";
import { runCli } from "../main.ts";
import { bestBlock, gpuArchitecture, largestBlock, occupancy } from "./gpus.ts";
import { parsePtxasInfo } from "./ptxas.ts";
import type { Report } from "./report.ts";
import { webgpuFit } from "./webgpu-limits.ts";

const h100 = gpuArchitecture("sm_90")!;
const a10 = gpuArchitecture("sm_86")!;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe("occupancy", () => {
  it("is bounded by warps, registers, shared memory and blocks, as the occupancy calculator counts them", () => {
    // 256 threads of 32 registers: 8 warps of 1024 registers; 64 warps fit either way: 8 blocks, all 64 warps.
    expect(occupancy(h100, { registers: 32, staticSharedBytes: 0, dynamicSharedBytes: 0 }, 256)).toEqual({ threads: 256, blocksPerSM: 8, warpsPerSM: 64, occupancy: 1, limitedBy: ["warps", "registers"] });
    // 64 registers: 2048 per warp, 32 warps' worth of registers, 4 blocks of 8 warps: half the SM.
    expect(occupancy(h100, { registers: 64, staticSharedBytes: 0, dynamicSharedBytes: 0 }, 256)).toMatchObject({ blocksPerSM: 4, occupancy: 0.5, limitedBy: ["registers"] });
    // 48 KiB of shared memory plus the 1 KiB reserved per block: 228 KiB hold 4 blocks.
    expect(occupancy(h100, { registers: 16, staticSharedBytes: 48 * 1024, dynamicSharedBytes: 0 }, 128)).toMatchObject({ blocksPerSM: 4, warpsPerSM: 16, occupancy: 0.25, limitedBy: ["shared memory"] });
    // One-warp blocks: 32 blocks at most on sm_90, 16 on sm_86 (of 48 warps).
    expect(occupancy(h100, { registers: 8, staticSharedBytes: 0, dynamicSharedBytes: 0 }, 32)).toMatchObject({ blocksPerSM: 32, occupancy: 0.5, limitedBy: ["blocks"] });
    expect(occupancy(a10, { registers: 8, staticSharedBytes: 0, dynamicSharedBytes: 0 }, 32)).toMatchObject({ blocksPerSM: 16, occupancy: 16 / 48 });
    // More shared memory than a block may have: it does not run.
    expect(occupancy(a10, { registers: 8, staticSharedBytes: 0, dynamicSharedBytes: 100 * 1024 }, 128).blocksPerSM).toBe(0);
  });

  it("gives the largest block a function's registers allow, and the best block for one chosen at launch", () => {
    // 255 registers: 8192 per warp, 8 warps in the 64 Ki registers a block may have.
    expect(largestBlock(h100, 255)).toBe(256);
    // 66 registers: 2304 per warp (66 · 32 rounded up to 256), 28 warps.
    expect(largestBlock(h100, 66)).toBe(896);
    expect(largestBlock(h100, 32)).toBe(1024);
    // 40 registers (1280 per warp, 51 warps' worth): 1024 threads fit once (32 warps, 50%); 544 threads
    // (17 warps) three times (51 warps, 80%), the most any block size reaches.
    const best = bestBlock(h100, { registers: 40, staticSharedBytes: 0, dynamicSharedBytes: 0 });
    expect(best).toMatchObject({ threads: 544, blocksPerSM: 3, warpsPerSM: 51 });
  });
});

describe("ptxas's report", () => {
  it("reads each entry function's registers, barriers, spills, stack and static shared memory", () => {
    const text = [
      "ptxas info    : 0 bytes gmem",
      "ptxas info    : Compiling entry function 'matmulTiled_TILE_16' for 'sm_90'",
      "ptxas info    : Function properties for matmulTiled_TILE_16",
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
      "ptxas info    : Used 32 registers, used 1 barriers, 2048 bytes smem",
      "ptxas info    : Compile time = 6.002 ms",
      "ptxas info    : Compiling entry function 'big' for 'sm_90a'",
      "ptxas info    : Function properties for big",
      "    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads",
      "ptxas info    : Used 255 registers",
    ].join("\n");
    expect([...parsePtxasInfo(text).values()]).toEqual([
      { name: "matmulTiled_TILE_16", arch: "sm_90", registers: 32, barriers: 1, stackFrameBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0, staticSharedBytes: 2048 },
      { name: "big", arch: "sm_90a", registers: 255, barriers: 0, stackFrameBytes: 24, spillStoreBytes: 16, spillLoadBytes: 12, staticSharedBytes: 0 },
    ]);
  });
});

describe("WebGPU's default limits", () => {
  it("names each limit a kernel passes, with the value it needs, and the subgroups feature", () => {
    const kernel = { params: [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ name: `b${i}`, kind: "buffer" })), sharedBytes: 20480, block: [512, 1, 1], subgroups: true } as unknown as Parameters<typeof webgpuFit>[0];
    expect(webgpuFit(kernel)).toEqual({
      threads: 512,
      workgroupStorageBytes: 20480,
      storageBuffers: 9,
      needs: [
        { limit: "maxComputeWorkgroupStorageSize", value: 20480, default: 16384 },
        { limit: "maxComputeInvocationsPerWorkgroup", value: 512, default: 256 },
        { limit: "maxComputeWorkgroupSizeX", value: 512, default: 256 },
        { limit: "maxStorageBuffersPerShaderStage", value: 9, default: 8 },
      ],
      features: ["subgroups"],
    });
  });
});

const examples = ["matmul-tiled.ts", "sgemm-warptiling.ts", "sgemm-wgmma.ts", "scan.ts"].map((f) => path.join(repoRoot, "examples", f));

describe("tskernel report", () => {
  it.skipIf(!nvccAvailable())(`reports ptxas's registers and spills for every CUDA kernel, and the manifest's shared memory${nvccAvailable() ? "" : " (skipped: no nvcc)"}`, async () => {
    const result = await cli("report", ...examples, "--json");
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.gpu).toBe("sm_90");
    expect("source" in report.cudaFigures && report.cudaFigures.source).toMatch(/^ptxas of nvcc release \d+\.\d+/);
    // The same files compiled by this test's own reading of nvcc (tests/tools/nvcc.ts).
    const compiled = compileFiles(examples, { targets: ["cuda"], baseDir: process.cwd() });
    const independent = new Map<string, { registers: number; spills: number }>();
    for (const file of compiled.files) {
      const arch = file.cuda!.source.includes("wgmma") ? "sm_90a" : "sm_90";
      const run = compileCuda(file.cuda!.source, { arch });
      expect(run.ok, run.errors).toBe(true);
      for (const fn of run.functions) independent.set(fn.name, { registers: fn.registers, spills: fn.spillStoresBytes });
    }
    const cudaKernels = report.kernels.filter((k) => k.builtFor.includes("cuda"));
    expect(cudaKernels.length).toBeGreaterThan(10);
    for (const kernel of cudaKernels) {
      const cuda = kernel.cuda!;
      expect(cuda.from).toBe("ptxas");
      expect({ registers: cuda.registers, spills: cuda.spillStoreBytes }, kernel.entryName).toEqual(independent.get(kernel.entryName));
      // ptxas's static shared memory is what the compiler laid out, unless the arrays went dynamic (> 48 KiB).
      const manifest = compiled.files.flatMap((f) => f.specializations).find((s) => s.entryName === kernel.entryName)!;
      expect(cuda.staticSharedBytes + cuda.dynamicSharedBytes, kernel.entryName).toBe(manifest.facts.sharedBytes);
      expect(cuda.largestBlock).toBe(largestBlock(h100, cuda.registers));
      if (kernel.block) expect(cuda.occupancy.threads).toBe(kernel.block[0] * kernel.block[1] * kernel.block[2]);
      expect(cuda.occupancy.blocksPerSM, kernel.entryName).toBeGreaterThan(0);
    }
    const tiled = report.kernels.find((k) => k.entryName === "matmulTiled_TILE_16")!;
    expect(tiled.webgpu).toEqual({ threads: 256, workgroupStorageBytes: 2048, storageBuffers: 3, needs: [], features: [] });
    const tileLoop = fs.readFileSync(examples[0]!, "utf8").split("\n").findIndex((line) => line.includes("for (let t = 0; t < k; t += TILE)")) + 1;
    expect(tiled.estimate).toMatchObject({ globalBytes: `8·L${tileLoop} + 4`, flops: `32·L${tileLoop}`, flopsPerByte: 4, loops: [{ name: `L${tileLoop}`, file: path.relative(process.cwd(), examples[0]!), line: tileLoop }] });
    // The wgmma kernels are for CUDA alone: no WebGPU part.
    expect(report.kernels.filter((k) => k.name === "sgemmWgmma").map((k) => k.webgpu)).toEqual([undefined, undefined]);
  });

  it("prints tables that fit the terminal, and says why the CUDA figures are missing where nvcc cannot run", async () => {
    const saved = process.env.NVCC;
    try {
      process.env.NVCC = path.join(os.tmpdir(), "no-such-nvcc");
      let stdout = "";
      const code = await runCli(["report", examples[0]!], { stdout: (t) => (stdout += t), stderr: () => {}, columns: 80 });
      expect(code).toBe(0);
      const lines = stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^CUDA: no registers or occupancy: nvcc could not be run \(spawnSync \S*no-such-nvcc ENOENT\); set \$NVCC, or run on a machine with a CUDA GPU; /);
      for (const line of lines.slice(1)) expect(line.length, line).toBeLessThanOrEqual(80);
      expect(stdout).toContain("WebGPU, against the default limits every adapter has:");
      expect(stdout).toMatch(/matmulTiled_TILE_16 +16×16 +2048 +3 +defaults/);
      expect(stdout).toMatch(/the trip count of the loop at examples\/matmul-tiled\.ts:\d+/);
    } finally {
      if (saved === undefined) delete process.env.NVCC;
      else process.env.NVCC = saved;
    }
  });

  it("refuses an unknown GPU and an unknown target", async () => {
    const gpu = await cli("report", examples[0]!, "--gpu", "sm_99");
    expect(gpu.code).toBe(1);
    expect(gpu.stderr).toContain("option '--gpu <sm>' argument 'sm_99' is invalid. expected one of sm_70, sm_75, sm_80, sm_86, sm_89, sm_90");
    const target = await cli("report", examples[0]!, "--target", "metal");
    expect(target.code).toBe(1);
    expect(target.stderr).toContain("error[TSK4002]: unknown target 'metal'; targets are cuda, wgsl, js");
  });
});
