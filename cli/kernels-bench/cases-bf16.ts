/**
 * The memory-bound suite's 16-bit and 8-bit cases (issue 20): bf16 layer norm, RMS norm, softmax and GELU, the
 * int8 → bf16 dequantization with per-row scales, and the RGBA8 Gaussian blur (examples/*-bf16.ts,
 * examples/blur-rgba8.ts). Each computes in f32 inside and rounds once on the store, so its check is the
 * store's rounding to bf16 (half a unit in the last place of the reference) plus the f32 computation's own
 * error, stated per case; the dequantization and the blur are exact. Bytes are the element sizes' (2 for bf16,
 * 1 for int8 and each RGBA8 channel). The inputs are bf16 values (random f32 rounded to bf16), so the float64
 * reference computes from exactly what the kernels read.
 */

import type { KernelHandle } from "../../runtime/device.ts";
import { constantsOf, grid2d, lanesOf, pick, type CaseContext, type Constants, type KernelCase, type Shape, type TuningSpace } from "./case-kit.ts";
import type { ChunkedReference, HalfType } from "./checks.ts";

// ---- the row kernels: layer norm, RMS norm, softmax --------------------------------------------------------

/** Their specializations, smallest capacity (8·THREADS·ITEMS) first: 256, 1024, 4096, 8192 (the examples'). */
const halfRowChoices: readonly Constants[] = [
  { THREADS: 32, ROWS: 4, ITEMS: 1 },
  { THREADS: 32, ROWS: 4, ITEMS: 4 },
  { THREADS: 128, ROWS: 1, ITEMS: 4 },
  { THREADS: 256, ROWS: 1, ITEMS: 4 },
];
const halfCapacity = (c: Constants) => 8 * Number(c.THREADS) * Number(c.ITEMS);
const maxHalfRow = Math.max(...halfRowChoices.map(halfCapacity));
const wholeSubgroups = (c: Constants, lanes: number) => Number(c.THREADS) >= lanes && Number(c.THREADS) % lanes === 0;

/**
 * halfRowChoices with blocks of 512 threads of two vectors (capacity 8192, 39 registers in layerNormHalfShifted
 * against 63 for 256 of four: 1536 threads a multiprocessor against 1024) ahead of 256 of four, which stays for
 * devices whose blocks stop at 256 threads (WebGPU's default).
 */
const halfRowChoicesWide: readonly Constants[] = [...halfRowChoices.slice(0, 3), { THREADS: 512, ROWS: 1, ITEMS: 2 }, halfRowChoices[3]!];

function halfRowKernel(context: CaseContext, name: string, cols: number, type: HalfType, among: readonly Constants[] = halfRowChoices): KernelHandle {
  const lanes = lanesOf(context.limits);
  const choices = among.filter((c) => halfCapacity(c) >= cols && wholeSubgroups(c, lanes)).map((c) => ({ T: type, ...c }));
  return pick(context, name, choices);
}

function halfRowsUnsupported([, cols]: Shape): string | undefined {
  if (cols! % 8 !== 0) return "cols must be a multiple of 8 (16-byte vectors of 16-bit elements)";
  if (cols! > maxHalfRow) return `rows longer than ${maxHalfRow} do not fit the threads' registers`;
  return undefined;
}

/** Settings whose capacity holds a row without more than half of it idle, rows of whole subgroups, blocks of 64 to 1024 threads. */
function halfRowSpace(name: string, [, cols]: Shape, lanes: number): TuningSpace {
  return {
    kernels: [name],
    constants: { THREADS: [32, 64, 128, 256, 512], ROWS: [1, 2, 4, 8], ITEMS: [1, 2, 4, 8] },
    valid: (c) => {
      if (halfCapacity(c) < cols!) return "a row does not fit";
      if (!wholeSubgroups(c, lanes)) return "a row's threads must be whole subgroups";
      if (halfCapacity(c) >= 2 * cols!) return "more than half of the threads' registers idle";
      const threads = Number(c.THREADS) * Number(c.ROWS);
      return threads < 64 || threads > 1024 ? "blocks of 64 to 1024 threads" : undefined;
    },
  };
}

function halfRowGrid(rows: number, kernel: KernelHandle, context: CaseContext): [number, number, number] {
  return grid2d(Math.ceil(rows / constantsOf(kernel).ROWS!), context.limits);
}

