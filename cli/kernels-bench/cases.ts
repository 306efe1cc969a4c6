/**
 * The memory-bound suite's cases: for each kernel of examples/ (SAXPY, GELU, transpose, sum in two launches
 * and in one pass, row softmax and layer norm with shared-memory trees and with subgroup reductions,
 * exclusive scan, 256-bin histogram; and cases-bf16.ts's bf16, int8 and RGBA8 cases), the shapes it is measured at, the buffers and launches one run needs, the
 * fewest bytes the operation must move (each input read once, each output written once: the numerator of
 * the effective bandwidth), the float64 reference and the check with its tolerance and why. The Node bench,
 * the tuner, the tests and the PyTorch script's plan (plan.ts) all build their runs from this one table.
 */

import { targetsLeaveOut, type LaunchLimits } from "../../runtime/launch-check.ts";
import type { BackendName, KernelHandle } from "../../runtime/device.ts";
import type { KernelLibrary } from "../../runtime/library.ts";
import type { ChunkedReference } from "./checks.ts";
import { halfCases } from "./cases-bf16.ts";
import { constantsOf, copyKernelFile, grid2d, lanesOf, log2, pick, UnsupportedShape, type CaseContext, type CaseInstance, type Constants, type InputArray, type KernelCase, type Shape, type TuningSpace } from "./case-kit.ts";

export * from "./case-kit.ts";

// ---- elementwise -------------------------------------------------------------------------------------------

/**
 * On the CPU backend the sums and the histogram get at most this many blocks, which then loop: fewer
 * partial results to combine (enough blocks for a worker thread per core on the machines the suite is
 * measured on).
 */
const cpuStrideBlocks = 16;

/**
 * Blocks for a grid-stride loop over n/4 vectors: enough to cover them once, within the device's limit, on
 * the CPU too. There a few blocks that loop cost more than many that do not: each thread of a looping block
 * walks its vectors a grid apart, dozens of interleaved streams that the CPU's prefetchers do not follow,
 * while a block that covers its part once reads BLOCK · ITEMS contiguous vectors (SAXPY at 2^20 on one thread:
 * 2.34 ms with 16 blocks, 1.51 ms with 256; median of 60 interleaved runs, bench/README.md).
 */
function strideBlocks(n: number, kernel: KernelHandle, context: CaseContext): number {
  const { BLOCK, ITEMS } = constantsOf(kernel);
  return Math.max(1, Math.min(Math.ceil(n / 4 / (BLOCK! * ITEMS!)), context.limits.maxGridDims[0]));
}

function needsMultipleOf4(shape: Shape): string | undefined {
  return shape[0]! % 4 === 0 ? undefined : "n must be a multiple of 4 (16-byte vectors)";
}

const elementwiseSpace = { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4, 8] };

const saxpy: KernelCase = {
  id: "saxpy",
  title: "SAXPY y = a·x + y",
  kernels: { saxpyVec4: "examples/elementwise-vec4.ts" },
  torch: "y.add_(x, alpha=a)",
  dims: 1,
  gpuShapes: [[2 ** 28]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["saxpyVec4"], constants: elementwiseSpace }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const kernel = pick(context, "saxpyVec4", [{}, { BLOCK: 128, ITEMS: 2 }]);
    const a = Math.fround(0.5 + Math.random() * 1.5);
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: -1, high: 1 },
        { name: "y", length: n!, role: "inout", low: -1, high: 1 },
      ],
      steps: [{ kernel, grid: [strideBlocks(n!, kernel, context), 1, 1], args: [{ i32: n! }, { f32: a }, { buffer: "x" }, { buffer: "y" }] }],
      bytes: 12 * n!,
      output: "y",
      parameters: { a },
      check: {
        kind: "relative",
        maxRelative: 1e-6,
        floor: 1,
        why: "one rounding of a·x + y with fma, two where WGSL does not fuse it: a few units of 2⁻²⁴ of |a·x| + |y| ≤ 3",
      },
      reference: (inputs) => {
        const x = inputs.get("x")!;
        const y = inputs.get("y")!;
        return {
          length: n!,
          fill: (start, ref) => {
            for (let j = 0; j < ref.length; j++) ref[j] = a * x[start + j]! + y[start + j]!;
          },
        };
      },
    };
  },
};

