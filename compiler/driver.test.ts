/**
 * The driver's options that only tools use: `kernels` compiles a subset of a file's kernels, so that
 * `defines` meant for one kernel cannot break a sibling that shares a constant's name (the tuner's case).
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import { compileFiles } from "./driver.ts";
import { packageRoot } from "./frontend/program.ts";

const blocktiling = path.join(packageRoot(), "examples", "sgemm-blocktiling.ts");
// Tile sizes that suit the 2-D kernels but give the 1-D kernel (block BM·BN/TM) 128·128/4 = 4096 threads.
const defines = new Map([["BM", "128"], ["BN", "128"], ["BK", "8"], ["TM", "4"], ["TN", "4"]]);

describe("compiling a subset of a file's kernels", () => {
  it("defines that break a sibling kernel fail the whole file", () => {
    const result = compileFiles([blocktiling], { targets: ["cuda"], defines, baseDir: packageRoot() });
    expect(result.ok).toBe(false);
    expect(result.diagnostics.map((d) => d.code)).toContain("TSK3012");
    expect(result.diagnostics.find((d) => d.code === "TSK3012")?.message).toContain("sgemm1DBlocktiling");
  });

  it("`kernels` builds only the named kernel, with the defines", () => {
    const result = compileFiles([blocktiling], { targets: ["cuda"], defines, baseDir: packageRoot(), kernels: new Set(["sgemm2DBlocktiling"]) });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const specializations = result.files[0]!.specializations;
    expect(specializations.map((s) => s.entryName)).toEqual(["sgemm2DBlocktiling_BM_128_BN_128_BK_8_TM_4_TN_4"]);
    expect(specializations[0]!.facts.block).toEqual([1024, 1, 1]);
    expect(result.files[0]!.cuda!.source).toContain("sgemm2DBlocktiling_BM_128_BN_128_BK_8_TM_4_TN_4(");
    expect(result.files[0]!.cuda!.source).not.toContain("sgemm1DBlocktiling");
  });
});
