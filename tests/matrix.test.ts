/**
 * Warp-level matrix operations (docs/language.md, section 25): TF32 rounding as cvt.rna does it, against an
 * independent float64 formulation; one warp's loadFragment/mma/storeFragment on the CPU backend, bit for bit
 * against the documented order of the emulation (which also checks the fragment layout: a lane holding the
 * wrong element gives a different product); a block chosen at launch, which must be whole warps (whole
 * warpgroups for wgmma) on every backend; and the compile-time errors with their codes and locations.
 */

import { describe, expect, it } from "vitest";
import { fragmentElementPosition, fragmentLayouts, roundTf32 } from "../compiler/index.ts";
import { compileKernelLibrary, type DeviceBuffer, type KernelHandle } from "../runtime/index.ts";
import { checkLaunch, LaunchError } from "../runtime/launch-check.ts";
import { packageRoot } from "../compiler/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Round to nearest with ties away from zero at 10 mantissa bits, computed on the value (not the bits). */
function tf32Reference(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(x))), -126);
  // log2 may be off by one next to powers of two: fix the exponent so that 1 ≤ |x| / 2^e < 2 (normals).
  let e = exponent;
  if (Math.abs(x) < 2 ** e) e--;
  if (Math.abs(x) >= 2 ** (e + 1)) e++;
  const ulp = 2 ** (Math.max(e, -126) - 10);
  return Math.sign(x) * Math.floor(Math.abs(x) / ulp + 0.5) * ulp;
}

const random = (length: number) => Float32Array.from({ length }, () => Math.fround(Math.random() * 2 - 1));

describe("roundTf32", () => {
  it("rounds to nearest with ties away from zero, keeping 10 mantissa bits", () => {
    expect(roundTf32(1 + 2 ** -11)).toBe(1 + 2 ** -10); // a tie: away from zero
    expect(roundTf32(-(1 + 2 ** -11))).toBe(-(1 + 2 ** -10));
    expect(roundTf32(1 + 2 ** -12)).toBe(1);
    expect(roundTf32(1 + 3 * 2 ** -12)).toBe(1 + 2 ** -10);
    expect(roundTf32(Math.fround(0.1))).toBe(0.0999755859375);
    expect(roundTf32(Infinity)).toBe(Infinity);
    expect(roundTf32(-Infinity)).toBe(-Infinity);
    expect(roundTf32(Number.NaN)).toBeNaN();
    // The largest f32 rounds past the largest TF32: infinity, as the carry reaches the exponent.
    expect(roundTf32(3.4028234663852886e38)).toBe(Infinity);
  });

  it("agrees with a float64 formulation on fresh random values over many magnitudes", () => {
    for (let i = 0; i < 20000; i++) {
      const x = Math.fround((Math.random() * 2 - 1) * 2 ** Math.floor(Math.random() * 200 - 100));
      expect(roundTf32(x), `${x}`).toBe(tf32Reference(x));
    }
  });

  it("is what the generated JavaScript does: an mma by the identity returns the rounded A", async () => {
    // D = round(A)·I + 0 is exact: every product is a rounded element of A or zero.
    const A = Float32Array.from({ length: 256 }, () => Math.fround((Math.random() * 2 - 1) * 2 ** Math.floor(Math.random() * 60 - 30)));
    const identity = Float32Array.from({ length: 128 }, (_, i) => (Math.floor((i % 64) / 8) === i % 8 ? 1 : 0));
    const device = new CpuDevice();
    const D = device.createBuffer(new Float32Array(256).fill(Number.NaN));
    await device.launch(oneWarpHandle(), { grid: [1], args: [device.createBuffer(A), device.createBuffer(identity), device.createBuffer(new Float32Array(256)), D, 0] });
    const got = (await device.read(D)) as Float32Array;
    // Columns 0–7 of each 16×8 problem: A's 16×8 rows rounded (B = I is 8×8, so D = round(A)).
    expect(Array.from(got)).toEqual(Array.from(A, (x) => roundTf32(x)));
  });
});

describe("fragment layouts", () => {
  it("give every element of each operand's matrix to exactly one lane", () => {
    for (const layout of Object.values(fragmentLayouts.m16n8k8)) {
      const seen = new Set<string>();
      for (let lane = 0; lane < 32; lane++) {
        for (let e = 0; e < layout.perLane; e++) {
          const [row, col] = fragmentElementPosition(layout, lane, e);
          expect(row).toBeLessThan(layout.rows);
          expect(col).toBeLessThan(layout.cols);
          seen.add(`${row},${col}`);
        }
      }
      expect(seen.size).toBe(layout.rows * layout.cols);
    }
  });
});