/** A float64 reference computed a row at a time (`row(r, out)` fills one row), for outputs laid out by rows. */
function byRows(rows: number, cols: number, row: (r: number, out: Float64Array) => void): ChunkedReference {
  const values = new Float64Array(cols);
  let cached = -1;
  return {
    length: rows * cols,
    fill: (start, ref) => {
      for (let j = 0; j < ref.length; j++) {
        const r = Math.floor((start + j) / cols);
        if (r !== cached) {
          row(r, values);
          cached = r;
        }
        ref[j] = values[(start + j) % cols]!;
      }
    },
  };
}

const rowGpuShapes: readonly Shape[] = [
  [8192, 8192],
  [65536, 1024],
];
const rowCpuShapes: readonly Shape[] = [
  [64, 4096],
  [512, 1024],
];

/**
 * Layer norm in `type`. Variants: `shifted` runs layerNormHalfShifted (one reduction of the sums of x − K and
 * (x − K)², K the row's first element) instead of layerNormHalf's two, at the same launches; its variance's
 * error grows with (mean − K)² / variance, at most 3 with these inputs (uniform in [−2, 2]: deviations up to 2,
 * variance 4/3). `shifted-512` runs it with 512 threads of two vectors for rows of 4097 to 8192 (on the H100:
 * 8192 × 8192 only; halfRowChoicesWide).
 */
function layerNormCase(type: HalfType, variant?: "shifted" | "shifted-512"): KernelCase {
  const shifted = variant !== undefined;
  const name = shifted ? "layerNormHalfShifted" : "layerNormHalf";
  return {
    id: variant ? `layernorm-${type}-${variant}` : `layernorm-${type}`,
    family: "layernorm",
    title: `layer norm, ${type} (γ, β; f32 inside${shifted ? "; one shifted reduction" : ""}${variant === "shifted-512" ? "; 512 threads" : ""})`,
    kernels: { [name]: "examples/layer-norm-bf16.ts" },
    torch: `torch.nn.functional.layer_norm(x, [cols], gamma, beta, eps=1e-5) on ${type} tensors`,
    dims: 2,
    gpuShapes: variant === "shifted-512" ? [[8192, 8192]] : rowGpuShapes,
    cpuShapes: rowCpuShapes,
    space: (shape, limits) => halfRowSpace(name, shape, limits?.subgroupSize ?? 32),
    unsupported: halfRowsUnsupported,
    build([rows, cols], context) {
      const kernel = halfRowKernel(context, name, cols!, type, variant === "shifted-512" ? halfRowChoicesWide : halfRowChoices);
      const eps = 1e-5;
      return {
        buffers: [
          { name: "x", length: rows! * cols!, role: "input", type, low: -2, high: 2 },
          { name: "gamma", length: cols!, role: "input", type, low: 0.5, high: 1.5 },
          { name: "beta", length: cols!, role: "input", type, low: -0.5, high: 0.5 },
          { name: "out", length: rows! * cols!, role: "output", type },
        ],
        steps: [
          {
            kernel,
            grid: halfRowGrid(rows!, kernel, context),
            args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "gamma" }, { buffer: "beta" }, { i32: rows! }, { i32: cols! }, { f32: eps }],
          },
        ],
        bytes: 4 * rows! * cols! + 4 * cols!,
        output: "out",
        parameters: { eps },
        check: {
          kind: "rounded",
          type,
          maxRelative: 3e-5,
          floor: 1,
          why: `the store rounds to bf16 (half an ulp of the reference); before it, the f32 mean's and variance's trees (depth ≤ 40) times |x − mean|·rstd·γ ≤ 3 give ≈ 1e-5 absolute at worst (outputs are O(1) and may cancel to 0 through β)${shifted ? "; the shifted variance's error is at most 1 + 3 times its sums' (deviations up to 2 from a variance of 4/3), still within it" : ""}`,
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          const gamma = inputs.get("gamma")!;
          const beta = inputs.get("beta")!;
          return byRows(rows!, cols!, (r, out) => {
            let mean = 0;
            for (let c = 0; c < cols!; c++) mean += x[r * cols! + c]!;
            mean /= cols!;
            let variance = 0;
            for (let c = 0; c < cols!; c++) variance += (x[r * cols! + c]! - mean) ** 2;
            const rstd = 1 / Math.sqrt(variance / cols! + Math.fround(eps));
            for (let c = 0; c < cols!; c++) out[c] = (x[r * cols! + c]! - mean) * rstd * gamma[c]! + beta[c]!;
          });
        },
      };
    },
  };
}

