/**
 * The browser page (examples/web/) end to end: builds its kernels with the real CLI, serves examples/web/ on
 * 127.0.0.1, opens it in Debian's chromium (headless, WebGPU on SwiftShader) through playwright-core, waits
 * for the ladder to finish, checks every variant passed (or was skipped because its block is larger than
 * the adapter allows), and saves a screenshot to build/browser/ladder.png; then the RGBA8 blur page
 * (blur.html), byte for byte against its reference (build/browser/blur.png).
 *
 * Skipped when /usr/bin/chromium is missing, unless TSKERNEL_REQUIRE_BROWSER=1 (CI), which makes that a
 * failure.
 */

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./golden-cases.ts";
import { chromiumArgs, chromiumPath, serve } from "./tools/browser.ts";

const required = process.env.TSKERNEL_REQUIRE_BROWSER === "1";
const missing = !fs.existsSync(chromiumPath);
const webRoot = path.join(repoRoot, "examples", "web");
const screenshot = path.join(repoRoot, "build", "browser", "ladder.png");
const size = 100; // not a multiple of 16, 32, 64 or 128: the guarded and the padded variants are both exercised

interface Row {
  variant: string;
  id: string;
  size: number;
  paddedSize?: number;
  ms?: number;
  gflops?: number;
  errors?: { maxRelative: number; averageRelative: number; normwiseRelative: number; nonFinite: number };
  status: "pass" | "FAIL" | "skipped";
  skip?: string;
  note?: string;
}

const skip = missing && !required;

