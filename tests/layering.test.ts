/**
 * The layering of docs/architecture.md, checked on the real import graph: no import cycles, every import
 * allowed by its layer, the compiler used only through compiler/index.ts, and the browser entry free of Node,
 * packages and the compiler. The checker itself is first tried on small made-up graphs that break each rule,
 * so a checker that cannot fail would fail here.
 */

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./golden-cases.ts";
import { kernelModule } from "../plugin/codegen.ts";
import { browserEntry, browserViolations, buildGraph, importCycles, layeringViolations } from "./tools/import-graph.ts";

/** The project's TypeScript files (kernel inputs under codegen-tests/ are data, not modules of the project). */
function projectSources(): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && entry.name !== "node_modules" && entry.name !== "dist") walk(relative);
      } else if (/\.[cm]?ts$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) {
        sources.set(relative, fs.readFileSync(path.join(repoRoot, relative), "utf8"));
      }
    }
  };
  for (const dir of ["compiler", "runtime", "plugin", "cli", "bench", "tests", "examples"]) walk(dir);
  return sources;
}

describe("the import checker", () => {
  it("finds a cycle, including one closed by a type-only import or an import() type", () => {
    const graph = buildGraph(
      new Map([
        ["runtime/a.ts", 'import { b } from "./b.ts";'],
        ["runtime/b.ts", 'import type { C } from "./c.ts";\nexport const b = 1;'],
        ["runtime/c.ts", 'export type C = import("./a.ts").A;'],
        ["runtime/d.ts", 'export { b } from "./b.ts";'],
      ]),
    );
    expect(importCycles(graph)).toEqual([["runtime/a.ts", "runtime/b.ts", "runtime/c.ts"]]);
  });

  it("finds imports that break the layering, with the file and line", () => {
    const graph = buildGraph(
      new Map([
        ["compiler/index.ts", 'export { x } from "./driver.ts";'],
        ["compiler/driver.ts", 'import fs from "node:fs";\nimport { y } from "../runtime/device.ts";\nexport const x = 1;'],
        ["compiler/lang/index.ts", 'import os from "node:os";'],
        ["runtime/device.ts", 'import { x } from "../compiler/index.ts";\nimport { z } from "../compiler/driver.ts";\nconst m = await import("../cli/main.ts");\nimport koffi from "koffi";\nimport { Command } from "commander";'],
        ["runtime/device.test.ts", 'import { it } from "vitest";\nimport { h } from "../tests/helper.ts";\nimport { t } from "./other.test.ts";'],
        ["runtime/other.test.ts", ""],
        ["cli/main.ts", 'import { Command } from "commander";\nimport { compileFiles } from "../compiler/index.ts";\nimport "./missing.ts";'],
        ["tests/helper.ts", 'import { x } from "../compiler/index.ts";'],
        ["plugin/index.ts", 'import { createUnplugin } from "unplugin";\nimport { lower } from "../compiler/driver.ts";\nimport { run } from "../cli/main.ts";\nimport { Command } from "commander";'],
      ]),
    );
    expect(layeringViolations(graph)).toEqual([
      "compiler/driver.ts:2 imports runtime/device.ts: compiler may not import runtime (imports run lang ← compiler ← runtime ← plugin ← cli ← tools)",
      "compiler/lang/index.ts:1 imports node:os: the kernel language's declarations run anywhere and import nothing",
      "runtime/device.ts:2 imports compiler/driver.ts: outside the compiler, use its public entry compiler/index.ts",
      "runtime/device.ts:3 imports cli/main.ts: runtime may not import cli (imports run lang ← compiler ← runtime ← plugin ← cli ← tools)",
      "runtime/device.ts:5 imports the package 'commander', which runtime may not use (allowed: koffi, webgpu)",
      "runtime/device.test.ts:3 imports the test file runtime/other.test.ts",
      "cli/main.ts:3 imports ./missing.ts, which is not a TypeScript file of the project",
      "plugin/index.ts:2 imports compiler/driver.ts: outside the compiler, use its public entry compiler/index.ts",
      "plugin/index.ts:3 imports cli/main.ts: plugin may not import cli (imports run lang ← compiler ← runtime ← plugin ← cli ← tools)",
      "plugin/index.ts:4 imports the package 'commander', which plugin may not use (allowed: unplugin, vite, esbuild, rollup, typescript)",
    ]);
  });

  it("finds Node modules, packages and compiler files reached from the browser entry", () => {
    const graph = buildGraph(
      new Map([
        ["runtime/webgpu/browser.ts", 'export * from "../device.ts";\nimport { w } from "./webgpu-device.ts";'],
        ["runtime/webgpu/webgpu-device.ts", 'import type { Manifest } from "../../compiler/lang/manifest.ts";\nimport { performance } from "perf_hooks";'],
        ["runtime/device.ts", 'import type { CompileOptions } from "../compiler/index.ts";\nimport "webgpu";'],
        ["compiler/index.ts", 'import fs from "node:fs";'],
        ["compiler/lang/manifest.ts", "export type Manifest = {};"],
      ]),
    );
    expect(browserViolations(graph).sort()).toEqual(
      [
        "runtime/webgpu/webgpu-device.ts:2 imports perf_hooks, reached from runtime/webgpu/browser.ts: the browser runtime imports nothing from Node",
        "runtime/device.ts:2 imports webgpu, reached from runtime/webgpu/browser.ts: the browser runtime imports no package",
        "compiler/index.ts is reached from runtime/webgpu/browser.ts: the browser runtime may use only runtime files and compiler/lang",
        "compiler/index.ts:1 imports node:fs, reached from runtime/webgpu/browser.ts: the browser runtime imports nothing from Node",
      ].sort(),
    );
  });
});

describe("the project's imports", () => {
  const sources = projectSources();
  const graph = buildGraph(sources);

  it("reads the whole project", () => {
    for (const file of ["compiler/index.ts", "compiler/lang/index.ts", "runtime/index.ts", "runtime/webgpu/browser.ts", "plugin/index.ts", "cli/main.ts", "bench/gpu-run.ts", "tests/cli.test.ts"]) {
      expect(graph.has(file), file).toBe(true);
    }
    expect([...graph.values()].flat().length).toBeGreaterThan(300);
  });

  it("have no cycles", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("follow the layering: lang ← compiler ← runtime ← plugin ← cli ← tools, the compiler only through compiler/index.ts", () => {
    expect(layeringViolations(graph)).toEqual([]);
  });

  it("keep the browser entry free of Node, packages and the compiler", () => {
    expect(browserViolations(graph)).toEqual([]);
  });
});

describe("the modules the bundler plugin generates", () => {
  it("import only tskernel/webgpu, the package's browser entry, so a web app's bundle reaches no compiler", () => {
    const files = ["examples/vite-app/src/saxpy.kernel.ts", "examples/vite-app/src/matmul.kernel.ts", "examples/matmul-tiled.ts", "examples/elementwise.ts"];
    const generated = new Map(
      files.map((file) => {
        const module = kernelModule(path.join(repoRoot, file), { root: repoRoot });
        if (!module.ok) throw new Error(module.errors.map((e) => e.rendered).join("\n"));
        return [`generated/${path.basename(file)}`, module.code] as const;
      }),
    );
    const graph = buildGraph(generated);
    for (const [file, edges] of graph) expect(edges.map((e) => e.specifier), file).toEqual(["tskernel/webgpu"]);
    // …which is the browser entry that browserViolations keeps free of Node, packages and the compiler.
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, { default: string }> };
    expect(manifest.exports["./webgpu"]!.default).toBe(`./dist/${browserEntry.replace(/\.ts$/, ".js")}`);
  });
});