function rmsNormCase(type: HalfType): KernelCase {
  return {
    id: `rmsnorm-${type}`,
    family: "rmsnorm",
    title: `RMS norm, ${type} (weight; f32 inside)`,
    kernels: { rmsNormHalf: "examples/rms-norm-bf16.ts" },
    torch: `torch.nn.functional.rms_norm(x, [cols], weight, eps=1e-6) on ${type} tensors`,
    dims: 2,
    gpuShapes: rowGpuShapes,
    cpuShapes: rowCpuShapes,
    space: (shape, limits) => halfRowSpace("rmsNormHalf", shape, limits?.subgroupSize ?? 32),
    unsupported: halfRowsUnsupported,
    build([rows, cols], context) {
      const kernel = halfRowKernel(context, "rmsNormHalf", cols!, type);
      const eps = 1e-6;
      return {
        buffers: [
          { name: "x", length: rows! * cols!, role: "input", type, low: -2, high: 2 },
          { name: "weight", length: cols!, role: "input", type, low: 0.5, high: 1.5 },
          { name: "out", length: rows! * cols!, role: "output", type },
        ],
        steps: [
          {
            kernel,
            grid: halfRowGrid(rows!, kernel, context),
            args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "weight" }, { i32: rows! }, { i32: cols! }, { f32: eps }],
          },
        ],
        bytes: 4 * rows! * cols! + 2 * cols!,
        output: "out",
        parameters: { eps },
        check: {
          kind: "rounded",
          type,
          maxRelative: 2e-5,
          floor: 1,
          why: "the store rounds to bf16 (half an ulp of the reference); before it, the f32 sum of squares (a tree of depth ≤ 40, all terms positive: relative error ≤ 40·2⁻²⁴), its square root and two products: ≈ 3e-6 relative, bounded absolutely below |out| = 1",
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          const weight = inputs.get("weight")!;
          return byRows(rows!, cols!, (r, out) => {
            let squares = 0;
            for (let c = 0; c < cols!; c++) squares += x[r * cols! + c]! ** 2;
            const rstd = 1 / Math.sqrt(squares / cols! + Math.fround(eps));
            for (let c = 0; c < cols!; c++) out[c] = x[r * cols! + c]! * rstd * weight[c]!;
          });
        },
      };
    },
  };
}

function softmaxCase(type: HalfType): KernelCase {
  return {
    id: `softmax-${type}`,
    family: "softmax",
    title: `row softmax, ${type} (f32 inside)`,
    kernels: { softmaxHalf: "examples/softmax-bf16.ts" },
    torch: `torch.softmax(x, dim=1) on a ${type} tensor`,
    dims: 2,
    gpuShapes: rowGpuShapes,
    cpuShapes: rowCpuShapes,
    space: (shape, limits) => halfRowSpace("softmaxHalf", shape, limits?.subgroupSize ?? 32),
    unsupported: halfRowsUnsupported,
    build([rows, cols], context) {
      const kernel = halfRowKernel(context, "softmaxHalf", cols!, type);
      return {
        buffers: [
          { name: "x", length: rows! * cols!, role: "input", type, low: -3, high: 3 },
          { name: "out", length: rows! * cols!, role: "output", type },
        ],
        steps: [{ kernel, grid: halfRowGrid(rows!, kernel, context), args: [{ buffer: "out" }, { buffer: "x" }, { i32: rows! }, { i32: cols! }] }],
        bytes: 4 * rows! * cols!,
        output: "out",
        parameters: {},
        check: {
          kind: "rounded",
          type,
          maxRelative: context.backend === "webgpu" ? 1e-4 : 1e-5,
          floor: 1e-30,
          why: "the store rounds to bf16 (half an ulp of the reference); before it, exp, x − max, the row sum's tree and the scale in f32 (≈ 30·2⁻²⁴ relative, as the f32 softmax); WGSL's exp is only loosely bounded",
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          return byRows(rows!, cols!, (r, out) => {
            let max = -Infinity;
            for (let c = 0; c < cols!; c++) max = Math.max(max, x[r * cols! + c]!);
            let total = 0;
            for (let c = 0; c < cols!; c++) total += out[c] = Math.exp(x[r * cols! + c]! - max);
            for (let c = 0; c < cols!; c++) out[c]! /= total;
          });
        },
      };
    },
  };
}

