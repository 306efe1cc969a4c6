/**
 * A check of the 8-bit float conversions on a CUDA GPU (run by the device tool on the H100; the test suite has no
 * GPU): tests/kernels/float8-convert.ts built two ways, as a cubin by nvcc at build time and as CUDA C that the
 * runtime compiles with NVRTC on the device, each run over every code of e4m3 and e5m2 and every rounding probe
 * (tests/float8-probes.ts), compared with the host encode/decode pair. The CPU backend and the helpers compiled
 * for the host are checked the same way in CI (tests/float8.test.ts); this is where the GPU's own float
 * arithmetic (subnormals, flush-to-zero) would show. Prints JSON; exits 1 on a mismatch.
 *
 *   node float8-gpu-check.mjs <cubin build dir> <CUDA C build dir>
 */

import { createCudaDevice, loadKernelLibrary } from "../runtime/index.ts";
import { float8ConversionMismatches } from "../tests/float8-probes.ts";

async function main(): Promise<void> {
  const dirs = process.argv.slice(2);
  const device = await createCudaDevice();
  const results: { build: string; mismatches: number; first: string[] }[] = [];
  for (const dir of dirs) {
    const wrong = await float8ConversionMismatches(device, loadKernelLibrary(dir).get("float8Convert"), 20000);
    results.push({ build: dir, mismatches: wrong.length, first: wrong.slice(0, 10) });
  }
  console.log(JSON.stringify({ device: device.name, date: new Date().toISOString(), results }, null, 1));
  device.dispose();
  process.exit(results.every((r) => r.mismatches === 0) ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
