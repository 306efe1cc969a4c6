/**
 * The half-precision and narrow types on a CUDA GPU against the CPU backend, bit for bit, on the same
 * inputs (issue 20): the kernels of codegen-tests/half-conversions (every 16-bit encoding of f16 and bf16, the
 * f32s at every rounding midpoint of both, doubles beside those midpoints, integers at bf16's ties),
 * half-precision, double-precision, narrow-integers, vector-narrow and element-type-specialization, built with `tskernel build --target cuda,js` into the
 * folder given as the first argument. CUDA runs with FMA contraction off (NVRTC --fmad=false), where the
 * language promises the CPU's bits, and on (the default), where results may differ in the last bit. A NaN is
 * compared as "a NaN" where it was widened to f32 (its payload is the target's); everywhere else, bits.
 * Prints one line per comparison and the first differences; run by hand on the GPU machine (bench/README.md).
 */

import { createCudaDevice, CpuDevice, loadKernelLibrary, type Device, type KernelHandle, type TypedArray } from "../runtime/index.ts";

const dir = process.argv[2] ?? "kernels";
const library = loadKernelLibrary(dir);

/** Random numbers from a fixed seed, so a run can be repeated (xorshift32). */
let seed = 0x9e3779b9;
function random(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}
const randomBits = () => Math.floor(random() * 4294967296) >>> 0;

const f32Slot = new Float32Array(1);
const f32Bits = new Uint32Array(f32Slot.buffer);
const fromBits = (bits: number) => {
  f32Bits[0] = bits;
  return f32Slot[0]!;
};

/** f16 and bf16 values in ascending order, non-negative and finite (from their encodings). */
function halfValues(kind: "f16" | "bf16"): number[] {
  const out: number[] = [];
  if (kind === "bf16") for (let b = 0; b < 0x7f80; b++) out.push(fromBits(b << 16));
  else {
    for (let b = 0; b < 0x7c00; b++) {
      const e = b >> 10;
      const f = b & 1023;
      out.push(e === 0 ? f * 2 ** -24 : (1024 + f) * 2 ** (e - 25));
    }
  }
  return out;
}

/** Every midpoint between adjacent values of each type, the f32s beside it, with both signs. */
function midpointInputs(): { f32: number[]; f64: number[] } {
  const f32: number[] = [];
  const f64: number[] = [];
  for (const kind of ["f16", "bf16"] as const) {
    const values = halfValues(kind);
    for (let i = 0; i + 1 < values.length; i++) {
      const mid = (values[i]! + values[i + 1]!) / 2;
      f32Slot[0] = mid;
      const bits = f32Bits[0]!;
      for (const v of [mid, fromBits(bits + 1), fromBits(bits - 1)]) f32.push(v, -v);
      // Doubles just beside the midpoint, which an f32 could not tell from it.
      f64.push(mid * (1 + 2 ** -40), mid * (1 - 2 ** -40), -mid * (1 + 2 ** -40));
    }
  }
  return { f32, f64 };
}

interface Output {
  readonly name: string;
  readonly buffer: ReturnType<Device["createBuffer"]>;
  /** How to compare: bits of 16-bit encodings, bits of f32 with NaN as NaN, integers, or f64 values. */
  readonly kind: "half" | "f32" | "int" | "f64";
}

interface Case {
  readonly kernel: string;
  readonly grid: number;
  /** Makes the buffers and arguments on a device (inputs identical on every device). */
  make(device: Device): { args: unknown[]; outputs: Output[] };
}

async function read(device: Device, output: Output): Promise<TypedArray> {
  return device.read(output.buffer, { bits: output.kind === "half" });
}

function differences(kind: Output["kind"], cpu: TypedArray, gpu: TypedArray): number[] {
  const out: number[] = [];
  const asBits = (array: TypedArray) => new Uint32Array(array.buffer, array.byteOffset, array.length);
  const cpuBits = kind === "f32" ? asBits(cpu) : undefined;
  const gpuBits = kind === "f32" ? asBits(gpu) : undefined;
  for (let i = 0; i < cpu.length; i++) {
    const a = cpu[i]!;
    const b = gpu[i]!;
    if (kind === "f32") {
      if (Number.isNaN(a) && Number.isNaN(b)) continue;
      if (cpuBits![i] !== gpuBits![i]) out.push(i);
    } else if (kind === "f64") {
      if (!(Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)))) out.push(i);
    } else if (a !== b) out.push(i);
  }
  return out;
}

