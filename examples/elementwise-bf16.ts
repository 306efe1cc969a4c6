// GELU (tanh approximation) of bf16 values and int8 → bf16 dequantization with per-row scales, tuned for
// memory bandwidth as elementwise-vec4.ts: every access is 16 bytes (load8/store8 of eight 16-bit elements,
// load16 of sixteen 8-bit ones), each thread loads ITEMS vectors before it computes and stores, and a
// grid-stride loop lets any grid cover any n. Values are computed in f32 and rounded once to the element type
// on the store. Written once for the 16-bit float types (T: bf16 here; layer-norm-bf16.ts says how f16
// builds). Launch: block BLOCK, grid min(ceil(n / (8·BLOCK·ITEMS)), the device's limit) for GELU, and
// min(ceil(rows·cols / (16·BLOCK·ITEMS)), the limit) for the dequantization.
import {
  blockIdx,
  cast,
  f32,
  gridDim,
  kernel,
  load16,
  load8,
  local,
  store4,
  store8,
  threadIdx,
  type BufferOf,
  type Const,
  type i32,
  type ReadonlyBufferOf,
  type ReadonlyInt8Array,
} from "tskernel";

/**
 * GELU, tanh approximation (torch.nn.functional.gelu(x, approximate="tanh")): 0.5·x·(1 + tanh(u)) with
 * u = √(2/π)·(x + 0.044715·x³), written as x / (1 + exp(−2u)), the same function: one exp and one division
 * instead of tanh, and no cancellation in 1 + tanh(u) for negative x.
 */
function geluTanh(x: f32): f32 {
  const minusTwoSqrt2OverPi = -2 * Math.sqrt(2 / Math.PI);
  return x / (1 + Math.exp(minusTwoSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

export const geluHalf = kernel(
  // The third, one vector per thread in blocks of 128 (32 registers: a full multiprocessor), is PyTorch's shape
  // of launch: the case gelu-bf16-one times it beside the first.
  { block: ["BLOCK"], specializations: [{ T: "bf16" }, { T: "bf16", BLOCK: 128, ITEMS: 2 }, { T: "bf16", BLOCK: 128, ITEMS: 1 }] },
  <T extends "bf16" | "f16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const xs = local.f32(8 * ITEMS);
    const octets = n / 8;
    // Vector q of a chunk is first + k·BLOCK: consecutive threads take consecutive vectors (coalesced).
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < octets; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < octets) {
        // A whole chunk: every load first, then every store.
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, (first + k * BLOCK) * 8);
          store4(xs, 8 * k, f32(x0), f32(x1), f32(x2), f32(x3));
          store4(xs, 8 * k + 4, f32(x4), f32(x5), f32(x6), f32(x7));
        }
        unrollStore: for (let k = 0; k < ITEMS; k++) {
          const j = 8 * k;
          store8(
            out,
            (first + k * BLOCK) * 8,
            cast<T>(geluTanh(xs[j])),
            cast<T>(geluTanh(xs[j + 1])),
            cast<T>(geluTanh(xs[j + 2])),
            cast<T>(geluTanh(xs[j + 3])),
            cast<T>(geluTanh(xs[j + 4])),
            cast<T>(geluTanh(xs[j + 5])),
            cast<T>(geluTanh(xs[j + 6])),
            cast<T>(geluTanh(xs[j + 7])),
          );
        }
      } else {
        // The last, partial chunk.
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < octets) {
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, q * 8);
            store8(
              out,
              q * 8,
              cast<T>(geluTanh(f32(x0))),
              cast<T>(geluTanh(f32(x1))),
              cast<T>(geluTanh(f32(x2))),
              cast<T>(geluTanh(f32(x3))),
              cast<T>(geluTanh(f32(x4))),
              cast<T>(geluTanh(f32(x5))),
              cast<T>(geluTanh(f32(x6))),
              cast<T>(geluTanh(f32(x7))),
            );
          }
        }
      }
    }
  },
);

/**
 * The same GELU written as PyTorch writes it, 0.5·x·(1 + tanh(u)): CUDA's tanhf has no IEEE division (its
 * reciprocal is approximate: MUFU.EX2 and MUFU.RCP, no slow-path branch), where x / (1 + exp(−2u)) takes
 * expf and a correctly rounded division (FCHK, a branch to a slow path). 1 + tanh(u) cancels for negative x: an
 * absolute error of about |x|·2⁻²⁴, which the bf16 store rounds away except where the result is near 0.
 */
function geluTanhForm(x: f32): f32 {
  const sqrt2OverPi = Math.sqrt(2 / Math.PI);
  return 0.5 * x * (1 + Math.tanh(sqrt2OverPi * (x + 0.044715 * x * x * x)));
}

