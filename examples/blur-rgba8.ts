// Separable Gaussian blur of an RGBA8 image (Uint8Array pixels, 4 bytes each, rows of `width` pixels), edges
// clamped: the 5-tap binomial kernel [1 4 6 4 1] / 16 along each axis (σ = 1), so every output channel is
// (Σ w_i·w_j·p + 128) >> 8 over the 5×5 neighbourhood, in integers: the same bits on every target.
// One pass over memory: each thread owns four pixels (16 bytes) of a column strip of STRIP rows and walks along
// it (down or up: below). For each input row it loads its 16 bytes and the two pixels on either side (edge-clamped; from the
// cache, where the neighbouring threads' vectors are), sums the row horizontally, keeps the last five rows' sums in registers, and sums those
// vertically for the row two behind, which it writes once with one 16-byte store. The strip reads two rows
// above and below itself (from L2: the neighbouring strips read them too, at about the same time). Channels are summed two at
// a time in 16-bit halves of a u32 (R and B, G and A): a channel's sums stay below 2^16 (255 · 256).
// width must be a multiple of 4 (16-byte rows). Launch: block THREADS, grid (ceil(width / (4·THREADS)),
// ceil(height / STRIP)).
import { blockIdx, kernel, load16, load4, local, store16, threadIdx, type Const, type i32, type ReadonlyUint8Array, type u32 } from "tskernel";

/** Two channels of a pixel, each in a 16-bit half: (R, B) or (G, A). */
function pair(low: u32, high: u32): u32 {
  return low | (high << 16);
}

/** The binomial taps 1 4 6 4 1 over five values of two 16-bit halves each (no half exceeds 2^16). */
function taps(a: u32, b: u32, c: u32, d: u32, e: u32): u32 {
  return a + e + ((b + d) << 2) + c * 6;
}

/**
 * Both halves of a final sum rounded at once: (sum + 128) >> 8 of each, the low one in bits 0–7 and the high one
 * in bits 16–23 (bits 8–15 hold the high half's low byte, which a store of the low byte drops).
 */
function rounded(sum: u32): u32 {
  return (sum + 0x00800080) >> 8;
}

