/**
 * The m16n8k16 warp shape with 16-bit inputs as data (ir/matrix.ts, issue 22 §1): its fragment layouts against
 * an independent transcription of the PTX ISA's element→lane mapping (and the A layout against the warpgroup
 * k16 A, which PTX defines the same per warp), the register packing, and the reference multiply-accumulate
 * against float64 with fresh random bf16 and f16 inputs: every product exact in f32, the sum within the bound
 * its documentation states; and the CUDA helper for the instruction, which ptxas must accept for sm_80 and sm_90.
 * Then the shape in the language: ldmatrixPlan (how loadMatrix's ldmatrix names rows) against the layouts for A
 * and B, stored either way; a two-warp kernel (codegen-tests/mma16-loads) that multiplies with loadFragment from
 * global memory and with loadMatrix from shared tiles stored row-major or transposed, on the CPU bit for bit
 * against the reference (bf16 and f16, unchecked and checked), its CUDA accepted by ptxas for sm_80; checked
 * mode's report of a misaligned loadMatrix row; and the coded errors of the new forms.
 */

import { describe, expect, it } from "vitest";
import { fragmentElementPosition, fragmentLayouts, ldmatrixElements, ldmatrixPlan, ldmatrixRowStart, mma16Helper, mmaHalfRegisters, mmaM16n8k16Layouts, mmaM16n8k16Reference } from "../compiler/index.ts";
import { bf16Bits, bf16FromBits, f16Bits, f16FromBits } from "../compiler/lang/float16.ts";
import { compileKernelLibrary, type KernelHandle } from "../runtime/index.ts";
import { CpuDevice } from "../runtime/cpu/cpu-device.ts";
import { compileSource } from "./compile-source.ts";
import { repoRoot } from "./golden-cases.ts";
import os from "node:os";
import path from "node:path";
import { compileCuda, nvccAvailable } from "./tools/nvcc.ts";
import { mma16ProbeSeed, mma16ProbeSource } from "../bench/mma16-probe.ts";
import fs from "node:fs";

/** PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type", written out per element. */
const ptx = {
  a: (g: number, q: number, i: number) => [g + (i % 4 >= 2 ? 8 : 0), 2 * q + (i & 1) + (i >= 4 ? 8 : 0)],
  b: (g: number, q: number, i: number) => [2 * q + (i & 1) + (i >= 2 ? 8 : 0), g],
  accumulator: (g: number, q: number, i: number) => [g + (i >= 2 ? 8 : 0), 2 * q + (i & 1)],
} as const;

const f32 = new Float32Array(1);
const bits = new Uint32Array(f32.buffer);
/** f32 → bf16 to nearest even, on the bits (finite inputs). */
function bf16(x: number): number {
  f32[0] = x;
  const b = bits[0]!;
  bits[0] = ((b + 0x7fff + ((b >> 16) & 1)) >>> 0) & 0xffff0000;
  return f32[0]!;
}
/** f32 → f16 to nearest even, computed on the value (normal range of the test's inputs). */
function f16(x: number): number {
  if (x === 0) return 0;
  const e = Math.floor(Math.log2(Math.abs(x)));
  const ulp = 2 ** (Math.max(e, -14) - 10);
  const scaled = x / ulp;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  const n = diff > 0.5 || (diff === 0.5 && floor % 2 !== 0) ? floor + 1 : floor;
  return n * ulp;
}

