/**
 * Generators of deep and large inputs: nesting of every kind at and around the compiler's limit (and far
 * past it), long kernels and long files, many parameters, kernels and helpers, long helper call chains,
 * long names and lines, huge constants and shapes, many specializations and nested `unroll:` loops. Unlike
 * the mutations these are mostly well-formed, so they reach the later phases (specialization, unrolling,
 * validation, printing) with sizes no example has.
 */

import type { Rng } from "./rng.ts";
import { edgeLiterals } from "./mutate.ts";

const header = 'import { blockDim, blockIdx, fma, f32, i32, u32, kernel, local, shared, syncThreads, threadIdx, type Const, type bool, type ReadonlyFloat32Array } from "tskernel";\n';

function kernel(body: string, params = "out: Float32Array, a: ReadonlyFloat32Array, x: f32, n: i32, c: bool", options = "{ block: [64] }", name = "k"): string {
  return `export const ${name} = kernel(${options}, (${params}) => {\n  const i = blockIdx.x * blockDim.x + threadIdx.x;\n${body}\n});\n`;
}

/** Depths around the limit (256) and far beyond, where TypeScript's own phases would overflow. */
function depth(rng: Rng): number {
  return rng.weighted([
    [4, rng.range(1, 64)],
    [3, rng.range(200, 260)],
    [2, rng.range(240, 320)],
    [2, rng.range(320, 1200)],
    [1, rng.range(1200, 6000)],
  ] as const);
}

type Generator = (rng: Rng) => string;

const nesting: Record<string, Generator> = {
  parens: (rng) => { const d = depth(rng); return header + kernel(`  out[i] = ${"(".repeat(d)}x${")".repeat(d)};`); },
  negation: (rng) => header + kernel(`  out[i] = ${"-".repeat(0) + "- ".repeat(depth(rng))}x;`),
  not: (rng) => header + kernel(`  if (${"!".repeat(depth(rng))}c) out[i] = x;`),
  bitnot: (rng) => header + kernel(`  out[i] = f32(${"~".repeat(depth(rng))}n);`),
  sum: (rng) => header + kernel(`  out[i] = x${" + a[i]".repeat(depth(rng))};`),
  power: (rng) => header + kernel(`  out[i] = x${" ** x".repeat(depth(rng))};`),
  ternary: (rng) => header + kernel(`  out[i] = ${"c ? x : ".repeat(depth(rng))}x;`),
  logic: (rng) => header + kernel(`  if (c${" && n > 0".repeat(depth(rng))}) out[i] = x;`),
  blocks: (rng) => { const d = depth(rng); return header + kernel(`${"{ ".repeat(d)}out[i] = x;${" }".repeat(d)}`); },
  ifs: (rng) => header + kernel(`  ${"if (c) ".repeat(depth(rng))}out[i] = x;`),
  elseIfs: (rng) => header + kernel(`  if (n === 0) out[i] = 0;${Array.from({ length: depth(rng) }, (_, k) => ` else if (n === ${k + 1}) out[i] = ${k}.5;`).join("")}`),
  loops: (rng) => header + kernel(`  let s: f32 = 0;\n  ${Array.from({ length: Math.min(depth(rng), 2000) }, (_, k) => `for (let j${k} = 0; j${k} < 2; j${k}++) `).join("")}s += 1;\n  out[i] = s;`),
  whiles: (rng) => header + kernel(`  let s: f32 = 0;\n  ${"while (s < 1) ".repeat(depth(rng))}s += 1;\n  out[i] = s;`),
  calls: (rng) => { const d = depth(rng); return header + kernel(`  out[i] = ${"Math.abs(".repeat(d)}x${")".repeat(d)};`); },
  conversions: (rng) => { const d = depth(rng); return header + kernel(`  out[i] = ${"f32(i32(".repeat(d)}x${"))".repeat(d)};`); },
  indices: (rng) => { const d = depth(rng); return header + kernel(`  out[i] = ${"a[i32(".repeat(d)}x${")]".repeat(d)};`); },
  signs: (rng) => { const d = depth(rng); return header + kernel(`  out[i] = ${"Math.sign(".repeat(d)}x${")".repeat(d)};`); },
  helperNest: (rng) => { const d = depth(rng); return header + "function h(v: f32): f32 { return v * 0.5; }\n" + kernel(`  out[i] = ${"h(".repeat(d)}x${")".repeat(d)};`); },
  helperChain: (rng) => {
    // h0 calls h1 … calls hN: lowering follows the chain, one helper inside the next.
    const d = depth(rng);
    const helpers = Array.from({ length: d }, (_, k) => `function h${k}(v: f32): f32 { return ${k + 1 < d ? `h${k + 1}(v) + 1` : "v"}; }`).join("\n");
    return `${header}${helpers}\n${kernel("  out[i] = h0(x);")}`;
  },
  types: (rng) => { const d = depth(rng); return header + kernel("  out[0] = x;", `out: ${"Readonly<".repeat(d)}Float32Array${">".repeat(d)}, x: f32`); },
  arrows: (rng) => header + kernel(`  const g = ${"(v: f32) => ".repeat(depth(rng))}1;\n  out[i] = x;`),
  assignments: (rng) => header + kernel(`  let y: f32 = 0;\n  ${"y = ".repeat(depth(rng))}x;\n  out[i] = y;`),
  templates: (rng) => { const d = depth(rng); return header + `const t = ${"`${".repeat(d)}1${"}`".repeat(d)};\n` + kernel("  out[i] = x;"); },
};