const gelu: KernelCase = {
  id: "gelu",
  title: "GELU (tanh approximation)",
  kernels: { geluVec4: "examples/elementwise-vec4.ts" },
  torch: 'torch.nn.functional.gelu(x, approximate="tanh")',
  dims: 1,
  gpuShapes: [[2 ** 28]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["geluVec4"], constants: elementwiseSpace }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const kernel = pick(context, "geluVec4", [{}, { BLOCK: 128, ITEMS: 2 }]);
    const geluRef = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: -6, high: 6 },
        { name: "out", length: n!, role: "output" },
      ],
      steps: [{ kernel, grid: [strideBlocks(n!, kernel, context), 1, 1], args: [{ buffer: "out" }, { buffer: "x" }, { i32: n! }] }],
      bytes: 8 * n!,
      output: "out",
      parameters: {},
      check: {
        kind: "relative",
        maxRelative: context.backend === "webgpu" ? 1e-3 : 2e-4,
        floor: 1e-3,
        why:
          "1 + tanh(…) cancels for negative x, so outputs near 0 keep an absolute error of about |x|·2⁻²⁴ (up to ~1.8e-4 of the 1e-3 floor at |x| = 6); " +
          "WGSL bounds tanh only loosely (SwiftShader's measured ~3e-4)",
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

// ---- transpose ----------------------------------------------------------------------------------------------

/** A block's rows must step through the tile evenly. */
const wholeTileRows = (c: Constants) => (Number(c.TILE) % Number(c.BLOCK_ROWS) === 0 ? undefined : "BLOCK_ROWS must divide TILE");

/** Sides that are multiples of 4 keep every row 16-byte aligned: the vector kernel; otherwise the sector-aligned scalar one. */
const vectorTranspose = ([rows, cols]: Shape) => rows! % 4 === 0 && cols! % 4 === 0;

const transpose: KernelCase = {
  id: "transpose",
  title: "transpose",
  kernels: { transposeVec4: "examples/transpose-vec4.ts", transposeAligned: "examples/transpose-aligned.ts", transposeShared: "examples/transpose.ts" },
  torch: "x.t().contiguous()",
  dims: 2,
  gpuShapes: [
    [8192, 8192],
    [8191, 8190],
  ],
  cpuShapes: [
    [1024, 1024],
    [1023, 1022],
  ],
  space: (shape, _limits, backend): TuningSpace =>
    vectorTranspose(shape)
      ? { kernels: ["transposeVec4"], constants: { TILE: [32, 64], BLOCK_ROWS: [8, 16, 32], PAD: [1, 4] }, valid: wholeTileRows }
      : backend === "cpu"
        ? { kernels: ["transposeShared"], constants: { TILE: [32, 64], BLOCK_ROWS: [4, 8, 16] }, valid: wholeTileRows }
        : { kernels: ["transposeAligned"], constants: { TILE: [32, 64], BLOCK_ROWS: [4, 8], ALIGN: [8] }, valid: (c) => ((Number(c.TILE) + Number(c.ALIGN)) % Number(c.BLOCK_ROWS) === 0 ? undefined : "BLOCK_ROWS must divide TILE + ALIGN") },
  unsupported: () => undefined,
  build(shape, context) {
    const [rows, cols] = shape;
    const vector = vectorTranspose(shape);
    // Other sides: on a GPU the sector-aligned kernel; on the CPU, whose caches have no sectors to complete, the
    // classic tiled one in 64-wide tiles, without the aligned kernel's extra rows and shifted segments.
    const kernel = vector
      ? pick(context, "transposeVec4", [{}, { TILE: 32, BLOCK_ROWS: 32 }])
      : context.backend === "cpu"
        ? pick(context, "transposeShared", [{ TILE: 64 }, {}])
        : pick(context, "transposeAligned", [{}]);
    const { TILE: tile, ALIGN: align = 1 } = constantsOf(kernel) as { TILE: number; ALIGN?: number };
    // The sector-aligned kernel shifts each output row's segment back by up to ALIGN − 1: one more row of blocks.
    const blockRows = Math.ceil((rows! + align - 1) / tile);
    return {
      buffers: [
        { name: "x", length: rows! * cols!, role: "input", low: -1, high: 1 },
        { name: "out", length: rows! * cols!, role: "output" },
      ],
      steps: [{ kernel, grid: [Math.ceil(cols! / tile), blockRows, 1], args: [{ buffer: "out" }, { buffer: "x" }, { i32: rows! }, { i32: cols! }] }],
      bytes: 8 * rows! * cols!,
      output: "out",
      parameters: {},
      check: { kind: "exact", why: "data movement only" },
      reference: (inputs) => {
        const x = inputs.get("x")!;
        // out[c][r] = x[r][c]
        return {
          length: rows! * cols!,
          fill: (start, ref) => {
            for (let j = 0; j < ref.length; j++) ref[j] = x[((start + j) % rows!) * cols! + Math.floor((start + j) / rows!)]!;
          },
        };
      },
    };
  },
};

// ---- sum ----------------------------------------------------------------------------------------------------

/** One wave of an H100 (132 SMs × 8 blocks of 256 threads), rounded to a multiple of 4. */
const sumBlocks = 1024;

const sum: KernelCase = {
  id: "sum",
  title: "sum (two launches)",
  kernels: { sumVec4: "examples/sum-vec4.ts" },
  torch: "torch.sum(x)",
  dims: 1,
  gpuShapes: [[2 ** 28]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["sumVec4"], constants: { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4, 8] } }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const kernel = pick(context, "sumVec4", [{}, { BLOCK: 128, ITEMS: 2 }]);
    const { BLOCK, ITEMS } = constantsOf(kernel) as { BLOCK: number; ITEMS: number };
    const chunk = 4 * BLOCK * ITEMS;
    // The partial sums are the second launch's vector input: a multiple of 4 of them.
    const blocks = Math.ceil(Math.min(context.backend === "cpu" ? cpuStrideBlocks : sumBlocks, Math.ceil(n! / chunk)) / 4) * 4;
    // Depth: each lane's running sum (one addition per vector it takes), the four lanes, the tree, then the
    // same again over the partial sums in the second launch, and the final store.
    const perLane = (count: number, grid: number) => Math.ceil(count / (chunk * grid)) * ITEMS;
    const depth = perLane(n!, blocks) + 2 + log2(BLOCK) + perLane(blocks, 1) + 2 + log2(BLOCK) + 1;
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: 0, high: 1 },
        { name: "partials", length: blocks, role: "scratch" },
        { name: "out", length: 1, role: "output" },
      ],
      steps: [
        { kernel, grid: [blocks, 1, 1], args: [{ buffer: "partials" }, { buffer: "x" }, { i32: n! }] },
        { kernel, grid: [1, 1, 1], args: [{ buffer: "out" }, { buffer: "partials" }, { i32: blocks }] },
      ],
      bytes: 4 * n! + 4,
      output: "out",
      parameters: {},
      check: {
        kind: "bound",
        depth,
        why: "the worst-case error of the two-launch summation tree; inputs in [0, 1), so Σ|x| = Σx and a lost or doubled block (≥ 1/G of the sum) is far outside it",
      },
      reference: sumReference(n!),
    };
  },
};