describe("mma m16n8k16 layouts", () => {
  for (const role of ["a", "b", "accumulator"] as const) {
    it(`${role}: PTX's mapping, each element of the ${role === "a" ? "16×16" : role === "b" ? "16×8" : "16×8"} matrix held once`, () => {
      const layout = mmaM16n8k16Layouts[role];
      expect(layout.lanes).toBe(32);
      expect(layout.perLane * 32).toBe(layout.rows * layout.cols);
      const seen = new Set<number>();
      for (let lane = 0; lane < 32; lane++) {
        for (let e = 0; e < layout.perLane; e++) {
          const [r, c] = fragmentElementPosition(layout, lane, e);
          expect([r, c]).toEqual(ptx[role](lane >> 2, lane & 3, e));
          seen.add(r * layout.cols + c);
        }
      }
      expect(seen.size).toBe(layout.rows * layout.cols);
    });
  }

  it("A is the warpgroup k16 A of one warp; registers pack element pairs low then high", () => {
    const warpgroup = fragmentLayouts.m64n64k16.a!;
    for (let lane = 0; lane < 32; lane++) {
      for (let e = 0; e < 8; e++) expect(fragmentElementPosition(mmaM16n8k16Layouts.a, lane, e)).toEqual(fragmentElementPosition(warpgroup, lane, e));
    }
    expect(mmaHalfRegisters(8)).toEqual([[0, 1], [2, 3], [4, 5], [6, 7]]);
    expect(mmaHalfRegisters(4)).toEqual([[0, 1], [2, 3]]);
  });
});

describe("ldmatrix as data", () => {
  it("x4 over a row-major 16×16 tile gives the A fragment; x2.trans over a row-major 16×8 tile, or x2 over its transpose, the B fragment", () => {
    // Row strides with padding, as shared tiles use them, so a confusion of rows and columns shows.
    const aStride = 24, bStride = 12, btStride = 20;
    for (let lane = 0; lane < 32; lane++) {
      const a = ldmatrixElements(4, false, lane, (j, r) => (8 * (j & 1) + r) * aStride + 8 * (j >> 1));
      const b = ldmatrixElements(2, true, lane, (j, r) => (8 * j + r) * bStride);
      const bt = ldmatrixElements(2, false, lane, (j, r) => r * btStride + 8 * j);
      for (let e = 0; e < 8; e++) {
        const [r, c] = fragmentElementPosition(mmaM16n8k16Layouts.a, lane, e);
        expect(a[e]).toBe(r * aStride + c);
      }
      for (let e = 0; e < 4; e++) {
        const [k, n] = fragmentElementPosition(mmaM16n8k16Layouts.b, lane, e);
        expect(b[e]).toBe(k * bStride + n);
        expect(bt[e]).toBe(n * btStride + k);
      }
    }
  });
});

describe("ldmatrixPlan", () => {
  // Strides with padding, as shared tiles use them, so that a confusion of rows and columns shows.
  const stride = 24;
  for (const role of ["a", "b"] as const) {
    for (const contiguous of ["col", "row"] as const) {
      it(`${role}, rows of 8 along the fragment's ${contiguous === "col" ? "columns (row-major tile)" : "rows (transposed tile)"}: each lane gets its fragment's elements`, () => {
        const layout = mmaM16n8k16Layouts[role];
        const plan = ldmatrixPlan(layout, contiguous);
        expect(plan.count).toBe(role === "a" ? 4 : 2);
        // ldmatrix needs .trans where the pair of a register runs across the tile's 16-byte rows.
        expect(plan.transpose).toBe((role === "a") !== (contiguous === "col"));
        const at = (r: number, c: number) => (contiguous === "col" ? r * stride + c : c * stride + r);
        for (let lane = 0; lane < 32; lane++) {
          const got = ldmatrixElements(plan.count, plan.transpose, lane, (j, r) => at(...ldmatrixRowStart(plan, j, r)));
          const want = Array.from({ length: layout.perLane }, (_, e) => at(...fragmentElementPosition(layout, lane, e)));
          expect(got).toEqual(want);
        }
      });
    }
  }
});

