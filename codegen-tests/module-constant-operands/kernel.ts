// Construct: module-level numeric constants as the other operand of binary operators, in ternary branches,
// Math.min/max arguments and compound assignments, beside u32, i32 and f32 values: each takes the type of
// the operand beside it, as the literal it stands for would (docs/language.md section 14).
import { blockDim, blockIdx, kernel, threadIdx, type f32, type i32, type u32 } from "tskernel";

const TWO = 2;
const SHIFT = 3;
const MASK = 0xff;
const NEG = -5;
const HALF = 0.5;
const BIG = 3000000000;

export const constantOperands = kernel(
  { block: [64] },
  (n: i32, us: Uint32Array, is: Int32Array, fs: Float32Array, outU: Uint32Array, outI: Int32Array, outF: Float32Array) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const m: u32 = us[i];
    const k: i32 = is[i];
    const v: f32 = fs[i];

    // u32: arithmetic, comparison, bitwise, shifts, ternary, Math.min/max, compound assignments.
    let a: u32 = m + TWO;
    a = a * TWO - (m >> SHIFT);
    a += (m & MASK) ^ (m << SHIFT);
    a += m === TWO ? TWO : m % TWO;
    a += Math.min(m, BIG) + Math.max(TWO, m & MASK);
    a ^= MASK;
    a -= TWO;
    if (m < BIG) a += TWO;
    outU[i] = a;

    // i32: the same, with a negative constant.
    let b: i32 = k + NEG;
    b = b * TWO - (k >> SHIFT) + (k >>> SHIFT);
    b += (k | MASK) & (k << TWO);
    b += k !== NEG ? k / TWO : NEG;
    b += Math.max(k, NEG) - Math.min(NEG, k, TWO);
    b *= TWO;
    b -= NEG;
    if (k > NEG && k <= TWO) b += MASK;
    outI[i] = b;

    // f32: the integer-spelled constants become f32 literals.
    let c: f32 = v * TWO + HALF;
    c -= v / TWO;
    c += v < TWO ? NEG : v - HALF;
    c += Math.min(v, TWO) + Math.max(NEG, v, HALF);
    c *= HALF;
    if (v >= NEG) c += MASK;
    outF[i] = c;
  },
);
