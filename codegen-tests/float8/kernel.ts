// 8-bit float buffers (docs/language.md, "8-bit floats"): an e4m3 or e5m2 element loads as the f32 it stands for
// and a store rounds an f32 to nearest even, saturating to the largest finite value; shared and private arrays
// of them too, compound stores, and 16-byte vector accesses. tests/float8.test.ts runs it against lang/float8.ts.
import { kernel, threadIdx, blockIdx, shared, local, syncThreads, load16, store4, type f32, type i32, type ReadonlyFloat8E4M3Array, type Float8E4M3Array, type Float8E5M2Array } from "tskernel";

export const quantize = kernel({ block: [64], targets: ["cuda", "js"] }, (outE4: Float8E4M3Array, outE5: Float8E5M2Array, packed: Float8E4M3Array, outF: Float32Array, x: Float32Array, codes: ReadonlyFloat8E4M3Array, scale: f32, n: i32) => {
  const staged = shared.e5m2(64);
  const last = local.e4m3(2);
  const t = threadIdx.x;
  const i = blockIdx.x * 64 + t;
  const v = i < n ? x[i] : 0.0;
  staged[t] = v * 2.0;
  syncThreads();
  if (i >= n) return;
  outE4[i] = v;
  outE5[i] = v;
  outE5[i] += staged[63 - t];
  last[0] = v * scale;
  last[1] = last[0] - 1.0;
  outF[i * 3] = codes[i] * 0.5;
  outF[i * 3 + 1] = last[1];
  if ((i & 15) === 0 && i + 16 <= n) {
    const [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15] = load16(codes, i);
    outF[i * 3 + 2] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11 + c12 + c13 + c14 + c15;
    store4(packed, i, c1, c2, c3, -c0);
  } else {
    outF[i * 3 + 2] = 0.0;
  }
});