/** codegen-tests/mma16-loads: two warps, each D = A·B + C, the fragments loaded in one of four ways (its header). */
const loadsCase = path.join(repoRoot, "codegen-tests", "mma16-loads");
let loadsLibrary: ReturnType<typeof compileKernelLibrary> | undefined;
function twoWarpsHandle(element: "bf16" | "f16"): KernelHandle {
  loadsLibrary ??= compileKernelLibrary([path.join(loadsCase, "kernel.ts")], ["js"]);
  return loadsLibrary.get(element === "bf16" ? "mma16LoadsBf16" : "mma16LoadsF16");
}

describe("mma m16n8k16 in a kernel on the CPU", () => {
  for (const element of ["bf16", "f16"] as const) {
    const [encode, decode] = element === "bf16" ? [bf16Bits, bf16FromBits] : [f16Bits, f16FromBits];
    for (const mode of [0, 1, 2, 3]) {
      const how = ["loadFragment from global memory", "loadMatrix from row-major shared tiles", "loadMatrix, A transposed", "loadMatrix, A and B transposed"][mode];
      it(`${element}, ${how}: bit for bit the in-order reference${mode === 3 ? " (checked mode)" : ""}`, async () => {
        const device = new CpuDevice({ checked: mode === 3 });
        const aBits = Uint16Array.from({ length: 512 }, () => encode((Math.random() * 2 - 1) * 4));
        const bBits = Uint16Array.from({ length: 256 }, () => encode((Math.random() * 2 - 1) * 4));
        const c = Float32Array.from({ length: 256 }, () => Math.fround((Math.random() * 2 - 1) * 10));
        const D = device.createBuffer(new Float32Array(256).fill(Number.NaN));
        const args = [device.createBuffer(element, aBits), device.createBuffer(element, bBits), device.createBuffer(c), D, mode];
        await device.launch(twoWarpsHandle(element), { grid: [1], args });
        const got = (await device.read(D)) as Float32Array;
        for (let w = 0; w < 2; w++) {
          const a = Array.from(aBits.subarray(w * 256, w * 256 + 256), decode);
          const b = Array.from(bBits.subarray(w * 128, w * 128 + 128), decode);
          expect(Array.from(got.subarray(w * 128, w * 128 + 128)), `warp ${w}`).toEqual(Array.from(mmaM16n8k16Reference(a, b, c.subarray(w * 128, w * 128 + 128))));
        }
      });
    }
  }
});

describe("loadMatrix in checked mode", () => {
  const source = `import { fillFragment, fragment, kernel, loadMatrix, mma, shared, storeFragment, syncThreads, threadIdx, type i32, type ReadonlyBFloat16Array } from "tskernel";
export const k = kernel({ block: [32], targets: ["cuda", "js"] }, (A: ReadonlyBFloat16Array, D: Float32Array, offset: i32) => {
  const acc = fragment.accumulator("m16n8k16", "f32", 1);
  const a = fragment.a("m16n8k16", "bf16", 1);
  const b = fragment.b("m16n8k16", "bf16", 1);
  const s = shared.bf16(512);
  for (let i = threadIdx.x; i < 512; i += 32) {
    s[i] = A[i];
  }
  syncThreads();
  loadMatrix(a[0], s, offset, 24);
  loadMatrix(b[0], s, 0, 24);
  fillFragment(acc[0], 0);
  mma(acc[0], a[0], b[0]);
  storeFragment(acc[0], D, 0, 8);
});
`;
  let handle: KernelHandle | undefined;
  const run = async (offset: number) => {
    if (!handle) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-ldmatrix-"));
      fs.writeFileSync(path.join(dir, "kernel.ts"), source);
      handle = compileKernelLibrary([path.join(dir, "kernel.ts")], ["js"]).kernels[0]!;
    }
    const device = new CpuDevice({ checked: true });
    const A = device.createBuffer("bf16", Uint16Array.from({ length: 512 }, () => bf16Bits(Math.random() * 2 - 1)));
    const D = device.createBuffer(new Float32Array(128));
    await device.launch(handle, { grid: [1], args: [A, D, offset] });
    // A checked launch's fault comes with the next read.
    await device.read(D);
  };

  it("a run-time offset on 16 bytes loads; one off 16 bytes is reported at the loadMatrix call, as ldmatrix needs it", async () => {
    await run(8);
    const error = await run(4).then(() => undefined, (e: Error) => e);
    // The row check is the one of a 16-byte vector access (its words), at the loadMatrix call.
    expect(String(error)).toMatch(/^Error: tskernel: launch #1 of 'k' failed: misaligned-vector-access in 'k' at \S*kernel\.ts:11:3, block \(0, 0, 0\), thread \(0, 0, 0\): a vector access to 's' starts at index 4, which is not a multiple of 8$/);
  });
});

