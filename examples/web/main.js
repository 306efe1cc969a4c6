/**
 * The seed matmul ladder in a browser, on tskernel's browser runtime. Everything the page runs was made at
 * build time by build.mjs: kernels/manifest.json and the .wgsl files (tskernel build --target wgsl),
 * lib/tskernel-webgpu.js (the `tskernel/webgpu` entry, bundled: the same WebGPU device as the Node runtime's,
 * on navigator.gpu, with no compiler) and lib/variants.js (cli/demo/variants.ts), so the page runs the same
 * variants with the same launch rules, argument checks and error report as `tskernel demo`.
 *
 * For each variant: fresh random inputs (shared by all variants), the output poisoned with NaN (sgemm's C
 * holds C0 instead, because it reads it: C = alpha·A·B + beta·C), one launch checked against the float64
 * reference (pass: normwise relative error ≤ n·2⁻²³ and no NaN), then `runs` timed launches.
 *
 * For tests: document.body.dataset.status is "running", then "done" or "error"; window.tskernelResults
 * holds the rows, window.tskernelAdapter what the adapter is, window.tskernelError the error's text.
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

function setStatus(text) {
  $("status").textContent = text;
}

function fact(term, description) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = description;
  $("facts").append(dt, dd);
}

/** Loads a module build.mjs generates, with a hint when it is missing (a static import would fail silently). */
async function importGenerated(relative) {
  try {
    return await import(relative);
  } catch (error) {
    throw new Error(`could not load ${new URL(relative, location.href).pathname} (${error.message}); run \`npm run build && node examples/web/build.mjs\` first`);
  }
}

/** Why this device cannot run a kernel (its fixed block or its workgroup memory), or undefined when it can. */
function blockProblem(kernel, limits) {
  if (limits.maxSharedBytes !== undefined && kernel.sharedBytes > limits.maxSharedBytes) return `needs ${kernel.sharedBytes} bytes of workgroup memory; this adapter allows ${limits.maxSharedBytes}`;
  const block = kernel.block;
  if (!block) return undefined;
  const threads = block[0] * block[1] * block[2];
  if (threads > limits.maxThreadsPerBlock) return `needs a block of ${threads} threads; this adapter allows ${limits.maxThreadsPerBlock}`;
  const axis = block.findIndex((dim, i) => dim > limits.maxBlockDims[i]);
  if (axis >= 0) return `needs a block ${"xyz"[axis]} of ${block[axis]}; this adapter allows ${limits.maxBlockDims[axis]}`;
  return undefined;
}

/** The built kernel of a variant's file and name with the given specialization values. */
function findKernel(library, source, name, values = {}) {
  const kernel = library.kernels.find(
    (k) => k.description.source === source && k.description.name === name && Object.entries(values).every(([key, value]) => k.description.specialization[key] === value),
  );
  if (!kernel) throw new Error(`kernels/manifest.json has no kernel '${name}' from ${source} with ${JSON.stringify(values)}: rebuild with examples/web/build.mjs`);
  return kernel;
}

function randomMatrix(length) {
  const data = new Float32Array(length);
  for (let i = 0; i < length; i++) data[i] = Math.random() * 2 - 1;
  return data;
}

/** Copies an n×n row-major matrix into the top-left of a zeroed N×N one (as the demo does). */
function pad(source, n, N) {
  if (N === n) return source;
  const out = new Float32Array(N * N);
  for (let i = 0; i < n; i++) out.set(source.subarray(i * n, i * n + n), i * N);
  return out;
}

function unpad(source, n, N) {
  if (N === n) return source;
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) out.set(source.subarray(i * N, i * N + n), i * n);
  return out;
}

const format = {
  ms: (ms) => (ms === undefined ? "–" : ms >= 100 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3)),
  gflops: (g) => (g === undefined || !Number.isFinite(g) ? "–" : g >= 100 ? g.toFixed(0) : g >= 10 ? g.toFixed(1) : g.toFixed(2)),
  error: (e) => (e === undefined ? "–" : Number.isFinite(e) ? e.toExponential(2) : "∞"),
};

function renderTable(rows) {
  const body = $("table").tBodies[0];
  body.replaceChildren();
  for (const row of rows) {
    const tr = body.insertRow();
    const cell = (text, className) => {
      const td = tr.insertCell();
      td.textContent = text;
      if (className) td.className = className;
      return td;
    };
    cell(row.variant, "variant");
    cell(row.paddedSize ? `${row.size} (padded ${row.paddedSize})` : String(row.size), "num");
    cell(`${format.ms(row.ms)}${row.timing === "clock" ? "*" : ""}`, "num");
    cell(format.gflops(row.gflops), "num");
    cell(format.error(row.errors?.maxRelative), "num");
    cell(format.error(row.errors?.averageRelative), "num");
    cell(format.error(row.errors?.normwiseRelative), "num");
    const result = cell("", "result");
    const status = document.createElement("span");
    status.className = row.status;
    status.textContent = row.status;
    result.append(status);
    if (row.note) {
      const note = document.createElement("span");
      note.className = "note";
      note.textContent = `: ${row.note}`;
      result.append(note);
    }
  }
}

