/**
 * What the browser tests share: where Debian's chromium is, the flags that give a headless page a WebGPU
 * adapter on SwiftShader, and a static file server for a folder on 127.0.0.1.
 */

import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export const chromiumPath = "/usr/bin/chromium";

/**
 * Chromium flags that give a page a WebGPU adapter on a Linux machine without a GPU. --enable-unsafe-webgpu
 * is the one that matters: without it navigator.gpu exists but requestAdapter() finds "No available adapters"
 * (Chromium does not offer its software adapter by default); with it Dawn runs on SwiftShader's Vulkan, which
 * Debian's chromium package ships (/usr/lib/chromium/libvk_swiftshader.so). --no-sandbox because tests run as
 * root. The rest keep a headless run from reaching for the network (this machine has none) and from setting
 * up a profile. Neither --use-angle=swiftshader nor --enable-features=Vulkan is needed (ANGLE is WebGL's).
 */
export const chromiumArgs = [
  "--headless=new",
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--no-first-run",
  "--no-default-browser-check",
];

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wgsl": "text/plain; charset=utf-8",
};

/** A static file server for one folder, on 127.0.0.1 and a port the system picks. */
export async function serve(root: string): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? "/", "http://127.0.0.1").pathname);
    const file = path.join(root, pathname.endsWith("/") ? `${pathname}index.html` : pathname);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": contentTypes[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store" });
    fs.createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}