describe("mma m16n8k16 errors", () => {
  const errorsOf = (body: string, targets: ("cuda" | "wgsl" | "js")[] = ["cuda", "js"]) =>
    compileSource(
      `import { fragment, kernel, loadFragment, loadMatrix, mma, shared, storeFragment, type ReadonlyBFloat16Array, type ReadonlyFloat16Array } from "tskernel";
export const k = kernel({ block: [32] }, (A: ReadonlyBFloat16Array, H: ReadonlyFloat16Array, D: Float32Array) => {
  const acc = fragment.accumulator("m16n8k16", "f32", 1);
  const a = fragment.a("m16n8k16", "bf16", 1);
  const b = fragment.b("m16n8k16", "bf16", 1);
  const s = shared.bf16(512);
${body}
});
`,
      { targets },
    ).rendered;
  const clean = "  loadMatrix(a[0], s, 0, 24);\n  loadFragment(b[0], A, 0, 8);\n  loadFragment(acc[0], D, 0, 8);\n  mma(acc[0], a[0], b[0]);\n  storeFragment(acc[0], D, 0, 8);";

  it("a well-formed kernel compiles for CUDA and the CPU", () => {
    expect(errorsOf(clean)).toBe("");
  });

  it("TSK3048: WebGPU has no matrix operations (loadMatrix, mma of m16n8k16)", () => {
    expect(errorsOf(clean, ["wgsl"]).split("\n")[0]).toBe("error[TSK3048]: WebGPU has no matrix operations, and kernel 'k' uses loadMatrix()");
    expect(errorsOf("  mma(acc[0], a[0], b[0]);", ["wgsl"]).split("\n")[0]).toBe("error[TSK3048]: WebGPU has no matrix operations, and kernel 'k' uses mma()");
  });

  it("TSK1067: a B fragment of m16n8k16 holds bf16 or f16", () => {
    expect(errorsOf('  // @ts-expect-error\n  const t = fragment.b("m16n8k16", "tf32", 1);').split("\n")[0]).toBe('error[TSK1067]: fragment.b takes the element type "bf16" or "f16" with the shape "m16n8k16", found "tf32"');
  });

  it("TSK1170: an A fragment of m16n8k16 holds bf16 or f16", () => {
    expect(errorsOf('  // @ts-expect-error\n  const t = fragment.a("m16n8k16", "tf32", 1);').split("\n")[0]).toBe('error[TSK1170]: fragment.a: the A fragments of the 16-bit shape "m16n8k16" hold "bf16" or "f16", found "tf32" (tf32 A fragments have the k8 shapes)');
  });

  it("TSK2062: A and B of two types", () => {
    expect(errorsOf('  const h = fragment.b("m16n8k16", "f16", 1);\n  // @ts-expect-error\n  mma(acc[0], a[0], h[0]);').split("\n")[0]).toBe("error[TSK2062]: mma() multiplies A and B of one type, but 'a' holds bf16 and 'h' holds f16");
  });

  it("TSK2035: fragments of two shapes", () => {
    expect(errorsOf('  const t = fragment.b("m16n8k8", "tf32", 1);\n  // @ts-expect-error\n  mma(acc[0], a[0], t[0]);').split("\n")[0]).toBe("error[TSK2035]: mma() takes fragments of the accumulator's shape m16n8k16, but 't' has shape m16n8k8");
  });

  it("TSK2035: loadMatrix of an accumulator", () => {
    expect(errorsOf("  // @ts-expect-error\n  loadMatrix(acc[0], s, 0, 24);").split("\n")[0]).toBe(`error[TSK2035]: loadMatrix() takes fragments of the A or B fragments of "m16n8k16", but 'acc' has shape m16n8k16 (an accumulator)`);
  });

  it("TSK2063: a bf16 fragment from an f16 array", () => {
    expect(errorsOf("  loadFragment(a[0], H, 0, 16);").split("\n")[0]).toBe("error[TSK2063]: loadFragment() moves the bf16 elements of 'a' from an array of f32 or bf16, but 'H' holds f16");
  });

  it("TSK2060: loadMatrix from a global buffer", () => {
    expect(errorsOf("  loadMatrix(a[0], A, 0, 16);").split("\n")[0]).toBe("error[TSK2060]: loadMatrix() takes a 1-D shared array of bf16 or f16 as its second argument; found 'A', a global array");
  });

  it("TSK1174: neither stride 1", () => {
    expect(errorsOf("  loadMatrix(a[0], s, 0, 24, 2);").split("\n")[0]).toBe("error[TSK1174]: loadMatrix() reads rows of 8 contiguous elements (ldmatrix): leave colStride out, or give stride 1 and the columns' step as colStride; found stride 24 and colStride 2");
  });

  it("TSK3165: rows that do not start on 16 bytes", () => {
    expect(errorsOf("  loadMatrix(a[0], s, 4, 24);").split("\n")[0]).toBe("error[TSK3165]: loadMatrix() reads rows of 8 elements of 's' from element offset 4: ldmatrix needs each row to start on 16 bytes, a multiple of 8 elements");
    expect(errorsOf("  loadMatrix(b[0], s, 0, 1, 20);").split("\n")[0]).toBe("error[TSK3165]: loadMatrix() reads rows of 8 elements of 's' from rows a stride of 20: ldmatrix needs each row to start on 16 bytes, a multiple of 8 elements");
  });
});