/** The float64 sum of x and of |x|. */
function sumReference(n: number): CaseInstance["reference"] {
  return (inputs) => {
    const x = inputs.get("x")!;
    return {
      length: 1,
      fill: (_start, ref, scale) => {
        let total = 0;
        let magnitude = 0;
        for (let i = 0; i < n; i++) {
          total += x[i]!;
          magnitude += Math.abs(x[i]!);
        }
        ref[0] = total;
        scale[0] = magnitude;
      },
    };
  };
}


const sumOnePass: KernelCase = {
  id: "sum-onepass",
  family: "sum",
  title: "sum (one pass: subgroup sums, one atomicAdd per block)",
  kernels: { clearTotal: "examples/sum-vec4-subgroups.ts", sumVec4Subgroups: "examples/sum-vec4-subgroups.ts" },
  torch: "torch.sum(x)",
  dims: 1,
  gpuShapes: [[2 ** 28]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["sumVec4Subgroups"], constants: { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4, 8] } }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const clear = pick(context, "clearTotal", [{}]);
    const kernel = pick(context, "sumVec4Subgroups", [{}, { BLOCK: 128, ITEMS: 2 }]);
    const { BLOCK, ITEMS } = constantsOf(kernel) as { BLOCK: number; ITEMS: number };
    const chunk = 4 * BLOCK * ITEMS;
    const blocks = Math.max(1, Math.min(context.backend === "cpu" ? cpuStrideBlocks : sumBlocks, Math.ceil(n! / chunk)));
    // Depth: each lane's running sum, the four lanes, the subgroup's butterfly, the slots one lane adds up
    // (BLOCK / lanes of them, lanes at a time), the butterfly again, then the blocks' atomics, one after
    // another in some order onto the zeroed total.
    const lanes = lanesOf(context.limits);
    const depth = Math.ceil(n! / (chunk * blocks)) * ITEMS + 2 + 2 * log2(lanes) + Math.ceil(BLOCK / lanes / lanes) + blocks;
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: 0, high: 1 },
        { name: "out", length: 1, role: "output" },
      ],
      steps: [
        { kernel: clear, grid: [1, 1, 1], args: [{ buffer: "out" }] },
        { kernel, grid: [blocks, 1, 1], args: [{ buffer: "out" }, { buffer: "x" }, { i32: n! }] },
      ],
      bytes: 4 * n! + 4,
      output: "out",
      parameters: {},
      check: {
        kind: "bound",
        depth,
        why: "the worst-case error of the summation tree, whose last level is the blocks' atomics one after another (depth ≈ the number of blocks); inputs in [0, 1), so a lost or doubled block (≥ 1/G of the sum) is far outside it",
      },
      reference: sumReference(n!),
    };
  },
};

// ---- softmax and layer norm -----------------------------------------------------------------------------------

/**
 * The row kernels' specializations, by capacity (4·THREADS·ITEMS): the smallest that holds a row is used. For
 * rows of 4096, softmax takes 256 threads of 4 vectors and layer norm 128 threads of 8 (the tuner's choices on
 * the H100: runs 1 and 2, bench/README.md).
 */
const rowChoices: Readonly<Record<string, readonly Constants[]>> = {
  softmaxRows: [
    { THREADS: 32, ROWS: 8, ITEMS: 2 },
    { THREADS: 64, ROWS: 4, ITEMS: 4 },
    { THREADS: 256, ROWS: 1, ITEMS: 4 },
    { THREADS: 256, ROWS: 1, ITEMS: 8 },
  ],
  layerNormRows: [
    { THREADS: 32, ROWS: 8, ITEMS: 2 },
    { THREADS: 64, ROWS: 4, ITEMS: 4 },
    { THREADS: 128, ROWS: 1, ITEMS: 8 },
    { THREADS: 256, ROWS: 1, ITEMS: 8 },
  ],
  // The subgroup variants declare the same specializations as the kernels above.
  softmaxVec4Subgroups: [
    { THREADS: 32, ROWS: 8, ITEMS: 2 },
    { THREADS: 64, ROWS: 4, ITEMS: 4 },
    { THREADS: 256, ROWS: 1, ITEMS: 4 },
    { THREADS: 256, ROWS: 1, ITEMS: 8 },
  ],
  layerNormSubgroups: [
    { THREADS: 32, ROWS: 8, ITEMS: 2 },
    { THREADS: 64, ROWS: 4, ITEMS: 4 },
    { THREADS: 128, ROWS: 1, ITEMS: 8 },
    { THREADS: 256, ROWS: 1, ITEMS: 8 },
  ],
};

/** The subgroup kernels need each row's THREADS threads to be whole subgroups. */
const wholeSubgroups = (c: Constants, lanes: number) => Number(c.THREADS) >= lanes && Number(c.THREADS) % lanes === 0;
const capacity = (c: Constants) => 4 * Number(c.THREADS) * Number(c.ITEMS);
const maxRowLength = Math.min(...Object.values(rowChoices).map((list) => Math.max(...list.map(capacity))));

