/** The documentation states the diagnostic catalogue exactly: every code with its template, and no other. */

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { catalogue } from "../compiler/index.ts";
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
