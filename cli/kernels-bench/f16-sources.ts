/**
 * The suite's 16-bit row kernels built for f16. The examples are written once over `T extends "bf16" | "f16"` but
 * declare bf16 specializations only (WGSL enables f16 for a whole module, and the WebGPU adapters we measure on
 * lack shader-f16), so the f16 builds are made from copies with every `T: "bf16"` specialization made
 * `T: "f16"`: what tests/half-row-kernels.test.ts runs on the CPU and bench/gpu-prep.sh builds for the H100
 * (f16Cases in cases-bf16.ts are their cases).
 */

import fs from "node:fs";
import path from "node:path";

/** The example files whose kernels f16Cases run. */
export const halfRowSourceFiles: readonly string[] = ["layer-norm-bf16.ts", "rms-norm-bf16.ts", "softmax-bf16.ts", "elementwise-bf16.ts"];

/**
 * Writes the f16 copies of halfRowSourceFiles from `examplesDir` into `dir` (named `…-f16.ts`) and returns their
 * paths. A file without a `T: "bf16"` specialization is an error: its copy would build nothing in f16.
 */
export function writeF16Sources(examplesDir: string, dir: string): string[] {
  fs.mkdirSync(dir, { recursive: true });
  return halfRowSourceFiles.map((file) => {
    const text = fs.readFileSync(path.join(examplesDir, file), "utf8");
    const replaced = text.replaceAll('T: "bf16"', 'T: "f16"');
    if (replaced === text) throw new Error(`tskernel: ${file} declares no T: "bf16" specialization to build in f16`);
    const out = path.join(dir, file.replace("-bf16", "-f16"));
    fs.writeFileSync(out, replaced);
    return out;
  });
}