const n = 1 << 19;
const { f32: midF32, f64: midF64 } = midpointInputs();
const f = Float32Array.from({ length: n }, (_, i) => (i < midF32.length ? midF32[i]! : fromBits(randomBits())));
// A few special f32s at the start of the random tail: NaNs (quiet, signalling, negative), infinities, subnormals.
f.set([Number.NaN, fromBits(0x7f800001), fromBits(0xffffffff), Infinity, -Infinity, fromBits(1), fromBits(0x807fffff), 65520, -65519.99], midF32.length);
const d = Float64Array.from({ length: n }, (_, i) => (i < midF64.length ? midF64[i]! : (random() - 0.5) * 2 ** Math.floor(random() * 2100 - 1050)));
const ints = Int32Array.from({ length: n }, (_, i) => {
  if (i % 3 === 0) {
    // bf16 ties of integers: k·2^(e−7) + 2^(e−8) and beside it, which an f32 may round first.
    const e = 9 + Math.floor(random() * 22);
    const k = 128 + Math.floor(random() * 128);
    return k * 2 ** (e - 7) + 2 ** (e - 8) + (Math.floor(random() * 3) - 1) * (random() < 0.5 ? 1 : 2 ** Math.floor(random() * (e - 9)));
  }
  return randomBits() | 0;
});
const h = Uint16Array.from({ length: n }, (_, i) => i & 0xffff);
const b = Uint16Array.from({ length: n }, (_, i) => (i * 7 + 3) & 0xffff);

const halfInputs = (count: number, kind: "f16" | "bf16") =>
  Uint16Array.from({ length: count }, () => {
    for (;;) {
      const bits = Math.floor(random() * 65536);
      const exponent = kind === "f16" ? (bits >> 10) & 31 : (bits >> 7) & 255;
      if (exponent !== (kind === "f16" ? 31 : 255)) return bits;
    }
  });
const m = 4096;
const xh = halfInputs(m, "f16");
const xb = halfInputs(m, "bf16");
const xf = Float32Array.from({ length: m }, () => Math.fround((random() - 0.5) * 20));
const x64 = Float64Array.from({ length: m }, () => (random() - 0.5) * 2 ** Math.floor(random() * 80 - 40));
const in8 = Int8Array.from({ length: m }, () => Math.floor(random() * 256) - 128);
const inU8 = Uint8Array.from({ length: m }, () => Math.floor(random() * 256));
const in16 = Int16Array.from({ length: m }, () => Math.floor(random() * 65536) - 32768);