/**
 * The CPU's first choices where they differ, ahead of the GPU's: for layer norm, rows of up to 1024 in blocks of
 * 8 rows of 32 threads (`tskernel tune kernels --backend cpu --kernels layernorm`, 1024 × 1024: 8.8 and 10.8 ms
 * against 16.8 and 22.1 ms for the GPU's 4 rows of 64, the fastest of 14 settings; bench/README.md).
 */
const cpuRowChoices: Readonly<Record<string, readonly Constants[]>> = {
  layerNormRows: [{ THREADS: 32, ROWS: 8, ITEMS: 8 }],
};

function rowKernel(context: CaseContext, name: string, cols: number, subgroups: boolean): KernelHandle {
  const list = [...(context.backend === "cpu" ? (cpuRowChoices[name] ?? []) : []), ...rowChoices[name]!];
  const choices = list.filter((c) => capacity(c) >= cols && (!subgroups || wholeSubgroups(c, lanesOf(context.limits))));
  return pick(context, name, choices);
}

function rowsUnsupported([, cols]: Shape): string | undefined {
  if (cols! % 4 !== 0) return "cols must be a multiple of 4 (16-byte vectors)";
  if (cols! > maxRowLength) return `rows longer than ${maxRowLength} do not fit the threads' registers`;
  return undefined;
}

/** Settings whose capacity holds a row without more than half of it idle, in blocks of 64 to 1024 threads. */
/** `lanes`: for the subgroup kernels, the device's subgroup size, which a row's threads must be whole subgroups of. */
function rowSpace([, cols]: Shape, lanes?: number): TuningSpace {
  return {
    kernels: [],
    constants: { THREADS: [32, 64, 128, 256, 512], ROWS: [1, 2, 4, 8], ITEMS: [1, 2, 4, 8, 16] },
    valid: (c) => {
      if (capacity(c) < cols!) return "a row does not fit";
      if (lanes && !wholeSubgroups(c, lanes)) return "a row's threads must be whole subgroups";
      if (capacity(c) >= 2 * cols!) return "more than half of the threads' registers idle";
      const threads = Number(c.THREADS) * Number(c.ROWS);
      return threads < 64 || threads > 1024 ? "blocks of 64 to 1024 threads" : undefined;
    },
  };
}

function rowGrid(rows: number, kernel: KernelHandle, context: CaseContext): [number, number, number] {
  return grid2d(Math.ceil(rows / constantsOf(kernel).ROWS!), context.limits);
}

/** Row softmax with shared-memory trees (softmax.ts) or subgroup reductions (softmax-vec4-subgroups.ts). */
function softmaxCase(subgroups: boolean): KernelCase {
  const name = subgroups ? "softmaxVec4Subgroups" : "softmaxRows";
  return {
    id: subgroups ? "softmax-subgroups" : "softmax",
    ...(subgroups ? { family: "softmax" } : {}),
    title: subgroups ? "row softmax (subgroup reductions)" : "row softmax",
    kernels: { [name]: subgroups ? "examples/softmax-vec4-subgroups.ts" : "examples/softmax.ts" },
    torch: "torch.softmax(x, dim=1)",
    dims: 2,
    gpuShapes: [
      [4096, 4096],
      [65536, 1024],
    ],
    cpuShapes: [
      [64, 4096],
      [1024, 1024],
    ],
    space: (shape, limits) => ({ ...rowSpace(shape, subgroups ? (limits?.subgroupSize ?? 32) : undefined), kernels: [name] }),
    unsupported: rowsUnsupported,
    build([rows, cols], context) {
      const kernel = rowKernel(context, name, cols!, subgroups);
      const { THREADS, ITEMS } = constantsOf(kernel) as { THREADS: number; ITEMS: number };
      // exp's error, the rounding of x − max (at most 6 units: |x − max| ≤ 6), the sum's tree, the scale.
      const sumDepth = 4 * ITEMS + log2(THREADS);
      return {
        buffers: [
          { name: "x", length: rows! * cols!, role: "input", low: -3, high: 3 },
          { name: "out", length: rows! * cols!, role: "output" },
        ],
        steps: [{ kernel, grid: rowGrid(rows!, kernel, context), args: [{ buffer: "out" }, { buffer: "x" }, { i32: rows! }, { i32: cols! }] }],
        bytes: 8 * rows! * cols!,
        output: "out",
        parameters: {},
        check: {
          kind: "relative",
          maxRelative: context.backend === "webgpu" ? 1e-4 : 1e-5,
          floor: 1e-30,
          why: `elementwise relative: exp (a few ulps on CUDA and the CPU), x − max rounded (≤ 6 ulps of exp's argument), the row sum (tree depth ${sumDepth}) and the scale, ≈ ${sumDepth + 10}·2⁻²⁴ ≈ ${((sumDepth + 10) * 2 ** -24).toExponential(1)} at worst; WGSL's exp is only loosely bounded`,
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          const row = new Float64Array(cols!);
          let cached = -1;
          return {
            length: rows! * cols!,
            fill: (start, ref) => {
              for (let j = 0; j < ref.length; j++) {
                const r = Math.floor((start + j) / cols!);
                if (r !== cached) {
                  let max = -Infinity;
                  for (let c = 0; c < cols!; c++) max = Math.max(max, x[r * cols! + c]!);
                  let total = 0;
                  for (let c = 0; c < cols!; c++) total += row[c] = Math.exp(x[r * cols! + c]! - max);
                  for (let c = 0; c < cols!; c++) row[c]! /= total;
                  cached = r;
                }
                ref[j] = row[(start + j) % cols!]!;
              }
            },
          };
        },
      };
    },
  };
}

