/**
 * examples/vite-app end to end, as its user builds it: `vite build` with its own vite.config.ts (the plugin
 * from `tskernel/plugin/vite`, found by the package's name), the bundle served on 127.0.0.1 and opened in
 * Debian's chromium (headless, WebGPU on SwiftShader) through playwright-core; the page runs SAXPY and the
 * tiled matmul (both of its specializations) and checks them against a float64 reference. Also: the bundle
 * holds no compiler code and is small, and the app's `tsc` checks launch arguments against the kernels'
 * signatures (a wrong argument is a type error).
 *
 * Needs dist/ (`npm test` builds it first). The browser part is skipped when /usr/bin/chromium is missing,
 * unless TSKERNEL_REQUIRE_BROWSER=1 (CI), which makes that a failure.
 */

import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import ts from "typescript";
import { build, type Rolldown } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./golden-cases.ts";
import { chromiumArgs, chromiumPath, serve } from "./tools/browser.ts";

const appRoot = path.join(repoRoot, "examples", "vite-app");
const outDir = path.join(repoRoot, "build", "vite-app");
const required = process.env.TSKERNEL_REQUIRE_BROWSER === "1";
const noBrowser = !fs.existsSync(chromiumPath);

interface Row {
  kernel: string;
  size: string;
  pass: boolean;
  maxError: number;
  tolerance: number;
  wgslBytes: number;
}

let chunks: Rolldown.OutputChunk[] = [];

beforeAll(async () => {
  const result = await build({ root: appRoot, configFile: path.join(appRoot, "vite.config.ts"), logLevel: "silent", build: { outDir, emptyOutDir: true } });
  const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
  chunks = outputs.flatMap((o) => o.output).filter((o): o is Rolldown.OutputChunk => o.type === "chunk");
});

describe("the Vite app's bundle", () => {
  it("holds the kernels' WGSL and only the browser runtime: no compiler, no ts-morph, no TypeScript, no Node", () => {
    expect(chunks.length).toBeGreaterThan(0);
    const code = chunks.map((c) => c.code).join("\n");
    // The three specializations' WGSL, made at build time.
    expect(code).toContain("@compute @workgroup_size(256, 1, 1)");
    expect(code).toContain("@compute @workgroup_size(16, 16, 1)");
    expect(code).toContain("@compute @workgroup_size(8, 8, 1)");
    expect(code).toContain("dispatchWorkgroups");
    expect(code).not.toMatch(/ts-morph|typescript|compileFiles|createProject|lowerFile|from ["']node:|require\(/);
    // What went in: the app's files and the runtime's, nothing of the compiler but compiler/lang (the language's
    // own layer, which imports nothing: its float16.ts rounds host values to f16/bf16 as the kernels do).
    const modules = chunks.flatMap((c) => c.moduleIds).filter((id) => !id.startsWith("\0"));
    const inside = (dir: string) => (id: string) => id.startsWith(dir + path.sep);
    const allowed = [path.join(appRoot, "src"), path.join(repoRoot, "dist", "runtime"), path.join(repoRoot, "dist", "compiler", "lang")].map(inside);
    const outside = modules.filter((id) => id !== path.join(appRoot, "index.html") && !allowed.some((within) => within(id)) && !id.includes("vite/"));
    expect(outside).toEqual([]);
    expect(modules.some((id) => id.endsWith("saxpy.kernel.ts"))).toBe(true);
    expect(modules.some((id) => id.endsWith("matmul.kernel.ts"))).toBe(true);
    // The app's JS is the runtime, two kernels and the page: tens of KB (27 KB on 2026-11-23), not the compiler's MBs.
    const bytes = chunks.reduce((sum, c) => sum + Buffer.byteLength(c.code), 0);
    expect(bytes).toBeLessThan(64 * 1024);
  });

  it("type-checks with the app's tsc, and a launch with wrong arguments does not", () => {
    const configFile = path.join(appRoot, "tsconfig.json");
    const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configFile, ts.sys.readFile).config, ts.sys, appRoot);
    const check = (extra?: { file: string; text: string }) => {
      const host = ts.createCompilerHost(config.options);
      if (extra) {
        const { getSourceFile, fileExists, readFile } = host;
        host.getSourceFile = (name, language, ...rest) => (name === extra.file ? ts.createSourceFile(name, extra.text, language) : getSourceFile(name, language, ...rest));
        host.fileExists = (name) => name === extra.file || fileExists(name);
        host.readFile = (name) => (name === extra.file ? extra.text : readFile(name));
      }
      const program = ts.createProgram({ rootNames: [...config.fileNames, ...(extra ? [extra.file] : [])], options: config.options, host });
      return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ""}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    };
    expect(check()).toEqual([]);
    const wrong = check({
      file: path.join(appRoot, "src", "wrong-args.ts"),
      text: [
        'import { createWebGpuDevice, launcher } from "tskernel/webgpu";',
        'import { saxpy } from "./saxpy.kernel.ts";',
        'import { matmul } from "./matmul.kernel.ts";',
        "const device = await createWebGpuDevice();",
        "const x = device.createBuffer(new Float32Array(4));",
        "await launcher(device, saxpy)({ grid: 1, args: [4, x, x, x] });", // a is f32, not a buffer
        "await launcher(device, matmul)({ grid: 1, args: [x, x, x, 1, 1, 1, 16] });", // TILE is a constant, not an argument
        "await launcher(device, matmul)({ grid: 1, args: [x, x, x, 1, 1, 1] });", // right
        "export {};",
      ].join("\n"),
    });
    expect(wrong).toHaveLength(2);
    expect(wrong[0]).toContain("wrong-args.ts: Type 'DeviceBuffer' is not assignable to type 'number'");
    expect(wrong[1]).toContain("Source has 7 element(s) but target allows only 6");
  });
});

describe.skipIf(noBrowser && !required)(`the Vite app in Chromium${noBrowser ? ` (skipped: ${chromiumPath} not found)` : ""}`, () => {
  let server: http.Server | undefined;
  let browser: Browser | undefined;

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it("runs SAXPY and the tiled matmul on WebGPU and both match the float64 reference", async () => {
    if (noBrowser) throw new Error(`TSKERNEL_REQUIRE_BROWSER=1, but ${chromiumPath} is missing (apt-get install chromium)`);
    const served = await serve(outDir);
    server = served.server;
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
    const page = await browser.newPage();
    const logs: string[] = [];
    page.on("console", (message) => logs.push(`console.${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => logs.push(`pageerror: ${error.message}`));
    await page.goto(`${served.url}index.html`);
    await page.waitForFunction(() => document.body.dataset.status !== "running", undefined, { timeout: 90_000 });
    const status = await page.evaluate(() => document.body.dataset.status);
    const error = await page.evaluate(() => (window as unknown as { tskernelError?: string }).tskernelError);
    const rows = await page.evaluate(() => (window as unknown as { tskernelResults?: Row[] }).tskernelResults);
    expect(status, `${error ?? JSON.stringify(rows)}\n${logs.join("\n")}`).toBe("pass");
    expect(rows!.map((r) => r.kernel)).toEqual(["saxpy", "matmul (TILE 16)", "matmul (TILE 8)"]);
    for (const row of rows!) {
      expect(row.pass, row.kernel).toBe(true);
      expect(row.maxError).toBeLessThanOrEqual(row.tolerance);
      expect(row.wgslBytes).toBeGreaterThan(100);
    }
    expect(await page.locator("#results tbody tr").count()).toBe(3);
  });
});
