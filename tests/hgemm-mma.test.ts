/**
 * The warp-level bf16 GEMM (examples/hgemm-mma.ts: mma.sync m16n8k16 with loadMatrix from shared tiles) on the
 * CPU backend, on fresh random bf16 inputs each run: bit for bit the emulation docs/language.md §25 defines
 * (each product of two bf16 exact in f32, k ascending with one f32 rounding per addition: what one m16n8k16
 * after another adds), and within the bound of a float64 product that the GPU is held to as well (its adds
 * within an mma come in another order), element by element with ε = 2^-24:
 *   |C − A·B| ≤ K·ε·(|A|·|B|)ij
 * (K roundings of a sum whose partial sums are at most (|A|·|B|)ij; first order, as K·ε ≪ 1). Both
 * specializations, the small one also in checked mode (no race between the two shared stages, no read of
 * shared memory before its write, no access out of bounds). bench/hgemm-mma-check.cu holds the GPU to the bound
 * (the lead's H100 run); here nvcc must accept it.
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";

const file = path.join(repoRoot, "examples", "hgemm-mma.ts");
const constantsOf = (h: KernelHandle) => h.description.specialization as Record<string, number>;

/** The in-order emulation's C and the worst |C − exact| / (K·ε·(|A|·|B|)ij) of `got`. */
function check(m: number, n: number, k: number, aBits: Uint16Array, bBits: Uint16Array, got: Float32Array): { inOrder: Float32Array; worstRatio: number } {
  const a = Array.from(aBits, bf16FromBits);
  const b = Array.from(bBits, bf16FromBits);
  const inOrder = new Float32Array(m * n);
  let worstRatio = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let exact = 0;
      let magnitude = 0;
      for (let p = 0; p < k; p++) {
        const product = a[i * k + p]! * b[p * n + j]!;
        sum = Math.fround(sum + product);
        exact += product;
        magnitude += Math.abs(product);
      }
      inOrder[i * n + j] = sum;
      worstRatio = Math.max(worstRatio, Math.abs(got[i * n + j]! - exact) / (k * 2 ** -24 * magnitude));
    }
  }
  return { inOrder, worstRatio };
}

async function run(kernel: KernelHandle, checked: boolean, [m, n, k]: [number, number, number]): Promise<void> {
  const device = new CpuDevice({ checked });
  const c = constantsOf(kernel);
  const aBits = Uint16Array.from({ length: m * k }, () => bf16Bits(Math.random() * 2 - 1));
  const bBits = Uint16Array.from({ length: k * n }, () => bf16Bits(Math.random() * 2 - 1));
  const C = device.createBuffer(new Float32Array(m * n).fill(Number.NaN));
  await device.launch(kernel, { grid: [n / c.BN!, m / c.BM!], args: [m, n, k, device.createBuffer("bf16", aBits), device.createBuffer("bf16", bBits), C] });
  const got = (await device.read(C)) as Float32Array;
  const { inOrder, worstRatio } = check(m, n, k, aBits, bBits, got);
  expect(Array.from(got)).toEqual(Array.from(inOrder));
  expect(worstRatio).toBeLessThanOrEqual(1);
}

describe("hgemm-mma.ts on the CPU backend", () => {
  const kernels = compileKernelLibrary([file], ["js"]).kernels;
  const small = () => kernels.find((h) => constantsOf(h).BM === 32)!;

  it("has the two specializations the file lists", () => {
    expect(kernels.map((h) => constantsOf(h).BM).sort()).toEqual([128, 32]);
  });

  it("small tiles: 3 × 2 blocks, 4 steps of K, bit for bit the in-order emulation and within the bound", async () => {
    await run(small(), false, [96, 64, 64]);
  });

  it("small tiles in checked mode", async () => {
    await run(small(), true, [64, 32, 48]);
  });

  it("128×128 tiles of eight warps: one block, 3 steps of K", async () => {
    await run(kernels.find((h) => constantsOf(h).BM === 128)!, false, [128, 128, 96]);
  });
});

describe.skipIf(!nvccAvailable())("bench/hgemm-mma-check.cu", () => {
  it("the GPU check (the example's golden CUDA and its harness) compiles for sm_90", () => {
    // compileCuda compiles in a directory of its own: the harness's includes of the golden, made absolute.
    const golden = path.join(repoRoot, "codegen-tests", "examples", "hgemm-mma");
    const source = fs.readFileSync(path.join(repoRoot, "bench", "hgemm-mma-check.cu"), "utf8").replaceAll('"../codegen-tests/examples/hgemm-mma/', `"${golden}/`);
    const result = compileCuda(source, { name: "hgemm-mma-check" });
    expect(result.errors).toBe("");
    expect(result.ok).toBe(true);
    expect(result.functions.filter((f) => f.entry).map((f) => f.name).sort()).toEqual(["_Z9referenceiiiPK13__nv_bfloat16S1_PdS2_Pf", "hgemmMma_BM_128_BN_128_BK_32_WM_64_WN_32_THREADS_256", "hgemmMma_BM_32_BN_32_BK_16_WM_16_WN_16_THREADS_128"]);
  });
});
