/**
 * The differential fuzzer's CUDA leg on the GPU machine (tests/fuzz/diff/cuda-leg.ts): at least 2000 random
 * programs on CUDA and on the CPU backend, each against the reference. bench/gpu-prep.sh bundles it (with the
 * compiler, which the generated programs need) and `bash bench/gpu.sh --only fuzz-cuda` runs it there. Usage:
 *   node fuzz-cuda.mjs --out <dir> [--count 2500] [--seed 1] [--seconds 1500] [--stand-in cpu]
 * Writes <dir>/fuzz-cuda.json; exit status 1 when any program failed (0 when CUDA is unavailable: skipped).
 * `--stand-in cpu` runs the CPU backend in CUDA's place, to try the bundle on a machine without a GPU.
 */

import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { runCudaLeg } from "../tests/fuzz/diff/cuda-leg.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : fallback;
};
const summary = await runCudaLeg({
  out: option("--out", process.env.OUT ?? "."),
  count: Number(option("--count", "2500")),
  seed: Number(option("--seed", "1")),
  seconds: Number(option("--seconds", "1500")),
  ...(option("--stand-in", "") === "cpu" ? { open: () => new CpuDevice(), target: "js" as const } : {}),
  log: (line) => console.log(line),
});
process.exit("failures" in summary && summary.failures.length > 0 ? 1 : 0);
