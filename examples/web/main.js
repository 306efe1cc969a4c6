/**
 * The seed matmul ladder in a browser. Everything the page runs was made at build time by build.mjs:
 * kernels/manifest.json and the .wgsl files (tskernel build --target wgsl), and lib/variants.js and
 * lib/reference.js (runtime/demo/variants.ts and runtime/reference.ts, transpiled), so the page runs the same
 * variants with the same launch rules and the same error report as `tskernel demo`, with no compiler here.
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

/** Same as runtime/webgpu/webgpu-device.ts: the limits a kernel may need raised above WebGPU's defaults. */
const raisedLimits = [
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupsPerDimension",
];

/** A problem with one variant on this adapter (WebGPU rejected it, a limit): that row fails, the rest go on. */
class VariantFailure extends Error {}

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

async function fetchText(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url.pathname ?? url} (HTTP ${response.status}); run \`npm run build && node examples/web/build.mjs\` first`);
  return response.text();
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

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Why this adapter cannot run a kernel (its fixed block or its workgroup memory), or undefined when it can. */
function blockProblem(kernel, limits) {
  if (kernel.sharedBytes > limits.maxComputeWorkgroupStorageSize) return `needs ${kernel.sharedBytes} bytes of workgroup memory; this adapter allows ${limits.maxComputeWorkgroupStorageSize}`;
  const block = kernel.block;
  if (!block) return undefined;
  const threads = block[0] * block[1] * block[2];
  if (threads > limits.maxComputeInvocationsPerWorkgroup) return `needs a block of ${threads} threads; this adapter allows ${limits.maxComputeInvocationsPerWorkgroup}`;
  const dims = [limits.maxComputeWorkgroupSizeX, limits.maxComputeWorkgroupSizeY, limits.maxComputeWorkgroupSizeZ];
  const axis = block.findIndex((dim, i) => dim > dims[i]);
  if (axis >= 0) return `needs a block ${"xyz"[axis]} of ${block[axis]}; this adapter allows ${dims[axis]}`;
  return undefined;
}

/** Runs compiled kernels on one GPUDevice, as runtime/webgpu/webgpu-device.ts does in Node. */
class Runner {
  constructor(device, manifest, manifestUrl) {
    this.device = device;
    this.manifest = manifest;
    this.manifestUrl = manifestUrl;
    this.sources = new Map();
    this.modules = new Map();
    this.pipelines = new Map();
    this.timestamps = device.features.has("timestamp-query");
  }

  /** The manifest entry of a kernel of a source file with the given specialization values. */
  find(source, name, values = {}) {
    const kernel = this.manifest.kernels.find(
      (k) => k.source === source && k.name === name && Object.entries(values).every(([key, value]) => k.specialization[key] === value),
    );
    if (!kernel) throw new Error(`kernels/manifest.json has no kernel '${name}' from ${source} with ${JSON.stringify(values)}: rebuild with examples/web/build.mjs`);
    if (!kernel.outputs.wgsl) throw new Error(`kernel '${kernel.entryName}' was not built for the wgsl target`);
    return kernel;
  }

