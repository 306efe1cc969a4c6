// 8- and 16-bit integer buffers (docs/language.md, "Narrow integers"): an element loads as an i32 or u32
// (sign- or zero-extended) and a store keeps its low bits; shared and private arrays of them too.
// tests/narrow-integers.test.ts runs it against a reference computed here.
import { kernel, threadIdx, blockIdx, shared, local, syncThreads, i32, u32, type ReadonlyInt8Array, type ReadonlyUint8Array, type ReadonlyInt16Array } from "tskernel";

export const narrow = kernel({ block: [64] }, (out8: Int8Array, outU8: Uint8Array, out16: Int16Array, outU16: Uint16Array, outI: Int32Array, in8: ReadonlyInt8Array, inU8: ReadonlyUint8Array, in16: ReadonlyInt16Array, n: i32) => {
  const counts = shared.u8(64);
  const recent = local.i8(4);
  const t = threadIdx.x;
  const i = blockIdx.x * 64 + t;
  const v = i < n ? in8[i] : 0;
  const w = i < n ? inU8[i] : 0;
  counts[t] = w + 7;
  syncThreads();
  if (i >= n) return;
  for (let k = 0; k < 4; k++) {
    recent[k] = v * (k + 40);
  }
  out8[i] = v * 3;
  outU8[i] = w + 200;
  outU8[i] += counts[63 - t];
  out16[i] = in16[i] * 3 + v;
  outU16[i] = u32(v) - w;
  outI[i * 3] = recent[1] + recent[3];
  outI[i * 3 + 1] = i32(counts[t]) - 300;
  outI[i * 3 + 2] = i32(w >> 3) ^ v;
});
