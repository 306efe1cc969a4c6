/**
 * The FlashAttention forward kernel (examples/flash-attention.ts) on the CPU backend, where the warpgroups run as
 * coroutines and the mbarriers, tensor copies and stores are emulated: against a float64 reference of the same
 * bf16 inputs (softmax(scale·Q·Kᵀ)·V per head, causal or not), on fresh random inputs each run with O poisoned
 * with NaN, at head dims 64 and 128, several key tiles (so the online softmax's rescaling runs), two heads,
 * plain and checked mode; and the same through `attention()` (runtime/attention.ts), which makes the tensor maps.
 * The variant that keeps P in registers (examples/flash-attention-regp.ts), the one that also takes the
 * consumers' multiplies in turns (examples/flash-attention-pingpong.ts) and the one that overlaps each consumer's
 * softmax with its previous P·V (examples/flash-attention-overlap.ts) the same way, and bit for bit equal to the
 * plain kernel on the same inputs: P is rounded to bf16 the same way and the emulation adds in the same order.
 * The one that folds the scale into the exponentials (examples/flash-attention-fold.ts) rounds the exponent
 * once instead of twice: held to the float64 bound only.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { bf16Bits, bf16FromBits } from "../compiler/lang/float16.ts";
import { attention, compileKernelLibrary, createTensorMap, type KernelLibrary } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { repoRoot } from "./golden-cases.ts";

const file = path.join(repoRoot, "examples", "flash-attention.ts");
const pipelinedFile = path.join(repoRoot, "examples", "flash-attention-pipelined.ts");
const regPFile = path.join(repoRoot, "examples", "flash-attention-regp.ts");
const pingPongFile = path.join(repoRoot, "examples", "flash-attention-pingpong.ts");
const overlapFile = path.join(repoRoot, "examples", "flash-attention-overlap.ts");
const foldFile = path.join(repoRoot, "examples", "flash-attention-fold.ts");
let library: KernelLibrary | undefined;

/** softmax(scale·Q·Kᵀ (masked above the diagonal when causal))·V in float64, for each head; rows of D. */
function reference(q: number[], k: number[], v: number[], heads: number, seq: number, d: number, scale: number, causal: boolean): Float64Array {
  const out = new Float64Array(heads * seq * d);
  const scores = new Float64Array(seq);
  for (let h = 0; h < heads; h++) {
    const base = h * seq * d;
    for (let i = 0; i < seq; i++) {
      let max = -Infinity;
      const last = causal ? i : seq - 1;
      for (let j = 0; j <= last; j++) {
        let dot = 0;
        for (let x = 0; x < d; x++) dot += q[base + i * d + x]! * k[base + j * d + x]!;
        scores[j] = dot * scale;
        max = Math.max(max, scores[j]!);
      }
      let sum = 0;
      for (let j = 0; j <= last; j++) sum += (scores[j] = Math.exp(scores[j]! - max));
      for (let x = 0; x < d; x++) {
        let acc = 0;
        for (let j = 0; j <= last; j++) acc += scores[j]! * v[base + j * d + x]!;
        out[base + i * d + x] = acc / sum;
      }
    }
  }
  return out;
}