const svgNs = "http://www.w3.org/2000/svg";

function svg(name, attributes = {}, text) {
  const element = document.createElementNS(svgNs, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

/** A step of 1, 2 or 5 × 10^k that gives about `count` gridlines up to `max`. */
function niceStep(max, count) {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw);
}

/** Horizontal bars of GFLOP/s, one per variant; skipped and failed variants are labelled instead. */
function renderChart(rows, caption) {
  // Room for the longest label in 13px monospace (about 8px a character).
  const labelWidth = 24 + 8 * Math.max(10, ...rows.map((row) => row.variant.length));
  const plotWidth = 560;
  const valueRoom = 150;
  const rowHeight = 24;
  const top = 28;
  const width = labelWidth + plotWidth + valueRoom;
  const height = top + rows.length * rowHeight + 10;
  const max = Math.max(0, ...rows.map((row) => (row.gflops !== undefined && Number.isFinite(row.gflops) ? row.gflops : 0)));
  const step = max > 0 ? niceStep(max, 5) : 1;
  const axisMax = max > 0 ? Math.ceil(max / step) * step : 1;
  const x = (value) => labelWidth + (value / axisMax) * plotWidth;

  const chart = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "GFLOP/s per variant" });
  for (let value = 0; value <= axisMax + step / 2; value += step) {
    chart.append(svg("line", { x1: x(value), x2: x(value), y1: top - 6, y2: height - 6, stroke: value === 0 ? "#8a909c" : "#e3e6ec" }));
    chart.append(svg("text", { x: x(value), y: top - 12, "text-anchor": "middle", "font-size": 12, fill: "#5d6678" }, format.gflops(value)));
  }
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    chart.append(svg("text", { x: labelWidth - 10, y: y + rowHeight / 2 + 4, "text-anchor": "end", "font-size": 13, fill: "#1d2330", "font-family": "ui-monospace, DejaVu Sans Mono, monospace" }, row.variant));
    const hasRate = row.gflops !== undefined && Number.isFinite(row.gflops);
    if (hasRate) {
      const barWidth = Math.max(1, x(row.gflops) - labelWidth);
      const bar = svg("rect", { x: labelWidth, y: y + 4, width: barWidth, height: rowHeight - 8, rx: 2, fill: row.status === "pass" ? "#3565c8" : "#b42318" });
      bar.append(svg("title", {}, `${row.variant}: ${format.gflops(row.gflops)} GFLOP/s`));
      chart.append(bar);
    }
    const label = hasRate ? `${format.gflops(row.gflops)}${row.status === "pass" ? "" : ` (${row.status})`}` : row.status;
    const color = row.status === "pass" ? "#1d2330" : row.status === "FAIL" ? "#b42318" : "#7a808c";
    chart.append(svg("text", { x: (hasRate ? x(row.gflops) : labelWidth) + 6, y: y + rowHeight / 2 + 4, "font-size": 12, fill: color }, label));
  });
  $("chart").replaceChildren(chart);
  $("chart-caption").textContent = caption;
}