const oneWarp = `import { fragment, kernel, loadFragment, mma, storeFragment, type ReadonlyFloat32Array } from "tskernel";
// Two warps, each D = A·B + C for its own 16×8×8 problem (A 16×8, B 8×8, C 16×8, row-major).
export const warpMma = kernel({ block: [64] }, (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: ReadonlyFloat32Array, D: Float32Array, w: i32) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 1);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
  for (let p = 0; p < 2; p++) {
    loadFragment(a[0], A, p * 128, 8);
    loadFragment(b[0], B, p * 64, 8);
    loadFragment(acc[0], C, p * 128, 8);
    mma(acc[0], a[0], b[0]);
    storeFragment(acc[0], D, p * 128, 8);
  }
});
`.replace("type ReadonlyFloat32Array }", "type ReadonlyFloat32Array, type i32 }");

describe("one warp's mma on the CPU backend", () => {
  const handle = oneWarpHandle();

  for (const checked of [false, true]) {
    it(`equals the documented emulation bit for bit${checked ? " (checked mode)" : ""}`, async () => {
      const device = new CpuDevice({ checked });
      const A = random(256);
      const B = random(128);
      const C = random(256);
      const D = device.createBuffer(new Float32Array(256).fill(Number.NaN));
      // Both warps run the same two problems, each writing all of D: the second warp's stores land last.
      await device.launch(handle!, { grid: [1], args: [device.createBuffer(A), device.createBuffer(B), device.createBuffer(C), D, 0] });
      const got = (await device.read(D)) as Float32Array;
      for (let p = 0; p < 2; p++) {
        for (let r = 0; r < 16; r++) {
          for (let c = 0; c < 8; c++) {
            let sum = C[p * 128 + r * 8 + c]!;
            for (let k = 0; k < 8; k++) sum = Math.fround(sum + roundTf32(A[p * 128 + r * 8 + k]!) * roundTf32(B[p * 64 + k * 8 + c]!));
            expect(got[p * 128 + r * 8 + c], `problem ${p}, D[${r}][${c}]`).toBe(sum);
          }
        }
      }
    });
  }
});

/** The compiled two-warp kernel above (compiled once). */
let oneWarpCompiled: KernelHandle | undefined;
function oneWarpHandle(): KernelHandle {
  if (!oneWarpCompiled) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-mma-"));
    const file = path.join(dir, "kernel.ts");
    fs.writeFileSync(file, oneWarp);
    oneWarpCompiled = compileKernelLibrary([file], ["js"]).kernels[0]!;
  }
  return oneWarpCompiled;
}

/** The rendered diagnostics of a kernel body that uses fragments (CUDA and JS unless given). */
function errorsOf(body: string, options: { targets?: ("cuda" | "wgsl" | "js")[]; block?: number } = {}): string {
  const source = `import { fragment, kernel, loadFragment, mma, storeFragment, fillFragment, threadIdx, type i32, type ReadonlyFloat32Array } from "tskernel";
export const k = kernel({ block: [${options.block ?? 32}] }, (A: ReadonlyFloat32Array, D: Float32Array, n: i32) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 2);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
${body}
});
`;
  const result = compileSource(source, { targets: options.targets ?? ["cuda", "js"] });
  return result.rendered;
}

