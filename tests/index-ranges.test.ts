/**
 * The checks a checked build leaves out because they surely hold (compiler/passes/index-ranges.ts), and the ones
 * it must keep: each kernel below has one access whose index is in range by construction and one just like it
 * that can leave its array (off by one, a counter the body also changes, arithmetic that wraps, a start that is
 * not a multiple of 4). The sites of the WGSL build name the arrays whose checks remain.
 */

import { describe, expect, it } from "vitest";
import { compileSource } from "./compile-source.ts";

const header = 'import { kernel, shared, local, syncThreads, threadIdx, blockIdx, load4, f32, type i32, type ReadonlyFloat32Array } from "tskernel";\n';

/** The arrays (and kinds) that the checked WGSL of `body` still checks, in site order. */
function remaining(body: string, block = 64): string[] {
  const source = `${header}export const k = kernel({ block: [${block}] }, (out: Float32Array, x: ReadonlyFloat32Array, n: i32) => {\n${body}\n});\n`;
  const result = compileSource(source, { targets: ["wgsl"], checked: true });
  expect(result.ok, result.rendered).toBe(true);
  const sites = result.files[0]!.wgsl!.checks![0]!.sites;
  return sites.filter((site) => site.array !== "out" && site.array !== "x").map((site) => `${site.kind === "out-of-bounds" ? "" : `${site.kind} `}${site.array ?? ""}`);
}

describe("checks that surely hold are left out", () => {
  it("a loop counter below the array's size needs none; one that reaches it, or that the body changes, keeps its check", () => {
    expect(remaining("const a = local.f32(8); const b = local.f32(8); const c = local.f32(8);\nfor (let i = 0; i < 8; i++) { a[i] = f32(i); }\nfor (let i = 0; i <= 8; i++) { b[i] = f32(i); }\nfor (let i = 0; i < 8; i++) { c[i] = f32(i); if (n > 3) { i += 1; } }\nout[threadIdx.x] = a[n & 7] + b[n & 7] + c[n & 7];")).toEqual(["b", "c"]);
  });
  it("thread indices of a fixed block, scaled, divided and masked, fit tiles of their size; a smaller tile keeps its check", () => {
    expect(remaining("const fits = shared.f32(128); const short = shared.f32(127); const grid = shared.f32(8, 8);\nconst t = threadIdx.x;\nfits[t * 2 + 1] = 1; short[t * 2 + 1] = 1; grid[t / 8][t % 8] = 2; grid[t & 7][(t >> 3) & 7] = 3;\nsyncThreads();\nout[t] = fits[127 - t] + short[t] + grid[t % 8][n & 15];")).toEqual(["short", "grid"]);
  });
  it("arithmetic that wraps knows nothing of its result", () => {
    expect(remaining("const a = local.f32(8); const b = local.f32(8);\nconst t = threadIdx.x;\na[t % 8] = 1; b[(t + 2147483647) % 8] = 1;\nout[t] = a[(t * 3) % 8] + b[1];")).toEqual(["b"]);
  });
  it("a variable that only takes values in range (a stage switched by `stage = 1 - stage`) needs none; one that grows, or leaves the range, keeps its check", () => {
    expect(
      remaining(
        "const halves = shared.f32(2, 64); const grown = local.f32(4); const wide = local.f32(2);\nlet stage = 0; let count = 0; let flip = 0;\nfor (let k = 0; k < n; k++) {\n  halves[stage][threadIdx.x] = 1; halves[1 - stage][threadIdx.x] = 2;\n  stage = 1 - stage; count += 1; flip = 2 - flip;\n  grown[count & 3] = 1; wide[0] = grown[count];\n}\nsyncThreads();\nout[threadIdx.x] = halves[stage][threadIdx.x] + wide[flip];",
      ),
    ).toEqual(["grown", "wide"]);
  });
  it("a vector access's start that is a multiple of 4 by construction is not checked for alignment; one that may not be is", () => {
    expect(remaining("const tile = shared.f32(256);\nconst t = threadIdx.x;\nconst [a, b, c, d] = load4(tile, t * 4);\nconst [e, f, g, h] = load4(tile, t * 2);\nout[t] = a + b + c + d + e + f + g + h;")).toEqual(["misaligned-vector-access tile"]);
  });
  it("a block shape given at launch bounds no thread index", () => {
    const source = `${header}export const k = kernel((out: Float32Array, n: i32) => {\n  const tile = shared.f32(64);\n  tile[threadIdx.x] = 1;\n  syncThreads();\n  out[threadIdx.x] = tile[n & 63];\n});\n`;
    const result = compileSource(source, { targets: ["wgsl"], checked: true });
    expect(result.ok, result.rendered).toBe(true);
    expect(result.files[0]!.wgsl!.checks![0]!.sites.filter((site) => site.array === "tile").map((site) => site.access)).toEqual(["write to"]);
  });
});
