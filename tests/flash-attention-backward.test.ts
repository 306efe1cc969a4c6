/**
 * FlashAttention backward (examples/flash-attention-backward.ts) on the CPU backend, through attention() and
 * attentionBackward() (runtime/attention.ts): the forward writes O and each row's log-sum-exp, then the three
 * backward kernels write dQ, dK and dV, which are compared with float64 gradients of the same bf16 inputs
 * (softmax(scale·Q·Kᵀ)·V, causal or not, differentiated by hand: dV = Pᵀ·dO, dS = P ∘ (dO·Vᵀ − rowsum(dO ∘ O)),
 * dQ = scale·dS·K, dK = scale·dSᵀ·Q), on fresh random inputs with every output poisoned with NaN, at head dims
 * 64 and 128, two heads of 256 (two key blocks, four query tiles: the stages wrap), plain and checked mode. The
 * forward's log-sum-exps are checked against float64 too.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { attention, attentionBackward, compileKernelLibrary, type DeviceBuffer, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";

let library: KernelLibrary | undefined;

interface Gradients {
  readonly O: Float64Array;
  readonly lse2: Float64Array;
  readonly dQ: Float64Array;
  readonly dK: Float64Array;
  readonly dV: Float64Array;
}

/** The forward and its gradients in float64 for each head (rows of d), and each row's log2-sum-exp2 of the scaled scores. */
function reference(q: number[], k: number[], v: number[], dO: number[], heads: number, seq: number, d: number, scale: number, causal: boolean): Gradients {
  const size = heads * seq * d;
  const [O, dQ, dK, dV] = [0, 1, 2, 3].map(() => new Float64Array(size)) as [Float64Array, Float64Array, Float64Array, Float64Array];
  const lse2 = new Float64Array(heads * seq);
  const P = new Float64Array(seq * seq);
  const dS = new Float64Array(seq * seq);
  for (let h = 0; h < heads; h++) {
    const base = h * seq * d;
    const dot = (a: number[], i: number, b: number[], j: number) => {
      let sum = 0;
      for (let x = 0; x < d; x++) sum += a[base + i * d + x]! * b[base + j * d + x]!;
      return sum;
    };
    for (let i = 0; i < seq; i++) {
      const last = causal ? i : seq - 1;
      let max = -Infinity;
      for (let j = 0; j <= last; j++) max = Math.max(max, (P[i * seq + j] = dot(q, i, k, j) * scale));
      let sum = 0;
      for (let j = 0; j < seq; j++) sum += P[i * seq + j] = j <= last ? Math.exp(P[i * seq + j]! - max) : 0;
      for (let j = 0; j < seq; j++) P[i * seq + j]! /= sum;
      lse2[h * seq + i] = (max + Math.log(sum)) * Math.LOG2E;
      for (let x = 0; x < d; x++) {
        let acc = 0;
        for (let j = 0; j < seq; j++) acc += P[i * seq + j]! * v[base + j * d + x]!;
        O[base + i * d + x] = acc;
      }
    }
    for (let i = 0; i < seq; i++) {
      let dsum = 0;
      for (let x = 0; x < d; x++) dsum += dO[base + i * d + x]! * O[base + i * d + x]!;
      for (let j = 0; j < seq; j++) dS[i * seq + j] = P[i * seq + j]! * (dot(dO, i, v, j) - dsum);
    }
    for (let i = 0; i < seq; i++) {
      for (let x = 0; x < d; x++) {
        let gq = 0;
        let gk = 0;
        let gv = 0;
        for (let j = 0; j < seq; j++) {
          gq += dS[i * seq + j]! * k[base + j * d + x]!;
          gk += dS[j * seq + i]! * q[base + j * d + x]!;
          gv += P[j * seq + i]! * dO[base + j * d + x]!;
        }
        dQ[base + i * d + x] = scale * gq;
        dK[base + i * d + x] = scale * gk;
        dV[base + i * d + x] = gv;
      }
    }
  }
  return { O, lse2, dQ, dK, dV };
}

/** ||x − ref|| / ||ref||, every element finite. */
function normwise(got: ArrayLike<number>, expected: Float64Array, what: string): number {
  let error = 0;
  let norm = 0;
  for (let i = 0; i < expected.length; i++) {
    expect(Number.isFinite(got[i]!), `${what}[${i}]`).toBe(true);
    error += (got[i]! - expected[i]!) ** 2;
    norm += expected[i]! ** 2;
  }
  return Math.sqrt(error / norm);
}