const cases: Case[] = [
  {
    kernel: "conversions",
    grid: n / 256,
    make: (device) => {
      const outputs: Output[] = [
        { name: "toF16", buffer: device.createBuffer("f16", new Uint16Array(n * 5).fill(0x7d55)), kind: "half" },
        { name: "toBf16", buffer: device.createBuffer("bf16", new Uint16Array(n * 5).fill(0x7fd5)), kind: "half" },
        { name: "widened", buffer: device.createBuffer(new Float32Array(n * 2).fill(1234.5)), kind: "f32" },
        { name: "toInt", buffer: device.createBuffer(new Int32Array(n * 4).fill(0x7abcdef0)), kind: "int" },
      ];
      const args = [...outputs.map((o) => o.buffer), device.createBuffer(f), device.createBuffer(d), device.createBuffer(ints), device.createBuffer("f16", h), device.createBuffer("bf16", b), n];
      return { args, outputs };
    },
  },
  {
    kernel: "halves",
    grid: m / 64,
    make: (device) => {
      const outputs: Output[] = [
        { name: "outH", buffer: device.createBuffer("f16", new Uint16Array(m * 6).fill(0x7d55)), kind: "half" },
        { name: "outB", buffer: device.createBuffer("bf16", new Uint16Array(m * 5).fill(0x7fd5)), kind: "half" },
        { name: "outF", buffer: device.createBuffer(new Float32Array(m * 4).fill(1234.5)), kind: "f32" },
        { name: "outI", buffer: device.createBuffer(new Int32Array(m * 3).fill(0x7abcdef0)), kind: "int" },
      ];
      return { args: [...outputs.map((o) => o.buffer), device.createBuffer("f16", xh), device.createBuffer("bf16", xb), device.createBuffer(xf), m, 1.375, 2.25], outputs };
    },
  },
  {
    kernel: "doubles",
    grid: m / 64,
    make: (device) => {
      const outputs: Output[] = [
        { name: "out", buffer: device.createBuffer(new Float64Array(m * 3).fill(1234.5)), kind: "f64" },
        { name: "outF", buffer: device.createBuffer(new Float32Array(m).fill(1234.5)), kind: "f32" },
        { name: "outH", buffer: device.createBuffer("f16", new Uint16Array(m).fill(0x7d55)), kind: "half" },
        { name: "outB", buffer: device.createBuffer("bf16", new Uint16Array(m * 2).fill(0x7fd5)), kind: "half" },
        { name: "outI", buffer: device.createBuffer(new Int32Array(m).fill(0x7abcdef0)), kind: "int" },
      ];
      return { args: [...outputs.map((o) => o.buffer), device.createBuffer(x64), m, 7.25e-3], outputs };
    },
  },
  {
    kernel: "narrow",
    grid: m / 64,
    make: (device) => {
      const outputs: Output[] = [
        { name: "out8", buffer: device.createBuffer(new Int8Array(m).fill(0x5a)), kind: "int" },
        { name: "outU8", buffer: device.createBuffer(new Uint8Array(m).fill(0xa5)), kind: "int" },
        { name: "out16", buffer: device.createBuffer(new Int16Array(m).fill(0x1234)), kind: "int" },
        { name: "outU16", buffer: device.createBuffer(new Uint16Array(m).fill(0xbeef)), kind: "int" },
        { name: "outI", buffer: device.createBuffer(new Int32Array(m * 3).fill(0x7abcdef0)), kind: "int" },
      ];
      return { args: [...outputs.map((o) => o.buffer), device.createBuffer(in8), device.createBuffer(inU8), device.createBuffer(in16), m], outputs };
    },
  },
  {
    // Vector accesses of 16- and 8-bit elements (codegen-tests/vector-narrow): CUDA's uint4/uint2 words.
    kernel: "packRows",
    grid: m / 256,
    make: (device) => {
      const outputs: Output[] = [
        { name: "out", buffer: device.createBuffer("bf16", new Uint16Array(m).fill(0x7fd5)), kind: "half" },
        { name: "bytes", buffer: device.createBuffer(new Uint8Array(m).fill(0xa5)), kind: "int" },
        { name: "shorts", buffer: device.createBuffer(in16.slice()), kind: "int" },
      ];
      const args = [outputs[0]!.buffer, device.createBuffer("bf16", xb), outputs[1]!.buffer, device.createBuffer(inU8), outputs[2]!.buffer, m, 1.375];
      return { args, outputs };
    },
  },
  ...(["f32", "bf16", "u8"] as const).map((T): Case => ({
    // One kernel over element types (codegen-tests/element-type-specialization).
    kernel: `elementRows:${T}`,
    grid: m / (T === "u8" ? 32 : 64),
    make: (device) => {
      const outputs: Output[] = [
        { name: "out", buffer: device.createBuffer(T, T === "bf16" ? new Uint16Array(m).fill(0x7fd5) : new Array<number>(m).fill(T === "u8" ? 0xa5 : 1234.5)), kind: T === "bf16" ? "half" : T === "u8" ? "int" : "f32" },
        { name: "sums", buffer: device.createBuffer(new Float32Array(m).fill(1234.5)), kind: "f32" },
      ];
      const x = T === "bf16" ? device.createBuffer("bf16", xb) : T === "u8" ? device.createBuffer(inU8) : device.createBuffer(xf);
      return { args: [outputs[0]!.buffer, outputs[1]!.buffer, x, m, 0.8125], outputs };
    },
  })),
];

