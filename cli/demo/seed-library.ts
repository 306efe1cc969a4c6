/** Compiles the seed examples (and the benchmark's extra rungs) for a backend in-process (needs the compiler: Node with ts-morph). */

import path from "node:path";
import { packageRoot } from "../../compiler/index.ts";
import { compileKernelLibrary } from "../../runtime/kernels.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { BackendName } from "../../runtime/device.ts";
import { benchVariants } from "./variants.ts";

export function targetOf(backend: BackendName): "js" | "wgsl" | "cuda" {
  return backend === "cpu" ? "js" : backend === "webgpu" ? "wgsl" : "cuda";
}

export function compileSeedLibrary(backend: BackendName): KernelLibrary {
  const root = packageRoot();
  // The seed ladder and the rungs the benchmark adds on this backend (the tensor-core one where it compiles).
  const files = [...new Set(benchVariants(backend).map((v) => path.join(root, v.file)))];
  return compileKernelLibrary(files, [targetOf(backend)]);
}