  buffer(data) {
    const device = this.device;
    // Whole vec4s: WGSL binds buffers that a kernel only accesses four elements at a time as array<vec4<f32>>.
    const bytes = Math.max(16, Math.ceil(data.byteLength / 16) * 16);
    if (bytes > device.limits.maxStorageBufferBindingSize) throw new VariantFailure(`a buffer of ${bytes} bytes exceeds this adapter's maxStorageBufferBindingSize (${device.limits.maxStorageBufferBindingSize})`);
    const gpuBuffer = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(gpuBuffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return { kind: "tskernel.buffer", backend: "webgpu", elementType: "f32", length: data.length, gpuBuffer };
  }

  async read(buffer) {
    const bytes = Math.max(4, buffer.length * 4);
    const staging = this.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer.gpuBuffer, 0, staging, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const copy = new Float32Array(staging.getMappedRange().slice(0, buffer.length * 4));
    staging.unmap();
    staging.destroy();
    return copy;
  }

  async module(file) {
    let module = this.modules.get(file);
    if (!module) {
      const code = await fetchText(new URL(file, this.manifestUrl));
      module = this.device.createShaderModule({ code, label: file });
      this.modules.set(file, module);
    }
    return module;
  }

  async pipeline(kernel, block) {
    const wgsl = kernel.outputs.wgsl;
    const key = `${kernel.source}#${wgsl.entryPoint}#${block.join("x")}`;
    const cached = this.pipelines.get(key);
    if (cached) return cached;
    const entries = wgsl.layout.bindings.map((binding) => ({ binding: binding.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: binding.type } }));
    if (wgsl.layout.uniform) entries.push({ binding: wgsl.layout.uniform.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } });
    const module = await this.module(wgsl.file);
    const layout = this.device.createBindGroupLayout({ entries, label: kernel.entryName });
    const constants = {};
    wgsl.workgroupSizeOverrides?.forEach((name, axis) => {
      constants[name] = block[axis];
    });
    let pipeline;
    try {
      pipeline = await this.device.createComputePipelineAsync({
        label: kernel.entryName,
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: wgsl.entryPoint, constants },
      });
    } catch (error) {
      const info = await module.getCompilationInfo();
      const messages = info.messages.map((m) => `\n  ${m.type} at ${wgsl.file}:${m.lineNum}:${m.linePos}: ${m.message}`).join("");
      throw new VariantFailure(`WebGPU rejected the pipeline: ${error.message}${messages}`);
    }
    const entry = { pipeline, layout };
    this.pipelines.set(key, entry);
    return entry;
  }

  /** The uniform buffer's bytes: the scalar arguments at the manifest's offsets, bools as u32 0 or 1. */
  uniformData(kernel, args) {
    const uniform = kernel.outputs.wgsl.layout.uniform;
    if (!uniform) return undefined;
    const runtimeParams = kernel.params.filter((p) => p.kind !== "const");
    const data = new ArrayBuffer(uniform.size);
    const view = new DataView(data);
    for (const field of uniform.fields) {
      const value = args[runtimeParams.findIndex((p) => p.name === field.param)];
      if (field.type === "bool") view.setUint32(field.offset, value ? 1 : 0, true);
      else if (field.wgslType === "f32") view.setFloat32(field.offset, value, true);
      else if (field.wgslType === "i32") view.setInt32(field.offset, value, true);
      else view.setUint32(field.offset, value, true);
    }
    return data;
  }

  /** Checks the launch against the manifest and the adapter, and makes everything but the pass. */
  async prepare(kernel, launch) {
    const runtimeParams = kernel.params.filter((p) => p.kind !== "const");
    if (launch.args.length !== runtimeParams.length) {
      throw new Error(`${kernel.entryName} expects ${runtimeParams.length} argument(s) (${runtimeParams.map((p) => p.name).join(", ")}), the ladder gives ${launch.args.length}`);
    }
    const dims = (value) => (typeof value === "number" ? [value, 1, 1] : [value[0], value[1] ?? 1, value[2] ?? 1]);
    const grid = dims(launch.grid);
    const block = kernel.block ?? (launch.block ? dims(launch.block) : undefined);
    if (!block) throw new Error(`${kernel.entryName} does not fix its block, and the ladder gives none`);
    const maxGrid = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (grid.some((dim) => dim > maxGrid)) throw new VariantFailure(`a grid of [${grid.join(", ")}] exceeds this adapter's ${maxGrid} workgroups per dimension`);
    if (kernel.sharedBytes > this.device.limits.maxComputeWorkgroupStorageSize) {
      throw new VariantFailure(`it needs ${kernel.sharedBytes} bytes of workgroup memory; this adapter allows ${this.device.limits.maxComputeWorkgroupStorageSize}`);
    }
    const { pipeline, layout } = await this.pipeline(kernel, block);
    const wgsl = kernel.outputs.wgsl;
    const buffers = launch.args.filter((arg) => typeof arg === "object");
    const entries = wgsl.layout.bindings.map((binding, index) => ({ binding: binding.binding, resource: { buffer: buffers[index].gpuBuffer } }));
    const bytes = this.uniformData(kernel, launch.args);
    let uniform;
    if (bytes) {
      uniform = this.device.createBuffer({ size: bytes.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(uniform, 0, bytes);
      entries.push({ binding: wgsl.layout.uniform.binding, resource: { buffer: uniform } });
    }
    const bindGroup = this.device.createBindGroup({ layout, entries, label: kernel.entryName });
    return { pipeline, bindGroup, grid, uniform };
  }

  encode(prepared, timestampWrites) {
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : {});
    pass.setPipeline(prepared.pipeline);
    pass.setBindGroup(0, prepared.bindGroup);
    pass.dispatchWorkgroups(...prepared.grid);
    pass.end();
    return encoder;
  }

  /** One launch, waited for; WebGPU's validation and memory errors become this variant's failure. */
  async launch(kernel, launch) {
    this.device.pushErrorScope("out-of-memory");
    this.device.pushErrorScope("validation");
    let prepared;
    try {
      prepared = await this.prepare(kernel, launch);
      this.device.queue.submit([this.encode(prepared).finish()]);
      await this.device.queue.onSubmittedWorkDone();
    } finally {
      const validation = await this.device.popErrorScope();
      const memory = await this.device.popErrorScope();
      prepared?.uniform?.destroy();
      const error = validation ?? memory;
      if (error) throw new VariantFailure(`WebGPU reported: ${error.message}`);
    }
  }

  /**
   * The median of `runs` launches: timestamp queries around the compute pass where the adapter has them
   * (a browser rounds them, to 100 µs in Chromium), else the time from submit to queue completion. A
   * median that rounds to 0 is measured again by the clock, so every row has a time.
   */
  async time(kernel, launch, runs) {
    const prepared = await this.prepare(kernel, launch);
    try {
      if (this.timestamps) {
        const querySet = this.device.createQuerySet({ type: "timestamp", count: 2 });
        const resolve = this.device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
        const runsMs = [];
        for (let i = 0; i < runs; i++) {
          const encoder = this.encode(prepared, { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 });
          encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
          const staging = this.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
          encoder.copyBufferToBuffer(resolve, 0, staging, 0, 16);
          this.device.queue.submit([encoder.finish()]);
          await staging.mapAsync(GPUMapMode.READ);
          const [begin, end] = new BigUint64Array(staging.getMappedRange());
          runsMs.push(end > begin ? Number(end - begin) / 1e6 : 0);
          staging.unmap();
          staging.destroy();
        }
        querySet.destroy();
        resolve.destroy();
        const ms = median(runsMs);
        if (ms > 0) return { ms, method: "timestamps" };
      }
      const runsMs = [];
      for (let i = 0; i < runs; i++) {
        const commands = this.encode(prepared).finish();
        const start = performance.now();
        this.device.queue.submit([commands]);
        await this.device.queue.onSubmittedWorkDone();
        runsMs.push(performance.now() - start);
      }
      return { ms: median(runsMs), method: "clock" };
    } finally {
      prepared.uniform?.destroy();
    }
  }
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

  setStatus("Loading the ladder and the kernels…");
  const { seedVariants } = await importGenerated("./lib/variants.js");
  const { referenceGemm, compareToReference } = await importGenerated("./lib/reference.js");
  const manifestUrl = new URL("./kernels/manifest.json", location.href);
  const manifest = JSON.parse(await fetchText(manifestUrl));

  if (!navigator.gpu) {
    throw new Error(
      isSecureContext
        ? "this browser has no WebGPU (navigator.gpu is missing); Chromium on Linux needs --enable-unsafe-webgpu"
        : "WebGPU needs a secure context: open the page from http://localhost, http://127.0.0.1 or over https",
    );
  }
  setStatus("Requesting a WebGPU adapter…");
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("navigator.gpu.requestAdapter() found no adapter (WebGPU is disabled, or no GPU or software renderer is available)");
  const requiredLimits = {};
  for (const name of raisedLimits) if (typeof adapter.limits[name] === "number") requiredLimits[name] = adapter.limits[name];
  const requiredFeatures = adapter.features.has("timestamp-query") ? ["timestamp-query"] : [];
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  let lost;
  device.lost.then((info) => {
    if (info.reason !== "destroyed") lost = `the WebGPU device was lost: ${info.message || info.reason}`;
  });
  const uncaptured = [];
  device.addEventListener("uncapturederror", (event) => uncaptured.push(event.error.message));

  const info = adapter.info ?? {};
  const adapterName = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(" ") || "unnamed adapter";
  window.tskernelAdapter = { name: adapterName, vendor: info.vendor, architecture: info.architecture, limits: { ...requiredLimits }, timestamps: requiredFeatures.length > 0 };
  const tolerance = n * 2 ** -23;
  fact("adapter", adapterName);
  fact("limits", `${device.limits.maxComputeInvocationsPerWorkgroup} invocations per workgroup, ${device.limits.maxComputeWorkgroupStorageSize} bytes of workgroup memory`);
  fact("size", `n = ${n}, ${runs} timed run${runs === 1 ? "" : "s"} per variant (median)`);
  fact("timing", requiredFeatures.length ? "timestamp queries around the compute pass (* = below their resolution: submit to completion instead)" : "submit to queue completion (the adapter has no timestamp queries)");
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

  const runner = new Runner(device, manifest, manifestUrl);
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
    const candidates = (variant.specializations ?? [{}]).map((values) => runner.find(variant.file, variant.kernel, values));
    const kernel = candidates.find((k) => !blockProblem(k, device.limits));
    if (!kernel) {
      rows.push({ ...base, entryPoint: candidates[0].outputs.wgsl.entryPoint, status: "skipped", skip: "block", note: blockProblem(candidates[0], device.limits) });
      show("GFLOP/s so far…");
      continue;
    }
    const constants = kernel.specialization;
    const label = variant.specializations && variant.specializations.length > 1 ? `${variant.id} (${Object.entries(constants).map(([k, v]) => `${k} ${v}`).join(", ")})` : variant.id;
    const N = variant.multipleOf ? Math.ceil(n / variant.multipleOf) * variant.multipleOf : n;
    const row = { ...base, variant: label, entryPoint: kernel.outputs.wgsl.entryPoint, paddedSize: N !== n ? N : undefined };
    const created = [];
    try {
      const a = runner.buffer(pad(A, n, N));
      created.push(a);
      const b = runner.buffer(pad(B, n, N));
      created.push(b);
      const c = runner.buffer(variant.gemm ? pad(C0, n, N) : new Float32Array(N * N).fill(Number.NaN));
      created.push(c);
      const launch = variant.launch(N, { A: a, B: b, C: c }, alpha, beta, constants);
      await runner.launch(kernel, launch);
      const errors = compareToReference(unpad(await runner.read(c), n, N), variant.gemm ? gemm : plain);
      // Further launches only for the time: sgemm accumulates into C, which does not change the work done.
      const timing = await runner.time(kernel, launch, runs);
      const pass = errors.nonFinite === 0 && errors.normwiseRelative <= tolerance;
      rows.push({
        ...row,
        ms: timing.ms,
        timing: timing.method,
        gflops: timing.ms > 0 ? (2 * N * N * N) / (timing.ms * 1e6) : undefined,
        errors,
        status: pass ? "pass" : "FAIL",
        note: pass ? undefined : errors.nonFinite > 0 ? `${errors.nonFinite} elements are NaN or infinite` : `normwise error above ${tolerance.toExponential(1)}`,
      });
    } catch (error) {
      if (!(error instanceof VariantFailure)) throw error;
      rows.push({ ...row, status: "FAIL", note: error.message });
    } finally {
      for (const buffer of created) buffer.gpuBuffer.destroy();
    }
    show("GFLOP/s so far…");
  }
  if (lost) throw new Error(lost);
  if (uncaptured.length > 0) throw new Error(`WebGPU reported errors outside any launch:\n${uncaptured.join("\n")}`);
  device.destroy();

  const passed = rows.filter((row) => row.status === "pass").length;
  const failed = rows.filter((row) => row.status === "FAIL").length;
  const skipped = rows.length - passed - failed;
  show(`GFLOP/s per variant on ${adapterName} at n = ${n} (2·N³ flops over the median time; N is the padded size). Failed variants in red.`);
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
