/**
 * The browser runtime, `tskernel/webgpu`: a WebGPU device on `navigator.gpu` (or any `GPU` object passed in,
 * such as Dawn's in Node) that launches kernels built ahead of time by `tskernel build --target wgsl`, from
 * their WGSL and the manifest's description of each kernel (bindings, uniform layout, block shape). It is
 * the same device as the Node runtime's (webgpu-device.ts), with the same argument checks and errors. Kernels
 * a bundler compiled with the plugin (`tskernel/plugin`) come in through kernel-module.ts (`launcher`). It
 * imports nothing from Node and no compiler code (tests/layering.test.ts checks both), so a bundle of a web
 * page holds only what launches kernels.
 */

import type { Manifest } from "../../compiler/lang/manifest.ts";
import { BackendUnavailable } from "../device.ts";
import { filesToRead, libraryFromManifest, type KernelLibrary } from "../library.ts";
import { requestWebGpuDevice, type WebGpuDevice, type WebGpuLaunchOptions } from "./webgpu-device.ts";

export * from "../device.ts";
export { KernelLibrary, libraryFromManifest, filesToRead, type BuildFiles, type OutputTarget } from "../library.ts";
export { LaunchError, kernelFits } from "../launch-check.ts";
export { LaunchFailure, type LaunchRef } from "../launch-ledger.ts";
export { KernelFault, type FaultKind } from "../kernel-fault.ts";
export { CheckFailures } from "../checked-build.ts";
export { referenceGemm, compareToReference, type ErrorReport } from "../reference.ts";
export { WebGpuDevice, requestWebGpuDevice, type WebGpuLaunchOptions } from "./webgpu-device.ts";
export { compiledKernel, kernelHandle, launcher, layoutOf, type CompiledKernel, type CompiledSpecialization, type KernelLauncher, type LaunchArg, type LaunchArgs, type LaunchValue, type TypedLaunchOptions } from "./kernel-module.ts";
export type { Manifest, ManifestKernel, ManifestLayout, ManifestParam } from "../../compiler/lang/manifest.ts";
export { packColumns, packStructs, packValue, unpackColumns, unpackStructs, type LayoutValue } from "../layouts.ts";

export interface BrowserWebGpuOptions extends WebGpuLaunchOptions {
  /** The WebGPU implementation to use; default `navigator.gpu`. */
  readonly gpu?: GPU;
}

/** A WebGPU device on `navigator.gpu` (or `options.gpu`); BackendUnavailable says why there is none. */
export async function createWebGpuDevice(options: BrowserWebGpuOptions = {}): Promise<WebGpuDevice> {
  const scope = globalThis as { navigator?: { gpu?: GPU }; isSecureContext?: boolean };
  const gpu = options.gpu ?? scope.navigator?.gpu;
  if (!gpu) {
    throw new BackendUnavailable(
      "webgpu",
      scope.isSecureContext === false
        ? "WebGPU needs a secure context: serve the page from http://localhost, http://127.0.0.1 or over https"
        : "navigator.gpu is missing: this browser has no WebGPU, or it is turned off (Chromium on Linux needs --enable-unsafe-webgpu)",
    );
  }
  return requestWebGpuDevice(gpu, "WebGPU may be turned off in this browser, or no GPU or software renderer is available", { batchSize: options.batchSize, checked: options.checked });
}

/**
 * Fetches a build made by `tskernel build --target wgsl --out <dir>` and served with the page: its
 * manifest.json, then the WGSL files and line maps it names (nothing else), relative to the manifest.
 */
export async function fetchKernelLibrary(manifestUrl: string | URL, options: { readonly fetch?: typeof fetch } = {}): Promise<KernelLibrary> {
  const get = options.fetch ?? fetch;
  const base = new URL(manifestUrl, (globalThis as { location?: { href: string } }).location?.href);
  const fetchText = async (url: URL): Promise<string> => {
    let response: Response;
    try {
      response = await get(url);
    } catch (error) {
      throw new Error(`tskernel: cannot fetch ${url.href}: ${(error as Error).message}`);
    }
    if (!response.ok) throw new Error(`tskernel: cannot fetch ${url.href}: HTTP ${response.status}`);
    return response.text();
  };
  let manifest: Manifest;
  const manifestText = await fetchText(base);
  try {
    manifest = JSON.parse(manifestText) as Manifest;
  } catch (error) {
    throw new Error(`tskernel: ${base.href} is not a tskernel manifest: ${(error as Error).message}`);
  }
  const files = new Map<string, string>();
  await Promise.all(filesToRead(manifest, ["wgsl"]).text.map(async (file) => files.set(file, await fetchText(new URL(file, base)))));
  return libraryFromManifest(
    manifest,
    {
      text: (file) => files.get(file)!,
      bytes: () => {
        throw new Error("tskernel: the browser runtime reads no binary files");
      },
    },
    ["wgsl"],
  );
}