/** geluHalf with geluTanhForm: the case gelu-bf16-tanh times it beside geluHalf's same launch. */
export const geluHalfTanh = kernel(
  { block: ["BLOCK"], specializations: [{ T: "bf16" }] },
  <T extends "bf16" | "f16">(out: BufferOf<T>, input: ReadonlyBufferOf<T>, n: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 4) => {
    const xs = local.f32(8 * ITEMS);
    const octets = n / 8;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < octets; first += gridDim.x * BLOCK * ITEMS) {
      if (first + (ITEMS - 1) * BLOCK < octets) {
        unrollLoad: for (let k = 0; k < ITEMS; k++) {
          const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, (first + k * BLOCK) * 8);
          store4(xs, 8 * k, f32(x0), f32(x1), f32(x2), f32(x3));
          store4(xs, 8 * k + 4, f32(x4), f32(x5), f32(x6), f32(x7));
        }
        unrollStore: for (let k = 0; k < ITEMS; k++) {
          const j = 8 * k;
          store8(
            out,
            (first + k * BLOCK) * 8,
            cast<T>(geluTanhForm(xs[j])),
            cast<T>(geluTanhForm(xs[j + 1])),
            cast<T>(geluTanhForm(xs[j + 2])),
            cast<T>(geluTanhForm(xs[j + 3])),
            cast<T>(geluTanhForm(xs[j + 4])),
            cast<T>(geluTanhForm(xs[j + 5])),
            cast<T>(geluTanhForm(xs[j + 6])),
            cast<T>(geluTanhForm(xs[j + 7])),
          );
        }
      } else {
        for (let k = 0; k < ITEMS; k++) {
          const q = first + k * BLOCK;
          if (q < octets) {
            const [x0, x1, x2, x3, x4, x5, x6, x7] = load8(input, q * 8);
            store8(
              out,
              q * 8,
              cast<T>(geluTanhForm(f32(x0))),
              cast<T>(geluTanhForm(f32(x1))),
              cast<T>(geluTanhForm(f32(x2))),
              cast<T>(geluTanhForm(f32(x3))),
              cast<T>(geluTanhForm(f32(x4))),
              cast<T>(geluTanhForm(f32(x5))),
              cast<T>(geluTanhForm(f32(x6))),
              cast<T>(geluTanhForm(f32(x7))),
            );
          }
        }
      }
    }
  },
);

/**
 * out[r][c] = q[r][c] · scale[r] for int8 q and a 16-bit float scale per row, as PyTorch's
 * `q.to(torch.bfloat16) * scale[:, None]`: the product of an 8-bit integer and an 8-bit significand is exact in
 * f32, so the one rounding is the store's, and the result is PyTorch's bit for bit. Sixteen int8 (16 bytes) in,
 * two vectors of eight 16-bit values (32 bytes) out per access; cols must be a multiple of 16, so that a
 * vector lies in one row.
 */
export const dequantizeRows = kernel(
  { block: ["BLOCK"], specializations: [{ T: "bf16" }, { T: "bf16", BLOCK: 128, ITEMS: 2 }] },
  <T extends "bf16" | "f16">(out: BufferOf<T>, q: ReadonlyInt8Array, scale: ReadonlyBufferOf<T>, rows: i32, cols: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 2) => {
    const qs = local.i32(16 * ITEMS);
    const perRow = cols / 16;
    const vectors = rows * perRow;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < vectors; first += gridDim.x * BLOCK * ITEMS) {
      unrollLoad: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = load16(q, v * 16);
          store4(qs, 16 * k, a0, a1, a2, a3);
          store4(qs, 16 * k + 4, a4, a5, a6, a7);
          store4(qs, 16 * k + 8, a8, a9, a10, a11);
          store4(qs, 16 * k + 12, a12, a13, a14, a15);
        }
      }
      unrollStore: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const s = f32(scale[v / perRow]);
          const j = 16 * k;
          store8(
            out,
            v * 16,
            cast<T>(f32(qs[j]) * s),
            cast<T>(f32(qs[j + 1]) * s),
            cast<T>(f32(qs[j + 2]) * s),
            cast<T>(f32(qs[j + 3]) * s),
            cast<T>(f32(qs[j + 4]) * s),
            cast<T>(f32(qs[j + 5]) * s),
            cast<T>(f32(qs[j + 6]) * s),
            cast<T>(f32(qs[j + 7]) * s),
          );
          store8(
            out,
            v * 16 + 8,
            cast<T>(f32(qs[j + 8]) * s),
            cast<T>(f32(qs[j + 9]) * s),
            cast<T>(f32(qs[j + 10]) * s),
            cast<T>(f32(qs[j + 11]) * s),
            cast<T>(f32(qs[j + 12]) * s),
            cast<T>(f32(qs[j + 13]) * s),
            cast<T>(f32(qs[j + 14]) * s),
            cast<T>(f32(qs[j + 15]) * s),
          );
        }
      }
    }
  },
);

