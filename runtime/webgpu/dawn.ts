/**
 * The WebGPU device in Node: finds Dawn (the optional `webgpu` package) and, on a Linux machine with no GPU,
 * SwiftShader's Vulkan driver from Debian's chromium package, then opens the one WebGPU device
 * (webgpu-device.ts) on it. Where a global `navigator.gpu` exists (Deno, a browser-like test environment) it
 * is used instead. A missing package or adapter is a BackendUnavailable error saying what to install.
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BackendUnavailable } from "../device.ts";
import { requestWebGpuDevice, type WebGpuDevice, type WebGpuLaunchOptions } from "./webgpu-device.ts";

/** Where Debian's chromium package puts SwiftShader's Vulkan driver, a CPU implementation Dawn can use. */
const swiftShaderIcds = ["/usr/lib/chromium/vk_swiftshader_icd.json", "/usr/lib/chromium-browser/vk_swiftshader_icd.json"];

export interface WebGpuDeviceOptions extends WebGpuLaunchOptions {
  /** Extra Dawn options for `create()` in Node, e.g. ["enable-dawn-features=disable_robustness"]. */
  readonly dawnOptions?: readonly string[];
  /** Use SwiftShader (CPU Vulkan) when no other Vulkan driver is configured. Default: true on Linux. */
  readonly swiftShaderFallback?: boolean;
}

export async function createWebGpuDevice(options: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  let gpu: GPU | undefined = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) {
    if ((options.swiftShaderFallback ?? process.platform === "linux") && !process.env.VK_ICD_FILENAMES && !process.env.VK_DRIVER_FILES) {
      const icd = swiftShaderIcds.find((file) => fs.existsSync(file));
      // Only on machines without a GPU device node: a real GPU always wins over the CPU fallback.
      if (icd && !hasGpuDeviceNode()) {
        process.env.VK_ICD_FILENAMES = icd;
        // SwiftShader complains on every start when XDG_RUNTIME_DIR is unset (headless machines, CI).
        process.env.XDG_RUNTIME_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-xdg-"));
      }
    }
    let webgpu: typeof import("webgpu");
    try {
      webgpu = await import("webgpu");
    } catch (error) {
      throw new BackendUnavailable(
        "webgpu",
        `the 'webgpu' package (Dawn for Node) could not be loaded: ${(error as Error).message}. It is an optional dependency of tskernel: install it with \`npm install webgpu\``,
      );
    }
    const globals = globalThis as Record<string, unknown>;
    for (const [key, value] of Object.entries(webgpu.globals)) if (!(key in globals)) globals[key] = value;
    // Dawn rounds timestamps to 100 µs by default (a browser's defence against timing attacks), which
    // makes kernel times meaningless; in Node the caller is trusted, so full resolution is asked for.
    gpu = webgpu.create(["disable-dawn-features=timestamp_quantization", ...(options.dawnOptions ?? [])]);
  }
  return requestWebGpuDevice(
    gpu,
    "On Linux without a GPU, install Debian's chromium package, which ships SwiftShader (tskernel then finds its " +
      "vk_swiftshader_icd.json), or set VK_ICD_FILENAMES to a Vulkan driver's ICD file",
    { batchSize: options.batchSize, checked: options.checked },
  );
}

/** An NVIDIA device or a DRM render node: some GPU a Vulkan driver could drive. */
function hasGpuDeviceNode(): boolean {
  if (fs.existsSync("/dev/nvidia0")) return true;
  try {
    return fs.readdirSync("/dev/dri").some((name) => name.startsWith("renderD"));
  } catch {
    return false;
  }
}
