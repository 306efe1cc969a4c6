/**
 * The RGBA8 blur of examples/blur-rgba8.ts in a browser, on tskernel's browser runtime: build.mjs made
 * kernels/manifest.json and the .wgsl files and lib/tskernel-webgpu.js. The page draws an image (stripes,
 * rings and noise: sharp edges that the blur visibly softens) into RGBA8 bytes, runs `passes` blurs on the GPU
 * (each the previous one's output blurred again), checks every byte of the result against a JavaScript
 * reference of the same integer arithmetic, times one pass, and shows both images.
 *
 * For tests: document.body.dataset.status is "running", then "done" or "error"; window.tskernelBlur holds the
 * result ({ width, height, passes, mismatches, firstMismatch, ms, changed, entryPoint }), window.tskernelError
 * the error's text.
 */

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);

function intParam(name, fallback, min, max) {
  const text = params.get(name);
  if (text === null || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`?${name}= must be an integer from ${min} to ${max}, got '${text}'`);
  return value;
}

function fact(term, description) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = description;
  $("facts").append(dt, dd);
}

/** Stripes, rings and noise, with an alpha ramp, as RGBA8 bytes. */
function makeImage(width, height) {
  const pixels = new Uint8Array(4 * width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = 4 * (y * width + x);
      const ring = Math.hypot(x - width / 2, y - height / 2) % 24 < 12;
      pixels[i] = (x >> 3) % 2 ? 230 : 20;
      pixels[i + 1] = ring ? 200 : 40;
      pixels[i + 2] = Math.floor(Math.random() * 256);
      pixels[i + 3] = 128 + Math.floor((127 * x) / Math.max(1, width - 1));
    }
  }
  return pixels;
}

const taps = [1, 4, 6, 4, 1];

/** The blur in integers, as the kernel computes it: Σ taps_i·taps_j·p over the clamped 5×5, then (s + 128) >> 8. */
function referenceBlur(pixels, width, height) {
  const clampX = (x) => Math.min(Math.max(x, 0), width - 1);
  const clampY = (y) => Math.min(Math.max(y, 0), height - 1);
  const horizontal = new Int32Array(pixels.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++) {
        let s = 0;
        for (let t = -2; t <= 2; t++) s += taps[t + 2] * pixels[4 * (y * width + clampX(x + t)) + k];
        horizontal[4 * (y * width + x) + k] = s;
      }
    }
  }
  const out = new Uint8Array(pixels.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++) {
        let s = 0;
        for (let t = -2; t <= 2; t++) s += taps[t + 2] * horizontal[4 * (clampY(y + t) * width + x) + k];
        out[4 * (y * width + x) + k] = (s + 128) >> 8;
      }
    }
  }
  return out;
}

function draw(canvas, pixels, width, height) {
  canvas.width = width;
  canvas.height = height;
  canvas.getContext("2d").putImageData(new ImageData(new Uint8ClampedArray(pixels.buffer.slice(0)), width, height), 0, 0);
}

async function main() {
  document.body.dataset.status = "running";
  const width = intParam("width", 256, 4, 8192);
  const height = intParam("height", 192, 1, 8192);
  const passes = intParam("passes", 2, 1, 20);
  if (width % 4 !== 0) throw new Error(`?width= must be a multiple of 4 (16-byte rows), got ${width}`);
  $("status").textContent = "Loading the runtime and the kernels…";
  let runtime;
  try {
    runtime = await import("./lib/tskernel-webgpu.js");
  } catch (error) {
    throw new Error(`could not load lib/tskernel-webgpu.js (${error.message}); run \`npm run build && node examples/web/build.mjs\` first`);
  }
  const library = await runtime.fetchKernelLibrary(new URL("./kernels/manifest.json", location.href));
  const device = await runtime.createWebGpuDevice();
  // The first declared specialization whose block fits this adapter (128 threads, else 64).
  const kernel = library.kernels
    .filter((k) => k.description.source === "examples/blur-rgba8.ts" && k.description.name === "blurRgba8")
    .find((k) => k.description.block[0] <= device.limits.maxThreadsPerBlock);
  if (!kernel) throw new Error("kernels/manifest.json has no blurRgba8 that fits this adapter: rebuild with examples/web/build.mjs");
  const { THREADS, STRIP } = kernel.description.specialization;
  fact("adapter", device.name);
  fact("image", `${width}×${height} RGBA8, ${passes} pass${passes === 1 ? "" : "es"}`);
  fact("kernel", `${kernel.description.entryName}: blocks of ${THREADS} threads, each 4 pixels wide and ${STRIP} rows tall`);

  const image = makeImage(width, height);
  const grid = [Math.ceil(width / 4 / THREADS), Math.ceil(height / STRIP), 1];
  const buffers = [device.createBuffer(image), device.createBuffer(new Uint8Array(image.length).fill(0xa5))];
  $("status").textContent = `Blurring ${passes} time(s) on the GPU…`;
  for (let p = 0; p < passes; p++) {
    await device.launch(kernel, { grid, args: [buffers[(p + 1) % 2], buffers[p % 2], width, height] });
  }
  const result = await device.read(buffers[passes % 2]);
  const timing = await device.timeSequence([{ kernel, options: { grid, args: [buffers[1], buffers[0], width, height] } }], { warmup: 1, runs: 5 });

  $("status").textContent = "Checking every byte against the JavaScript reference…";
  await new Promise((resolve) => setTimeout(resolve, 0));
  let expected = image;
  for (let p = 0; p < passes; p++) expected = referenceBlur(expected, width, height);
  let mismatches = 0;
  let firstMismatch;
  let changed = 0;
  for (let i = 0; i < expected.length; i++) {
    if (result[i] !== expected[i]) {
      mismatches++;
      firstMismatch ??= { index: i, got: result[i], expected: expected[i] };
    }
    if (result[i] !== image[i]) changed++;
  }
  draw($("before"), image, width, height);
  draw($("after"), result, width, height);
  $("results").hidden = false;
  const gbps = (8 * width * height) / (timing.medianMs * 1e6);
  $("summary").textContent = `${mismatches === 0 ? "pass" : "FAIL"}: ${mismatches} of ${expected.length} bytes differ from the reference; one pass ${timing.medianMs.toFixed(3)} ms (${gbps.toFixed(2)} GB/s, ${timing.method})`;
  window.tskernelBlur = { width, height, passes, mismatches, firstMismatch, ms: timing.medianMs, changed, bytes: expected.length, entryPoint: kernel.description.entryName };
  device.dispose();
  $("status").textContent = "Done.";
  document.body.dataset.status = "done";
}

main().catch((error) => {
  const text = error instanceof Error ? `${error.message}${error.stack ? `\n${error.stack}` : ""}` : String(error);
  window.tskernelError = text;
  $("error").hidden = false;
  $("error-text").textContent = text;
  $("status").textContent = "Failed.";
  document.body.dataset.status = "error";
});