describe.skipIf(skip)(`the browser page${skip ? ` (skipped: ${chromiumPath} not found; install Debian's chromium package, or set TSKERNEL_REQUIRE_BROWSER=1 to fail instead)` : ""}`, () => {
  let server: http.Server | undefined;
  let baseUrl = "";
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    if (missing) throw new Error(`TSKERNEL_REQUIRE_BROWSER=1, but ${chromiumPath} is missing (apt-get install chromium)`);
    // The page's kernels and ladder, made the way a user makes them (needs dist/: `npm test` builds it first).
    execFileSync(process.execPath, [path.join(webRoot, "build.mjs")], { cwd: repoRoot, stdio: "pipe" });
    ({ server, url: baseUrl } = await serve(webRoot));
    // launch() starts Chromium on a fresh temporary profile (--user-data-dir), which it deletes on close.
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  async function open(query: string, file = "index.html"): Promise<Page> {
    const page = await context!.newPage();
    page.on("console", (message) => logs.push(`console.${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => logs.push(`pageerror: ${error.message}`));
    await page.goto(`${baseUrl}${file}${query}`);
    // SwiftShader runs the shaders on the CPU: give the whole ladder time.
    try {
      await page.waitForFunction(() => document.body.dataset.status === "done" || document.body.dataset.status === "error", undefined, { timeout: 90_000 });
    } catch (error) {
      const status = await page.locator("#status").textContent().catch(() => "?");
      throw new Error(`the page did not finish (it says: ${status}): ${(error as Error).message}\n${logs.join("\n")}`);
    }
    return page;
  }

  it(`runs every seed variant at n = ${size} on a WebGPU adapter and checks it against the float64 reference`, async () => {
    const page = await open(`?n=${size}&runs=3`);
    fs.mkdirSync(path.dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });
    const status = await page.evaluate(() => document.body.dataset.status);
    const error = await page.evaluate(() => (window as unknown as { tskernelError?: string }).tskernelError);
    expect(status, `the page stopped with an error: ${error}\n${logs.join("\n")}`).toBe("done");

    const rows = await page.evaluate(() => (window as unknown as { tskernelResults: Row[] }).tskernelResults);
    const adapter = await page.evaluate(() => (window as unknown as { tskernelAdapter: { name: string } }).tskernelAdapter);
    const summary = rows.map((r) => `${r.variant}: ${r.status}${r.note ? ` (${r.note})` : ""}${r.gflops ? ` ${r.gflops.toFixed(3)} GFLOP/s` : ""}`).join("\n");
    console.log(`browser ladder on ${adapter.name}, n = ${size}:\n${summary}`);

    // The same list as the demo, in its order.
    const { seedVariants } = await import("../cli/demo/variants.ts");
    expect(rows.map((r) => r.id)).toEqual(seedVariants.map((v) => v.id));
    for (const row of rows) {
      if (row.status === "skipped") {
        expect(row.skip, `${row.variant} was skipped: ${row.note}`).toBe("block");
        expect(row.note).toMatch(/^needs a block/);
        continue;
      }
      expect(row.status, `${row.variant}: ${row.note}`).toBe("pass");
      expect(row.size).toBe(size);
      expect(row.errors!.nonFinite).toBe(0);
      expect(row.errors!.normwiseRelative).toBeLessThanOrEqual(size * 2 ** -23);
      expect(row.ms).toBeGreaterThan(0);
    }
    // Most of the ladder runs even on WebGPU's default limits (256 invocations per workgroup).
    expect(rows.filter((r) => r.status === "pass").length).toBeGreaterThanOrEqual(10);
    // sgemm falls back to the 16×16 block where the 32×32 one does not fit.
    const sgemm = rows.find((r) => r.id === "sgemm-naive")!;
    expect(sgemm.variant).toMatch(/^sgemm-naive \(BLOCKSIZE (16|32)\)$/);

    // What a person sees: one table row and one chart row per variant.
    expect(await page.locator("#table tbody tr").count()).toBe(rows.length);
    expect(await page.locator("#chart svg rect").count()).toBe(rows.filter((r) => r.gflops !== undefined).length);
    expect(fs.statSync(screenshot).size).toBeGreaterThan(10_000);
    await page.close();
  });

  it("runs on the runtime's browser entry: no WebGPU code of its own, no compiler or Node module in the bundle", () => {
    const page = fs.readFileSync(path.join(webRoot, "main.js"), "utf8");
    expect(page).toContain('importGenerated("./lib/tskernel-webgpu.js")');
    for (const call of ["requestAdapter", "requestDevice", "createComputePipeline", "createBindGroup", "dispatchWorkgroups", "mapAsync"]) expect(page).not.toContain(call);
    const bundle = fs.readFileSync(path.join(webRoot, "lib", "tskernel-webgpu.js"), "utf8");
    expect(bundle).toContain("dispatchWorkgroups");
    expect(bundle).not.toMatch(/ts-morph|typescript|compileFiles|from ["']node:|require\(/);
  });

  it("blurs an RGBA8 image with examples/blur-rgba8.ts, every byte as the JavaScript reference, and shows both images", async () => {
    // 100 pixels wide (25 vectors: a partial block) and 37 rows (a partial strip), blurred three times.
    const page = await open("?width=100&height=37&passes=3", "blur.html");
    const error = await page.evaluate(() => (window as unknown as { tskernelError?: string }).tskernelError);
    expect(await page.evaluate(() => document.body.dataset.status), `the blur page stopped with an error: ${error}\n${logs.join("\n")}`).toBe("done");
    const result = await page.evaluate(() => (window as unknown as { tskernelBlur: { width: number; height: number; passes: number; mismatches: number; changed: number; bytes: number; ms: number; entryPoint: string } }).tskernelBlur);
    console.log(`browser blur: ${JSON.stringify(result)}`);
    expect(result).toMatchObject({ width: 100, height: 37, passes: 3, bytes: 4 * 100 * 37, mismatches: 0 });
    // The blur changed most bytes of the striped, noisy image (a copy, or nothing, would not).
    expect(result.changed).toBeGreaterThan(result.bytes / 2);
    expect(result.ms).toBeGreaterThan(0);
    expect(result.entryPoint).toMatch(/^blurRgba8_THREADS_/);
    expect(await page.locator("#summary").textContent()).toMatch(/^pass: 0 of 14800 bytes differ/);
    const sizes = await page.evaluate(() => [...document.querySelectorAll("canvas")].map((c) => [c.width, c.height]));
    expect(sizes).toEqual([[100, 37], [100, 37]]);
    await page.screenshot({ path: path.join(path.dirname(screenshot), "blur.png"), fullPage: true });
    await page.close();
  });

  it("shows a bad ?width= on the blur page as an error", async () => {
    const page = await open("?width=10", "blur.html");
    expect(await page.evaluate(() => document.body.dataset.status)).toBe("error");
    expect(await page.locator("#error-text").textContent()).toContain("?width= must be a multiple of 4");
    await page.close();
  });

  it("shows a bad ?n= on the page as an error", async () => {
    const page = await open("?n=0");
    expect(await page.evaluate(() => document.body.dataset.status)).toBe("error");
    expect(await page.locator("#error-text").textContent()).toContain("?n= must be an integer from 1 to 4096");
    await page.close();
  });
});