// ---- elementwise: GELU, dequantization ----------------------------------------------------------------------

/** Blocks for a grid-stride loop over `vectors` vectors: enough to cover them once, within the device's limit. */
function vectorBlocks(vectors: number, kernel: KernelHandle, context: CaseContext): number {
  const { BLOCK, ITEMS } = constantsOf(kernel);
  return Math.max(1, Math.min(Math.ceil(vectors / (BLOCK! * ITEMS!)), context.limits.maxGridDims[0]));
}

const elementwiseSpace = { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4, 8] };

/**
 * GELU in `type`. Variants: `one` times geluHalf's specialization of one vector per thread in blocks of 128
 * (PyTorch's shape of launch: a full multiprocessor at 30 registers) instead of the first (four vectors per
 * thread, 48 registers); `tanh` times geluHalfTanh (0.5·x·(1 + tanh u), as PyTorch computes it: no IEEE
 * division; 39 registers) at geluHalf's first launch.
 */
function geluCase(type: HalfType, variant?: "one" | "tanh"): KernelCase {
  const name = variant === "tanh" ? "geluHalfTanh" : "geluHalf";
  return {
    id: variant ? `gelu-${type}-${variant}` : `gelu-${type}`,
    family: "gelu",
    title: `GELU (tanh approximation), ${type}${variant === "tanh" ? " (computed with tanh)" : ""}`,
    kernels: { [name]: "examples/elementwise-bf16.ts" },
    torch: `torch.nn.functional.gelu(x, approximate="tanh") on a ${type} tensor`,
    dims: 1,
    gpuShapes: [[2 ** 28]],
    cpuShapes: [[2 ** 20]],
    space: () => ({ kernels: [name], constants: elementwiseSpace }),
    unsupported: ([n]) => (n! % 8 === 0 ? undefined : "n must be a multiple of 8 (16-byte vectors of 16-bit elements)"),
    build([n], context) {
      const choices: readonly Constants[] = variant === "one" ? [{ T: type, BLOCK: 128, ITEMS: 1 }] : variant === "tanh" ? [{ T: type }] : [{ T: type }, { T: type, BLOCK: 128, ITEMS: 2 }];
      const kernel = pick(context, name, choices);
      const geluRef = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
      return {
        buffers: [
          { name: "x", length: n!, role: "input", type, low: -6, high: 6 },
          { name: "out", length: n!, role: "output", type },
        ],
        steps: [{ kernel, grid: [vectorBlocks(n! / 8, kernel, context), 1, 1], args: [{ buffer: "out" }, { buffer: "x" }, { i32: n! }] }],
        bytes: 4 * n!,
        output: "out",
        parameters: {},
        check: {
          kind: "rounded",
          type,
          maxRelative: context.backend === "webgpu" ? 1e-3 : 2e-4,
          floor: 1e-3,
          why: "the store rounds to bf16 (half an ulp of the reference); before it, x / (1 + exp(−2u)) in f32 is within a few units of 2⁻²⁴ relative, and a counterpart that computes 0.5·x·(1 + tanh u) cancels near 0 for negative x (an absolute error of about |x|·2⁻²⁴, within the 1e-3 floor); WGSL's exp is only loosely bounded",
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          return {
            length: n!,
            fill: (start, ref) => {
              for (let j = 0; j < ref.length; j++) ref[j] = geluRef(x[start + j]!);
            },
          };
        },
      };
    },
  };
}

/**
 * The dequantization kernels (examples/elementwise-bf16.ts), by case suffix ("" for dequantizeRows): the title's
 * addition, the int8 elements a vector access moves, and the builds the bench picks from (besides T).
 */
const dequantizeVariants = {
  "": { kernel: "dequantizeRows", title: "", elements: 16, builds: [{}, { BLOCK: 128, ITEMS: 2 }] },
  /** Each vector's scale read with its int8, before any store: same launch, same results. */
  prefetch: { kernel: "dequantizeRowsPrefetch", title: " (scales read with the int8)", elements: 16, builds: [{}] },
  /** Eight int8 in (8 bytes) and one 16-byte store out a vector: whole sectors for each warp's accesses. */
  whole: { kernel: "dequantizeRowsWhole", title: " (8-byte loads, one 16-byte store a vector)", elements: 8, builds: [{}, { ITEMS: 1 }] },
} as const;

