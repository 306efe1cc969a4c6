/** Compiles kernel source text given inline, for tests that check one behaviour on a small kernel. */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { compileFiles, renderDiagnostics, type CompileOptions, type CompileResult } from "../compiler/index.ts";

export function compileSource(source: string, options: Partial<CompileOptions> = {}): CompileResult & { rendered: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-src-"));
  const file = path.join(dir, "kernel.ts");
  fs.writeFileSync(file, source);
  const result = compileFiles([file], { targets: ["cuda", "wgsl"], baseDir: dir, ...options });
  const rendered = renderDiagnostics(result.diagnostics, { baseDir: dir, readFile: (f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined) });
  return { ...result, rendered };
}

export const header = 'import { kernel, shared, syncThreads, threadIdx, blockIdx, blockDim, gridDim, f32, i32, u32, fma, type Const, type ReadonlyFloat32Array } from "tskernel";\n';
