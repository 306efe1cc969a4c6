/**
 * Test tool: validates WGSL with Dawn (the `webgpu` npm package) on its null backend, so no GPU or driver
 * is needed. Tint's full front end runs (parsing, typing, uniformity analysis) and pipeline creation runs
 * Dawn's device-limit checks, which is where oversized workgroup storage or workgroup sizes are caught.
 * Tests use it to check that the WGSL the compiler emits is accepted exactly as a browser would accept it,
 * with no warnings; it is a test helper, not part of the shipped compiler or runtime.
 */

import { create, globals } from "webgpu";

export interface WgslMessage {
  /** "error", "warning" or "info" (Tint's notes that accompany an error) as Dawn reports them. */
  type: string;
  /** 1-based; 0 for pipeline errors, which carry no source position. */
  line: number;
  column: number;
  message: string;
  /** Set on messages that came from creating the pipeline for this entry point. */
  entryPoint?: string;
}

export interface WgslValidation {
  /** False when there is any error or warning, from the module or from a pipeline. */
  ok: boolean;
  messages: WgslMessage[];
}

interface Dawn {
  gpu: GPU;
  adapter: GPUAdapter;
  device: GPUDevice;
}

let dawn: Promise<Dawn> | null = null;

async function openDawn(): Promise<Dawn> {
  // The webgpu package expects its GPU* classes and enums as globals (GPUBufferUsage and friends); only the
  // missing ones are installed so that a real WebGPU global, if a test environment has one, is kept.
  const g = globalThis as Record<string, unknown>;
  for (const [key, value] of Object.entries(globals)) {
    if (!(key in g)) g[key] = value;
  }
  const gpu = create(["backend=null"]);
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error("Dawn's null backend offered no adapter");

  // Ask for every limit at the adapter's value rather than the WebGPU defaults, so kernels that are large
  // but legal on this adapter validate. (The null backend's adapter reports exactly the WebGPU defaults,
  // e.g. 16 KiB workgroup storage and 256 invocations; this keeps the code right should that change.)
  const requiredLimits: Record<string, number> = {};
  for (const key in adapter.limits) {
    const value = (adapter.limits as unknown as Record<string, unknown>)[key];
    if (typeof value === "number") requiredLimits[key] = value;
  }
  // Optional features such as shader-f16 and subgroups are enabled so that WGSL using `enable f16;` or
  // `enable subgroups;` (the goldens of kernels with subgroup operations) is judged on its merits; WGSL still
  // has to name each one with `enable`, so nothing is accepted silently.
  const requiredFeatures = [...adapter.features] as GPUFeatureName[];
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch {
    device = await adapter.requestDevice({ requiredLimits });
  }
  return { gpu, adapter, device };
}

function getDawn(): Promise<Dawn> {
  if (!dawn) {
    const opening = openDawn();
    dawn = opening;
    // Neither a failed start nor a lost device is cached, so the next call opens a fresh one.
    opening.then(
      ({ device }) =>
        device.lost.then(() => {
          if (dawn === opening) dawn = null;
        }),
      () => {
        if (dawn === opening) dawn = null;
      },
    );
  }
  return dawn;
}

/** The device's limits, for tests that want to relate a kernel's needs to what validation allowed. */
export async function dawnLimits(): Promise<GPUSupportedLimits> {
  return (await getDawn()).device.limits;
}

/**
 * Destroys the shared device. Optional: a vitest worker exits without it, but calling it in `afterAll`
 * releases Dawn's resources deterministically. A later validateWgsl opens a fresh device.
 */
export async function closeDawn(): Promise<void> {
  const pending = dawn;
  dawn = null;
  if (!pending) return;
  try {
    (await pending).device.destroy();
  } catch {
    // Failed to open: nothing to close.
  }
}

