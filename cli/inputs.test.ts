/**
 * What `check` and `build` compile for files, directories and globs: a directory gives its TypeScript files
 * that import from "tskernel" (not other modules, declarations, node_modules or dot-folders), a glob what it
 * matches, each file once, and a directory or glob with nothing in it a located-free diagnostic naming it.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { expandInputs, matchGlob } from "./inputs.ts";

const kernelText = 'import { kernel, threadIdx } from "tskernel";\nexport const k = kernel({ block: [4] }, (out: Float32Array) => {\n  out[threadIdx.x] = 1;\n});\n';

/** A project tree in a fresh temporary folder; returns its root. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-inputs-"));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

const project = tree({
  "src/kernels/a.kernel.ts": kernelText,
  "src/kernels/b.ts": kernelText.replace('"tskernel"', "'tskernel'"),
  "src/kernels/helper.ts": "export const two = 2;\n",
  "src/kernels/types.d.ts": kernelText,
  "src/kernels/nested/c.kernel.mts": kernelText,
  "src/kernels/nested/.cache/d.kernel.ts": kernelText,
  "src/kernels/node_modules/pkg/e.kernel.ts": kernelText,
  "src/app.ts": 'import { a } from "./kernels/a.kernel.ts";\n',
  "src/empty/readme.md": "",
});
const relative = (files: readonly string[]) => files.map((f) => path.relative(project, path.resolve(project, f)).split(path.sep).join("/"));

describe("expandInputs", () => {
  it("takes a directory's kernel files, sorted, and nothing else", () => {
    const { files, diagnostics } = expandInputs(["src/kernels"], project);
    expect(relative(files)).toEqual(["src/kernels/a.kernel.ts", "src/kernels/b.ts", "src/kernels/nested/c.kernel.mts"]);
    expect(diagnostics).toEqual([]);
  });

  it("matches globs with *, ?, [...], {a,b} and **, not into dot-folders or node_modules", () => {
    const names = (pattern: string) => relative(matchGlob(pattern, project).files);
    expect(names("src/**/*.kernel.ts")).toEqual(["src/kernels/a.kernel.ts"]);
    expect(names("src/**/*.kernel.{ts,mts}")).toEqual(["src/kernels/a.kernel.ts", "src/kernels/nested/c.kernel.mts"]);
    expect(names("src/kernels/?.ts")).toEqual(["src/kernels/b.ts"]);
    expect(names("src/kernels/[ab]*.ts")).toEqual(["src/kernels/a.kernel.ts", "src/kernels/b.ts"]);
    expect(names("src/kernels/[!a]*.ts")).toEqual(["src/kernels/b.ts", "src/kernels/helper.ts", "src/kernels/types.d.ts"]);
    expect(names("src/*.ts")).toEqual(["src/app.ts"]);
    expect(names(path.join(project, "src/kernels/*.kernel.ts"))).toEqual(["src/kernels/a.kernel.ts"]);
    expect(names("src/**")).toHaveLength(7);
  });

  it("lists each file once, in argument order, and passes an unknown name on for the compiler to report", () => {
    const { files, diagnostics } = expandInputs(["src/kernels/b.ts", "src/kernels", "src/**/a.kernel.ts", "missing.ts"], project);
    expect(relative(files)).toEqual(["src/kernels/b.ts", "src/kernels/a.kernel.ts", "src/kernels/nested/c.kernel.mts", "missing.ts"]);
    expect(diagnostics).toEqual([]);
  });

  it("reports a directory without kernel files (TSK4010) and a glob that matches nothing (TSK4011)", () => {
    const { files, diagnostics } = expandInputs(["src/empty", "src/**/*.cu"], project);
    expect(files).toEqual([]);
    expect(diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      'TSK4010 no kernel files in src/empty: a directory stands for the TypeScript files under it that import from "tskernel"',
      "TSK4011 no files match src/**/*.cu",
    ]);
  });

  it("names the folders a watch must follow", () => {
    const { watchRoots } = expandInputs(["src/kernels", "src/**/*.kernel.ts", "src/app.ts"], project);
    expect(watchRoots).toEqual([
      { dir: path.join(project, "src/kernels"), recursive: true },
      { dir: path.join(project, "src"), recursive: true },
      { dir: path.join(project, "src"), recursive: false },
    ]);
  });
});