/** Layer norm with shared-memory trees (layer-norm.ts) or subgroup reductions (layer-norm-subgroups.ts). */
function layerNormCase(subgroups: boolean): KernelCase {
  const name = subgroups ? "layerNormSubgroups" : "layerNormRows";
  return {
    id: subgroups ? "layernorm-subgroups" : "layernorm",
    ...(subgroups ? { family: "layernorm" } : {}),
    title: subgroups ? "layer norm (γ, β; subgroup reductions)" : "layer norm (γ, β)",
    kernels: { [name]: subgroups ? "examples/layer-norm-subgroups.ts" : "examples/layer-norm.ts" },
    torch: "torch.nn.functional.layer_norm(x, [cols], gamma, beta, eps=1e-5)",
    dims: 2,
    gpuShapes: [
      [4096, 4096],
      [65536, 1024],
    ],
    cpuShapes: [
      [64, 4096],
      [1024, 1024],
    ],
    space: (shape, limits) => ({ ...rowSpace(shape, subgroups ? (limits?.subgroupSize ?? 32) : undefined), kernels: [name] }),
    unsupported: rowsUnsupported,
    build([rows, cols], context) {
      const kernel = rowKernel(context, name, cols!, subgroups);
      const eps = 1e-5;
      return {
        buffers: [
          { name: "x", length: rows! * cols!, role: "input", low: -2, high: 2 },
          { name: "gamma", length: cols!, role: "input", low: 0.5, high: 1.5 },
          { name: "beta", length: cols!, role: "input", low: -0.5, high: 0.5 },
          { name: "out", length: rows! * cols!, role: "output" },
        ],
        steps: [
          {
            kernel,
            grid: rowGrid(rows!, kernel, context),
            args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "gamma" }, { buffer: "beta" }, { i32: rows! }, { i32: cols! }, { f32: eps }],
          },
        ],
        bytes: 8 * rows! * cols! + 8 * cols!,
        output: "out",
        parameters: { eps },
        check: {
          kind: "relative",
          maxRelative: 3e-5,
          floor: 1,
          why: "outputs are O(1) and may cancel to 0 (β), so the error is bounded absolutely: the mean's and variance's trees (depth ≤ 40) times |x − mean|·rstd·γ ≤ 3 give ≈ 1e-5 at worst",
        },
        reference: (inputs) => {
          const x = inputs.get("x")!;
          const gamma = inputs.get("gamma")!;
          const beta = inputs.get("beta")!;
          const row = new Float64Array(cols!);
          let cached = -1;
          return {
            length: rows! * cols!,
            fill: (start, ref) => {
              for (let j = 0; j < ref.length; j++) {
                const r = Math.floor((start + j) / cols!);
                if (r !== cached) {
                  let mean = 0;
                  for (let c = 0; c < cols!; c++) mean += x[r * cols! + c]!;
                  mean /= cols!;
                  let variance = 0;
                  for (let c = 0; c < cols!; c++) variance += (x[r * cols! + c]! - mean) ** 2;
                  const rstd = 1 / Math.sqrt(variance / cols! + Math.fround(eps));
                  for (let c = 0; c < cols!; c++) row[c] = (x[r * cols! + c]! - mean) * rstd * gamma[c]! + beta[c]!;
                  cached = r;
                }
                ref[j] = row[(start + j) % cols!]!;
              }
            },
          };
        },
      };
    },
  };
}

// ---- scan ---------------------------------------------------------------------------------------------------