describe("flash-attention on the CPU backend", () => {
  const cases = [
    { d: 64, causal: false, checked: false, name: "flashAttention" },
    { d: 64, causal: true, checked: true, name: "flashAttention" },
    { d: 128, causal: true, checked: false, name: "flashAttention" },
    { d: 128, causal: false, checked: false, name: "flashAttention" },
    // The pipelined kernel (examples/flash-attention-pipelined.ts): 3 key tiles, an odd count, end the pairs early.
    { d: 128, causal: false, checked: true, name: "flashAttentionPipelined" },
    { d: 64, causal: true, checked: false, name: "flashAttentionPipelined" },
    // P in registers (examples/flash-attention-regp.ts).
    { d: 128, causal: true, checked: false, name: "flashAttentionRegP" },
    { d: 64, causal: false, checked: true, name: "flashAttentionRegP" },
    // The two consumers' multiplies in turns (examples/flash-attention-pingpong.ts).
    { d: 64, causal: true, checked: true, name: "flashAttentionPingPong" },
    // Each consumer's softmax overlapped with its previous P·V (examples/flash-attention-overlap.ts).
    { d: 128, causal: false, checked: true, name: "flashAttentionOverlap" },
    // The scale folded into the exponentials' fma (examples/flash-attention-fold.ts), D 64 with four stages.
    { d: 64, causal: true, checked: true, name: "flashAttentionFold" },
    { d: 128, causal: false, checked: false, name: "flashAttentionFold" },
    // Three consumers (192 query rows a block): seq 256 leaves the second block one consumer inside the head, two
    // past it (on the next head's rows, or TMA's zeros after the last head), and with causal masking a tile
    // wholly past the first consumer's rows.
    { d: 64, causal: true, checked: true, name: "flashAttentionFold", consumers: 3, seq: 256 },
    { d: 64, causal: false, checked: false, name: "flashAttentionFold", consumers: 3 },
  ];
  for (const { d, causal, checked, name, consumers = 2, seq = 384 } of cases) {
    it(`${name}, D = ${d}${consumers === 2 ? "" : `, ${consumers} consumers, seq ${seq}`}, ${causal ? "causal" : "not causal"}: within the bound of a float64 reference${checked ? " (checked mode)" : ""}`, async () => {
      library ??= compileKernelLibrary([file, pipelinedFile, regPFile, pingPongFile, overlapFile, foldFile], ["js"]);
      const kernel = library.kernels.find((h) => h.description.name === name && h.description.specialization.D === d && (h.description.specialization.CONSUMERS ?? 2) === consumers)!;
      const blockRows = 64 * consumers;
      const heads = 2;
      const scale = Math.fround(1 / Math.sqrt(d));
      const device = new CpuDevice({ checked });
      const random = () => Uint16Array.from({ length: heads * seq * d }, () => bf16Bits(Math.random() * 2 - 1));
      const [qBits, kBits, vBits] = [random(), random(), random()];
      const [Q, K, V] = [qBits, kBits, vBits].map((bits) => device.createBuffer("bf16", bits));
      const O = device.createBuffer("bf16", new Uint16Array(heads * seq * d).fill(0x7fff));
      const rows = heads * seq;
      const maps = [
        createTensorMap(device, Q!, { rows, cols: d, boxRows: blockRows, boxCols: 64 }),
        createTensorMap(device, K!, { rows, cols: d, boxRows: 128, boxCols: 64 }),
        createTensorMap(device, V!, { rows, cols: d, boxRows: 128, boxCols: 64 }),
        createTensorMap(device, O, { rows, cols: d, boxRows: 64, boxCols: 64 }),
      ];
      // The plain kernel (and the register-P one) also writes each row's log-sum-exp (flash-attention-backward.ts reads them); the pipelined one does not.
      const writesL = name !== "flashAttentionPipelined";
      const L = device.createBuffer(new Float32Array(rows).fill(Number.NaN));
      await device.launch(kernel, { grid: [Math.ceil(seq / blockRows), heads], args: [Q!, K!, V!, O, ...(writesL ? [L] : []), ...maps, seq, scale, causal ? 1 : 0] });
      if (writesL) {
        // log2 Σ_j 2^(scale·log2(e)·s_ij) in float64 of the same inputs, against the kernel's f32.
        const [q, k] = [qBits, kBits].map((bits) => Array.from(bits, bf16FromBits));
        const lse = (await device.read(L)) as Float32Array;
        for (let r = 0; r < rows; r++) {
          const [h, i] = [Math.floor(r / seq), r % seq];
          let sum = 0;
          for (let j = 0; j <= (causal ? i : seq - 1); j++) {
            let dot = 0;
            for (let x = 0; x < d; x++) dot += q![(h * seq + i) * d + x]! * k![(h * seq + j) * d + x]!;
            sum += Math.exp(dot * scale);
          }
          expect(Math.abs(lse[r]! - Math.log2(sum)), `L[${r}]`).toBeLessThan(1e-5 * Math.max(1, Math.abs(Math.log2(sum))));
        }
      }
      const got = Array.from((await device.read(O, { bits: true })) as Uint16Array, bf16FromBits);
      const expected = reference(Array.from(qBits, bf16FromBits), Array.from(kBits, bf16FromBits), Array.from(vBits, bf16FromBits), heads, seq, d, scale, causal);
      let errorSquared = 0;
      let normSquared = 0;
      got.forEach((x, i) => {
        expect(Number.isFinite(x), `O[${i}]`).toBe(true);
        errorSquared += (x - expected[i]!) ** 2;
        normSquared += expected[i]! ** 2;
      });
      // P is rounded to bf16 before P·V and O at the end (2^-8 each), the rest is f32.
      expect(Math.sqrt(errorSquared / normSquared)).toBeLessThan(2 * 2 ** -8);
    });
  }
});

