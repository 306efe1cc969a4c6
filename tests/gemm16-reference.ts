/**
 * The reference the 16-bit GEMM tests hold their kernels to (tests/hgemm-wgmma-ws.test.ts, hgemm-mma-guarded.test.ts):
 * C = α·A·B + β·C in the order docs/language.md documents for the CPU's emulation (k ascending, one f32 rounding per
 * addition, then α·sum (+ β·C) rounded to the 16-bit type once), and that result's normwise error against float64.
 */

import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";

export function gemm16Reference(type: "bf16" | "f16", m: number, n: number, k: number, aBits: Uint16Array, bBits: Uint16Array, cBits: Uint16Array, alpha: number, beta: number): { bits: Uint16Array; error: number } {
  const [encode, decode] = type === "bf16" ? [bf16Bits, bf16FromBits] : [f16Bits, f16FromBits];
  const bits = new Uint16Array(m * n);
  let errorSquared = 0;
  let normSquared = 0;
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      let exact = 0;
      for (let p = 0; p < k; p++) {
        const product = decode(aBits[i * k + p]!) * decode(bBits[p * n + j]!);
        sum = Math.fround(sum + product);
        exact += product;
      }
      const old = decode(cBits[i * n + j]!);
      bits[i * n + j] = encode(beta === 0 ? Math.fround(alpha * sum) : Math.fround(Math.fround(alpha * sum) + Math.fround(beta * old)));
      const ref = alpha * exact + (beta === 0 ? 0 : beta * old);
      errorSquared += (decode(bits[i * n + j]!) - ref) ** 2;
      normSquared += ref ** 2;
    }
  }
  return { bits, error: Math.sqrt(errorSquared / normSquared) };
}