describe("flash-attention backward on the CPU backend", () => {
  const cases = [
    { d: 64, causal: false, checked: false },
    { d: 64, causal: true, checked: true },
    { d: 128, causal: true, checked: false },
    { d: 128, causal: false, checked: false },
  ];
  for (const { d, causal, checked } of cases) {
    it(`D = ${d}, ${causal ? "causal" : "not causal"}: dQ, dK, dV within the bound of float64 gradients${checked ? " (checked mode)" : ""}`, async () => {
      library ??= compileKernelLibrary(["flash-attention-fold.ts", "flash-attention-backward.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
      const heads = 2;
      const seq = 256;
      const shape = { batch: 1, heads, seq, headDim: d };
      const scale = Math.fround(1 / Math.sqrt(d));
      const device = new CpuDevice({ checked });
      const n = heads * seq * d;
      const random = () => Uint16Array.from({ length: n }, () => bf16Bits(Math.random() * 2 - 1));
      const [qBits, kBits, vBits, gBits] = [random(), random(), random(), random()];
      const [Q, K, V, dO] = [qBits, kBits, vBits, gBits].map((bits) => device.createBuffer("bf16", bits!)) as [DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer];
      const poisoned = () => device.createBuffer("bf16", new Uint16Array(n).fill(0x7fff));
      const [O, dQ, dK, dV] = [poisoned(), poisoned(), poisoned(), poisoned()];
      const lse = device.createBuffer(new Float32Array(heads * seq).fill(Number.NaN));
      await attention(device, library, Q, K, V, O, shape, { causal, lse });
      await attentionBackward(device, library, { Q, K, V, O, dO, lse, dQ, dK, dV }, shape, { causal });
      const values = async (buffer: DeviceBuffer) => Array.from((await device.read(buffer, { bits: true })) as Uint16Array, bf16FromBits);
      const [q, k, v, g] = [qBits, kBits, vBits, gBits].map((bits) => Array.from(bits!, bf16FromBits));
      const expected = reference(q!, k!, v!, g!, heads, seq, d, scale, causal);
      // The log-sum-exps in f32 (a row's sum of exponentials in f32 and a log2).
      expect(normwise((await device.read(lse)) as Float32Array, expected.lse2, "lse")).toBeLessThan(1e-6);
      expect(normwise(await values(O), expected.O, "O")).toBeLessThan(2 * 2 ** -8);
      // P and dS are rounded to bf16 before their products, and O (in rowsum(dO ∘ O)) and the outputs once each
      // (each at most 2^-9 relative): 2 · 2^-8, as the forward's bound, allows their sum. Measured here 2.2-2.5·10⁻³
      // for each of dQ, dK and dV in every case.
      const bound = 2 * 2 ** -8;
      const errors = {
        dQ: normwise(await values(dQ), expected.dQ, "dQ"),
        dK: normwise(await values(dK), expected.dK, "dK"),
        dV: normwise(await values(dV), expected.dV, "dV"),
      };
      for (const [name, error] of Object.entries(errors)) {
        expect(error, name).toBeGreaterThan(0);
        expect(error, name).toBeLessThan(bound);
      }
    }, 120_000);
  }

  it("refuses what the kernels cannot take", async () => {
    library ??= compileKernelLibrary(["flash-attention-fold.ts", "flash-attention-backward.ts"].map((f) => path.join(repoRoot, "examples", f)), ["js"]);
    const device = new CpuDevice();
    const b = () => device.createBuffer("bf16", 128 * 64);
    const tensors = { Q: b(), K: b(), V: b(), O: b(), dO: b(), lse: device.createBuffer("f32", 128), dQ: b(), dK: b(), dV: b() };
    const shape = { batch: 1, heads: 1, seq: 128, headDim: 64 };
    await expect(attentionBackward(device, library, tensors, { ...shape, seq: 100 })).rejects.toThrow("tskernel: attentionBackward: seq must be a multiple of 128, found 100");
    await expect(attentionBackward(device, library, { ...tensors, lse: device.createBuffer("f32", 64) }, shape)).rejects.toThrow("tskernel: attentionBackward: lse must be an f32 buffer of at least 128 elements, found 64 f32");
    await expect(attentionBackward(device, library, { ...tensors, dK: device.createBuffer("f32", 128 * 64) }, shape)).rejects.toThrow("tskernel: attentionBackward: dK holds f32; the kernel takes bf16");
  });
});