/**
 * dequantizeRows with every read of a chunk issued before any value is used: the ITEMS vectors of q and their
 * rows' scales (the scale's load in dequantizeRows waits for the q loads and then delays the stores by a
 * second round trip). Same arguments, launch and results. ITEMS 2 as dequantizeRows: sixteen int8 of a
 * vector become sixteen registers as they arrive, so ITEMS 4 took 95 registers (ptxas, sm_90) against 59.
 */
export const dequantizeRowsPrefetch = kernel(
  { block: ["BLOCK"], specializations: [{ T: "bf16" }] },
  <T extends "bf16" | "f16">(out: BufferOf<T>, q: ReadonlyInt8Array, scale: ReadonlyBufferOf<T>, rows: i32, cols: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 2) => {
    const qs = local.i32(16 * ITEMS);
    const scales = local.f32(ITEMS);
    const perRow = cols / 16;
    const vectors = rows * perRow;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < vectors; first += gridDim.x * BLOCK * ITEMS) {
      unrollLoad: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = load16(q, v * 16);
          scales[k] = f32(scale[v / perRow]);
          store4(qs, 16 * k, a0, a1, a2, a3);
          store4(qs, 16 * k + 4, a4, a5, a6, a7);
          store4(qs, 16 * k + 8, a8, a9, a10, a11);
          store4(qs, 16 * k + 12, a12, a13, a14, a15);
        }
      }
      unrollStore: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const s = scales[k];
          const j = 16 * k;
          store8(
            out,
            v * 16,
            cast<T>(f32(qs[j]) * s),
            cast<T>(f32(qs[j + 1]) * s),
            cast<T>(f32(qs[j + 2]) * s),
            cast<T>(f32(qs[j + 3]) * s),
            cast<T>(f32(qs[j + 4]) * s),
            cast<T>(f32(qs[j + 5]) * s),
            cast<T>(f32(qs[j + 6]) * s),
            cast<T>(f32(qs[j + 7]) * s),
          );
          store8(
            out,
            v * 16 + 8,
            cast<T>(f32(qs[j + 8]) * s),
            cast<T>(f32(qs[j + 9]) * s),
            cast<T>(f32(qs[j + 10]) * s),
            cast<T>(f32(qs[j + 11]) * s),
            cast<T>(f32(qs[j + 12]) * s),
            cast<T>(f32(qs[j + 13]) * s),
            cast<T>(f32(qs[j + 14]) * s),
            cast<T>(f32(qs[j + 15]) * s),
          );
        }
      }
    }
  },
);

/**
 * dequantizeRows with eight int8 (8 bytes, load8) in and eight values (16 bytes, one store8) out per vector, so
 * that each access a warp makes covers whole 32-byte sectors: in dequantizeRows sixteen int8 become 32 bytes
 * that go out as two 16-byte stores, each covering half of every sector it touches. A hand-written probe of both
 * patterns on the H100 (bench/dequant-probe.cu, 2026-11-27) moved 2000 GB/s with the two stores and 2690 GB/s
 * with this one, against 2750 for a copy of the same bytes. Same arguments and results; launch grid
 * min(ceil(rows·cols / (8·BLOCK·ITEMS)), the limit); cols a multiple of 8.
 */
export const dequantizeRowsWhole = kernel(
  { block: ["BLOCK"], specializations: [{ T: "bf16" }, { T: "bf16", ITEMS: 1 }] },
  <T extends "bf16" | "f16">(out: BufferOf<T>, q: ReadonlyInt8Array, scale: ReadonlyBufferOf<T>, rows: i32, cols: i32, BLOCK: Const<i32> = 256, ITEMS: Const<i32> = 2) => {
    const qs = local.i32(8 * ITEMS);
    const scales = local.f32(ITEMS);
    const perRow = cols / 8;
    const vectors = rows * perRow;
    for (let first = blockIdx.x * BLOCK * ITEMS + threadIdx.x; first < vectors; first += gridDim.x * BLOCK * ITEMS) {
      unrollLoad: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const [a0, a1, a2, a3, a4, a5, a6, a7] = load8(q, v * 8);
          scales[k] = f32(scale[v / perRow]);
          store4(qs, 8 * k, a0, a1, a2, a3);
          store4(qs, 8 * k + 4, a4, a5, a6, a7);
        }
      }
      unrollStore: for (let k = 0; k < ITEMS; k++) {
        const v = first + k * BLOCK;
        if (v < vectors) {
          const s = scales[k];
          const j = 8 * k;
          store8(
            out,
            v * 8,
            cast<T>(f32(qs[j]) * s),
            cast<T>(f32(qs[j + 1]) * s),
            cast<T>(f32(qs[j + 2]) * s),
            cast<T>(f32(qs[j + 3]) * s),
            cast<T>(f32(qs[j + 4]) * s),
            cast<T>(f32(qs[j + 5]) * s),
            cast<T>(f32(qs[j + 6]) * s),
            cast<T>(f32(qs[j + 7]) * s),
          );
        }
      }
    }
  },
);
