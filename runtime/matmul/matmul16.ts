/**
 * The 16-bit rungs of the matmul ladder (`matmul(…, { dtype: "bf16" | "f16" })`): A, B and C in bf16 or f16,
 * products accumulated in f32, C = α·A·B + β·C rounded to 16 bits once. On an sm_90 GPU, where 128×256 tiles
 * and 64-deep k-steps divide the shape, the warp-specialized tensor-core rung (examples/hgemm-wgmma-ws.ts:
 * wgmma m64n256k16 with both operands in shared memory, the tensor memory accelerator for the copies and the
 * stores, a persistent grid; 98.6 % / 102.2 % of torch.mm bf16 at 4096³ / 8192³ on the H100,
 * bench/results/2026-11-26-hgemm-lang-h100.json); elsewhere, and for any shape, the tiled kernel
 * (examples/hgemm-tiled.ts), which runs on the CPU too. matmul.ts puts these rungs in its ladder and the f32
 * rungs apart from them by `dtype`.
 */

import type { Rung } from "./rung.ts";

/** The element types matmul() multiplies: f32 (with the FP32 and TF32 rungs), bf16 and f16. */
export type MatmulDtype = "f32" | "bf16" | "f16";

/**
 * The normwise relative error (||C − C64|| / ||C64||) a 16-bit result may have against a float64 product of
 * the same 16-bit inputs: the output's rounding to the format (its unit roundoff, 2⁻⁸ for bf16 and 2⁻¹¹ for
 * f16, bounds each element's relative error, so the normwise one too) plus the f32 accumulation's k·2⁻²³.
 * Measured on the H100: 1.66·10⁻³ (bf16) and 2.07·10⁻⁴ (f16) for torch.mm and our rung alike
 * (bench/results/2026-11-26-hgemm-probe-h100-run2.json).
 */
export function matmulTolerance16(dtype: "bf16" | "f16", k: number): number {
  return (dtype === "bf16" ? 2 ** -8 : 2 ** -11) + Math.max(k, 16) * 2 ** -23;
}

const wgmmaTensorMaps = { B: { boxRows: 64, boxCols: 64 }, C: { boxRows: 64, boxCols: 64 } } as const;
// The persistent rung's tiles; the grid is min(tiles, multiprocessors) (matmulLaunch).
const tiles16 = (m: number, n: number): [number, number] => [(m / 128) * (n / 256), 1];

/** The 16-bit rungs, fastest first for each type. */
export const matmul16Rungs: readonly Rung[] = (["bf16", "f16"] as const).flatMap((dtype): Rung[] => [
  {
    name: dtype === "bf16" ? "hgemm-wgmma-ws" : "hgemm-wgmma-ws-f16",
    file: "examples/hgemm-wgmma-ws.ts",
    kernel: dtype === "bf16" ? "hgemmWgmmaWs" : "hgemmWgmmaWsF16",
    dtype,
    cudaArch: "sm_90",
    multiples: () => [128, 256, 64],
    grid: tiles16,
    persistent: true,
    tensorMapA: { boxRows: 128, boxCols: 64 },
    tensorMapsBC: wgmmaTensorMaps,
    notOnWebgpu: "WebGPU has no matrix operations (TSK3048)",
  },
  {
    name: dtype === "bf16" ? "hgemm-tiled" : "hgemm-tiled-f16",
    file: "examples/hgemm-tiled.ts",
    kernel: dtype === "bf16" ? "hgemmTiledBf16" : "hgemmTiledF16",
    dtype,
    grid: (m, n, c) => [Math.ceil(n / c.TILE!), Math.ceil(m / c.TILE!)],
    notOnWebgpu: "WebGPU's 16-bit arrays are not done yet (issue 20, step 3)",
  },
]);
