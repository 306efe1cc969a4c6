/** Compiles the seed examples (and the benchmark's extra rungs) for a backend in-process (needs the compiler: Node with ts-morph). */

import path from "node:path";
import { packageRoot } from "../../compiler/index.ts";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { BackendName } from "../../runtime/device.ts";
import { targetFor } from "../../runtime/matmul/candidates.ts";
import { variantFiles } from "./variants.ts";

export function compileSeedLibrary(backend: BackendName, options: { readonly checked?: boolean } = {}): KernelLibrary {
  const root = packageRoot();
  // The seed ladder and the rungs the benchmark adds; kernels whose `targets` leave this backend's target out
  // (the tensor-core rungs on WebGPU) are skipped by the compiler and only described.
  const files = variantFiles.map((file) => path.join(root, file));
  return compileKernelLibrary(files, [targetFor(backend)], options.checked ? { checked: true } : {});
}