describe("matrix operation errors", () => {
  const clean = "  loadFragment(a[0], A, 0, 8);\n  loadFragment(b[0], A, 0, 8);\n  fillFragment(acc[1], 0);\n  mma(acc[1], a[0], b[0]);\n  storeFragment(acc[1], D, 0, 8);";

  it("a well-formed kernel compiles for CUDA and the CPU", () => {
    expect(errorsOf(clean)).toBe("");
  });

  it("TSK3048: WebGPU has no matrix operations", () => {
    expect(errorsOf(clean, { targets: ["wgsl"] })).toContain("error[TSK3048]: WebGPU has no matrix operations, and kernel 'k' uses loadFragment()\n --> kernel.ts:6:3");
  });

  it("TSK3045: a matrix operation under a condition on threadIdx", () => {
    const rendered = errorsOf(`  if (threadIdx.x < 16) {\n    mma(acc[0], a[0], b[0]);\n  }`);
    expect(rendered).toContain("error[TSK3045]: mma() is reached in non-uniform control flow");
    expect(rendered).toContain("kernel.ts:7:5");
  });

  it("TSK3049: a fragment index that differs between threads", () => {
    expect(errorsOf("  storeFragment(acc[threadIdx.x % 2], D, 0, 8);")).toContain("error[TSK3049]: the fragment index of storeFragment() must be the same for every thread of the block\n --> kernel.ts:6:21");
  });

  it("TSK3046: a constant fragment index past the array", () => {
    expect(errorsOf("  mma(acc[2], a[0], b[0]);")).toContain("error[TSK3046]: fragment 2 is outside 'acc', which holds 2 fragment(s)\n --> kernel.ts:6:11");
  });

  it("TSK3047: a block that is not whole warps", () => {
    expect(errorsOf(clean, { block: 48 })).toContain("error[TSK3047]: kernel 'k' uses matrix operations, so its block must be a whole number of warps of 32 threads; it has 48");
  });

  it("TSK1065: an operand that is not a fragment", () => {
    expect(errorsOf("  mma(D, a[0], b[0]);")).toContain("error[TSK1065]: mma() takes a matrix fragment as its first argument");
  });

  it("TSK1066: reading a fragment's elements", () => {
    expect(errorsOf("  D[0] = acc[0];")).toContain("error[TSK1066]: 'acc' holds matrix fragments");
  });

  it("TSK1067: a shape the language does not have", () => {
    const rendered = errorsOf('  const c = fragment.a("m16n8k32", "tf32", 1);\n  loadFragment(c[0], A, 0, 8);');
    expect(rendered).toContain('error[TSK1067]: fragment.a takes a shape: "m16n8k8" or "m16n8k16" (mma), or "m64n64k8", "m64n128k8", "m64n256k8", "m64n64k16", "m64n128k16", "m64n256k16", "m64n64k32", "m64n128k32" or "m64n256k32" (wgmma), found "m16n8k32"');
  });

  it("TSK2020: operands in the wrong roles", () => {
    // TypeScript's types reject it too; the compiler's own check stands behind them.
    expect(errorsOf("  // @ts-expect-error\n  mma(acc[0], b[0], a[0]);")).toContain("error[TSK2020]: mma() takes an A fragment (fragment.a) as its second argument, but 'b' is a B fragment (fragment.b)\n --> kernel.ts:7:15");
  });

  it("TSK2021: a fragment load from an i32 array", () => {
    const source = `import { fragment, kernel, loadFragment, shared } from "tskernel";
export const k = kernel({ block: [32] }, () => {
  const a = fragment.a("m16n8k8", "tf32", 1);
  const t = shared.i32(128);
  // @ts-expect-error
  loadFragment(a[0], t, 0, 8);
});
`;
    expect(compileSource(source, { targets: ["cuda"] }).rendered).toContain("error[TSK2021]: loadFragment() moves f32 elements, but 't' holds i32 elements\n --> kernel.ts:6:22");
  });
});

// The same problems with the block left to the launch: warp w = threadIdx.x / 32 (along the linear index)
// computes problem w. The validator cannot see the block, so the launch checks it (issue 13).
const anyBlock = `import { fragment, kernel, loadFragment, mma, storeFragment, threadIdx, blockDim, type ReadonlyFloat32Array } from "tskernel";
export const warpMmaAnyBlock = kernel({}, (A: ReadonlyFloat32Array, B: ReadonlyFloat32Array, C: ReadonlyFloat32Array, D: Float32Array) => {
  const acc = fragment.accumulator("m16n8k8", "f32", 1);
  const a = fragment.a("m16n8k8", "tf32", 1);
  const b = fragment.b("m16n8k8", "tf32", 1);
  const p = (threadIdx.y * blockDim.x + threadIdx.x) / 32;
  loadFragment(a[0], A, p * 128, 8);
  loadFragment(b[0], B, p * 64, 8);
  loadFragment(acc[0], C, p * 128, 8);
  mma(acc[0], a[0], b[0]);
  storeFragment(acc[0], D, p * 128, 8);
});
export const warpgroupAnyBlock = kernel({ targets: ["cuda", "js"] }, (A: ReadonlyFloat32Array, D: Float32Array) => {
  const Bs = shared.f32(2048);
  const acc = fragment.accumulator("m64n64k8", "f32", 1);
  const a = fragment.a("m64n64k8", "tf32", 1);
  fillFragment(acc[0], 0);
  loadFragment(a[0], A, 0, 8);
  wgmma(acc[0], a[0], Bs, 8);
  wgmmaCommit();
  wgmmaWait(0);
  storeFragment(acc[0], D, 0, 64);
});
`.replace("type ReadonlyFloat32Array }", "type ReadonlyFloat32Array, shared, fillFragment, wgmma, wgmmaCommit, wgmmaWait }");