const scan: KernelCase = {
  id: "scan",
  title: "exclusive scan (three launches)",
  kernels: { scanTileSums: "examples/scan.ts", scanPartials: "examples/scan.ts", scanTiles: "examples/scan.ts" },
  torch: "torch.cumsum(x, 0) (inclusive; not shifted)",
  dims: 1,
  gpuShapes: [[2 ** 26]],
  cpuShapes: [[2 ** 20]],
  // A GPU takes coalesced tiles of a few vectors per thread. On the CPU backend both forms are searched: the
  // CPU's (COALESCE false: each thread's elements in place, no copies) from one thread of a few vectors to 256
  // threads of 4096, and the GPU's within its own range of vectors per thread (examples/scan.ts).
  space: (_shape, _limits, backend): TuningSpace =>
    backend === "cpu"
      ? {
          kernels: ["scanTileSums", "scanTiles"],
          constants: { BLOCK: [1, 4, 16, 256], ITEMS: [2, 16, 64, 256, 1024, 4096], COALESCE: [false, true] },
          valid: (c) => (c.COALESCE === true && Number(c.ITEMS) > 16 ? "the GPU form (staged tiles, unrolled loops) only with a GPU's few vectors per thread" : undefined),
        }
      : { kernels: ["scanTileSums", "scanTiles"], constants: { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4] } },
  unsupported: needsMultipleOf4,
  build([n], context) {
    const cpu = context.backend === "cpu";
    const tileSums = pick(context, "scanTileSums", cpu ? [{ BLOCK: 1, ITEMS: 1024, COALESCE: false }] : [{}, { BLOCK: 64 }]);
    // On the CPU one block of 64 threads: the 1024-thread one would spend more on its tree than on the tile sums.
    const partialsKernel = pick(context, "scanPartials", cpu ? [{ BLOCK: 64, ITEMS: 4 }] : [{ BLOCK: 1024, ITEMS: 16 }, {}, { BLOCK: 64, ITEMS: 4 }]);
    // The last launch cuts the input into the same tiles as the first.
    const tilesKernel = pick(context, "scanTiles", [constantsOf(tileSums)]);
    const { BLOCK, ITEMS } = constantsOf(tilesKernel) as { BLOCK: number; ITEMS: number };
    const sumsConstants = constantsOf(tileSums);
    if (sumsConstants.BLOCK !== BLOCK || sumsConstants.ITEMS !== ITEMS) throw new UnsupportedShape("scanTileSums and scanTiles must use the same tile");
    const tile = 4 * BLOCK * ITEMS;
    const tiles = Math.ceil(n! / tile);
    const grid = grid2d(tiles, context.limits);
    const p = constantsOf(partialsKernel) as { BLOCK: number; ITEMS: number };
    // Depth of the tree that makes out[i]: the tile sums (lanes, vectors, tree), the scan of the tile sums
    // (each thread's values, the Hillis–Steele steps, the carry from chunk to chunk), then within the tile
    // (the thread's running total, the steps, the offset, the running sum: one addition per element, or
    // without COALESCE one per vector plus the vector's own prefix, and the thread's total one per vector).
    const coalesced = tilesKernel.description.specialization.COALESCE !== false;
    const withinTile = coalesced ? 4 * ITEMS + log2(BLOCK) + 2 + 4 * ITEMS : ITEMS + 2 + log2(BLOCK) + 2 + ITEMS + 3;
    const depth = ITEMS + 2 + log2(BLOCK) + (2 * p.ITEMS + log2(p.BLOCK) + Math.ceil(tiles / (p.BLOCK * p.ITEMS)) + 2) + withinTile + 2;
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: 0, high: 1 },
        // Whole vectors: the middle launch reads and writes them 16 bytes at a time.
        { name: "partials", length: Math.ceil(tiles / 4) * 4, role: "scratch" },
        { name: "out", length: n!, role: "output" },
      ],
      steps: [
        { kernel: tileSums, grid, args: [{ buffer: "partials" }, { buffer: "x" }, { i32: n! }] },
        { kernel: partialsKernel, grid: [1, 1, 1], args: [{ buffer: "partials" }, { i32: tiles }] },
        { kernel: tilesKernel, grid, args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "partials" }, { i32: n! }] },
      ],
      bytes: 8 * n!,
      output: "out",
      parameters: {},
      check: {
        kind: "bound",
        depth,
        why: "the worst-case error of the scan's summation tree for each element; inputs in [0, 1), so the bound is relative and a wrong tile offset (≥ one tile's sum) is far outside it",
      },
      reference: (inputs) => {
        const x = inputs.get("x")!;
        let running = 0;
        let magnitude = 0;
        return {
          length: n!,
          fill: (start, ref, scale) => {
            for (let j = 0; j < ref.length; j++) {
              ref[j] = running;
              scale[j] = magnitude;
              running += x[start + j]!;
              magnitude += Math.abs(x[start + j]!);
            }
          },
        };
      },
    };
  },
};

/** The exclusive scan's float64 reference: each element the sum of those before it, with its magnitude. */
function scanReference(n: number) {
  return (inputs: ReadonlyMap<string, InputArray>): ChunkedReference => {
    const x = inputs.get("x")!;
    let running = 0;
    let magnitude = 0;
    return {
      length: n,
      fill: (start, ref, scale) => {
        for (let j = 0; j < ref.length; j++) {
          ref[j] = running;
          scale[j] = magnitude;
          running += x[start + j]!;
          magnitude += Math.abs(x[start + j]!);
        }
      },
    };
  };
}

/**
 * The one-pass scans launch one block per tile of 4·BLOCK·ITEMS elements, all in one row of the grid (a block
 * takes its tile from a counter, so the grid is the tile count).
 */
function lookbackTiles(n: number, BLOCK: number, ITEMS: number, context: CaseContext): number {
  const tiles = Math.ceil(n / (4 * BLOCK * ITEMS));
  if (tiles > context.limits.maxGridDims[0]) throw new UnsupportedShape(`${tiles} tiles exceed one row of the device's grid`);
  return tiles;
}

const lookbackBoundWhy =
  "the worst-case error of the scan's summation tree for each element, whose tile offsets may chain through every tile; inputs in [0, 1), so a wrong offset early in the data (≥ one tile's sum) is far outside it, and the CPU tests check every offset exactly on whole numbers";

