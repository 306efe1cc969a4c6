/**
 * `tskernel bench launch` in headless Chromium: the same measurement (cli/bench/launch.ts) in a web page, on
 * the browser's WebGPU through the browser entry (`tskernel/webgpu`), with kernels built ahead of time by
 * `tskernel build --target wgsl` and fetched as a page fetches them. Here Chromium's WebGPU runs on
 * SwiftShader (the CPU), so the figures say what the host side of a browser's launch path costs, not what a GPU
 * does; the sequence runs at the small scale. Needs `npm run build` (bin/tskernel.js), Debian's chromium and
 * playwright-core. Usage:
 *   node dist/bench/browser-launch.js --out <file.json> [--chart <file.svg>] [--burst N]
 */

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import esbuild from "esbuild";
import { chromium } from "playwright-core";
import { packageRoot } from "../compiler/index.ts";
import { formatLaunchReport, launchBenchFiles, launchChartSvg, type LaunchBenchReport } from "../cli/bench/launch.ts";
import { chromiumArgs, chromiumPath, serve } from "../tests/tools/browser.ts";

const args = process.argv.slice(2);
const option = (name: string, fallback?: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const out = option("--out");
if (!out) throw new Error("usage: browser-launch --out <file.json> [--chart <file.svg>] [--burst N]");
const burst = Number(option("--burst", "1000"));
const root = packageRoot();
const site = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-browser-launch-"));

// The kernels, as a page would serve them, and the page's script: the browser entry and the benchmark, bundled.
const build = spawnSync(process.execPath, ["bin/tskernel.js", "build", ...launchBenchFiles, "--target", "wgsl", "--out", path.join(site, "kernels")], { cwd: root, stdio: "inherit" });
if (build.status !== 0) throw new Error(`tskernel build exited with status ${build.status}`);
const entry = path.join(site, "entry.ts");
fs.writeFileSync(
  entry,
  `import { createWebGpuDevice, fetchKernelLibrary } from ${JSON.stringify(path.join(root, "runtime/webgpu/browser.ts"))};
import { benchLaunch } from ${JSON.stringify(path.join(root, "cli/bench/launch.ts"))};
const status = (text) => { document.body.dataset.status = text; };
try {
  const library = await fetchKernelLibrary("kernels/manifest.json");
  const device = await createWebGpuDevice();
  const progress = [];
  const report = await benchLaunch(device, { library, scale: "small", burst: ${burst}, onProgress: (m) => progress.push(m) });
  window.launchReport = { report, progress, userAgent: navigator.userAgent };
  status("done");
} catch (error) {
  window.launchError = String(error && error.stack || error);
  status("error");
}
`,
);
await esbuild.build({ entryPoints: [entry], outfile: path.join(site, "entry.js"), bundle: true, format: "esm", platform: "browser", target: "es2022", logLevel: "warning" });
fs.writeFileSync(path.join(site, "index.html"), `<!doctype html><meta charset="utf-8"><title>tskernel bench launch</title><script type="module" src="entry.js"></script>\n`);

const { server, url } = await serve(site);
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
try {
  const page = await browser.newPage();
  await page.goto(`${url}index.html`);
  await page.waitForFunction(() => document.body.dataset.status === "done" || document.body.dataset.status === "error", undefined, { timeout: 600_000 });
  const error = await page.evaluate(() => (window as unknown as { launchError?: string }).launchError);
  if (error) throw new Error(`the page failed: ${error}`);
  const result = await page.evaluate(() => (window as unknown as { launchReport: { report: LaunchBenchReport; progress: string[]; userAgent: string } }).launchReport);
  const report = { ...result.report, device: `${result.report.device} in headless Chromium (${result.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? "Chromium"})` };
  console.log(formatLaunchReport(report));
  fs.writeFileSync(out, `${JSON.stringify({ date: new Date().toISOString(), host: `${os.cpus().length}-core ${os.cpus()[0]?.model?.trim()}`, userAgent: result.userAgent, reports: [report] }, null, 2)}\n`);
  const chart = option("--chart");
  if (chart) fs.writeFileSync(chart, launchChartSvg([report], `tskernel launch throughput, headless Chromium on SwiftShader, ${new Date().toISOString().slice(0, 10)}`));
} finally {
  await browser.close();
  server.closeAllConnections();
  server.close();
  fs.rmSync(site, { recursive: true, force: true });
}