/** A case's kernel: by name, or `name:T` for a build of a kernel written over element types. */
function kernelOf(name: string): KernelHandle {
  const [kernel, type] = name.split(":");
  return type ? library.get("scaleRows", { T: type }) : library.get(kernel!);
}

async function run(device: Device, kernel: KernelHandle, testCase: Case): Promise<Map<string, TypedArray>> {
  const { args, outputs } = testCase.make(device);
  await device.launch(kernel, { grid: [testCase.grid], args: args as never });
  const results = new Map<string, TypedArray>();
  for (const output of outputs) results.set(output.name, await read(device, output));
  return results;
}

const cpu = new CpuDevice();
let failures = 0;
for (const fmad of [false, true]) {
  let gpu: Device;
  try {
    // TSK_TYPES_GPU_STAND_IN=1 runs the CPU (two threads) in the GPU's place, to try the script where there is no GPU.
    gpu = process.env.TSK_TYPES_GPU_STAND_IN === "1" ? new CpuDevice({ workers: 2 }) : createCudaDevice({ fmad });
  } catch (error) {
    console.log(`no CUDA device: ${(error as Error).message}`);
    process.exit(2);
  }
  console.log(`== CUDA (${gpu.name}), FMA contraction ${fmad ? "on" : "off"} (NVRTC --fmad=${fmad}), against the CPU backend`);
  for (const testCase of cases) {
    const kernel = kernelOf(testCase.kernel);
    let gpuResults: Map<string, TypedArray>;
    try {
      gpuResults = await run(gpu, kernel, testCase);
    } catch (error) {
      console.log(`${testCase.kernel}: CUDA failed: ${(error as Error).message}`);
      failures++;
      continue;
    }
    const cpuResults = await run(cpu, kernel, testCase);
    const outputs = testCase.make(cpu).outputs;
    for (const output of outputs) {
      const cpuOut = cpuResults.get(output.name)!;
      const gpuOut = gpuResults.get(output.name)!;
      const diff = differences(output.kind, cpuOut, gpuOut);
      console.log(`${testCase.kernel}.${output.name}: ${cpuOut.length} elements, ${diff.length} differ`);
      for (const i of diff.slice(0, 6)) console.log(`  [${i}] cpu ${cpuOut[i]} gpu ${gpuOut[i]}`);
      if (!fmad && diff.length > 0) failures++;
    }
  }
  // NaN widening: which f32 NaN CUDA gives for a few f16 and bf16 NaNs (the CPU gives 0x7fc00000).
  if (!fmad) {
    const widened = await run(gpu, library.get("conversions"), cases[0]!).then((r) => r.get("widened") as Float32Array);
    const bits = new Uint32Array(widened.buffer, widened.byteOffset, widened.length);
    const show = (i: number) => `0x${bits[i]!.toString(16)}`;
    console.log(`f32(f16 0x7c01) = ${show(0x7c01 * 2)}, f32(f16 0x7e00) = ${show(0x7e00 * 2)}, f32(f16 0xffff) = ${show(0xffff * 2)}`);
    const bIndex = (pattern: number) => {
      for (let i = 0; i < 65536; i++) if (((i * 7 + 3) & 0xffff) === pattern) return i;
      return 0;
    };
    console.log(`f32(bf16 0x7f81) = ${show(bIndex(0x7f81) * 2 + 1)}, f32(bf16 0x7fc0) = ${show(bIndex(0x7fc0) * 2 + 1)}, f32(bf16 0xffff) = ${show(bIndex(0xffff) * 2 + 1)}`);
  }
  gpu.dispose();
}
console.log(failures === 0 ? "OK: CUDA without contraction matches the CPU bit for bit" : `FAILED: ${failures} comparisons differ`);
process.exitCode = failures === 0 ? 0 : 1;
