/**
 * The package's own kernels (package-kernels.ts): the build `npm pack` makes (cli/package-kernels.ts) loads with
 * no compiler and runs matmul(), scaledMatmul() and attention() against float64 on fresh random inputs; a stale build (a source
 * changed since), a missing one and a checked device compile in-process instead (checked for a GPU), saying why; the file list
 * covers every matmul and fp8 rung and the attention kernels. tests/package.test.ts runs the same from an installed tarball.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { writePackageKernels } from "../cli/package-kernels.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { matmul, matmulRungs, matmulTolerance, matmulTolerance16 } from "../runtime/matmul/matmul.ts";
import { attention } from "../runtime/attention.ts";
import { scaledMatmul, scaledMatmulRungs } from "../runtime/matmul/scaled-matmul.ts";
import { packageKernelFiles, packageKernelsFrom, sourceHash } from "../runtime/package-kernels.ts";
import { packageRoot } from "../compiler/index.ts";
import { compareToReference, referenceGemm } from "../runtime/reference.ts";

const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-package-kernels-"));
afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

describe("the package's kernels", () => {
  it("lists every matmul rung's file and the attention kernels", () => {
    expect(new Set(packageKernelFiles)).toEqual(new Set([...matmulRungs.map((r) => r.file), ...scaledMatmulRungs.map((r) => r.file), "examples/flash-attention-fold.ts", "examples/flash-attention-backward.ts"]));
  });

  it("load from the package build without compiling, and matmul(), scaledMatmul() and attention() run on them against float64", async () => {
    const lines: string[] = [];
    expect(writePackageKernels(out, { stdout: (t) => lines.push(t), stderr: (t) => lines.push(t) })).toBe(0);
    const stamp = JSON.parse(fs.readFileSync(path.join(out, "sources.json"), "utf8")) as { format: string; files: Record<string, string> };
    expect(stamp.format).toBe("tskernel-package-kernels");
    expect(Object.keys(stamp.files)).toEqual([...packageKernelFiles]);
    const device = new CpuDevice();
    const loaded = packageKernelsFrom(out, device);
    expect([loaded.origin, loaded.reason]).toEqual(["prebuilt", undefined]);
    // The manifest names the files as the package holds them, and the library has each rung's kernel.
    const names = new Set(loaded.library.kernels.map((h) => h.description.name));
    for (const rung of [...matmulRungs, ...scaledMatmulRungs]) expect(names.has(rung.kernel), rung.kernel).toBe(true);
    expect(loaded.library.kernels.find((h) => h.description.name === "flashAttentionFold")!.description.source).toBe("examples/flash-attention-fold.ts");

    // f32 at an odd shape (the guarded rungs), bf16 (the tiled 16-bit rung), C poisoned.
    const [m, n, k] = [37, 45, 29];
    const A = Float32Array.from({ length: m * k }, () => Math.random() * 2 - 1);
    const B = Float32Array.from({ length: k * n }, () => Math.random() * 2 - 1);
    const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
    await matmul(device, loaded.library, device.createBuffer(A), device.createBuffer(B), C, { m, n, k, tuning: false });
    const f32 = compareToReference((await device.read(C)) as Float32Array, referenceGemm(m, n, k, A, B));
    expect(f32.nonFinite).toBe(0);
    expect(f32.normwiseRelative).toBeLessThan(matmulTolerance("fp32", k));
    const [A16, B16] = [A, B].map((x) => Uint16Array.from(x, bf16Bits));
    const C16 = device.createBuffer("bf16", new Float32Array(m * n).fill(Number.NaN));
    expect(await matmul(device, loaded.library, device.createBuffer("bf16", A16!), device.createBuffer("bf16", B16!), C16, { m, n, k, tuning: false })).toBe("hgemm-tiled");
    const half = compareToReference((await device.read(C16)) as Float32Array, referenceGemm(m, n, k, Array.from(A16!, bf16FromBits), Array.from(B16!, bf16FromBits)));
    expect(half.nonFinite).toBe(0);
    expect(half.normwiseRelative).toBeLessThan(matmulTolerance16("bf16", k));

    // fp8 (the tiled rung on the CPU) at an odd shape, with scales, C poisoned; against float64 of the decoded codes.
    const codes = (length: number) => Uint8Array.from({ length }, () => (Math.random() < 0.5 ? 0x80 : 0) | Math.floor(Math.random() * 0x7f));
    const [a8, bt8] = [codes(m * k), codes(n * k)];
    const C8 = device.createBuffer("bf16", new Uint16Array(m * n).fill(0x7fff));
    const [A8, Bt8] = [device.createBuffer("e4m3", a8), device.createBuffer("e4m3", bt8)];
    expect(await scaledMatmul(device, loaded.library, A8, Bt8, C8, { m, n, k, scaleA: 0.5, scaleB: 0.25 })).toBe("fp8gemm-tiled");
    // B = Btᵀ, k×n, for the reference.
    const [aValues, btValues] = (await Promise.all([device.read(A8), device.read(Bt8)])) as Float32Array[];
    const bValues = Array.from({ length: k * n }, (_, i) => btValues![(i % n) * k + Math.floor(i / n)]!);
    const fp8 = compareToReference((await device.read(C8)) as Float32Array, referenceGemm(m, n, k, aValues!, bValues, 0.125));
    expect(fp8.nonFinite).toBe(0);
    expect(fp8.normwiseRelative).toBeLessThan(matmulTolerance16("bf16", k));

    // Attention, one head of 128 queries against 128 keys, causal.
    const d = 64;
    const shape = { batch: 1, heads: 1, seq: 128, headDim: d };
    const [q, kk, v] = [0, 1, 2].map(() => Uint16Array.from({ length: 128 * d }, () => bf16Bits(Math.random() * 2 - 1)));
    const O = device.createBuffer("bf16", new Uint16Array(128 * d).fill(0x7fff));
    await attention(device, loaded.library, device.createBuffer("bf16", q!), device.createBuffer("bf16", kk!), device.createBuffer("bf16", v!), O, shape, { causal: true });
    const got = (await device.read(O)) as Float32Array;
    const [qv, kv, vv] = [q!, kk!, v!].map((bits) => Array.from(bits, bf16FromBits));
    let error = 0;
    let norm = 0;
    for (let i = 0; i < 128; i++) {
      const scores = Array.from({ length: i + 1 }, (_, j) => qv!.slice(i * d, i * d + d).reduce((s, x, c) => s + x * kv![j * d + c]!, 0) / 8);
      const max = Math.max(...scores);
      const weights = scores.map((s) => Math.exp(s - max));
      const sum = weights.reduce((a, b) => a + b, 0);
      for (let c = 0; c < d; c++) {
        const expected = weights.reduce((s, w, j) => s + w * vv![j * d + c]!, 0) / sum;
        error += (got[i * d + c]! - expected) ** 2;
        norm += expected ** 2;
      }
    }
    expect(Number.isFinite(error)).toBe(true);
    expect(Math.sqrt(error / norm)).toBeLessThan(2 * 2 ** -8);
  }, 120_000);

  it("compile in-process instead, saying why, when the build is missing, stale, or the device is a checked CPU", () => {
    const device = new CpuDevice();
    expect(packageKernelsFrom(path.join(out, "nowhere"), device)).toMatchObject({ origin: "compiled", reason: `no package kernel build in ${path.join(out, "nowhere")}` });
    expect(packageKernelsFrom(out, new CpuDevice({ checked: true }))).toMatchObject({ origin: "compiled", reason: "checked mode needs the compiler's checked code" });
    const stampFile = path.join(out, "sources.json");
    const stamp = JSON.parse(fs.readFileSync(stampFile, "utf8")) as { files: Record<string, string> };
    fs.writeFileSync(stampFile, JSON.stringify({ ...stamp, files: { ...stamp.files, "examples/hgemm-tiled.ts": `sha256:${"0".repeat(64)}` } }));
    const stale = packageKernelsFrom(out, device);
    expect([stale.origin, stale.reason]).toEqual(["compiled", `examples/hgemm-tiled.ts changed since the build in ${out}`]);
    expect(stale.library.kernels.some((h) => h.description.name === "hgemmTiledBf16")).toBe(true);
  }, 120_000);

  it("compile checked builds in-process for a checked GPU device, which refuses the shipped (unchecked) build", () => {
    // The test before made the stamp stale: put back the true hash.
    const stampFile = path.join(out, "sources.json");
    const stamp = JSON.parse(fs.readFileSync(stampFile, "utf8")) as { files: Record<string, string> };
    fs.writeFileSync(stampFile, JSON.stringify({ ...stamp, files: { ...stamp.files, "examples/hgemm-tiled.ts": sourceHash(path.join(packageRoot(), "examples/hgemm-tiled.ts")) } }));
    const checked = packageKernelsFrom(out, { backend: "webgpu", checked: true });
    expect([checked.origin, checked.reason]).toEqual(["compiled", 'a checked device runs checked builds only (docs/language.md, "Checked GPU builds")']);
    const wgsl = checked.library.kernels.filter((h) => h.description.outputs.wgsl);
    expect(wgsl.length).toBeGreaterThan(0);
    for (const kernel of wgsl) expect(kernel.description.outputs.wgsl!.checks, kernel.description.entryName).toBeDefined();
    // An unchecked GPU device still loads the shipped build.
    expect(packageKernelsFrom(out, { backend: "webgpu" }).origin).toBe("prebuilt");
  }, 120_000);
});
