/**
 * The types WGSL lacks, emulated (ir/types.ts, `targetScalars.wgsl`; docs/architecture.md, "Emulated storage
 * on WGSL"): bf16 values are f32s rounded to bf16 after every operation, and arrays of bf16 and of the 8- and
 * 16-bit integers hold k elements in each u32 word (element i in word i / k at bits (i % k) · 32 / k,
 * little-endian as on the host, so a buffer's bytes are a BFloat16Array's or a Uint8Array's).
 *
 * A load reads its word and extracts the element (sign-extended for i8 and i16). A vector access (`load4`,
 * `load8`, `load16` and their stores; its start a multiple of its lanes) covers whole words: it reads or writes
 * each word once, as one `vec4<u32>` where the array allows it (packedVectorArrays), and unpacks each element
 * at a constant bit offset (unpackLane, packWord). A store of one element must
 * not disturb its neighbours, which other threads may be storing at the same time: it is a compare-exchange
 * loop on its word, which is then `atomic<u32>` (as is every array of such a type that the kernel stores into;
 * its loads are atomic loads). Private arrays, which no other thread sees, hold the values themselves (f32, i32,
 * u32), a narrow integer store keeping its low bits.
 *
 * The functions below are printed once per module that uses them; the printer calls them with the word and
 * the element's index (which it prints twice: both uses are pure).
 */

import type { ArrayRef, ScalarType, Stmt } from "../ir/ir.ts";
import { exprsOf, walkExpr, walkStmts } from "../ir/rewrite.ts";
import { targetScalars, type ElementScalar } from "../ir/types.ts";

/** Elements per u32 word of an array of this type on WGSL (1: not packed). */
export function elementsPerWord(type: ElementScalar): number {
  return targetScalars.wgsl[type].perStorageElement ?? 1;
}

/** Whether an array's elements share u32 words: bf16 and narrow-integer buffers and workgroup arrays. */
export function isPacked(array: ArrayRef): boolean {
  // Vectors and structs lie in WGSL's storage layout (wgsl-types.ts), never packed.
  return array.space !== "private" && typeof array.elementType === "string" && elementsPerWord(array.elementType) > 1;
}

/** The bits of one element of a packed type. */
function elementBits(type: ElementScalar): number {
  return 32 / elementsPerWord(type);
}

/** The log2 of elements per word: the shift from an element index to its word index. */
export function wordShift(type: ElementScalar): number {
  return Math.log2(elementsPerWord(type));
}

/** The function that extracts an element of `type` from a word, given the element's index. */
export function unpackFunction(type: ElementScalar): string {
  return `tsk_unpack_${type}`;
}

/** The function that gives the bits a value of `type` stores as (in the low bits of a u32). */
export function packFunction(type: ElementScalar): string {
  return `tsk_pack_${type}`;
}

/** WGSL's function that rounds an f32 to bf16 (ties to even; NaN stays NaN). */
export const roundBf16 = "tsk_round_bf16";

/** A value stored into a private array of a narrow integer type keeps its low bits (extractBits sign-extends an i32). */
export function wrapNarrow(type: ElementScalar, value: string): string | undefined {
  switch (type) {
    case "i8":
      return `extractBits(${value}, 0u, 8u)`;
    case "i16":
      return `extractBits(${value}, 0u, 16u)`;
    case "u8":
      return `(${value} & 0xffu)`;
    case "u16":
      return `(${value} & 0xffffu)`;
    default:
      return undefined;
  }
}

/** The module's functions for the packed types and bf16 it uses. */
export function packedFunctions(types: ReadonlySet<ElementScalar | ScalarType>): string[] {
  const lines: string[] = [];
  if (types.has("bf16")) {
    lines.push(
      // An f32 rounded to the nearest bf16, ties to even, by the integer carry into its upper half.
      `fn ${roundBf16}(x: f32) -> f32 {`,
      "  let bits = bitcast<u32>(x);",
      "  if ((bits & 0x7fffffffu) > 0x7f800000u) { return x; }",
      "  return bitcast<f32>((bits + 0x7fffu + ((bits >> 16u) & 1u)) & 0xffff0000u);",
      "}",
      // An i32 or u32 rounded once to bf16: its leading 8 bits rounded to nearest even in integers, then scaled.
      "fn tsk_u32_to_bf16(m: u32) -> f32 {",
      "  let lead = firstLeadingBit(m);",
      "  if (m == 0u || lead <= 7u) { return f32(m); }",
      "  let shift = lead - 7u;",
      "  var keep = m >> shift;",
      "  let rest = m & ((1u << shift) - 1u);",
      "  let half = 1u << (shift - 1u);",
      "  if (rest > half || (rest == half && (keep & 1u) == 1u)) { keep = keep + 1u; }",
      "  return ldexp(f32(keep), i32(shift));",
      "}",
      "fn tsk_i32_to_bf16(x: i32) -> f32 {",
      "  let magnitude = tsk_u32_to_bf16(select(u32(x), 0u - u32(x), x < 0i));",
      "  return select(magnitude, -magnitude, x < 0i);",
      "}",
      `fn ${unpackFunction("bf16")}(word: u32, index: u32) -> f32 { return bitcast<f32>(((word >> ((index & 1u) << 4u)) & 0xffffu) << 16u); }`,
      // The upper half of the f32 (a bf16 value's low half is zero); NaN as the canonical 0x7fff.
      `fn ${packFunction("bf16")}(x: f32) -> u32 {`,
      "  let bits = bitcast<u32>(x);",
      "  if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7fffu; }",
      "  return bits >> 16u;",
      "}",
    );
  }
  for (const type of ["i8", "u8", "i16", "u16"] as const) {
    if (!types.has(type)) continue;
    const bits = elementBits(type);
    const mask = (2 ** bits - 1).toString(16);
    const lane = `(index & ${elementsPerWord(type) - 1}u) * ${bits}u`;
    const signed = type === "i8" || type === "i16";
    lines.push(
      signed
        ? `fn ${unpackFunction(type)}(word: u32, index: u32) -> i32 { return extractBits(bitcast<i32>(word), ${lane}, ${bits}u); }`
        : `fn ${unpackFunction(type)}(word: u32, index: u32) -> u32 { return extractBits(word, ${lane}, ${bits}u); }`,
      `fn ${packFunction(type)}(x: ${signed ? "i32" : "u32"}) -> u32 { return ${signed ? "bitcast<u32>(x)" : "x"} & 0x${mask}u; }`,
    );
  }
  return lines;
}