describe("flash-attention with P in registers", () => {
  it("gives the plain kernel's output and log-sum-exps bit for bit, and so do the ping-pong and overlapped ones (D = 64, causal)", async () => {
    library ??= compileKernelLibrary([file, pipelinedFile, regPFile, pingPongFile, overlapFile, foldFile], ["js"]);
    const d = 64;
    const heads = 1;
    const seq = 256;
    const rows = heads * seq;
    const device = new CpuDevice();
    const random = () => Uint16Array.from({ length: rows * d }, () => bf16Bits(Math.random() * 2 - 1));
    const [Q, K, V] = [random(), random(), random()].map((bits) => device.createBuffer("bf16", bits));
    const run = async (name: string) => {
      const kernel = library!.kernels.find((h) => h.description.name === name && h.description.specialization.D === d)!;
      const O = device.createBuffer("bf16", new Uint16Array(rows * d).fill(0x7fff));
      const L = device.createBuffer(new Float32Array(rows).fill(Number.NaN));
      const maps = [Q!, K!, V!].map((buffer) => createTensorMap(device, buffer, { rows, cols: d, boxRows: 128, boxCols: 64 }));
      maps.push(createTensorMap(device, O, { rows, cols: d, boxRows: 64, boxCols: 64 }));
      await device.launch(kernel, { grid: [seq / 128, heads], args: [Q!, K!, V!, O, L, ...maps, seq, Math.fround(1 / 8), 1] });
      return [Array.from((await device.read(O, { bits: true })) as Uint16Array), Array.from((await device.read(L)) as Float32Array)];
    };
    const [plain, registers, pingPong, overlap] = [await run("flashAttention"), await run("flashAttentionRegP"), await run("flashAttentionPingPong"), await run("flashAttentionOverlap")];
    expect(registers[0]).toEqual(plain[0]);
    expect(registers[1]).toEqual(plain[1]);
    expect(pingPong[0]).toEqual(plain[0]);
    expect(pingPong[1]).toEqual(plain[1]);
    expect(overlap[0]).toEqual(plain[0]);
    expect(overlap[1]).toEqual(plain[1]);
    expect(plain[0]!.some((x) => x !== 0 && x !== 0x7fff)).toBe(true);
  });
});

describe("attention()", () => {
  it("runs the kernel on [batch, heads, seq, headDim] bf16 buffers, within the float64 bound, and refuses what it cannot take", async () => {
    library ??= compileKernelLibrary([file, pipelinedFile, regPFile, pingPongFile, overlapFile, foldFile], ["js"]);
    const device = new CpuDevice();
    const shape = { batch: 2, heads: 1, seq: 256, headDim: 64 };
    const n = shape.batch * shape.heads * shape.seq * shape.headDim;
    const random = () => Uint16Array.from({ length: n }, () => bf16Bits(Math.random() * 2 - 1));
    const [qBits, kBits, vBits] = [random(), random(), random()];
    const [Q, K, V] = [qBits, kBits, vBits].map((bits) => device.createBuffer("bf16", bits)) as [ReturnType<typeof device.createBuffer>, ReturnType<typeof device.createBuffer>, ReturnType<typeof device.createBuffer>];
    const O = device.createBuffer("bf16", new Uint16Array(n).fill(0x7fff));
    await attention(device, library, Q, K, V, O, shape, { causal: true });
    const got = Array.from((await device.read(O, { bits: true })) as Uint16Array, bf16FromBits);
    const expected = reference(Array.from(qBits, bf16FromBits), Array.from(kBits, bf16FromBits), Array.from(vBits, bf16FromBits), shape.batch * shape.heads, shape.seq, shape.headDim, Math.fround(1 / 8), true);
    const error = Math.sqrt(got.reduce((sum, x, i) => sum + (x - expected[i]!) ** 2, 0) / expected.reduce((sum, x) => sum + x * x, 0));
    expect(error).toBeLessThan(2 * 2 ** -8);
    await expect(attention(device, library, Q, K, V, O, { ...shape, seq: 200 })).rejects.toThrow("tskernel: attention: seq must be a multiple of 128, found 200");
    await expect(attention(device, library, Q, K, V, O, { ...shape, headDim: 96 })).rejects.toThrow("headDim must be 64 or 128");
    const F = device.createBuffer(new Float32Array(n));
    await expect(attention(device, library, F, K, V, O, shape)).rejects.toThrow("tskernel: attention: Q holds f32; the kernel takes bf16");
  });
});
