/**
 * `npm pack`'s last step (package.json's prepack, after the TypeScript build): builds the package's own kernels,
 * the matmul rungs, the fp8 rungs and the attention kernels (runtime/package-kernels.ts lists them), for every
 * target into `dist/kernels/`, with `sources.json` recording each source's sha256, so that an installed package
 * runs `matmul()`, `scaledMatmul()` and `attention()` without compiling a library first. With `TSKERNEL_PACKAGE_CUBIN_ARCH=sm_90` (nvcc on
 * the path) it also ships cubins for that architecture (wgmma modules for sm_90a), which the CUDA device loads
 * without NVRTC on a GPU of that architecture; by default the CUDA C is shipped and compiled once on first use.
 * Run from the package root: `node dist/cli/package-kernels.js [outDir]`.
 */

import fs from "node:fs";
import path from "node:path";
import { compileFiles, packageRoot, renderDiagnostics } from "../compiler/index.ts";
import { packageKernelFiles, sourceHash, type PackageKernelStamp } from "../runtime/package-kernels.ts";
import { writeBuild } from "./build.ts";
import { tskernelVersion } from "./package-info.ts";
import type { Io } from "./io.ts";

/** Builds the package's kernels into `outDir`; returns the exit status. */
export function writePackageKernels(outDir: string, io: Io, cubinArch?: string): number {
  const root = packageRoot();
  fs.rmSync(outDir, { recursive: true, force: true });
  const targets = ["cuda", "wgsl", "js"] as const;
  // Paths relative to the package root, so the manifest names the files as the package holds them.
  const result = compileFiles(packageKernelFiles.map((file) => path.join(root, file)), { targets, baseDir: root, lineDirectives: true });
  if (!result.ok) {
    io.stderr(`${renderDiagnostics(result.diagnostics, { readFile: (f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined) })}\n`);
    return 1;
  }
  const status = writeBuild(result, outDir, io, targets, { cubinArch });
  if (status !== 0) return status;
  const stamp: PackageKernelStamp = {
    format: "tskernel-package-kernels",
    generator: `tskernel ${tskernelVersion()}`,
    files: Object.fromEntries(packageKernelFiles.map((file) => [file, sourceHash(path.join(root, file))])),
  };
  fs.writeFileSync(path.join(outDir, "sources.json"), `${JSON.stringify(stamp, null, 2)}\n`);
  return 0;
}

// Run as a script (not when a test imports it).
if (process.argv[1] && path.basename(process.argv[1]).startsWith("package-kernels")) {
  const out = path.resolve(process.argv[2] ?? path.join(packageRoot(), "dist", "kernels"));
  const io: Io = { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };
  process.exitCode = writePackageKernels(out, io, process.env.TSKERNEL_PACKAGE_CUBIN_ARCH || undefined);
}