export const blurRgba8 = kernel(
  // The third: strips of 64 rows (a sixteenth of the input read twice, against an eighth), for the case
  // blur-rgba8-wave.
  { block: ["THREADS"], specializations: [{}, { THREADS: 64, STRIP: 16 }, { STRIP: 64 }] },
  (out: Uint8Array, image: ReadonlyUint8Array, width: i32, height: i32, THREADS: Const<i32> = 128, STRIP: Const<i32> = 32) => {
    const quads = width / 4;
    const quad = blockIdx.x * THREADS + threadIdx.x;
    if (quad >= quads) return;
    const x = quad * 4;
    // The neighbours' columns, clamped to the image: x − 2, x − 1, x + 4, x + 5.
    const xm2 = Math.max(x - 2, 0);
    const xm1 = Math.max(x - 1, 0);
    const xp4 = Math.min(x + 4, width - 1);
    const xp5 = Math.min(x + 5, width - 1);
    const firstRow = blockIdx.y * STRIP;
    // Even strips walk down from their first row, odd ones up from their last, so that the two rows a strip
    // reads beyond each end are read by its neighbour at about the same time (both at their starts, or both
    // at their ends: neighbouring strips are launched together) and come from L2, not from memory again (all
    // walking down, the H100 read 12 % more than the image from DRAM at 4320 × 7680: the halo rows, read by
    // the strip below at its start and by the one above at its end). The taps are symmetric: the same bits.
    const step = 1 - 2 * (blockIdx.y % 2);
    const origin = step > 0 ? firstRow : firstRow + STRIP - 1;
    // The horizontal sums of the last five rows: window[(i % 5) * 8 + j], j = 2·pixel + (0: R, B; 1: G, A).
    const window = local.u32(40);
    // Input rows origin ∓ 2 … (clamped) in the strip's direction; output rows origin … towards its other end.
    unrollRows: for (let i = 0; i < STRIP + 4; i++) {
      const y = Math.min(Math.max(origin + step * (i - 2), 0), height - 1);
      const rowStart = y * width;
      const [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15] = load16(image, (rowStart + x) * 4);
      // The four pixels beside them, 4 bytes each (from the cache: the neighbouring threads' vectors).
      const [a0, a1, a2, a3] = load4(image, (rowStart + xm2) * 4);
      const [b0, b1, b2, b3] = load4(image, (rowStart + xm1) * 4);
      const [d0, d1, d2, d3] = load4(image, (rowStart + xp4) * 4);
      const [e0, e1, e2, e3] = load4(image, (rowStart + xp5) * 4);
      // Pixels x − 2 … x + 5, each as its two channel pairs.
      const m2a = pair(a0, a2);
      const m2b = pair(a1, a3);
      const m1a = pair(b0, b2);
      const m1b = pair(b1, b3);
      const p0a = pair(c0, c2);
      const p0b = pair(c1, c3);
      const p1a = pair(c4, c6);
      const p1b = pair(c5, c7);
      const p2a = pair(c8, c10);
      const p2b = pair(c9, c11);
      const p3a = pair(c12, c14);
      const p3b = pair(c13, c15);
      const p4a = pair(d0, d2);
      const p4b = pair(d1, d3);
      const p5a = pair(e0, e2);
      const p5b = pair(e1, e3);
      const w = (i % 5) * 8;
      window[w] = taps(m2a, m1a, p0a, p1a, p2a);
      window[w + 1] = taps(m2b, m1b, p0b, p1b, p2b);
      window[w + 2] = taps(m1a, p0a, p1a, p2a, p3a);
      window[w + 3] = taps(m1b, p0b, p1b, p2b, p3b);
      window[w + 4] = taps(p0a, p1a, p2a, p3a, p4a);
      window[w + 5] = taps(p0b, p1b, p2b, p3b, p4b);
      window[w + 6] = taps(p1a, p2a, p3a, p4a, p5a);
      window[w + 7] = taps(p1b, p2b, p3b, p4b, p5b);
      const outRow = origin + step * (i - 4);
      if (i >= 4 && outRow < height) {
        // Rows i − 4 … i of the window, oldest first.
        const o0 = ((i + 1) % 5) * 8;
        const o1 = ((i + 2) % 5) * 8;
        const o2 = ((i + 3) % 5) * 8;
        const o3 = ((i + 4) % 5) * 8;
        const o4 = w;
        const s0 = taps(window[o0], window[o1], window[o2], window[o3], window[o4]);
        const s1 = taps(window[o0 + 1], window[o1 + 1], window[o2 + 1], window[o3 + 1], window[o4 + 1]);
        const s2 = taps(window[o0 + 2], window[o1 + 2], window[o2 + 2], window[o3 + 2], window[o4 + 2]);
        const s3 = taps(window[o0 + 3], window[o1 + 3], window[o2 + 3], window[o3 + 3], window[o4 + 3]);
        const s4 = taps(window[o0 + 4], window[o1 + 4], window[o2 + 4], window[o3 + 4], window[o4 + 4]);
        const s5 = taps(window[o0 + 5], window[o1 + 5], window[o2 + 5], window[o3 + 5], window[o4 + 5]);
        const s6 = taps(window[o0 + 6], window[o1 + 6], window[o2 + 6], window[o3 + 6], window[o4 + 6]);
        const s7 = taps(window[o0 + 7], window[o1 + 7], window[o2 + 7], window[o3 + 7], window[o4 + 7]);
        const q0 = rounded(s0);
        const q1 = rounded(s1);
        const q2 = rounded(s2);
        const q3 = rounded(s3);
        const q4 = rounded(s4);
        const q5 = rounded(s5);
        const q6 = rounded(s6);
        const q7 = rounded(s7);
        // R, G, B, A of each pixel: a store keeps each value's low byte.
        store16(out, (outRow * width + x) * 4, q0, q1, q0 >> 16, q1 >> 16, q2, q3, q2 >> 16, q3 >> 16, q4, q5, q4 >> 16, q5 >> 16, q6, q7, q6 >> 16, q7 >> 16);
      }
    }
  },
);

