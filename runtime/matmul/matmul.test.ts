/**
 * The matmul library's fixed rule on rectangular shapes, α/β ≠ (1, 0), each rung it picks checked against
 * float64. (Stored tuning results are kept out with `tuning: false`; tune.test.ts covers them.)
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../compiler/index.ts";
import { CpuDevice } from "../cpu/cpu-device.ts";
import { compileKernelLibrary } from "../kernels.ts";
import { compareToReference, referenceGemm } from "../reference.ts";
import type { DeviceBuffer } from "../device.ts";
import { chooseMatmul, matmul, matmulLaunch, type MatmulVariantName } from "./matmul.ts";
import { persistentGrid } from "./rung.ts";

const library = compileKernelLibrary(["sgemm.ts", "sgemm-blocktiling.ts", "sgemm-vectorized.ts", "sgemm-warptiling.ts", "sgemm-multistage.ts"].map((f) => path.join(packageRoot(), "examples", f)));
const random = (length: number) => Float32Array.from({ length }, () => Math.random() * 2 - 1);

describe("matmul", () => {
  it.each([
    [200, 132, 68, undefined, "sgemm-multistage-guarded"],
    [200, 130, 70, undefined, "sgemm-register-staged"],
    [1000, 37, 3, undefined, "sgemm-register-staged"],
    [128, 256, 64, undefined, "sgemm-multistage"],
    [200, 132, 68, "sgemm-warptiling-guarded", "sgemm-warptiling-guarded"],
    [200, 130, 70, "sgemm-2d-guarded", "sgemm-2d-guarded"],
    [128, 256, 64, "sgemm-warptiling-double-buffered", "sgemm-warptiling-double-buffered"],
    [256, 128, 32, "sgemm-warptiling", "sgemm-warptiling"],
    [128, 128, 16, "sgemm-vectorized", "sgemm-vectorized"],
    [128, 256, 64, "sgemm-2d-transposed-a", "sgemm-2d-transposed-a"],
    [256, 128, 32, "sgemm-2d-blocktiling", "sgemm-2d-blocktiling"],
    [64, 192, 24, undefined, "sgemm-warptiling-double-buffered"],
    [64, 192, 24, "sgemm-1d-blocktiling", "sgemm-1d-blocktiling"],
    [128, 128, 16, "sgemm-shared", "sgemm-shared"],
    [33, 47, 5, "sgemm-naive", "sgemm-naive"],
  ] as const)("m=%i n=%i k=%i (variant %s) runs %s and matches float64", async (m, n, k, variant, expected) => {
    const device = new CpuDevice();
    const A = random(m * k);
    const B = random(k * n);
    const C0 = random(m * n);
    const C = device.createBuffer(C0);
    const alpha = 0.5;
    const beta = -1.5;
    const ran = await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, alpha, beta, variant: variant as MatmulVariantName | undefined, tuning: false });
    expect(ran).toBe(expected);
    const report = compareToReference((await device.read(C)) as Float32Array, referenceGemm(m, n, k, A, B, alpha, beta, C0));
    expect(report.nonFinite).toBe(0);
    expect(report.normwiseRelative).toBeLessThan(Math.max(k, 8) * 2 ** -23);
  });

  it.each(["sgemm-multistage", "sgemm-multistage-guarded", "sgemm-register-staged", "sgemm-warptiling-double-buffered", "sgemm-warptiling", "sgemm-vectorized", "sgemm-warptiling-guarded", "sgemm-2d-transposed-a", "sgemm-2d-guarded", "sgemm-1d-blocktiling", "sgemm-shared"] as const)(
    "%s with beta = 0 ignores what C held before, NaN included (as BLAS does)",
    async (variant) => {
      const device = new CpuDevice();
      const [m, n, k] = [128, 128, 32];
      const A = random(m * k);
      const B = random(k * n);
      const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
      await matmul(device, library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, alpha: 1.25, beta: 0, variant, tuning: false });
      const report = compareToReference((await device.read(C)) as Float32Array, referenceGemm(m, n, k, A, B, 1.25, 0, new Float32Array(m * n)));
      expect(report.nonFinite).toBe(0);
      expect(report.normwiseRelative).toBeLessThan(k * 2 ** -23);
    },
  );

  it("prefers the largest tiles that still give the grid enough blocks to fill a large GPU", () => {
    const device = new CpuDevice();
    const pick = (n: number) => {
      const choice = chooseMatmul(device, library, { m: n, n, k: n, tuning: false });
      return [choice.rung.name, choice.constants.BM, choice.constants.BN, choice.rung.grid(n, n, choice.constants).reduce((a, b) => a * b, 1)];
    };
    expect(pick(4096)).toEqual(["sgemm-multistage", 128, 128, 1024]);
    expect(pick(2048)).toEqual(["sgemm-multistage", 128, 128, 256]);
    // 128×128 tiles would make only 64 blocks of a 1024² product: 64×128 tiles with two k-groups.
    expect(pick(1024)).toEqual(["sgemm-multistage", 64, 128, 128]);
    expect(chooseMatmul(device, library, { m: 1024, n: 1024, k: 1024, tuning: false }).constants.KSPLIT).toBe(2);
    // Too small for 128 blocks with any build of the multistage rung: the one with the most.
    expect(pick(256)).toEqual(["sgemm-multistage", 64, 128, 8]);
    // Shapes no unguarded tile divides: the guarded build (n, k multiples of 4), else element-wise loads.
    expect(pick(1000)).toEqual(["sgemm-multistage-guarded", 64, 128, 128]);
    expect(pick(1023)).toEqual(["sgemm-register-staged", 64, 64, 256]);
  });

  it("passes over the rungs built on cp.async on WebGPU, whose WGSL copies synchronously", () => {
    const cpu = new CpuDevice();
    const webgpuLike = Object.create(cpu, { backend: { value: "webgpu" } }) as CpuDevice;
    expect(chooseMatmul(cpu, library, { m: 4096, n: 4096, k: 4096, tuning: false }).rung.name).toBe("sgemm-multistage");
    expect(chooseMatmul(webgpuLike, library, { m: 4096, n: 4096, k: 4096, tuning: false }).rung.name).toBe("sgemm-warptiling");
    expect(chooseMatmul(webgpuLike, library, { m: 1000, n: 1000, k: 1000, tuning: false }).rung.name).toBe("sgemm-2d-guarded");
    expect(chooseMatmul(webgpuLike, library, { m: 1023, n: 1021, k: 1019, tuning: false }).rung.name).toBe("sgemm-2d-guarded");
    // Asked for by name, they still run.
    for (const variant of ["sgemm-warptiling-double-buffered", "sgemm-multistage", "sgemm-register-staged"] as const) {
      expect(chooseMatmul(webgpuLike, library, { m: 4096, n: 4096, k: 4096, tuning: false, variant }).rung.name).toBe(variant);
    }
  });

  it("takes stream-k on CUDA where its tiles fill the GPU at least once or the next rung's blocks would not fit one wave or fill three quarters of it, with its scratch and block count", () => {
    const withStreamK = compileKernelLibrary(["sgemm-streamk.ts", "sgemm-multistage.ts"].map((f) => path.join(packageRoot(), "examples", f)));
    const cpu = new CpuDevice();
    const h100Like = Object.create(cpu, { backend: { value: "cuda" }, multiprocessors: { value: 132 } }) as CpuDevice;
    const pick = (device: CpuDevice, m: number, n: number, k: number) => chooseMatmul(device, withStreamK, { m, n, k, tuning: false }).rung.name;
    // 128×256 tiles: 512 at 4096², 2048 at 8192².
    expect([pick(h100Like, 4096, 4096, 4096), pick(h100Like, 8192, 8192, 8192), pick(h100Like, 4096, 4096, 1024)]).toEqual(["sgemm-streamk", "sgemm-streamk", "sgemm-streamk"]);
    // Fewer tiles than multiprocessors (128 at 2048², 72 at 1536², 50 at 1280², 32 at 1024²): stream-k where multistage
    // would launch more than 132 blocks (256 of 128×128, 144 of 128×128, 200 of 64×128), not where its 128 blocks of
    // 64×128 make one wave (1024²).
    expect([2048, 1536, 1280, 1024].map((s) => pick(h100Like, s, s, s))).toEqual(["sgemm-streamk", "sgemm-streamk", "sgemm-streamk", "sgemm-multistage"]);
    // One wave that leaves more than a quarter of the multiprocessors idle (72 blocks of 64×128 at 768², 32 at 512², 8 at
    // 256²): stream-k where its 132 blocks have k to share (k ≥ 768: 768³, 768 × 256 × 768, 128 × 1024 × 1024,
    // 256 × 256 × 1024), else below half a wave the register-staged kernel in smaller tiles, the largest that fills half a
    // wave (640³: 100 blocks of 64×64; 512³ and 256³: 32×32, as no larger tile makes 66 blocks); between half and three
    // quarters, the rung's own wave (896³: 98 blocks of 64×128; stream-k's 256 columns do not divide 896).
    expect([[768, 768, 768], [768, 256, 768], [128, 1024, 1024], [256, 256, 1024]].map(([m, n, k]) => pick(h100Like, m!, n!, k!))).toEqual(["sgemm-streamk", "sgemm-streamk", "sgemm-streamk", "sgemm-streamk"]);
    expect(pick(h100Like, 896, 896, 896)).toBe("sgemm-multistage");
    const small = (m: number, n: number, k: number) => {
      const choice = chooseMatmul(h100Like, withStreamK, { m, n, k, tuning: false });
      return `${choice.rung.name} ${choice.constants.BM}×${choice.constants.BN}`;
    };
    expect([small(640, 640, 640), small(512, 512, 512), small(256, 256, 256), small(384, 768, 384), small(1024, 512, 512)]).toEqual([
      "sgemm-register-staged 64×64",
      "sgemm-register-staged 32×32",
      "sgemm-register-staged 32×32",
      "sgemm-register-staged 64×64",
      "sgemm-register-staged 64×64",
    ]);
    const wider = Object.create(cpu, { backend: { value: "cuda" }, multiprocessors: { value: 160 } }) as CpuDevice;
    expect(pick(wider, 1536, 1536, 1536)).toBe("sgemm-multistage"); // 144 blocks fill 90 % of one wave of 160
    const widest = Object.create(cpu, { backend: { value: "cuda" }, multiprocessors: { value: 300 } }) as CpuDevice;
    expect(pick(widest, 1536, 1536, 1536)).toBe("sgemm-streamk"); // 144 blocks leave more than half of 300 idle
    expect(pick(h100Like, 4096, 4096 + 128, 4096)).toBe("sgemm-multistage"); // n not a multiple of 256
    expect(pick(cpu, 4096, 4096, 4096)).toBe("sgemm-multistage"); // by name only, off CUDA
    const choice = chooseMatmul(h100Like, withStreamK, { m: 4096, n: 4096, k: 4096, tuning: false });
    const buffers = { A: cpu.createBuffer("f32", 1), B: cpu.createBuffer("f32", 1), C: cpu.createBuffer("f32", 1) };
    const launch = matmulLaunch(h100Like, choice, { m: 4096, n: 4096, k: 4096 }, buffers, 1, 0);
    expect(launch.grid).toEqual([396 + 132, 1]);
    expect(launch.args.slice(0, 8)).toEqual([4096, 4096, 4096, 1, buffers.A, buffers.B, 0, buffers.C]);
    const [partials, arrivals, streamBlocks] = launch.args.slice(8) as [DeviceBuffer, DeviceBuffer, number];
    expect([partials.length, arrivals.length, streamBlocks]).toEqual([132 * 128 * 256, 132, 132]);
    // The same scratch for the next launch on the device.
    expect(matmulLaunch(h100Like, choice, { m: 8192, n: 8192, k: 8192 }, buffers).args.slice(8, 10)).toEqual([partials, arrivals]);
  });

  it("refuses a forced variant the shape does not fit, and buffers too small for the shape", async () => {
    const device = new CpuDevice();
    const buffer = device.createBuffer("f32", 100 * 100);
    await expect(matmul(device, library, buffer, buffer, buffer, { m: 100, n: 100, k: 100, variant: "sgemm-2d-blocktiling", tuning: false })).rejects.toThrow(
      "sgemm-2d-blocktiling needs m, n, k to be multiples of 128, 128, 8; got 100, 100, 100",
    );
    await expect(matmul(device, library, buffer, buffer, buffer, { m: 128, n: 128, k: 8, tuning: false })).rejects.toThrow("matmul: C has 10000 elements, the shape needs 16384");
  });
});

describe("persistentGrid", () => {
  it("is min(tiles, multiprocessors), rounded down to whole clusters, at least one cluster", () => {
    expect(persistentGrid({}, 512, 132)).toEqual([132, 1]);
    expect(persistentGrid({}, 5, 132)).toEqual([5, 1]);
    expect(persistentGrid({ clusterBlocks: 2 }, 512, 133)).toEqual([132, 1]);
    expect(persistentGrid({ clusterBlocks: 2 }, 12, 132)).toEqual([12, 1]);
    // A CPU device counts one multiprocessor: still one whole cluster.
    expect(persistentGrid({ clusterBlocks: 2 }, 8, 1)).toEqual([2, 1]);
  });
});
