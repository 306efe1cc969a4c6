/** A library loaded from `tskernel build` output runs like one compiled in-process (no compiler needed). */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./main.ts";
import { packageRoot } from "../compiler/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { loadKernelLibrary } from "../runtime/load-library.ts";
import { runDemo } from "./demo/run-demo.ts";

describe("loadKernelLibrary", () => {
  it("loads every example from a build directory and runs the seed ladder on the CPU", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-lib-"));
    // Not the examples that call threadFence() or use matrix operations, which WebGPU lacks (TSK3050, TSK3048):
    // they build for CUDA and JS only.
    const examples = fs
      .readdirSync(path.join(packageRoot(), "examples"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => path.join(packageRoot(), "examples", f))
      .filter((f) => !/\bthreadFence\(|\b(wg)?mma\(/.test(fs.readFileSync(f, "utf8")));
    const code = await runCli(["build", ...examples, "--target", "cuda,wgsl,js", "--out", out], { stdout: () => {}, stderr: () => {} });
    expect(code).toBe(0);
    const library = loadKernelLibrary(out);
    for (const kernel of library.kernels) {
      expect(kernel.js, kernel.description.entryName).toBeTypeOf("function");
      expect(kernel.cuda?.source).toContain(`${kernel.cuda?.function}(`);
      expect(kernel.wgsl?.source).toContain(`fn ${kernel.wgsl?.entryPoint}(`);
    }
    const { rows, ok } = await runDemo(new CpuDevice(), { size: 45, library });
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => "pass"));
    expect(ok).toBe(true);
  });

  it("says which file is missing", () => {
    expect(() => loadKernelLibrary(path.join(os.tmpdir(), "no-such-build"))).toThrow(/cannot read .*no-such-build\/manifest\.json/);
  });
});