const scanLookback: KernelCase = {
  id: "scan-lookback",
  family: "scan",
  title: "exclusive scan (one pass, decoupled look-back)",
  kernels: { clearScanState: "examples/scan-lookback.ts", scanLookback: "examples/scan-lookback.ts" },
  torch: "torch.cumsum(x, 0) (inclusive; not shifted)",
  dims: 1,
  gpuShapes: [[2 ** 26]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["scanLookback"], constants: { BLOCK: [128, 256, 512], ITEMS: [2, 4, 8] } }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const clear = pick(context, "clearScanState", [{}]);
    const kernel = pick(context, "scanLookback", [{}, { BLOCK: 64, ITEMS: 2 }]);
    const { BLOCK, ITEMS, ROUNDS } = constantsOf(kernel) as { BLOCK: number; ITEMS: number; ROUNDS: number };
    const tiles = lookbackTiles(n!, BLOCK, ITEMS, context);
    // Depth of the tree that makes out[i]: within the tile (the thread's values, the Hillis–Steele steps, the
    // thread's running sum), then the tile's offset: in the worst case each tile's prefix is the one before it
    // plus its own sum, a chain through every tile, and a window's sums add up one after another before that.
    const depth = 4 * ITEMS + log2(BLOCK) + 2 + 4 * ITEMS + tiles + Math.min(tiles, ROUNDS * BLOCK) + 2;
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: 0, high: 1 },
        { name: "aggregates", length: tiles, role: "scratch" },
        { name: "prefixes", length: tiles, role: "scratch" },
        // Poisoned (0xdeadbeef: a flag no tile writes) until clearScanState zeroes them.
        { name: "flags", length: tiles, role: "scratch", type: "u32" },
        { name: "counter", length: 1, role: "scratch", type: "u32" },
        { name: "out", length: n!, role: "output" },
      ],
      steps: [
        { kernel: clear, grid: [Math.ceil(tiles / 256), 1, 1], args: [{ buffer: "flags" }, { buffer: "counter" }, { i32: tiles }] },
        {
          kernel,
          grid: [tiles, 1, 1],
          args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "aggregates" }, { buffer: "prefixes" }, { buffer: "flags" }, { buffer: "counter" }, { i32: n! }],
        },
      ],
      bytes: 8 * n!,
      output: "out",
      parameters: {},
      check: {
        kind: "bound",
        depth,
        why: lookbackBoundWhy,
      },
      reference: scanReference(n!),
    };
  },
};

const scanLookbackSubgroups: KernelCase = {
  id: "scan-lookback-subgroups",
  family: "scan",
  title: "exclusive scan (one pass, one-word look-back by a subgroup)",
  kernels: { clearScanWords: "examples/scan-lookback-subgroups.ts", scanLookbackSubgroups: "examples/scan-lookback-subgroups.ts" },
  torch: "torch.cumsum(x, 0) (inclusive; not shifted)",
  dims: 1,
  gpuShapes: [[2 ** 26]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["scanLookbackSubgroups"], constants: { BLOCK: [128, 256, 384], ITEMS: [8, 12, 16, 24] } }),
  unsupported: needsMultipleOf4,
  build([n], context) {
    const clear = pick(context, "clearScanWords", [{}]);
    const kernel = pick(context, "scanLookbackSubgroups", [{}, { BLOCK: 128, ITEMS: 2 }]);
    const { BLOCK, ITEMS, ROUNDS } = constantsOf(kernel) as { BLOCK: number; ITEMS: number; ROUNDS: number };
    const tiles = lookbackTiles(n!, BLOCK, ITEMS, context);
    // Depth of the tree that makes out[i]: within the tile (the thread's values, the subgroup scan, the
    // subgroups' sums one after another), then the tile's offset: in the worst case each tile's prefix is the
    // one before it, through a window's subgroupAdd, plus its own sum, a chain through every tile (and the
    // rounds of windows before that); then the thread's running sum.
    const lanes = log2(lanesOf(context.limits));
    const depth = 4 * ITEMS + lanes + 1 + BLOCK / 4 + tiles * (lanes + 2) + ROUNDS + 4 * ITEMS + 2;
    return {
      buffers: [
        { name: "x", length: n!, role: "input", low: 0, high: 1 },
        // Poisoned (0xdeadbeef: a word the look-back would take for a published value) until clearScanWords
        // sets them to NOT_READY.
        { name: "aggregates", length: tiles, role: "scratch", type: "u32" },
        { name: "prefixes", length: tiles, role: "scratch", type: "u32" },
        { name: "counter", length: 1, role: "scratch", type: "u32" },
        { name: "out", length: n!, role: "output" },
      ],
      steps: [
        { kernel: clear, grid: [Math.ceil(tiles / 256), 1, 1], args: [{ buffer: "aggregates" }, { buffer: "prefixes" }, { buffer: "counter" }, { i32: tiles }] },
        {
          kernel,
          grid: [tiles, 1, 1],
          args: [{ buffer: "out" }, { buffer: "x" }, { buffer: "aggregates" }, { buffer: "prefixes" }, { buffer: "counter" }, { i32: n! }],
        },
      ],
      bytes: 8 * n!,
      output: "out",
      parameters: {},
      check: {
        kind: "bound",
        depth,
        why: lookbackBoundWhy,
      },
      reference: scanReference(n!),
    };
  },
};

// ---- histogram ----------------------------------------------------------------------------------------------

const histogram: KernelCase = {
  id: "histogram",
  title: "256-bin histogram",
  kernels: { clearBins: "examples/histogram-vec4.ts", histogram256Vec4: "examples/histogram-vec4.ts" },
  torch: "torch.bincount(x, minlength=256)",
  dims: 1,
  gpuShapes: [[2 ** 28]],
  cpuShapes: [[2 ** 20]],
  space: () => ({ kernels: ["histogram256Vec4"], constants: { BLOCK: [128, 256, 512], ITEMS: [1, 2, 4, 8] } }),
  unsupported: () => undefined,
  build([n], context) {
    const clear = pick(context, "clearBins", [{}]);
    const kernel = pick(context, "histogram256Vec4", [{}, { BLOCK: 128, ITEMS: 2 }]);
    // About one wave of blocks, each looping over its share: every block adds its 256 bins to the global
    // histogram once, so many more blocks would cost more global atomics than they save.
    const blocks = Math.max(1, Math.min(context.backend === "cpu" ? cpuStrideBlocks : sumBlocks, Math.ceil(n! / 4 / (constantsOf(kernel).BLOCK! * constantsOf(kernel).ITEMS!))));
    return {
      buffers: [
        // Values below 256, as torch.bincount counts them (the kernel takes the low byte of any value).
        { name: "x", length: n!, role: "input", type: "u32", low: 0, high: 256 },
        { name: "hist", length: 256, role: "output", type: "u32" },
      ],
      steps: [
        { kernel: clear, grid: [1, 1, 1], args: [{ buffer: "hist" }] },
        { kernel, grid: [blocks, 1, 1], args: [{ buffer: "hist" }, { buffer: "x" }, { i32: n! }] },
      ],
      bytes: 4 * n! + 4 * 256,
      output: "hist",
      parameters: {},
      check: { kind: "exact", why: "counts are integers: every bin must be exact" },
      reference: (inputs) => {
        const x = inputs.get("x")!;
        return {
          length: 256,
          fill: (_start, ref) => {
            ref.fill(0);
            for (let i = 0; i < n!; i++) ref[x[i]! & 255]!++;
          },
        };
      },
    };
  },
};