describe("a block chosen at launch for a kernel with matrix operations", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-mma-block-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, anyBlock);
  const library = compileKernelLibrary([file], ["js", "cuda"]);
  const mmaKernel = library.get("warpMmaAnyBlock");
  const wgmmaKernel = library.get("warpgroupAnyBlock");

  it("is recorded in the manifest: which operations, so which groups the block must be made of", () => {
    expect(mmaKernel.description.block).toBeNull();
    expect(mmaKernel.description.matrix).toBe("warp");
    expect(wgmmaKernel.description.matrix).toBe("warpgroup");
    expect(compileKernelLibrary([path.join(packageRoot(), "examples", "matmul-tiled.ts")], ["js"]).kernels[0]!.description.matrix).toBeUndefined();
  });

  it("runs on the CPU when the block is whole warps, in any shape (warps along the linear thread index)", async () => {
    const device = new CpuDevice();
    for (const block of [[64], [16, 4]] as const) {
      const A = random(256);
      const B = random(128);
      const C = random(256);
      const D = device.createBuffer(new Float32Array(256).fill(Number.NaN));
      await device.launch(mmaKernel, { grid: [1], block: [...block], args: [device.createBuffer(A), device.createBuffer(B), device.createBuffer(C), D] });
      const got = (await device.read(D)) as Float32Array;
      for (let p = 0; p < 2; p++) {
        for (let r = 0; r < 16; r++) {
          for (let c = 0; c < 8; c++) {
            let sum = C[p * 128 + r * 8 + c]!;
            for (let k = 0; k < 8; k++) sum = Math.fround(sum + roundTf32(A[p * 128 + r * 8 + k]!) * roundTf32(B[p * 64 + k * 8 + c]!));
            expect(got[p * 128 + r * 8 + c], `block [${block.join(", ")}], problem ${p}, D[${r}][${c}]`).toBe(sum);
          }
        }
      }
    }
  });

  it("is refused on the CPU before anything runs when it is not whole warps (or warpgroups, for wgmma)", async () => {
    const device = new CpuDevice();
    const D = device.createBuffer(new Float32Array(256).fill(Number.NaN));
    const args = [device.createBuffer(random(256)), device.createBuffer(random(128)), device.createBuffer(random(256)), D];
    const launch = device.launch(mmaKernel, { grid: [1], block: [48], args });
    await expect(launch).rejects.toThrow(LaunchError);
    await expect(device.launch(mmaKernel, { grid: [1], block: [8, 6], args })).rejects.toThrow(
      "tskernel: cannot launch 'warpMmaAnyBlock': it uses matrix operations (mma on warp fragments), so its block must be a whole number of warps (32 threads); [8, 6, 1] is 48 threads",
    );
    expect(Array.from((await device.read(D)) as Float32Array).every(Number.isNaN), "nothing ran").toBe(true);
    const W = device.createBuffer(new Float32Array(64 * 64).fill(Number.NaN));
    await expect(device.launch(wgmmaKernel, { grid: [1], block: [64], args: [device.createBuffer(random(64 * 8)), W] })).rejects.toThrow(
      "tskernel: cannot launch 'warpgroupAnyBlock': it uses warpgroup matrix operations (wgmma), so its block must be a whole number of warpgroups (128 threads); [64, 1, 1] is 64 threads",
    );
    expect(Array.from((await device.read(W)) as Float32Array).every(Number.isNaN), "nothing ran").toBe(true);
  });

  it("is refused for CUDA by the same check, before the driver is asked (no GPU needed to see it)", () => {
    // The CUDA device runs checkLaunch first (cuda-device.ts); buffers of the cuda backend, as it allocates them.
    const buffer = (length: number) => ({ kind: "tskernel.buffer", backend: "cuda", elementType: "f32", length }) as unknown as DeviceBuffer;
    const args = [buffer(256), buffer(128), buffer(256), buffer(256)];
    expect(() => checkLaunch(mmaKernel.description, { grid: [1], block: [96, 1, 1], args }, "cuda")).not.toThrow();
    expect(() => checkLaunch(mmaKernel.description, { grid: [1], block: [40], args }, "cuda")).toThrow(
      "tskernel: cannot launch 'warpMmaAnyBlock': it uses matrix operations (mma on warp fragments), so its block must be a whole number of warps (32 threads); [40, 1, 1] is 40 threads",
    );
    expect(() => checkLaunch(wgmmaKernel.description, { grid: [1], block: [256], args: [buffer(512), buffer(4096)] }, "cuda")).not.toThrow();
    expect(() => checkLaunch(wgmmaKernel.description, { grid: [1], block: [32, 3], args: [buffer(512), buffer(4096)] }, "cuda")).toThrow(/whole number of warpgroups \(128 threads\); \[32, 3, 1\] is 96 threads/);
  });
});