/** The dequantization to `type`, by dequantizeRows or one of its variants. */
function dequantizeCase(type: HalfType, variant: keyof typeof dequantizeVariants = ""): KernelCase {
  const { kernel: name, title, elements, builds } = dequantizeVariants[variant];
  return {
    id: (type === "bf16" ? "dequantize-int8" : `dequantize-int8-${type}`) + (variant ? `-${variant}` : ""),
    family: "dequantize",
    title: `int8 → ${type} dequantization, per-row scales${title}`,
    kernels: { [name]: "examples/elementwise-bf16.ts" },
    torch: `q.to(torch.${type === "bf16" ? "bfloat16" : "float16"}) * scale[:, None] (int8 q, ${type} scale)`,
    dims: 2,
    gpuShapes: rowGpuShapes,
    cpuShapes: [
      [256, 1024],
      [37, 48],
    ],
    space: () => ({ kernels: [name], constants: elementwiseSpace }),
    unsupported: ([, cols]) => (cols! % elements === 0 ? undefined : `cols must be a multiple of ${elements} (${elements}-byte vectors of int8)`),
    build([rows, cols], context) {
      const kernel = pick(context, name, builds.map((build) => ({ T: type, ...build })));
      return {
        buffers: [
          { name: "q", length: rows! * cols!, role: "input", type: "i8", low: -128, high: 128 },
          { name: "scale", length: rows!, role: "input", type, low: 0.001, high: 0.05 },
          { name: "out", length: rows! * cols!, role: "output", type },
        ],
        steps: [{ kernel, grid: [vectorBlocks((rows! * cols!) / elements, kernel, context), 1, 1], args: [{ buffer: "out" }, { buffer: "q" }, { buffer: "scale" }, { i32: rows! }, { i32: cols! }] }],
        bytes: 3 * rows! * cols! + 2 * rows!,
        output: "out",
        parameters: {},
        check: { kind: "exact", type, why: "an int8 times a bf16 scale is exact in f32 (16 significant bits at most), so the store's rounding to bf16 is the only one: bit for bit the reference rounded to bf16, as PyTorch's" },
        reference: (inputs) => {
          const q = inputs.get("q")!;
          const scale = inputs.get("scale")!;
          return {
            length: rows! * cols!,
            fill: (start, ref) => {
              for (let j = 0; j < ref.length; j++) ref[j] = q[start + j]! * scale[Math.floor((start + j) / cols!)]!;
            },
          };
        },
      };
    },
  };
}

// ---- the RGBA8 blur -----------------------------------------------------------------------------------------

/** The binomial taps of examples/blur-rgba8.ts along each axis. */
const blurTaps = [1, 4, 6, 4, 1];

/**
 * The blurred image, exactly: each channel (Σ over the 5×5 neighbourhood of taps_i·taps_j·p, edges clamped +
 * 128) >> 8, computed a row at a time from the last five rows' horizontal sums (chunks come in order).
 */
function blurReference(height: number, width: number, image: ArrayLike<number>): ChunkedReference {
  const rowBytes = 4 * width;
  const horizontal = new Map<number, Int32Array>();
  const sumsOf = (y: number) => {
    const clamped = Math.min(Math.max(y, 0), height - 1);
    let sums = horizontal.get(clamped);
    if (!sums) {
      sums = new Int32Array(rowBytes);
      for (let x = 0; x < width; x++) {
        for (let k = 0; k < 4; k++) {
          let s = 0;
          for (let t = -2; t <= 2; t++) s += blurTaps[t + 2]! * image[clamped * rowBytes + 4 * Math.min(Math.max(x + t, 0), width - 1) + k]!;
          sums[4 * x + k] = s;
        }
      }
      horizontal.set(clamped, sums);
      // Keep the rows a later output row can still need.
      for (const key of horizontal.keys()) if (key < clamped - 4) horizontal.delete(key);
    }
    return sums;
  };
  let row = new Int32Array(rowBytes);
  let cached = -1;
  return {
    length: height * rowBytes,
    fill: (start, ref) => {
      for (let j = 0; j < ref.length; j++) {
        const y = Math.floor((start + j) / rowBytes);
        if (y !== cached) {
          row = new Int32Array(rowBytes);
          for (let t = -2; t <= 2; t++) {
            const sums = sumsOf(y + t);
            for (let i = 0; i < rowBytes; i++) row[i]! += blurTaps[t + 2]! * sums[i]!;
          }
          for (let i = 0; i < rowBytes; i++) row[i] = (row[i]! + 128) >> 8;
          cached = y;
        }
        ref[j] = row[(start + j) % rowBytes]!;
      }
    },
  };
}