/**
 * The statements of a store of `value` (a printed expression of the element's value type) into element
 * `index` (a printed u32) of a packed array whose words are `words` (a printed array, `atomic<u32>`
 * elements): a compare-exchange loop that replaces the element's bits only. `name` makes fresh names.
 */
export function packedStore(type: ElementScalar, words: string, index: string, value: string, name: (hint: string) => string): string[] {
  const at = name("element");
  const bits = name("bits");
  const shift = name("shift");
  const word = name("word");
  const old = name("old");
  const swapped = name("swapped");
  const k = elementsPerWord(type);
  return [
    "{",
    `  let ${at}: u32 = ${index};`,
    `  let ${bits}: u32 = ${packFunction(type)}(${value});`,
    `  let ${shift}: u32 = (${at} & ${k - 1}u) * ${elementBits(type)}u;`,
    `  let ${word} = &${words}[${at} >> ${wordShift(type)}u];`,
    `  var ${old}: u32 = atomicLoad(${word});`,
    "  loop {",
    `    let ${swapped} = atomicCompareExchangeWeak(${word}, ${old}, (${old} & ~(0x${(2 ** elementBits(type) - 1).toString(16)}u << ${shift})) | (${bits} << ${shift}));`,
    `    if (${swapped}.exchanged) { break; }`,
    `    ${old} = ${swapped}.old_value;`,
    "  }",
    "}",
  ];
}

/**
 * Element `lane` (0 … k − 1) of a word, a printed u32, with its bit offset a constant: what a vector access
 * unpacks each element with (its start is a multiple of its lanes, so element j of it is lane j % k of word
 * j / k). bf16 is the upper half of an f32, so the low half shifts up and the high half is masked.
 */
export function unpackLane(type: ElementScalar, word: string, lane: number): string {
  const bits = elementBits(type);
  const offset = lane * bits;
  const top = offset + bits === 32;
  switch (type) {
    case "bf16":
      return top ? `bitcast<f32>(${word} & 0xffff0000u)` : `bitcast<f32>(${word} << 16u)`;
    case "i8":
    case "i16":
      // An arithmetic shift sign-extends the top element; extractBits the others.
      return top ? `(bitcast<i32>(${word}) >> ${offset}u)` : `extractBits(bitcast<i32>(${word}), ${offset}u, ${bits}u)`;
    default:
      return offset === 0 ? `(${word} & 0x${(2 ** bits - 1).toString(16)}u)` : top ? `(${word} >> ${offset}u)` : `extractBits(${word}, ${offset}u, ${bits}u)`;
  }
}

/** A whole word of k elements (printed values of the element's value type, lowest first), as a printed u32. */
export function packWord(type: ElementScalar, values: readonly string[]): string {
  const bits = elementBits(type);
  return values
    .map((value, lane) => {
      const packed = `${packFunction(type)}(${value})`;
      return lane === 0 ? packed : `(${packed} << ${lane * bits}u)`;
    })
    .join(" | ");
}

/** The names the functions above take, which the namer must leave alone. */
export const packedNames: readonly string[] = [
  roundBf16, "tsk_u32_to_bf16", "tsk_i32_to_bf16",
  ...(["bf16", "i8", "u8", "i16", "u16"] as const).flatMap((type) => [unpackFunction(type), packFunction(type)]),
];

/**
 * The packed global buffers and workgroup arrays WGSL declares with `vec4<u32>` elements: those that a vector
 * access of four words reaches (eight bf16, sixteen u8) and that the kernel stores into only that way. A load of
 * fewer words (`load4` of u8: one word; of bf16: two; a single element) reads components of the vec4 it lies in;
 * a store of fewer keeps the array in u32 words (each word stored whole; a single element's atomically).
 */
export function packedVectorArrays(body: readonly Stmt[]): Set<ArrayRef> {
  const wide = new Set<ArrayRef>();
  const not = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    if ((stmt.kind === "vectorLoad" || stmt.kind === "vectorStore") && isPacked(stmt.array)) {
      const words = (stmt.kind === "vectorLoad" ? stmt.targets.length : stmt.values.length) / elementsPerWord(stmt.array.elementType as ElementScalar);
      if (words === 4) wide.add(stmt.array);
      else if (stmt.kind === "vectorStore" || !Number.isInteger(words)) not.add(stmt.array);
    }
    if (stmt.kind === "store" || stmt.kind === "atomic") not.add(stmt.array);
  });
  return new Set([...wide].filter((array) => !not.has(array)));
}

/**
 * The packed arrays a body stores single elements into: their words are declared atomic. (A vector store that
 * covers whole words is a plain store; legalize split the others into single elements.)
 */
export function storedPackedArrays(body: readonly Stmt[]): Set<ArrayRef> {
  const stored = new Set<ArrayRef>();
  walkStmts(body, (stmt) => {
    if (stmt.kind === "store" && isPacked(stmt.array)) stored.add(stmt.array);
  });
  return stored;
}
