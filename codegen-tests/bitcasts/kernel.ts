// Construct: bitcastU32 and bitcastF32, the bits of an f32 as a u32 and back: stored, in arithmetic on the
// bits (the sign flipped, the exponent field), in a helper, and on a literal (which WGSL must not fold early).
import { bitcastF32, bitcastU32, blockIdx, kernel, threadIdx, type f32, type i32, type ReadonlyFloat32Array, type ReadonlyUint32Array } from "tskernel";

function negate(v: f32): f32 {
  return bitcastF32(bitcastU32(v) ^ 0x80000000);
}

export const bitcasts = kernel(
  { block: [64] },
  (bits: Uint32Array, values: Float32Array, negated: Float32Array, exponents: Uint32Array, x: ReadonlyFloat32Array, w: ReadonlyUint32Array, n: i32) => {
    const i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) {
      bits[i] = bitcastU32(x[i]);
      values[i] = bitcastF32(w[i]) * bitcastF32(0x3f800000);
      negated[i] = negate(x[i]);
      exponents[i] = (bitcastU32(x[i]) >> 23) & 255;
    }
  },
);
