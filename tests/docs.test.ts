/** The documentation states the diagnostic catalogue exactly: every code with its template, and no other. */

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { catalogue, targetScalars, type AnyScalar, type TargetName } from "../compiler/index.ts";
import { repoRoot } from "./golden-cases.ts";

it("docs/language.md lists every diagnostic code with its message", () => {
  const text = fs.readFileSync(path.join(repoRoot, "docs", "language.md"), "utf8");
  const documented = new Map([...text.matchAll(/^\| (TSK\d{4}) \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!]));
  const expected = new Map(
    Object.entries(catalogue).map(([code, entry]) => [
      code,
      `${entry.severity === "warning" ? "*warning:* " : ""}${entry.template.replace(/\|/g, "\\|").replace(/\n/g, " ")}`,
    ]),
  );
  expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected));
});

it("docs/language.md states what each target does with each type, as the compiler's table says", () => {
  const text = fs.readFileSync(path.join(repoRoot, "docs", "language.md"), "utf8");
  const section = text.slice(text.indexOf("### Support per target"), text.indexOf("### On each target"));
  const rows = [...section.matchAll(/^\| `(\w+)` \| (\w+)[^|]* \| (\w+)[^|]* \| (\w+)[^|]* \|$/gm)];
  const documented = Object.fromEntries(rows.map((m) => [m[1]!, { cuda: m[2]!, wgsl: m[3]!, js: m[4]! }]));
  const typesWithRows = Object.keys(targetScalars.cuda).filter((type) => type !== "bool" && type !== "f32" && type !== "i32" && type !== "u32");
  const expected = Object.fromEntries(
    typesWithRows.map((type) => [type, Object.fromEntries((["cuda", "wgsl", "js"] as TargetName[]).map((target) => [target, targetScalars[target][type as AnyScalar].support.level]))]),
  );
  expect(documented).toEqual(expected);
});