const softmax = softmaxCase(false);
const layerNorm = layerNormCase(false);

export const kernelCases: readonly KernelCase[] = [
  saxpy,
  gelu,
  transpose,
  sum,
  sumOnePass,
  softmax,
  softmaxCase(true),
  layerNorm,
  layerNormCase(true),
  scan,
  scanLookback,
  scanLookbackSubgroups,
  histogram,
  ...halfCases,
];

/**
 * Every example file the suite's kernels come from, and the copy kernel (WebGPU's copy baseline): what a
 * library for any backend compiles. A kernel whose
 * `targets` option leaves out the backend's target is skipped by the compiler, and the library still
 * describes it (backendUnsupported).
 */
export const suiteFiles: readonly string[] = [...new Set([...kernelCases.flatMap((c) => Object.values(c.kernels)), copyKernelFile])];

/**
 * Why a case does not run on a backend, or undefined where it does: one of its kernels declares targets that
 * leave out the backend's (the look-back scans: threadFence(), which WebGPU lacks, and blocks that wait on
 * other blocks, which WebGPU does not promise to run). Read from the kernels' own declarations, as compiled
 * into `library` (which lists a kernel its build skipped too), so the example file is the one place it is
 * written.
 */
export function backendUnsupported(kernelCase: KernelCase, library: KernelLibrary, backend: BackendName): string | undefined {
  for (const name of Object.keys(kernelCase.kernels)) {
    const kernel = library.kernels.find((k) => k.description.name === name);
    const why = kernel && targetsLeaveOut(kernel.description, backend);
    if (why) return why;
  }
  return undefined;
}

/**
 * The cases named in a comma-separated list (all of them for "all" or nothing), in the suite's order, or a message
 * naming the unknown ones. An id may pin a build of its kernels: `blur-rgba8@THREADS=256+STRIP=16` runs blur-rgba8 with those
 * constants changed from the build the case picks itself (the other constants kept), a declared specialization
 * of the example; so a run can time several builds beside each other in one process (bench kernels, the
 * PyTorch plan) without a case written for each.
 */
export function resolveCases(list: string | undefined): readonly KernelCase[] | string {
  if (!list || list === "all") return kernelCases;
  const resolved: KernelCase[] = [];
  const unknown: string[] = [];
  for (const id of list.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [baseId, pins] = id.split("@", 2) as [string, string | undefined];
    const base = kernelCases.find((c) => c.id === baseId);
    if (!base) {
      unknown.push(id);
      continue;
    }
    if (pins === undefined) {
      resolved.push(base);
      continue;
    }
    const overrides = parsePins(pins);
    if (typeof overrides === "string") return `'${id}': ${overrides}`;
    resolved.push(pinnedCase(base, id, overrides));
  }
  if (unknown.length > 0) return `unknown kernel(s) ${unknown.map((id) => `'${id}'`).join(", ")}; the suite has ${kernelCases.map((c) => c.id).join(", ")}`;
  // In the suite's order, each pinned build after its case's others (as listed): a run's table reads as the suite.
  const rank = (c: KernelCase) => kernelCases.findIndex((k) => k.id === c.id.split("@")[0]);
  return resolved.map((c, i) => ({ c, i })).sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i).map(({ c }) => c);
}

/** `THREADS=256+STRIP=16` → { THREADS: 256, STRIP: 16 } (numbers, true/false, else strings such as a type). */
function parsePins(text: string): Constants | string {
  const constants: Record<string, number | boolean | string> = {};
  for (const item of text.split("+")) {
    const match = /^([A-Za-z_]\w*)=(.+)$/.exec(item);
    if (!match) return `'${item}' is not NAME=VALUE (pins are joined with '+')`;
    const value = match[2]!;
    constants[match[1]!] = value === "true" ? true : value === "false" ? false : Number.isFinite(Number(value)) ? Number(value) : value;
  }
  return constants;
}

/** The case with `overrides` applied to the build it picks of each of its kernels that has those constants. */
function pinnedCase(base: KernelCase, id: string, overrides: Constants): KernelCase {
  return {
    ...base,
    id,
    title: `${base.title} [${Object.entries(overrides).map(([k, v]) => `${k} ${v}`).join(", ")}]`,
    build(shape, context) {
      const own = base.build(shape, context);
      const prefer: Record<string, Constants> = { ...context.prefer };
      for (const step of own.steps) {
        const { name, specialization } = step.kernel.description;
        if (Object.keys(overrides).every((k) => k in specialization)) prefer[name] = { ...(specialization as Constants), ...overrides };
      }
      return base.build(shape, { ...context, prefer });
    },
  };
}
