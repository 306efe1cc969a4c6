// Vector accesses of 16- and 8-bit elements (docs/language.md §26, "Vector accesses"): load8/store8 move
// eight bf16 (16 bytes), load16/store16 sixteen u8, load4/store4 four i16 (8 bytes) on an array that single
// elements also reach; a 2-D shared bf16 array written and read by rows; load8/store8 of i8 and u8 (8 bytes),
// widened to bf16 (widenBytes). tests/vector-narrow.test.ts runs it.
import {
  kernel, threadIdx, blockIdx, shared, syncThreads, load4, store4, load8, store8, load16, store16, f32, bf16, i32, u32,
  type BFloat16Array, type ReadonlyBFloat16Array, type ReadonlyInt8Array, type ReadonlyUint8Array,
} from "tskernel";

export const packRows = kernel({ block: [32] }, (out: BFloat16Array, x: ReadonlyBFloat16Array, bytes: Uint8Array, pixels: ReadonlyUint8Array, shorts: Int16Array, n: i32, scale: bf16) => {
  const rows = shared.bf16(2, 256);
  const t = threadIdx.x;
  const i = (blockIdx.x * 32 + t) * 8;
  if (i < n) {
    const [a, b, c, d, e, f, g, h] = load8(x, i);
    store8(rows[t & 1], t * 8, a * scale, b * scale, c * scale, d * scale, e * scale, f * scale, g * scale, h * scale);
  }
  syncThreads();
  if (i >= n) return;
  // Thread s wrote its eight elements to row s & 1; read the next thread's.
  const s = (t + 1) & 31;
  const [a, b, c, d, e, f, g, h] = load8(rows[s & 1], s * 8);
  store8(out, i, a, b, c, d, e, f, g, h + bf16(1));
  if (i % 16 === 0) {
    const [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15] = load16(pixels, i);
    const sum = p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9 + p10 + p11 + p12 + p13 + p14 + p15;
    store16(bytes, i, sum, p1 * 2, p2 + 7, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, u32(i32(f32(a))));
  }
  const [s0, s1, s2, s3] = load4(shorts, i);
  store4(shorts, i + 4, s0 * 3, s1 - 70000, s2, s3);
  shorts[i] = i32(s0 + 1);
});

/** Eight int8 (8 bytes) in a vector: each widened to bf16 (16 bytes out), and their low bytes reversed as u8. */
export const widenBytes = kernel({ block: [32] }, (out: BFloat16Array, reversed: Uint8Array, q: ReadonlyInt8Array, n: i32) => {
  const i = (blockIdx.x * 32 + threadIdx.x) * 8;
  if (i >= n) return;
  const [a, b, c, d, e, f, g, h] = load8(q, i);
  store8(out, i, bf16(f32(a)), bf16(f32(b)), bf16(f32(c)), bf16(f32(d)), bf16(f32(e)), bf16(f32(f)), bf16(f32(g)), bf16(f32(h) * 0.5));
  store8(reversed, i, u32(h), u32(g), u32(f), u32(e), u32(d), u32(c), u32(b), u32(a + 300));
});