describe("mma m16n8k16 reference", () => {
  for (const [name, round] of [["bf16", bf16], ["f16", f16]] as const) {
    it(`${name}: exact products, in-order f32 sums within the documented bound of float64`, () => {
      for (let trial = 0; trial < 20; trial++) {
        const a = Array.from({ length: 256 }, () => round((Math.random() * 2 - 1) * 4));
        const b = Array.from({ length: 128 }, () => round((Math.random() * 2 - 1) * 4));
        const c = Array.from({ length: 128 }, () => Math.fround((Math.random() * 2 - 1) * 100));
        // Each product of two inputs is exact in f32, the premise of the reference's order.
        for (let i = 0; i < 256; i += 17) for (let j = 0; j < 128; j += 5) expect(Math.fround(a[i]! * b[j]!)).toBe(a[i]! * b[j]!);
        const d = mmaM16n8k16Reference(a, b, c);
        for (let r = 0; r < 16; r++) {
          for (let col = 0; col < 8; col++) {
            let exact = c[r * 8 + col]!;
            let magnitude = Math.abs(exact);
            let inOrder = Math.fround(exact);
            for (let k = 0; k < 16; k++) {
              const p = a[r * 16 + k]! * b[k * 8 + col]!;
              exact += p;
              magnitude += Math.abs(p);
              inOrder = Math.fround(inOrder + p);
            }
            expect(d[r * 8 + col]).toBe(inOrder);
            expect(Math.abs(d[r * 8 + col]! - exact)).toBeLessThanOrEqual(16 * 2 ** -24 * magnitude);
          }
        }
      }
    });
  }

  it("a wrong layout gives a different result (the test can fail)", () => {
    const a = Array.from({ length: 256 }, () => bf16(Math.random() * 2 - 1));
    const b = Array.from({ length: 128 }, () => bf16(Math.random() * 2 - 1));
    const c = Array.from({ length: 128 }, () => Math.random());
    const transposedA = Array.from({ length: 256 }, (_, i) => a[(i % 16) * 16 + Math.floor(i / 16)]!);
    expect(mmaM16n8k16Reference(transposedA, b, c)).not.toEqual(mmaM16n8k16Reference(a, b, c));
  });
});