function statements(count: number, rng: Rng): string {
  const forms = [
    (k: number) => `  out[i + ${k}] = a[i] * ${k}.5 + x;`,
    (k: number) => `  const v${k} = a[i + ${k}] * x;\n  out[i] += v${k};`,
    (k: number) => `  if (n > ${k}) { out[i] = f32(n) * ${k}.0; }`,
    (k: number) => `  s += Math.sqrt(a[i] + ${k}.0);`,
  ];
  const form = rng.pick(forms);
  return `  let s: f32 = 0;\n${Array.from({ length: count }, (_, k) => form(k)).join("\n")}\n  out[i] = s;`;
}

const large: Record<string, Generator> = {
  longKernel: (rng) => header + kernel(statements(rng.weighted([[3, rng.range(50, 300)], [2, rng.range(300, 800)], [1, rng.range(800, 3000)]] as const), rng)),
  manyKernels: (rng) =>
    header + Array.from({ length: rng.range(20, 300) }, (_, k) => kernel(`  if (i < n) out[i] = a[i] * ${k}.25 + x;`, undefined, "{ block: [64] }", `k${k}`)).join(""),
  manyHelpers: (rng) => {
    const count = rng.range(20, 600);
    const helpers = Array.from({ length: count }, (_, k) => `function h${k}(v: f32): f32 { return v * ${k}.5 + 1; }`).join("\n");
    const uses = Array.from({ length: Math.min(count, 200) }, (_, k) => `h${k}(x)`).join(" + ");
    return `${header}${helpers}\n${kernel(`  out[i] = ${uses};`)}`;
  },
  manyParams: (rng) => {
    const count = rng.weighted([[3, rng.range(8, 64)], [2, rng.range(64, 600)], [1, rng.range(600, 5000)]] as const);
    const kinds = ["f32", "i32", "u32", "bool", "Float32Array", "ReadonlyFloat32Array", "Int32Array"];
    const params = Array.from({ length: count }, (_, k) => `p${k}: ${rng.pick(kinds)}`);
    return header + kernel("  out[i] = x;", `out: Float32Array, x: f32, ${params.join(", ")}`);
  },
  manyLocals: (rng) => header + kernel(Array.from({ length: rng.range(100, 2000) }, (_, k) => `  const v${k}: f32 = ${k > 0 ? `v${k - 1} + ` : ""}x;`).join("\n") + "\n  out[i] = x;"),
  manyArguments: (rng) => header + kernel(`  out[i] = Math.${rng.pick(["min", "max"])}(x${", a[i]".repeat(rng.weighted([[3, rng.range(2, 100)], [2, rng.range(100, 1000)], [1, rng.range(1000, 20000)]] as const))});`),
  longName: (rng) => {
    const name = `k${"x".repeat(rng.pick([100, 1000, 20000, 100000]))}`;
    return header + kernel(`  const ${name}_v = x;\n  out[i] = ${name}_v;`, undefined, "{ block: [64] }", name);
  },
  longLine: (rng) => header + kernel(`  out[i] = ${Array.from({ length: rng.range(100, 240) }, (_, k) => `a[i + ${k}] * ${k}.5`).reduce((acc, term) => `(${acc}) + ${term}`)};`),
  hugeLiteral: (rng) => header + kernel(`  const big${rng.pick(["", ": f32", ": i32", ": u32"])} = ${rng.pick(edgeLiterals)};\n  out[i] = f32(big);`),
  hugeShared: (rng) => {
    const size = rng.pick(["1", "16384", "16385", "58112", "58113", "65536", "1 << 20", "1 << 30", "2147483647", "4294967295", "-1", "0", "1e9", "3.5"]);
    const dims = rng.chance(0.5) ? size : `${size}, ${rng.pick(["1", "64", "65536", "0"])}`;
    return header + kernel(`  const tile = shared.f32(${dims});\n  tile[0] = x;\n  syncThreads();\n  out[i] = tile[0];`);
  },
  hugeLocal: (rng) => {
    const size = rng.pick(["4", "64", "256", "1024", "4096", "16384", "65536", "1 << 20", "1 << 30", "2147483647"]);
    return header + kernel(`  const r = local.f32(${size});\n  r[0] = x;\n  out[i] = r[0];`);
  },
  hugeBlock: (rng) => {
    const dims = Array.from({ length: rng.range(1, 3) }, () => rng.pick(["1", "32", "64", "256", "1024", "1025", "2048", "65535", "65536", "2147483647", "4294967296", "1e9", "0", "-1", "1.5"]));
    return header + kernel("  out[i] = x;", undefined, `{ block: [${dims.join(", ")}] }`);
  },
  formulaBlock: (rng) => {
    const values = [1, 2, 3, 16, 32, 64, 1024, 65536, 2147483647];
    const a = rng.pick(values);
    const b = rng.pick(values);
    return header + kernel("  out[i] = x;", `out: Float32Array, x: f32, A: Const<i32> = ${a}, B: Const<i32> = ${b}`, `{ block: [${rng.pick(['"A * B"', '"A * B * A"', '"A / B"', '"(A * B) / (B * A)"', '"A", "B"', '"A", "B", "A"'])}] }`);
  },
  manySpecializations: (rng) => {
    const count = rng.weighted([[3, rng.range(2, 32)], [2, rng.range(32, 200)], [1, rng.range(200, 2000)]] as const);
    const list = Array.from({ length: count }, (_, k) => `{ T: ${k + 1} }`).join(", ");
    return header + kernel("  const s = shared.f32(T);\n  s[0] = x;\n  syncThreads();\n  out[i] = s[0] * f32(T);", "out: Float32Array, x: f32, T: Const<i32> = 1", `{ block: [64], specializations: [${list}] }`);
  },
  unrollNest: (rng) => {
    const levels = rng.range(1, 5);
    const trips = rng.pick([4, 16, 32, 64, 65]);
    let body = "s += x * f32(j0);";
    for (let k = levels - 1; k >= 0; k--) body = `${k === 0 ? "unroll" : `unroll${k}`}: for (let j${k} = 0; j${k} < ${trips}; j${k}++) { ${body} }`;
    return header + kernel(`  let s: f32 = 0;\n  ${body}\n  out[i] = s;`);
  },
  unrollLarge: (rng) => {
    const lines = Array.from({ length: rng.range(10, 200) }, (_, k) => `out[i + ${k}] += a[j] * ${k}.5;`).join(" ");
    return header + kernel(`  unroll: for (let j = 0; j < 64; j++) { ${lines} }`);
  },
  longFile: (rng) => {
    const kernels = Array.from({ length: rng.range(5, 40) }, (_, k) => kernel(statements(rng.range(20, 120), rng), undefined, "{ block: [64] }", `k${k}`));
    return header + kernels.join("\n");
  },
  comments: (rng) => header + `/*${"*".repeat(rng.range(1, 200000))}*/\n// ${"c".repeat(rng.range(1, 200000))}\n` + kernel("  out[i] = x;"),
  unicode: (rng) => header + kernel(`  const ${rng.pick(["π", "变量", "x\u200d", "ǅ", "𝑥"])} = x;\n  out[i] = x;`),
};

export const largeGenerators: Readonly<Record<string, Generator>> = { ...Object.fromEntries(Object.entries(nesting).map(([k, g]) => [`nest.${k}`, g])), ...Object.fromEntries(Object.entries(large).map(([k, g]) => [`large.${k}`, g])) };

export const largeGeneratorNames = Object.keys(largeGenerators);

/** One generated input: the generator's name and its text. */
export function generateLarge(rng: Rng): { name: string; text: string } {
  const name = rng.pick(largeGeneratorNames);
  return { name, text: largeGenerators[name]!(rng) };
}
