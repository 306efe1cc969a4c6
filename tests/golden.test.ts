/**
 * Golden tests: every codegen case's CUDA, header, WGSL and JS output must equal the expected files beside it
 * byte for byte (no file for a target that every kernel of the case leaves out of its `targets`), and every
 * error case must print exactly its expected diagnostics and produce no output.
 * `UPDATE_GOLDENS=1 npx vitest run tests/golden.test.ts` rewrites the expected files; review the diff.
 */

import path from "node:path";
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import { checkGolden, codegenCases, compileCase, errorCases, renderForGolden, updateGoldens } from "./golden-cases.ts";

describe("codegen goldens", () => {
  for (const testCase of codegenCases()) {
    it(testCase.name, () => {
      const result = compileCase(testCase.input);
      const rendered = renderForGolden(result);
      expect(result.ok, `a codegen case must compile:\n${rendered}`).toBe(true);
      // Warnings (e.g. blocks above WebGPU's default limits) are part of the golden output.
      const warningsFile = path.join(testCase.dir, "expected-warnings.txt");
      if (rendered.trim() !== "") {
        const warnings = checkGolden(warningsFile, rendered);
        if (!warnings.ok) expect(rendered).toBe(warnings.expected);
      } else {
        // A case whose warnings went away keeps no stale file (UPDATE_GOLDENS=1 removes it).
        if (updateGoldens) fs.rmSync(warningsFile, { force: true });
        expect(fs.existsSync(warningsFile), `${testCase.name} warns of nothing, so it has no expected-warnings.txt`).toBe(false);
      }
      const [file] = result.files;
      // Every target a kernel of the case is built for has its expected files; a target every kernel skips
      // (their `targets` option) has none, and the compiler wrote nothing for it.
      const outputs = [
        ["expected.cu", file?.cuda?.source],
        ["expected.cuh", file?.cuda?.header],
        ["expected.wgsl", file?.wgsl?.source],
        ["expected.js", file?.js?.source],
      ] as const;
      expect(outputs.some(([, text]) => text !== undefined), `${testCase.name} builds for some target`).toBe(true);
      for (const [name, text] of outputs) {
        if (text === undefined) {
          expect(fs.existsSync(path.join(testCase.dir, name)), `${testCase.name} builds no ${name.replace("expected", "")}, so it has no ${name}`).toBe(false);
          continue;
        }
        const golden = checkGolden(path.join(testCase.dir, name), text);
        if (!golden.ok) expect(text, `${testCase.name}/${name} differs from the golden (UPDATE_GOLDENS=1 regenerates)`).toBe(golden.expected);
      }
    });
  }
});

describe("error goldens", () => {
  for (const testCase of errorCases()) {
    it(testCase.name, () => {
      const result = compileCase(testCase.input, ["cuda", "wgsl", "js"]);
      expect(result.ok, "an error case must fail to compile").toBe(false);
      expect(result.files.every((file) => !file.cuda && !file.wgsl && !file.js), "nothing is emitted for a file with errors").toBe(true);
      const rendered = renderForGolden(result);
      const golden = checkGolden(path.join(testCase.dir, "expected.txt"), rendered);
      if (!golden.ok) expect(rendered).toBe(golden.expected);
    });
  }
});
