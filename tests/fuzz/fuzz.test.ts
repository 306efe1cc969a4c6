/**
 * The robustness fuzzer inside the test suite: a short campaign with a fixed seed (mutations of the seeds
 * and generated deep and large inputs, every accepted output validated by Dawn), and the oracle's verdicts
 * on inputs whose outcome is known. Long campaigns: `npm run fuzz -- --seconds N --seed S` (tests/fuzz/README.md).
 */

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeDawn } from "../tools/dawn.ts";
import { repoRoot } from "../golden-cases.ts";
import { loadCorpus, makeInput, runCampaign } from "./campaign.ts";
import { Oracle } from "./oracle.ts";

afterAll(() => closeDawn());

describe("the robustness fuzzer", () => {
  it("finds no crash, hang or invalid output in a short fixed-seed campaign", async () => {
    const summary = await runCampaign({ seed: 2026, count: 40, root: repoRoot, nvccRate: 0, dawnRate: 1 });
    expect(summary.failures).toEqual([]);
    expect(summary.inputs).toBe(40);
    // Both outcomes occur, so the campaign exercised the back end as well as the diagnostics.
    expect(summary.accepted).toBeGreaterThan(3);
    expect(summary.rejected).toBeGreaterThan(10);
    // Every accepted input with a kernel had its WGSL validated (an accepted file may declare none).
    expect(summary.dawn.validated).toBeGreaterThan(3);
    expect(summary.dawn.validated).toBeLessThanOrEqual(summary.accepted);
  });

  it("makes the same input from the same seed and index, and different ones from different indices", () => {
    const corpus = loadCorpus(repoRoot);
    expect(corpus.texts.length).toBeGreaterThan(50);
    expect(makeInput(7, 3, corpus)).toEqual(makeInput(7, 3, corpus));
    const texts = new Set(Array.from({ length: 20 }, (_, i) => makeInput(7, i, corpus).text));
    expect(texts.size).toBeGreaterThan(15);
  });

  describe("the oracle", () => {
    const oracle = new Oracle(fs.mkdtempSync(path.join(os.tmpdir(), "tskernel-oracle-")));
    const kernel = (body: string) => `import { kernel, threadIdx, type f32 } from "tskernel";\nexport const k = kernel({ block: [64] }, (out: Float32Array, x: f32) => {\n${body}\n});\n`;

    it("accepts a valid kernel and hands over its outputs", () => {
      const result = oracle.judge(kernel("  out[threadIdx.x] = x * 2.0;"));
      expect(result.verdict).toBe("accepted");
      expect(result.outputs?.wgsl).toContain("@compute");
      expect(result.outputs?.cuda).toContain("__global__");
    });

    it("rejects invalid kernels with their codes, the issue's 3000-deep parentheses included", () => {
      expect(oracle.judge(kernel("  out[threadIdx.x] = x +;"))).toMatchObject({ verdict: "rejected", codes: expect.arrayContaining(["TSK1002"]) });
      expect(oracle.judge(kernel(`  out[threadIdx.x] = ${"(".repeat(3000)}x${")".repeat(3000)};`))).toMatchObject({ verdict: "rejected", codes: ["TSK1050"] });
      expect(oracle.judge(kernel(`  out[threadIdx.x] = ${"- ".repeat(20000)}x;`))).toMatchObject({ verdict: "rejected", codes: ["TSK1051"] });
    });
  });
});