describe.skipIf(!nvccAvailable())("mma m16n8k16 CUDA helper", () => {
  for (const element of ["bf16", "f16"] as const) {
    it(`${element}: ptxas accepts mma.sync m16n8k16 for sm_80 and sm_90`, () => {
      // One warp: each lane loads its packed registers, multiplies, stores its four accumulators.
      const source = [
        ...mma16Helper(element),
        `extern "C" __global__ void probe(const unsigned* a, const unsigned* b, float* d) {`,
        "  const int t = threadIdx.x;",
        "  float d0 = d[4 * t], d1 = d[4 * t + 1], d2 = d[4 * t + 2], d3 = d[4 * t + 3];",
        `  tsk_mma_m16n8k16_${element}(d0, d1, d2, d3, a[4 * t], a[4 * t + 1], a[4 * t + 2], a[4 * t + 3], b[2 * t], b[2 * t + 1]);`,
        "  d[4 * t] = d0; d[4 * t + 1] = d1; d[4 * t + 2] = d2; d[4 * t + 3] = d3;",
        "}",
      ].join("\n");
      for (const arch of ["sm_80", "sm_90"]) {
        const result = compileCuda(source, { arch, name: `mma16-${element}` });
        expect(result.errors).toBe("");
        expect(result.ok).toBe(true);
        expect(result.functions.some((f) => f.entry && f.name === "probe")).toBe(true);
      }
    });
  }

  it("codegen-tests/mma16-loads' CUDA (mma.sync m16n8k16, ldmatrix .x4/.x2, .trans) compiles for sm_80 (the goldens' test compiles it for sm_90)", () => {
    const source = fs.readFileSync(path.join(loadsCase, "expected.cu"), "utf8");
    for (const helper of ["tsk_ldmatrix_x4(", "tsk_ldmatrix_x4_trans(", "tsk_ldmatrix_x2(", "tsk_ldmatrix_x2_trans(", "tsk_mma_m16n8k16_bf16(", "tsk_mma_m16n8k16_f16("]) expect(source).toContain(helper);
    const compiled = compileCuda(source, { arch: "sm_80", name: "mma16-loads" });
    expect(compiled.errors).toBe("");
    expect(compiled.ok).toBe(true);
  });

  it("bench/mma16-loads-check.cu, the GPU check of those loads, compiles for sm_90", () => {
    // compileCuda compiles in a directory of its own: the harness's includes of the golden, made absolute.
    const source = fs.readFileSync(path.join(repoRoot, "bench", "mma16-loads-check.cu"), "utf8").replaceAll('"../codegen-tests/mma16-loads/', `"${loadsCase}/`);
    const result = compileCuda(source, { name: "mma16-loads-check" });
    expect(result.errors).toBe("");
    expect(result.ok).toBe(true);
    expect(result.functions.filter((f) => f.entry).map((f) => f.name).sort()).toEqual(["mma16LoadsBf16", "mma16LoadsF16"]);
  });

  it("bench/mma16-probe.cu, the GPU check, is its generator's output and compiles for sm_80", () => {
    const source = mma16ProbeSource(mma16ProbeSeed);
    expect(fs.readFileSync(new URL("../bench/mma16-probe.cu", import.meta.url), "utf8")).toBe(source);
    const result = compileCuda(source, { arch: "sm_80", name: "mma16-probe" });
    expect(result.errors).toBe("");
    expect(result.ok).toBe(true);
  });
});