async function main() {
  document.body.dataset.status = "running";
  const n = intParam("n", 64, 1, 4096);
  const runs = intParam("runs", 5, 1, 100);

  setStatus("Loading the runtime, the ladder and the kernels…");
  const { createWebGpuDevice, fetchKernelLibrary, referenceGemm, compareToReference, LaunchError } = await importGenerated("./lib/tskernel-webgpu.js");
  const { seedVariants } = await importGenerated("./lib/variants.js");
  let library;
  try {
    library = await fetchKernelLibrary(new URL("./kernels/manifest.json", location.href));
  } catch (error) {
    throw new Error(`${error.message}; run \`npm run build && node examples/web/build.mjs\` first`);
  }

  setStatus("Requesting a WebGPU adapter…");
  const device = await createWebGpuDevice();
  let lost;
  device.gpu.lost.then((info) => {
    if (info.reason !== "destroyed") lost = `the WebGPU device was lost: ${info.message || info.reason}`;
  });
  const uncaptured = [];
  device.gpu.addEventListener("uncapturederror", (event) => uncaptured.push(event.error.message));

  const limits = device.limits;
  window.tskernelAdapter = { name: device.name, limits: { ...limits }, timestamps: device.hasTimestamps };
  const tolerance = n * 2 ** -23;
  fact("adapter", device.name);
  fact("limits", `${limits.maxThreadsPerBlock} invocations per workgroup, ${limits.maxSharedBytes} bytes of workgroup memory`);
  fact("size", `n = ${n}, ${runs} timed run${runs === 1 ? "" : "s"} per variant (median)`);
  fact("timing", device.hasTimestamps ? "timestamp queries around the compute pass (* = below their resolution: submit to completion instead)" : "submit to queue completion (the adapter has no timestamp queries)");
  fact("pass", `normwise relative error ≤ n·2⁻²³ = ${tolerance.toExponential(2)}, and no NaN`);

  setStatus(`Computing the float64 reference for n = ${n}…`);
  await new Promise((resolve) => setTimeout(resolve, 0)); // let the status paint
  const A = randomMatrix(n * n);
  const B = randomMatrix(n * n);
  const C0 = randomMatrix(n * n);
  const alpha = 0.75;
  const beta = 0.5;
  const plain = referenceGemm(n, n, n, A, B);
  const gemm = referenceGemm(n, n, n, A, B, alpha, beta, C0);

  const rows = [];
  const show = (caption) => {
    $("results").hidden = false;
    renderTable(rows);
    renderChart(rows, caption);
  };
  for (const variant of seedVariants) {
    if (lost) throw new Error(lost);
    const base = { variant: variant.id, id: variant.id, kernel: variant.kernel, size: n };
    if (variant.maxN !== undefined && n > variant.maxN) {
      rows.push({ ...base, status: "skipped", skip: "max-n", note: `the kernel keeps a row of A in shared memory: n ≤ ${variant.maxN}` });
      continue;
    }
    setStatus(`Running ${variant.id} (${rows.length + 1} of ${seedVariants.length})…`);
    // The first specialization (best first: the largest tiles) whose block and workgroup memory fit this adapter.
    const candidates = (variant.specializations ?? [{}]).map((values) => findKernel(library, variant.file, variant.kernel, values));
    const kernel = candidates.find((k) => !blockProblem(k.description, limits));
    if (!kernel) {
      rows.push({ ...base, entryPoint: candidates[0].description.outputs.wgsl.entryPoint, status: "skipped", skip: "block", note: blockProblem(candidates[0].description, limits) });
      show("GFLOP/s so far…");
      continue;
    }
    const constants = kernel.description.specialization;
    const label = variant.specializations && variant.specializations.length > 1 ? `${variant.id} (${Object.entries(constants).map(([k, v]) => `${k} ${v}`).join(", ")})` : variant.id;
    const N = variant.multipleOf ? Math.ceil(n / variant.multipleOf) * variant.multipleOf : n;
    const row = { ...base, variant: label, entryPoint: kernel.description.outputs.wgsl.entryPoint, paddedSize: N !== n ? N : undefined };
    const created = [];
    try {
      const a = device.createBuffer(pad(A, n, N));
      created.push(a);
      const b = device.createBuffer(pad(B, n, N));
      created.push(b);
      const c = device.createBuffer(variant.gemm ? pad(C0, n, N) : new Float32Array(N * N).fill(Number.NaN));
      created.push(c);
      const launch = variant.launch(N, { A: a, B: b, C: c }, alpha, beta, constants);
      await device.launch(kernel, launch);
      const errors = compareToReference(unpad(await device.read(c), n, N), variant.gemm ? gemm : plain);
      // Further launches only for the time: sgemm accumulates into C, which does not change the work done.
      const timing = await device.time(kernel, launch, { warmup: 0, runs });
      const pass = errors.nonFinite === 0 && errors.normwiseRelative <= tolerance;
      rows.push({
        ...row,
        ms: timing.medianMs,
        timing: timing.method.startsWith("timestamp") ? "timestamps" : "clock",
        gflops: timing.medianMs > 0 ? (2 * N * N * N) / (timing.medianMs * 1e6) : undefined,
        errors,
        status: pass ? "pass" : "FAIL",
        note: pass ? undefined : errors.nonFinite > 0 ? `${errors.nonFinite} elements are NaN or infinite` : `normwise error above ${tolerance.toExponential(1)}`,
      });
    } catch (error) {
      // WebGPU rejected the kernel or the launch (LaunchError), or a buffer is larger than the adapter allows
      // (RangeError): that variant fails, the rest go on.
      if (!(error instanceof LaunchError || error instanceof RangeError)) throw error;
      rows.push({ ...row, status: "FAIL", note: error.message });
    } finally {
      for (const buffer of created) device.free(buffer);
    }
    show("GFLOP/s so far…");
  }
  if (lost) throw new Error(lost);
  if (uncaptured.length > 0) throw new Error(`WebGPU reported errors outside any launch:\n${uncaptured.join("\n")}`);
  device.dispose();

  const passed = rows.filter((row) => row.status === "pass").length;
  const failed = rows.filter((row) => row.status === "FAIL").length;
  const skipped = rows.length - passed - failed;
  show(`GFLOP/s per variant on ${device.name} at n = ${n} (2·N³ flops over the median time; N is the padded size). Failed variants in red.`);
  window.tskernelResults = rows;
  setStatus(`Done: ${passed} passed, ${failed} failed, ${skipped} skipped.`);
  document.body.dataset.status = "done";
}

function showError(error) {
  console.error(error);
  const text = error instanceof Error ? error.message : String(error);
  window.tskernelError = text;
  $("error").hidden = false;
  $("error-text").textContent = text;
  setStatus("Stopped by an error.");
  document.body.dataset.status = "error";
}

window.addEventListener("error", (event) => showError(event.error ?? event.message));
window.addEventListener("unhandledrejection", (event) => showError(event.reason));
main().catch(showError);