/** Strips comments so the entry-point scan below does not pick up commented-out code. */
function stripComments(code: string): string {
  // WGSL block comments nest, so they are removed with a depth counter rather than a regex.
  let out = "";
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const two = code.slice(i, i + 2);
    if (two === "/*") {
      depth++;
      i++;
    } else if (depth > 0 && two === "*/") {
      depth--;
      i++;
    } else if (depth === 0 && two === "//") {
      while (i < code.length && code[i] !== "\n") i++;
      out += "\n";
    } else if (depth === 0) {
      out += code[i];
    }
  }
  return out;
}

/** Names of `@compute` functions, allowing other attributes (`@workgroup_size(...)`) between it and `fn`. */
export function findComputeEntryPoints(code: string): string[] {
  const attribute = String.raw`@\s*[A-Za-z_]\w*\s*(?:\((?:[^()]|\([^()]*\))*\))?\s*`;
  const re = new RegExp(String.raw`@\s*compute\b\s*(?:${attribute})*fn\s+([A-Za-z_]\w*)`, "g");
  return [...stripComments(code).matchAll(re)].map((m) => m[1]!);
}

/**
 * A module that enables f16, read with f32 in its place: the types (`f16` → `f32`), the literals (`1.5h` →
 * `1.5f`), without `enable f16;`. Where the device lacks `shader-f16` (SwiftShader, and Dawn on the H100 as of
 * 2026-11) this is how Dawn checks such a module: every rule but those of f16 itself (docs/language.md says so).
 */
export function withF16AsF32(code: string): string {
  return code.replace(/^enable f16;\n/m, "").replace(/\bf16\b/g, "f32").replace(/\b(\d+(?:\.\d*)?(?:e[+-]?\d+)?)h\b/g, "$1f");
}

/**
 * Validates WGSL: the shader module's compilation messages, then one compute pipeline per entry point
 * (`layout: "auto"`), which applies the device limits. Entry points default to every `@compute` function.
 * A module with f16, on a device without `shader-f16`, is checked with f32 in place of f16 (withF16AsF32).
 */
export async function validateWgsl(code: string, entryPoints?: string[]): Promise<WgslValidation> {
  const { device } = await getDawn();
  if (/^enable f16;$/m.test(code) && !device.features.has("shader-f16" as GPUFeatureName)) code = withF16AsF32(code);
  const messages: WgslMessage[] = [];

  // Every Dawn call sits in an error scope: that is how its error is captured, and it also stops dawn.node
  // from printing the error to stdout as uncaptured. push, create and pop run in one synchronous stretch:
  // scopes are a per-device stack, and concurrent validateWgsl calls that awaited between push and pop
  // would pop each other's scopes.
  device.pushErrorScope("validation");
  // The label names this tool in what dawn.node prints by itself (compilation logs with warnings).
  const module = device.createShaderModule({ code, label: "tests/tools validateWgsl" });
  const moduleScope = device.popErrorScope();

  const info = await module.getCompilationInfo();
  for (const m of info.messages) {
    messages.push({ type: m.type, line: m.lineNum, column: m.linePos, message: m.message });
  }
  const moduleError = await moduleScope;
  if (moduleError && !messages.some((m) => m.type === "error")) {
    // Not expected (a module error always comes with a compilation message), but never lose one.
    messages.push({ type: "error", line: 0, column: 0, message: moduleError.message.trim() });
  }

  // An invalid module makes every pipeline fail with "invalid due to a previous error", which adds nothing.
  if (!messages.some((m) => m.type === "error")) {
    for (const entryPoint of entryPoints ?? findComputeEntryPoints(code)) {
      device.pushErrorScope("validation");
      let thrown: unknown;
      try {
        device.createComputePipeline({ layout: "auto", compute: { module, entryPoint } });
      } catch (error) {
        // Descriptor conversion errors are thrown rather than reported through the scope.
        thrown = error;
      }
      const error = await device.popErrorScope();
      const text = error?.message ?? (thrown === undefined ? undefined : String(thrown));
      if (text !== undefined) {
        messages.push({ type: "error", line: 0, column: 0, message: text.trim(), entryPoint });
      }
    }
  }

  const ok = !messages.some((m) => m.type === "error" || m.type === "warning");
  return { ok, messages };
}