/** Pixels from which blur-rgba8-wave takes strips of 64 rows: 4320 × 7680 has them, 2160 × 3840 not. */
const waveBlurPixels = 2 ** 24;

/**
 * The blur; `wave` picks the strips by the image's size instead of blurRgba8's first specialization (128 threads,
 * strips of 32 rows): strips of 64 rows from waveBlurPixels on (at 4320 × 7680: 15 × 68 = 1020 blocks of 128,
 * one wave of 8 blocks on each of the H100's 132 multiprocessors at 63 registers, and a sixteenth of the rows
 * read twice instead of an eighth), 64 threads and strips of 16 rows below (at 2160 × 3840: 2025 blocks of 64
 * instead of 544 of 128, about 4 per multiprocessor).
 */
function blurCase(wave = false): KernelCase {
  return {
    id: wave ? "blur-rgba8-wave" : "blur-rgba8",
    family: "blur",
    title: `Gaussian blur 5×5, RGBA8 (edges clamped${wave ? "; strips by size" : ""})`,
    kernels: { blurRgba8: "examples/blur-rgba8.ts" },
    torch: "none (no uint8 image blur in PyTorch itself)",
    dims: 2,
    gpuShapes: [
      [4320, 7680],
      [2160, 3840],
    ],
    cpuShapes: [
      [480, 640],
      [67, 100],
    ],
    space: () => ({ kernels: ["blurRgba8"], constants: { THREADS: [32, 64, 128, 256], STRIP: [8, 16, 32, 64] } }),
    unsupported: ([, width]) => (width! % 4 === 0 ? undefined : "the width must be a multiple of 4 pixels (16-byte rows)"),
    build([height, width], context) {
      const choices: readonly Constants[] = !wave ? [{}, { THREADS: 64, STRIP: 16 }] : height! * width! >= waveBlurPixels ? [{ STRIP: 64 }] : [{ THREADS: 64, STRIP: 16 }];
      const kernel = pick(context, "blurRgba8", choices);
      const { THREADS, STRIP } = constantsOf(kernel) as { THREADS: number; STRIP: number };
      const blocksX = Math.ceil(width! / 4 / THREADS);
      const blocksY = Math.ceil(height! / STRIP);
      return {
        buffers: [
          { name: "image", length: 4 * height! * width!, role: "input", type: "u8", low: 0, high: 256 },
          { name: "out", length: 4 * height! * width!, role: "output", type: "u8" },
        ],
        steps: [{ kernel, grid: [blocksX, blocksY, 1], args: [{ buffer: "out" }, { buffer: "image" }, { i32: width! }, { i32: height! }] }],
        bytes: 8 * height! * width!,
        output: "out",
        parameters: {},
        check: { kind: "exact", why: "integer taps, sums below 2^16 and a rounding shift: every target computes the same bytes" },
        reference: (inputs) => blurReference(height!, width!, inputs.get("image")!),
      };
    },
  };
}

/** The suite's: bf16, and the RGBA8 blur, then variants of some. */
export const halfCases: readonly KernelCase[] = [
  // Each variant (issue 20 §3: which wins is the next H100 run's to say) right after the case it is timed
  // beside, so that a run cut short by its time limit still has both.
  layerNormCase("bf16"),
  layerNormCase("bf16", "shifted"),
  layerNormCase("bf16", "shifted-512"),
  rmsNormCase("bf16"),
  softmaxCase("bf16"),
  geluCase("bf16"),
  geluCase("bf16", "one"),
  geluCase("bf16", "tanh"),
  dequantizeCase("bf16"),
  dequantizeCase("bf16", "prefetch"),
  dequantizeCase("bf16", "whole"),
  blurCase(),
  blurCase(true),
];

/**
 * The same cases in f16, for the examples built with T: "f16" (tests/half-row-kernels.test.ts builds them from
 * the examples' own source): not in the suite, since WGSL enables f16 for a whole module and the WebGPU
 * adapters it is measured on (SwiftShader, Dawn on the H100) lack shader-f16.
 */
export function f16Cases(): readonly KernelCase[] {
  return [layerNormCase("f16"), rmsNormCase("f16"), softmaxCase("f16"), geluCase("f16"), dequantizeCase("f16"), dequantizeCase("f16", "whole")];
}
